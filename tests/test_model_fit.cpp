// The description fitted to a measured run through ccsim's own model (`ccsim calibrate LOG --topology
// ...`, scenarios/model_fit.h): the plateau's link efficiency and the latency side's cost, carried to
// other collectives as a calibration.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "calibrate/calibration.h"
#include "calibrate/nccl_tests_log.h"
#include "scenarios/model_fit.h"
#include "topologies/spec.h"
#include "tests/cli_runner.h"
#include "tests/input_error_of.h"

using namespace ccsim;

namespace {

const std::string kData = std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/";

RunFit fit_log(const std::string& log, const std::string& preset, const std::vector<std::string>& sets = {}) {
  nlohmann::json spec = load_topology_spec(preset);
  for (const auto& s : sets) apply_override(spec, s, "test");
  const auto runs = parse_nccl_tests_file(kData + log);
  const ValidateOptions options;
  return fit_through_model(runs.at(0), kData + log, 0, spec, preset, options);
}

// `calibrate LOG --topology ... -o F` then `validate OTHER ... --calibration F`: the run's JSON verdicts.
nlohmann::json validate_with_fit(const std::string& fitted_from, const std::string& log, const std::string& flags) {
  const std::string cal = ccsim::testing::temp_file("fit-" + fitted_from + "-for-" + log + ".json");
  std::remove(cal.c_str());
  const auto c = ccsim::testing::run_ccsim("calibrate " + kData + fitted_from + " " + flags + " -o " + cal);
  EXPECT_EQ(c.code, 0) << c.err;
  const auto v = ccsim::testing::run_ccsim("validate " + kData + log + " " + flags + " --calibration " + cal + " --format json");
  EXPECT_NE(v.code, 2) << v.err;
  return nlohmann::json::parse(v.out)["runs"][0];
}

}  // namespace

// Two DGX-class H100 nodes (one 400 Gb/s NIC per GPU), alltoall: every GPU sends half its buffer S to
// the other node, and PXN funnels the 8 GPUs' shares for one remote GPU through that GPU's rail, so
// each NIC carries S/2 per direction. Bound by the NICs: algbw = S / T = 2 x 50 GB/s x e, busbw =
// 15/16 x algbw = 93.75 e GB/s. The log's plateau (74.92, 75.26, 75.22 GB/s at 4-16 GiB, median 75.22)
// is e = 75.22 / 93.75 = 0.802: the fit finds it, from the replay's busiest link, in the NIC's setting.
TEST(ModelFit, TheTwoNodeAllToAllsPlateauSetsTheNicEfficiency) {
  const RunFit f = fit_log("h100x16-2node-alltoall.txt", "dgx-h100");
  EXPECT_EQ(f.link.key, "node.nic.efficiency");
  EXPECT_DOUBLE_EQ(f.link.described, 0.97);  // InfiniBand's default (topologies/transports.cpp)
  EXPECT_NEAR(f.link.fitted, 75.22 / 93.75, 0.003);
  EXPECT_NEAR(f.predicted_busbw_GBps, 93.75 * 0.97, 0.5);
  EXPECT_NEAR(f.fitted_busbw_GBps, f.measured_busbw_GBps, 0.3);
  EXPECT_NE(f.bottleneck.find("nic"), std::string::npos) << f.bottleneck;
  EXPECT_EQ(f.plateau_sizes.size(), 3u);
  EXPECT_TRUE(f.link.notes.empty());
  EXPECT_FALSE(f.latency);  // every size of this sweep (32 MiB-16 GiB) lies past the knee
}

// Alps's two GH200 nodes (Slingshot, described as RoCE): the replay's busiest link at the largest size
// is the NIC, but the plateau is NCCL's Tree ceiling, which a lower NIC rate does not move. The fit
// keeps the described 0.95 and says why, instead of a value that changed nothing. (Santis's run of the
// same nodes has a Ring size among its three plateau sizes, which the NIC's rate does move.)
TEST(ModelFit, APlateauSetByAnotherBoundKeepsTheDescribedValue) {
  const RunFit f = fit_log("gh200x8-2node-alps-slingshot-allreduce.txt", "gh200-quad",
                           {"node.gpu.c2c=false", "node.nic.transport=roce"});
  EXPECT_EQ(f.link.key, "node.nic.efficiency");
  EXPECT_DOUBLE_EQ(f.link.fitted, f.link.described);
  ASSERT_EQ(f.link.notes.size(), 1u);
  EXPECT_NE(f.link.notes[0].find("does not follow"), std::string::npos) << f.link.notes[0];
}

// Google's A3 Ultra (8 H200, 8 RoCE NICs through the gIB plugin), as VMs and on GKE: the same machine
// type in two deployments. The preset alone puts both bandwidth sides 5-6% slow (its ring's 16 channels
// of one thread block's copy each, 310 GB/s busbw); no link bounds that plateau, so the fit scales the
// channels' rate (node.gpu.net_ring_channel_GBps 19.4 -> 20.4 on the VMs), and each run's fit predicts
// the other's within 3%.
TEST(ModelFit, OneDeploymentsFitPredictsTheOthersPlateau) {
  const std::string flags = "--topology dgx-h200 --set node.nic.transport=roce --collective all_gather";
  const auto gke = validate_with_fit("gcp-a3ultra-h200-2node-roce-allgather-nccl2.26.6.txt",
                                     "gcp-a3ultra-h200-2node-gke-allgather.txt", flags);
  const auto vm = validate_with_fit("gcp-a3ultra-h200-2node-gke-allgather.txt",
                                    "gcp-a3ultra-h200-2node-roce-allgather-nccl2.26.6.txt", flags);
  for (const auto* run : {&gke, &vm}) EXPECT_LT(std::fabs((*run)["bandwidth"]["median_error"].get<double>()), 0.03) << run->dump();
  // The VMs' plateau, 325.5 GB/s busbw over the ring's 16 channels: 20.3 GB/s per channel.
  const RunFit f = fit_log("gcp-a3ultra-h200-2node-roce-allgather-nccl2.26.6.txt", "dgx-h200", {"node.nic.transport=roce"});
  EXPECT_EQ(f.link.key, "node.gpu.net_ring_channel_GBps");
  EXPECT_NEAR(f.link.described, 55.19 / 4 / 1.41 * 1.98, 1e-6);
  EXPECT_NEAR(f.link.fitted, 325.52 / 16, 0.02 * 325.52 / 16);
  EXPECT_NEAR(f.fitted_busbw_GBps, f.measured_busbw_GBps, 0.01 * f.measured_busbw_GBps);
}

// A calibration with fitted links is a topology change: any collective is predicted with it, the
// all-to-all too (a ring calibration is refused there). One H100 node of the xxrjun cluster: its
// alltoall's plateau (0.94 of NVLink's bound) fits NVLink's efficiency, which predicts the same node's
// all_gather within 1% on the bandwidth side (the preset alone: +6.8%).
TEST(ModelFit, AnAllToAllsFitPredictsTheAllGatherOfTheSameNode) {
  const auto run = validate_with_fit("h100x8-1node-alltoall-nccl2.29.2.txt", "h100x8-1node-allgather-nccl2.29.2.txt",
                                     "--topology dgx-h100 --nccl-version 2.29.2");
  EXPECT_LT(std::fabs(run["bandwidth"]["median_error"].get<double>()), 0.02) << run.dump();
}

TEST(ModelFit, TheFileSectionRoundTripsAndRefusesWhatNoLinkHas) {
  Calibration cal;
  cal.fitted = FittedSettings{};
  cal.fitted->settings["node.nic.efficiency"] = 0.8;
  cal.fitted->settings["node.nic.latency_us"] = 9.5;
  const Calibration back = calibration_from_json(nlohmann::json::parse(calibration_to_json(cal)), "c.json");
  ASSERT_TRUE(back.fitted);
  EXPECT_DOUBLE_EQ(back.fitted->settings.at("node.nic.efficiency"), 0.8);
  const CalibrationEffect e = calibration_effect(back, load_topology_spec("dgx-h100"), StepTiming{});
  for (const char* o : {"node.nic.efficiency=0.8", "node.nic.latency_us=9.5"})
    EXPECT_NE(std::find(e.spec_overrides.begin(), e.spec_overrides.end(), o), e.spec_overrides.end()) << o;
  // A node without NICs does not take the NIC's settings.
  nlohmann::json no_nic = load_topology_spec("dgx-h100");
  apply_override(no_nic, "node.nic.count=0", "test");
  EXPECT_TRUE(calibration_effect(back, no_nic, StepTiming{}).spec_overrides.empty());

  auto error_of = [](const std::string& fitted) {
    return ccsim::testing::input_error_of([&] {
      calibration_from_json(nlohmann::json::parse(R"({"format": "ccsim-calibration/1", "classes": {}, "fitted": )" + fitted + "}"),
                            "c.json");
    });
  };
  EXPECT_NE(error_of(R"({"settings": {"node.nic.Gbps": 0.8}})").find("/fitted/settings/node.nic.Gbps: unknown setting"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"settings": {"node.nic.efficiency": 1.2}})").find("at most 1"), std::string::npos);
  EXPECT_NE(error_of(R"({"settings": {"node.nic.efficiency": 0}})").find("> 0"), std::string::npos);
  EXPECT_NE(error_of(R"({"settings": {"node.nic.latency_us": -1}})").find(">= 0"), std::string::npos);
  EXPECT_NE(error_of(R"({"settings": {"node.cpu.launch_us": 5000}})").find("at most 1000"), std::string::npos);
  EXPECT_NE(error_of(R"({"settings": {}})").find("/fitted/settings"), std::string::npos);
}

TEST(ModelFit, BadInputIsOneErrorLineAndNoFile) {
  const std::string out = ccsim::testing::temp_file("fit-bad.json");
  std::remove(out.c_str());
  // The hardware flags of a fit without the hardware.
  auto r = ccsim::testing::run_ccsim("calibrate " + kData + "h100x16-2node-alltoall.txt --set node.nic.count=4 -o " + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--set: describes the hardware of a fit through the model: give --topology too"), std::string::npos) << r.err;
  r = ccsim::testing::run_ccsim("calibrate " + kData + "h100x16-2node-alltoall.txt --topology dgx-h100 --link fabric -o " + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown link 'fabric' (valid: nvlink, pcie, nic)"), std::string::npos) << r.err;
  // A sweep that ends before its plateau (the 2-node H100 all_reduce run to 64 KiB only, far below its
  // knee of 26.7 MiB): nothing to fit a rate from.
  std::string text, line;
  std::ifstream full(kData + "h100x16-2node-ndr-allreduce.txt");
  while (std::getline(full, line)) {
    std::istringstream fields(line);
    long long size = 0;
    if (!line.empty() && line[0] != '#' && (fields >> size) && size > 65536) break;
    const auto max = line.find("maxBytes 17179869184");
    text += (max == std::string::npos ? line : line.replace(max, 20, "maxBytes 65536")) + "\n";
  }
  text += "# Avg bus bandwidth    : 0.5\n";
  const std::string cut = ccsim::testing::write_temp_file("fit-cut.txt", text);
  r = ccsim::testing::run_ccsim("calibrate " + cut + " --topology dgx-h100 --ranks 16 --nodes 2 -o " + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no size on the bandwidth side of the knee"), std::string::npos) << r.err;
  std::ifstream written(out);
  EXPECT_FALSE(written.good());
}

// The MoE layer takes the same calibration (`ccsim moe --calibration`): the 2-node all-to-all's fitted
// NICs (0.80 of line rate where InfiniBand's default is 0.97) slow DeepEP's RDMA-bound dispatch on the
// same two nodes by 0.97 / 0.80, the phase's time being its NICs' bytes over their rate. A ring
// calibration, which describes ring collectives, is refused there.
TEST(ModelFit, AFittedLinkCarriesToAnMoeLayer) {
  const std::string cal = ccsim::testing::temp_file("fit-moe.json");
  std::remove(cal.c_str());
  ASSERT_EQ(ccsim::testing::run_ccsim("calibrate " + kData + "h100x16-2node-alltoall.txt --topology dgx-h100 -o " + cal).code, 0);
  const double fitted =
      nlohmann::json::parse(ccsim::testing::read_text_file(cal))["fitted"]["settings"]["node.nic.efficiency"].get<double>();
  auto layer = [](const std::string& flags) {
    const auto r = ccsim::testing::run_ccsim("moe --nodes 2 --format json " + flags);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const double preset = layer("")["transports"][0]["dispatch"]["time_us"].get<double>();
  const nlohmann::json calibrated = layer("--calibration " + cal);
  const double calibrated_us = calibrated["transports"][0]["dispatch"]["time_us"].get<double>();
  EXPECT_NEAR(calibrated_us / preset, 0.97 / fitted, 0.01 * 0.97 / fitted);
  // The report names the setting it made, which --set reproduces exactly.
  ASSERT_EQ(calibrated["calibration"]["settings"].size(), 1u);
  const std::string setting = calibrated["calibration"]["settings"][0].get<std::string>();
  EXPECT_EQ(setting.rfind("node.nic.efficiency=", 0), 0u) << setting;
  EXPECT_DOUBLE_EQ(calibrated_us, layer("--set " + setting)["transports"][0]["dispatch"]["time_us"].get<double>());

  const std::string ring = ccsim::testing::temp_file("fit-moe-ring.json");
  std::remove(ring.c_str());
  ASSERT_EQ(ccsim::testing::run_ccsim("calibrate " + kData + "h100x16-2node-ndr-allreduce.txt --ranks 16 --nodes 2 -o " + ring).code, 0);
  const auto refused = ccsim::testing::run_ccsim("moe --nodes 2 --calibration " + ring);
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("holds an equivalent ring"), std::string::npos) << refused.err;
}

// The latency side's cost fitted on one collective carries to another of the same cluster. The
// xxrjun cluster's 10 H100 nodes: the all_gather's 32-128 MiB rows take 1.7-2.2x the preset's
// prediction (NCCL 2.29's ring over 80 ranks pays a network step per ring step); fitted there, the
// network's per-step latency (tens of microseconds, this cluster's, where InfiniBand's default is 1.5)
// and NVLink's efficiency predict the same job's reduce_scatter within both of issue 11's targets; the
// preset alone misses by +116% and +17%.
TEST(ModelFit, TheNetworkStepFittedOnOneCollectivePredictsAnother) {
  const RunFit f = fit_log("h100x80-10node-allgather-nccl2.29.2.txt", "dgx-h100");
  ASSERT_TRUE(f.latency);
  EXPECT_EQ(f.latency->key, "node.nic.latency_us");
  EXPECT_DOUBLE_EQ(f.latency->described, 1.5);
  EXPECT_GT(f.latency->fitted, 10.0);
  EXPECT_NEAR(f.latency_error_fitted, 0.0, 0.02);  // its own latency side, median
  EXPECT_GT(f.latency_error_described, 0.5);
  const auto run = validate_with_fit("h100x80-10node-allgather-nccl2.29.2.txt", "h100x80-10node-reducescatter-nccl2.29.2.txt",
                                     "--topology dgx-h100");
  EXPECT_LT(std::fabs(run["latency"]["median_error"].get<double>()), 0.20) << run.dump();
  EXPECT_LT(std::fabs(run["bandwidth"]["median_error"].get<double>()), 0.10) << run.dump();
}

// Where nccl-tests' -g N launches bound the small sizes, the fitted cost is the host's launch per GPU.
// SuperBench's A100 VM (-g 8): its reduce_scatter's flat 33.5-35 us floor is 8 serial launches of
// about 4.2-4.4 us (nccl-tests' timing loop adds a twentieth of the device time), which predicts the
// VM's all_reduce's floor too: the same 8 launches per iteration, whatever the collective.
TEST(ModelFit, AMultiGpuThreadsFloorFitsTheHostLaunch) {
  const RunFit f = fit_log("a100x8-superbench-reducescatter-g8.txt", "hgx-a100");
  ASSERT_TRUE(f.latency);
  EXPECT_EQ(f.latency->key, "node.cpu.launch_us");
  EXPECT_NEAR(f.latency->fitted, 34.0 / 8, 0.3);
  const auto run = validate_with_fit("a100x8-superbench-reducescatter-g8.txt", "a100x8-superbench-allreduce-g8.txt",
                                     "--topology hgx-a100");
  EXPECT_LT(std::fabs(run["latency"]["median_error"].get<double>()), 0.05) << run.dump();
}

// Together AI's B200 cluster (8 x 400 Gb/s InfiniBand per node, NCCL 2.29.7), send/recv on 2 and 4
// nodes: each node's one pair across the network holds 0.86-0.89 of its NIC, and 1-16 KiB take 23-35 us
// against P2P/LL's 12 us on InfiniBand's 1.5 us step. The 2-node run's fit (NICs below the described
// 0.97, a network step well above 1.5 us) predicts the 4-node run within both targets, which the
// description alone misses on the latency side (+40%).
TEST(ModelFit, ASendRecvFitCarriesToAnotherNodeCount) {
  const RunFit f = fit_log("together-b200x16-2node-ib-sendrecv-nccl2.29.7.txt", "dgx-b200");
  EXPECT_EQ(f.link.key, "node.nic.efficiency");
  EXPECT_LT(f.link.fitted, 0.90);
  EXPECT_GT(f.link.fitted, 43.14 / 50.0);  // at least the plateau's own share of the line
  ASSERT_TRUE(f.latency);
  EXPECT_EQ(f.latency->key, "node.nic.latency_us");
  EXPECT_GT(f.latency->fitted, 10.0);
  const auto run = validate_with_fit("together-b200x16-2node-ib-sendrecv-nccl2.29.7.txt",
                                     "together-b200x32-4node-ib-sendrecv-nccl2.29.7.txt", "--topology dgx-b200");
  EXPECT_LT(std::fabs(run["latency"]["median_error"].get<double>()), 0.20) << run.dump();
  EXPECT_LT(std::fabs(run["bandwidth"]["median_error"].get<double>()), 0.10) << run.dump();
}
