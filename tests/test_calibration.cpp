// Calibration from real nccl-tests logs (acceptance: the calibrated closed form reproduces each
// log), the calibration file, its effect on a topology, and broken inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "calibrate/calibration.h"
#include "cli/calibrate_command.h"
#include "common/error.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

const std::string kData = std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/";

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "ccsim_cal_" + name; }

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

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

}  // namespace
}  // namespace ccsim
