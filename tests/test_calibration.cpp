// Calibration from real nccl-tests logs (acceptance: the calibrated closed form reproduces each
// log), the calibration file, its effect on a topology, and broken inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "calibrate/calibration.h"
#include "cli/calibrate_command.h"
#include "common/error.h"
#include "topologies/spec.h"
#include "tests/cli_runner.h"
#include "tests/input_error_of.h"

namespace ccsim {
namespace {

const std::string kData = std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/";

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "ccsim_cal_" + name; }

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string error_of(const std::function<void()>& f) { return testing::input_error_of(f); }

// Per size: the mean of the measurements within 15% of the fastest (out-of-place / in-place; a
// slower repeat is a spike), as the fit sees the curve.
std::map<double, double> measured(const RingCurve& c) {
  std::map<double, std::vector<double>> by;
  for (std::size_t i = 0; i < c.sizes.size(); ++i) by[c.sizes[i]].push_back(c.times_s[i]);
  std::map<double, double> out;
  for (auto& [s, v] : by) {
    const double lo = *std::min_element(v.begin(), v.end());
    double sum = 0;
    int n = 0;
    for (double t : v)
      if (t <= 1.15 * lo) { sum += t; ++n; }
    out[s] = sum / n;
  }
  return out;
}

struct Case {
  const char* file;
  NcclTestsOptions opt;
  const char* cls;
  int ranks, nodes;
};

class RealLog : public ::testing::TestWithParam<Case> {};

TEST_P(RealLog, CalibratedClosedFormReproducesTheLog) {
  const Case& k = GetParam();
  const auto curves = ring_curves_from_nccl_tests(kData + k.file, k.opt);
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves[0].path_class, k.cls);
  EXPECT_EQ(curves[0].ranks, k.ranks);
  EXPECT_EQ(curves[0].nodes, k.nodes);
  const Calibration cal = calibrate_ring_curves(curves);
  ASSERT_EQ(cal.classes.count(k.cls), 1u);
  const ClassCalibration& c = cal.classes.at(k.cls);
  // One rank count: launch is NCCL's default, alpha the rest of the intercept.
  EXPECT_DOUBLE_EQ(c.launch_s, 8.4e-6);
  EXPECT_GT(c.alpha_s, 0);
  EXPECT_DOUBLE_EQ(c.knee_bytes, k.ranks * c.alpha_s * c.beta_Bps);
  int bw_side = 0, lat_side = 0;
  for (const auto& [size, t] : measured(curves[0])) {
    const double pred = calibrated_ring_time_s(c, "all_reduce", k.ranks, size);
    if (size > c.knee_bytes) {
      // busbw = S/t * 2(n-1)/n: its relative error is that of 1/t.
      EXPECT_NEAR(t / pred, 1.0, 0.05) << k.file << " size " << size << " busbw";
      ++bw_side;
    } else {
      EXPECT_NEAR(pred / t, 1.0, 0.10) << k.file << " size " << size << " time";
      ++lat_side;
    }
  }
  EXPECT_GT(bw_side, 5);
  EXPECT_GT(lat_side, 5);
  // Round trip through the file format.
  const std::string path = temp_path(std::string(k.cls) + ".json");
  write(path, calibration_to_json(cal));
  const Calibration back = load_calibration(path);
  const ClassCalibration& b = back.classes.at(k.cls);
  EXPECT_DOUBLE_EQ(b.alpha_s, c.alpha_s);
  EXPECT_DOUBLE_EQ(b.beta_Bps, c.beta_Bps);
  EXPECT_EQ(b.efficiency, c.efficiency);
  EXPECT_DOUBLE_EQ(calibrated_ring_time_s(b, "all_reduce", k.ranks, 1 << 20),
                   calibrated_ring_time_s(c, "all_reduce", k.ranks, 1 << 20));
}

NcclTestsOptions with(int ranks, int nodes) {
  NcclTestsOptions o;
  o.ranks = ranks;
  o.nodes = nodes;
  return o;
}

// The 80-rank all_gather of a 10-node H100 cluster switches protocol at 256 MiB, and its 64 MiB point
// runs faster than the fitted latency plus the asymptote allow: measured over model bandwidth 2.41
// there, above the file format's bound of 2. calibrate wrote that knot, and every later
// `--calibration` of the file was refused. The knot is now held at the bound, the report says so, and
// the file reads back.
TEST(Calibration, AKnotAboveTheFilesBoundIsHeldThereAndTheFileReadsBack) {
  const auto curves = ring_curves_from_nccl_tests(kData + "h100x80-10node-allgather-nccl2.29.2.txt", {});
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves[0].ranks, 80);
  EXPECT_EQ(curves[0].nodes, 10);
  const Calibration cal = calibrate_ring_curves(curves);
  const ClassCalibration& c = cal.classes.at("net");
  double raw_max = 0;
  for (const auto& [x, e] : c.fit.efficiency) raw_max = std::max(raw_max, e);
  EXPECT_GT(raw_max, 2.0);
  ASSERT_FALSE(c.efficiency.empty());
  for (const auto& [size, e] : c.efficiency) EXPECT_LE(e, 2.0) << size;
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("held at the file's bound 2"), std::string::npos) << c.notes[0];
  const Calibration back = calibration_from_json(nlohmann::json::parse(calibration_to_json(cal)), "cal.json");
  EXPECT_EQ(back.classes.at("net").efficiency, c.efficiency);
}

// `ccsim calibrate FROM -o C`, then `ccsim validate LOG FLAGS --calibration C` (the calibrated ring
// replayed on the topology); returns the validate JSON's first run. With FROM = LOG the prediction
// must give back the measured curve.
nlohmann::json validate_with_calibration(const std::string& calibrated_from, const std::string& log,
                                         const std::string& flags, const std::string& calibrate_flags = "") {
  // One file per pair: ctest runs the tests of this file in parallel processes.
  const std::string cal = temp_path(calibrated_from + "-for-" + log + ".json");
  std::remove(cal.c_str());
  const auto c = testing::run_ccsim("calibrate " + kData + calibrated_from + " " + calibrate_flags + " -o " + cal);
  EXPECT_EQ(c.code, 0) << c.err;
  const auto v = testing::run_ccsim("validate " + kData + log + " " + flags + " --calibration " + cal + " --format json");
  EXPECT_NE(v.code, 2) << v.err;
  return nlohmann::json::parse(v.out)["runs"][0];
}

// Two RTX 2080 Ti without P2P join through NCCL's SHM transport, whose two-way share of the links
// (node.pcie.shm_two_way_efficiency, 0.65) the engine applies on top of the links. The fitted ring
// bandwidth already is the achieved rate: before the calibration set that share to 1, the log's own
// calibration predicted it 35% too slow on the bandwidth side (-35.0% = 0.65 - 1).
TEST(Calibration, APcieHostsCalibrationPredictsItsOwnRun) {
  const std::string flags =
      "--topology pcie-gen4-8gpu --set node.gpu.count=2 --set node.pcie.generation=3 --set node.cpu.sockets=1 "
      "--set node.pcie.switches_per_socket=1 --set node.nic.count=0 --set node.pcie.p2p=none --model engine";
  const auto run = validate_with_calibration("rtx2080ti-x2-pcie-noP2P-allreduce.txt", "rtx2080ti-x2-pcie-noP2P-allreduce.txt", flags);
  EXPECT_NEAR(run["bandwidth"]["median_error"].get<double>(), 0.0, 0.03) << run.dump();
  EXPECT_NEAR(run["latency"]["median_error"].get<double>(), 0.0, 0.10) << run.dump();
}

// #309's two DGX-class H100 nodes run NVLSTree to 469 GB/s busbw, above what a ring reaches through the
// NICs' PCIe links on the described node (the fitted 8 NICs carry it, their Gen5 x16 links do not).
// The calibrated ring's bandwidth term is scaled by the shortfall (CalibrationEffect::
// ring_bandwidth_scale), so the run's own calibration gives back its bandwidth side (-8.8% before).
TEST(Calibration, ANetFitAboveTheRingsBoundPredictsItsOwnRun) {
  const auto run = validate_with_calibration("h100x16-2node-ndr-allreduce.txt", "h100x16-2node-ndr-allreduce.txt",
                                             "--topology dgx-h100", "--ranks 16 --nodes 2");
  EXPECT_NEAR(run["bandwidth"]["median_error"].get<double>(), 0.0, 0.03) << run.dump();
  const auto curves = ring_curves_from_nccl_tests(kData + "h100x16-2node-ndr-allreduce.txt", with(16, 2));
  const Calibration cal = calibrate_ring_curves(curves);
  const CalibrationEffect e = calibration_effect(cal, load_topology_spec("dgx-h100"), StepTiming{});
  ASSERT_EQ(e.ring_bandwidth_scale.count("net"), 1u);
  EXPECT_GT(e.ring_bandwidth_scale.at("net"), 1.0);
  const Calibration scaled = scale_ring_efficiency(cal, e);
  EXPECT_DOUBLE_EQ(calibration_efficiency(scaled, "net", 1e9),
                   calibration_efficiency(cal, "net", 1e9) * e.ring_bandwidth_scale.at("net"));
}

// A net class fitted without an intra-node one: the ring's mean step alpha (0.69 us on two GH200
// nodes of CSCS's Alps, whose small sizes ran LL) is below NCCL's Ring/Simple NVLink step (3.4 us)
// that the intra-node hops kept, and the network steps could only be clamped to 0. Every step of the
// ring now takes alpha, so the ring's n steps add up to the fit's n x alpha.
TEST(Calibration, ANetFitBelowTheIntraNodeDefaultGivesEveryStepTheMean) {
  const auto curves = ring_curves_from_nccl_tests(kData + "gh200x8-2node-alps-slingshot-allreduce.txt", {});
  ASSERT_EQ(curves.size(), 1u);
  const Calibration cal = calibrate_ring_curves(curves);
  const ClassCalibration& c = cal.classes.at("net");
  EXPECT_EQ(c.ranks, 8);
  EXPECT_EQ(c.nodes, 2);
  EXPECT_LT(8 * c.alpha_s, 6 * StepTiming{}.nvlink_step_s);  // the old split's network step was negative
  const nlohmann::json spec = load_topology_spec("gh200-quad");
  const CalibrationEffect e = calibration_effect(cal, spec, StepTiming{});
  EXPECT_DOUBLE_EQ(e.timing.nvlink_step_s, c.alpha_s);
  EXPECT_DOUBLE_EQ(e.timing.net_step_s, c.alpha_s);
}

// gh200-quad as docs/accuracy.md describes the Alps and Santis nodes (Slingshot-11 taken as RoCE).
const std::string kGh200Flags = "--topology gh200-quad --set node.gpu.c2c=false --set node.nic.transport=roce";

// Two GH200 nodes of CSCS's Alps over Slingshot (described as RoCE): the fitted mean step is 0.69 us,
// the described network hop's route 4.7 us (NIC, switch, PCIe). The engine charges a hop at least its
// route's latency, so the run's own calibration predicted its latency side at -26% until a calibrated
// class set its links' latencies to 0 (the fitted steps carry them).
TEST(Calibration, ARunsOwnCalibrationIsNotFlooredByTheDescribedLinksLatency) {
  const auto run = validate_with_calibration("gh200x8-2node-alps-slingshot-allreduce.txt",
                                             "gh200x8-2node-alps-slingshot-allreduce.txt", kGh200Flags);
  EXPECT_LT(std::fabs(run["latency"]["median_error"].get<double>()), 0.10) << run.dump();
  EXPECT_LT(std::fabs(run["bandwidth"]["median_error"].get<double>()), 0.03) << run.dump();
}

// A calibration is an additive fit, launch + steps x alpha + bytes / (beta x efficiency); the engine
// pipelines a ring's chunks, so their step latencies overlap. The 10-node H100 reduce_scatter's own
// calibration replayed in the engine read +48% at 256 MiB, its knee; the closed form of the calibrated
// ring, now the default with a calibration, gives the fit back there (+2.6%).
TEST(Calibration, ACalibratedPredictionIsTheFitsClosedFormUnlessTheEngineIsAsked) {
  const std::string log = "h100x80-10node-reducescatter-nccl2.29.2.txt";
  const auto closed = validate_with_calibration(log, log, "--topology dgx-h100");
  EXPECT_NE(closed["prediction"]["prediction"].get<std::string>().find("closed form of the calibrated ring"),
            std::string::npos) << closed["prediction"].dump();
  const auto at = [](const nlohmann::json& run, std::uint64_t size) {
    for (const auto& s : run["sizes"])
      if (s["size_bytes"].get<std::uint64_t>() == size) return s["error"].get<double>();
    ADD_FAILURE() << size;
    return 0.0;
  };
  EXPECT_LT(std::fabs(at(closed, 268435200)), 0.05);
  EXPECT_LT(std::fabs(closed["bandwidth"]["median_error"].get<double>()), 0.05) << closed.dump();
  const auto engine = validate_with_calibration(log, log, "--topology dgx-h100 --model engine");
  EXPECT_GT(at(engine, 268435200), 0.30);
}

// Two GH200 systems of one machine type: CSCS's Alps and Santis vClusters, 2 x 4 GH200 over Slingshot
// each. Alps's calibration predicts the Santis run within issue 11's targets (the preset alone: +33% on
// the latency side, Slingshot's per-message cost, which the fit carries).
TEST(Calibration, AnotherSystemOfTheSameMachineTypePredictsTheGh200Run) {
  const auto run = validate_with_calibration("gh200x8-2node-alps-slingshot-allreduce.txt",
                                             "gh200x8-2node-santis-slingshot-allreduce.txt", kGh200Flags);
  EXPECT_LT(std::fabs(run["latency"]["median_error"].get<double>()), 0.20) << run.dump();
  EXPECT_LT(std::fabs(run["bandwidth"]["median_error"].get<double>()), 0.10) << run.dump();
}

// A calibration from another run of the same cluster (issue 11 allows it): the 10-node H100
// cluster's all_gather (NCCL 2.29.2, 80 ranks) predicts the same job's reduce_scatter within issue
// 11's targets, where the preset alone misses both sides (latency +116%, bandwidth +17%:
// docs/accuracy.md). Both are rings over the same 80 GPUs; the fit carries the cluster's per-step cost
// and plateau (324 GB/s busbw against the ring's 370 on the preset).
TEST(Calibration, AnotherRunOfTheSameClusterPredictsTheReduceScatter) {
  const auto run = validate_with_calibration("h100x80-10node-allgather-nccl2.29.2.txt",
                                             "h100x80-10node-reducescatter-nccl2.29.2.txt", "--topology dgx-h100");
  EXPECT_EQ(run["log"]["collective"], "reduce_scatter");
  EXPECT_LT(std::fabs(run["latency"]["median_error"].get<double>()), 0.20) << run.dump();
  EXPECT_LT(std::fabs(run["bandwidth"]["median_error"].get<double>()), 0.10) << run.dump();
}

// One Azure NC12s_v3 VM (two V100 PCIe through NCCL's SHM transport) run both ways nccl-tests has:
// one process driving both GPUs (-g 2) and MPI with one process per GPU. Each run's calibration
// predicts the other within issue 11's targets on both sides; the preset alone is +19% and +22% on
// the bandwidth side (the host's SHM rate, which the fit carries).
TEST(Calibration, AnotherLaunchModeOfTheSameVmPredictsItsRun) {
  const std::string flags =
      "--topology pcie-gen4-8gpu --set node.gpu.count=2 --set node.pcie.generation=3 --set node.cpu.sockets=1 "
      "--set node.pcie.switches_per_socket=0 --set node.nic.count=0";
  const auto g2 = validate_with_calibration("azure-nc12sv3-v100x2-pcie-allreduce-mpi.txt",
                                            "azure-nc12sv3-v100x2-pcie-allreduce-g2.txt", flags);
  const auto mpi = validate_with_calibration("azure-nc12sv3-v100x2-pcie-allreduce-g2.txt",
                                             "azure-nc12sv3-v100x2-pcie-allreduce-mpi.txt",
                                             flags + " --env NCCL_P2P_LEVEL=NVL");
  for (const auto* run : {&g2, &mpi}) {
    EXPECT_LT(std::fabs((*run)["latency"]["median_error"].get<double>()), 0.20) << run->dump();
    EXPECT_LT(std::fabs((*run)["bandwidth"]["median_error"].get<double>()), 0.10) << run->dump();
  }
}

// Google's A3 Ultra (8 H200, 8 RoCE NICs through the gIB plugin) as VMs and on GKE: the VMs'
// calibration carries the plateau to the GKE run (bandwidth side +1%, the preset alone +13%), not the
// floor: the GKE cluster's small sizes take 56 us, the VMs' 28.7 (latency side +72%).
TEST(Calibration, TheA3UltraVmsCalibrationCarriesItsPlateauToGkeNotItsFloor) {
  const auto run = validate_with_calibration("gcp-a3ultra-h200-2node-roce-allgather-nccl2.26.6.txt",
                                             "gcp-a3ultra-h200-2node-gke-allgather.txt",
                                             "--topology dgx-h200 --set node.nic.transport=roce --collective all_gather");
  EXPECT_LT(std::fabs(run["bandwidth"]["median_error"].get<double>()), 0.05) << run.dump();
  EXPECT_GT(run["latency"]["median_error"].get<double>(), 0.50) << run.dump();
}

INSTANTIATE_TEST_SUITE_P(
    Logs, RealLog,
    ::testing::Values(Case{"a100x8-1node-allreduce.txt", {}, "nvlink", 8, 1},
                      Case{"h100x16-2node-ndr-allreduce.txt", with(16, 2), "net", 16, 2},
                      Case{"rtx2080ti-x2-pcie-noP2P-allreduce.txt", {}, "pcie", 2, 1}),
    // Named by the link class, not by gtest's byte dump of the parameter.
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.cls); });

TEST(Calibration, EffectMapsFitsOntoTopologyKeysAndStepTiming) {
  // A hand-made calibration: nvlink beta 180 GB/s, alpha 2 us; net beta 400 GB/s on 16 ranks / 2 nodes
  // with a mean step alpha of 4 us.
  Calibration cal;
  ClassCalibration nv;
  nv.alpha_s = 2e-6; nv.beta_Bps = 180e9; nv.launch_s = 8.4e-6; nv.collective = "all_reduce"; nv.ranks = 8; nv.nodes = 1;
  cal.classes["nvlink"] = nv;
  ClassCalibration net = nv;
  net.alpha_s = 4e-6; net.beta_Bps = 400e9; net.ranks = 16; net.nodes = 2;
  cal.classes["net"] = net;
  nlohmann::json spec = load_topology_spec("dgx-h100");
  set_node_count(spec, 2);
  const CalibrationEffect e = calibration_effect(cal, spec, StepTiming{});
  // dgx-h100: 18 NVLink links per GPU -> 180/18 = 10 GB/s per link; 8 NICs -> 400e9*8/1e9/8 = 400 Gb/s.
  EXPECT_NE(std::find(e.spec_overrides.begin(), e.spec_overrides.end(), "node.nvlink.GBps_per_link=10"),
            e.spec_overrides.end());
  EXPECT_NE(std::find(e.spec_overrides.begin(), e.spec_overrides.end(), "node.nic.Gbps=400"), e.spec_overrides.end());
  EXPECT_DOUBLE_EQ(e.timing.nvlink_step_s, 2e-6);
  EXPECT_DOUBLE_EQ(e.timing.launch_s, 8.4e-6);
  // Net step: 16 hops average 4 us; 14 NVLink hops at 2 us -> (16*4 - 14*2)/2 = 18 us.
  EXPECT_NEAR(e.timing.net_step_s, 18e-6, 1e-12);
  // Every override is a valid --set.
  for (const auto& o : e.spec_overrides) EXPECT_NO_THROW(apply_override(spec, o, "test")) << o;
}

TEST(Calibration, EfficiencyIsOneWithoutKnotsAndInterpolatedWithThem) {
  Calibration cal;
  EXPECT_DOUBLE_EQ(calibration_efficiency(cal, "nvlink", 1e6), 1.0);
  ClassCalibration c;
  c.efficiency = {{1024, 0.5}, {1048576, 1.0}};
  cal.classes["pcie"] = c;
  EXPECT_DOUBLE_EQ(calibration_efficiency(cal, "pcie", 32768), 0.75);  // halfway in log2: 10 -> 15 -> 20
  EXPECT_DOUBLE_EQ(calibration_efficiency(cal, "pcie", 1), 0.5);
  EXPECT_DOUBLE_EQ(calibration_efficiency(cal, "pcie", 1e12), 1.0);
}

TEST(Calibration, BadFilesNameTheJsonPath) {
  const std::string p = temp_path("bad.json");
  write(p, R"({"format": "ccsim-calibration/1", "classes": {"nvlink": {"alpha_s": 1e-6, "beta_Bps": -5, "launch_s": 8.4e-6}}})");
  EXPECT_NE(error_of([&] { load_calibration(p); }).find(p + ": /classes/nvlink/beta_Bps: must be a number > 0"),
            std::string::npos);
  write(p, R"({"format": "ccsim-calibration/1", "classes": {"nvlnk": {}}})");
  EXPECT_NE(error_of([&] { load_calibration(p); }).find("/classes/nvlnk: unknown path class"), std::string::npos);
  write(p, R"({"format": "other"})");
  EXPECT_NE(error_of([&] { load_calibration(p); }).find("/format"), std::string::npos);
  write(p, "{\"format\": \n");
  EXPECT_NE(error_of([&] { load_calibration(p); }).find(p + ": line 2"), std::string::npos);
}

TEST(Calibration, TruncatedLogNamesFileAndLine) {
  std::ifstream in(kData + "rtx2080ti-x2-pcie-noP2P-allreduce.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t cut = text.find("4194304       1048576");
  ASSERT_NE(cut, std::string::npos);
  const std::string p = temp_path("truncated.txt");
  write(p, text.substr(0, cut + 40));
  const std::string err = error_of([&] { run_calibrate({p, "-o", temp_path("out.json")}); });
  EXPECT_NE(err.find(p + ": line "), std::string::npos) << err;
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;
}

TEST(Calibration, LogWithoutTableNamesFile) {
  const std::string p = temp_path("notable.txt");
  write(p, "# nThread 1 nGpus 8 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20\nhello\n");
  const std::string out = temp_path("notable.json");
  std::remove(out.c_str());
  const std::string err = error_of([&] { run_calibrate({p, "-o", out}); });
  EXPECT_NE(err.find(p + ":"), std::string::npos) << err;
  EXPECT_FALSE(std::ifstream(out).good());  // no partial output
}

TEST(Calibration, UnknownClassNamesTheFlag) {
  const std::string err =
      error_of([&] { run_calibrate({kData + "a100x8-1node-allreduce.txt", "-o", temp_path("c.json"), "--class", "nvswitch"}); });
  EXPECT_NE(err.find("--class: unknown path class 'nvswitch'"), std::string::npos) << err;
}

TEST(Calibration, MpiLogWithoutRanksAsksForRanks) {
  const std::string f = kData + "h100x16-2node-ndr-allreduce.txt";
  const std::string err = error_of([&] { run_calibrate({f, "-o", temp_path("h.json")}); });
  EXPECT_NE(err.find(f + ": line "), std::string::npos) << err;
  EXPECT_NE(err.find("pass --ranks"), std::string::npos) << err;
}

TEST(Calibration, CommandWritesTheFile) {
  const std::string out = temp_path("cmd.json");
  EXPECT_EQ(run_calibrate({kData + "a100x8-1node-allreduce.txt", kData + "rtx2080ti-x2-pcie-noP2P-allreduce.txt", "-o", out}), 0);
  const Calibration cal = load_calibration(out);
  EXPECT_EQ(cal.classes.count("nvlink"), 1u);
  EXPECT_EQ(cal.classes.count("pcie"), 1u);
  EXPECT_EQ(cal.classes.at("pcie").sources.size(), 1u);
}


// ---- perftest with one size, server and client in one file (issue 11) ----

const std::string kSamples = std::string(CCSIM_SOURCE_DIR) + "/tests/data/samples/";

bool has_note(const NicCalibration& n, const std::string& part) {
  for (const auto& x : n.notes)
    if (x.find(part) != std::string::npos) return true;
  return false;
}

TEST(CalibrationPerftest, OneSizeBandwidthGivesBetaOnly) {
  Calibration cal;
  add_perftest_file(cal, kSamples + "perftest_write_bw_1size.txt");
  ASSERT_TRUE(cal.nic.has_value());
  // BW average 11023.48 MB/sec, perftest's MB = 2^20 B: 11558.99 MB/s = 92.47 Gb/s, one direction.
  EXPECT_NEAR(cal.nic->beta_Bps, 11023.48 * 1048576, 1e-3);
  EXPECT_EQ(cal.nic->latency_s, 0);  // not separable from one size: the topology's stays
  ASSERT_EQ(cal.nic->sources.size(), 1u);
  EXPECT_EQ(cal.nic->sources[0].method, "one size: bandwidth at 65536 B");
  EXPECT_TRUE(has_note(*cal.nic, "latency cannot be separated")) << cal.nic->notes.front();
  EXPECT_TRUE(has_note(*cal.nic, "per direction"));
}

TEST(CalibrationPerftest, OneSizeLatencyGivesAlphaOnly) {
  Calibration cal;
  add_perftest_file(cal, kSamples + "perftest_send_lat_1size.txt");
  // t_typical 1.34 us: perftest's send latency is half the round trip already (rtt_factor 2).
  EXPECT_NEAR(cal.nic->latency_s, 1.34e-6, 1e-15);
  EXPECT_EQ(cal.nic->beta_Bps, 0);
  EXPECT_TRUE(has_note(*cal.nic, "t_typical"));
}

TEST(CalibrationPerftest, ReadLatencyIsARoundTrip) {
  Calibration cal;
  add_perftest_file(cal, kSamples + "perftest_8.txt");  // ib_read_lat, 2 B: t_typical 5.49 us
  // A read's request goes out and its data comes back; perftest does not halve it (rtt_factor 1).
  EXPECT_NEAR(cal.nic->latency_s, 5.49e-6 / 2, 1e-15);
}

TEST(CalibrationPerftest, ServerAndClientCountOnce) {
  const double client = 827.84 * 1048576;  // the client's BW average, MB/sec
  for (const char* f : {"perftest_write_bw_server_client.txt", "perftest_write_bw_interleaved.txt"}) {
    Calibration cal;
    add_perftest_file(cal, kSamples + f);
    EXPECT_NEAR(cal.nic->beta_Bps, client, 1e-3) << f;
    EXPECT_EQ(cal.nic->sources.size(), 1u) << f;
  }
}

TEST(CalibrationPerftest, BandwidthAndLatencyFilesTogether) {
  const std::string out = temp_path("nic.json");
  EXPECT_EQ(run_calibrate({kSamples + "perftest_write_bw_1size.txt", kSamples + "perftest_send_lat_1size.txt", "-o", out}), 0);
  const Calibration cal = load_calibration(out);  // notes and methods survive the file
  ASSERT_TRUE(cal.nic.has_value());
  EXPECT_NEAR(cal.nic->latency_s, 1.34e-6, 1e-15);
  EXPECT_NEAR(cal.nic->beta_Bps, 11023.48 * 1048576, 1e-3);
  EXPECT_EQ(cal.nic->sources.size(), 2u);
  EXPECT_TRUE(has_note(*cal.nic, "latency cannot be separated"));
  EXPECT_EQ(cal.nic->sources[1].method, "one size: latency at 2 B");
}

TEST(CalibrationPerftest, SweepStillFits) {
  Calibration cal;
  add_perftest_file(cal, kSamples + "perftest_5.txt");  // ib_write_bw -a, plateau ~23.0 Gb/s
  ASSERT_EQ(cal.nic->sources.size(), 1u);
  EXPECT_EQ(cal.nic->sources[0].method, "fit over 23 sizes");
  EXPECT_NEAR(cal.nic->beta_Bps * 8 / 1e9, 23.0, 0.3);
}

TEST(CalibrationPerftest, TableWithoutAValueIsAnError) {
  // SYNTHETIC row in perftest's RESULT_FMT layout: a run that moved nothing prints 0.00.
  const std::string p = temp_path("zero_bw.txt");
  write(p,
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
        " 65536      5000             0.00               0.00\t\t   0.000000\n");
  Calibration cal;
  const std::string err = error_of([&] { add_perftest_file(cal, p); });
  EXPECT_EQ(err, p + ": no perftest table with a bandwidth or latency value to calibrate from");
}

// ---- nccl-tests logs without a "# Collective test starting" header ----

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The log without the lines that name the collective (the header, the echoed command, provenance).
std::string without_names(const std::string& text) {
  std::istringstream in(text);
  std::string out, l;
  while (std::getline(in, l))
    if (l.find("_perf") == std::string::npos && l.rfind("# COMMAND", 0) != 0) out += l + "\n";
  return out;
}

TEST(CalibrationNcclTests, CollectiveFromTheTableNotTheFileName) {
  // a100x8: busbw/algbw = 2(n-1)/n = 1.75 with the 8 ranks of nThread 1 nGpus 8, redop sum, root -1: all_reduce.
  const std::string a100 = without_names(read_text(kData + "a100x8-1node-allreduce.txt"));
  const auto named = ring_curves_from_nccl_tests(kData + "a100x8-1node-allreduce.txt", {});
  for (const char* name : {"log.txt", "all_gather_run.txt"}) {  // a neutral name, a misleading one
    const std::string p = temp_path(name);
    write(p, a100);
    const auto curves = ring_curves_from_nccl_tests(p, {});
    ASSERT_EQ(curves.size(), 1u);
    EXPECT_EQ(curves[0].collective, "all_reduce") << name;
    EXPECT_NE(curves[0].collective_source.find("busbw/algbw 1.75"), std::string::npos) << curves[0].collective_source;
    EXPECT_EQ(curves[0].times_s, named[0].times_s);
  }
  // all_gather: redop none, size = 8 x count x element, busbw/algbw (n-1)/n = 0.875.
  const std::string ag = without_names(read_text(kData + "nccltests_all_gather_2.txt"));
  const std::string p = temp_path("all_reduce_numbers.txt");
  write(p, ag);
  const auto curves = ring_curves_from_nccl_tests(p, {});
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves[0].collective, "all_gather");
}

TEST(CalibrationNcclTests, UntellableCollectiveNamesTheFlag) {
  // 2 ranks: 2(n-1)/n = 1 = sendrecv's factor, both reduce, both rootless, both count the whole
  // buffer. Without the echoed command the table cannot tell them apart; the file's name (which says
  // allreduce) must not decide.
  const std::string p = temp_path("rtx2080ti-allreduce.txt");
  write(p, without_names(read_text(kData + "rtx2080ti-x2-pcie-noP2P-allreduce.txt")));
  const std::string err = error_of([&] { ring_curves_from_nccl_tests(p, {}); });
  EXPECT_NE(err.find(p + ": line "), std::string::npos) << err;
  EXPECT_NE(err.find("cannot tell the collective: all_reduce, sendrecv all fit"), std::string::npos) << err;
  EXPECT_NE(err.find("pass --collective"), std::string::npos) << err;
  NcclTestsOptions opt;
  opt.collective = "all_reduce";
  const auto curves = ring_curves_from_nccl_tests(p, opt);
  EXPECT_EQ(curves[0].collective, "all_reduce");
  EXPECT_EQ(curves[0].collective_source, "--collective");
}

}  // namespace
}  // namespace ccsim
