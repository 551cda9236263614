// Values beyond physics (issue 13): they crashed SimGrid, hung the engine or printed inf or
// impossible bandwidths with exit 0. Every input path now checks the documented bounds
// (docs/topology.md and docs/calibration.md, "Limits"; docs/errors.md).
#include <gtest/gtest.h>

#include "hardening_helpers.h"
#include "scenarios/predict.h"

namespace ccsim {
namespace {

using hardening::ccsim;
using hardening::expect_input_error;
using hardening::write_temp;

TEST(HardeningRanges, TopologyValuesHavePhysicalBounds) {
  // 1e300 GB/s per link made SimGrid's child abort ("double free or corruption", 15 lines).
  expect_input_error(ccsim("all_reduce_perf --set node.nvlink.GBps_per_link=1e300"),
                     {"/node/nvlink/GBps_per_link: must be > 0 and at most 10000 (got 1e+300)"});
  // 1e308 oversubscription printed inf.
  expect_input_error(ccsim("all_reduce_perf --nodes 2 --set fabric.oversubscription=1e308"),
                     {"/fabric/oversubscription: must be >= 1 and at most 1000"});
  expect_input_error(ccsim("all_reduce_perf --set node.nic.Gbps=1e9"), {"/node/nic/Gbps: must be > 0 and at most 100000"});
  expect_input_error(ccsim("all_reduce_perf --set node.nvlink.latency_us=1e12"),
                     {"/node/nvlink/latency_us: must be >= 0 and at most 1e+06"});
  // The bounds leave real hardware alone: NVLink5 (50 GB/s per link), XDR NICs (1600 Gb/s).
  EXPECT_EQ(ccsim("all_reduce_perf -b 1M -e 1M --set node.nvlink.GBps_per_link=50 --set node.nic.Gbps=1600").code, 0);
}

TEST(HardeningRanges, SimGridConfigurationIsCheckedBeforeSimGridSeesIt) {
  // "garbage" made SimGrid print a backtrace.
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=garbage"),
                     {"CCSIM_SIMGRID_CFG: expected KEY:VALUE", "network/model", "(got 'garbage')"});
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=host/model:x"), {"CCSIM_SIMGRID_CFG"});
  EXPECT_EQ(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=surf/precision:1e-9").code, 0);
}

std::string calibration(const std::string& nvlink_fields) {
  return write_temp("cal.json", R"({"format": "ccsim-calibration/1", "classes": {"nvlink": {"collective": "all_reduce", )"
                                R"("ranks": 8, "nodes": 1, )" + nvlink_fields + "}}}");
}

TEST(HardeningRanges, CalibrationValuesHavePhysicalBounds) {
  const std::string ok = R"("alpha_s": 1e-6, "beta_Bps": 3e11, "launch_s": 5e-6)";
  ASSERT_EQ(ccsim("all_reduce_perf -b 1M -e 1M --calibration " + calibration(ok)).code, 0);
  // alpha_s 1e300 hung the engine.
  expect_input_error(ccsim("all_reduce_perf --calibration " +
                           calibration(R"("alpha_s": 1e300, "beta_Bps": 3e11, "launch_s": 5e-6)")),
                     {"/classes/nvlink/alpha_s: must be a number >= 0 and at most 1"});
  // Tiny betas printed inf.
  expect_input_error(ccsim("all_reduce_perf --calibration " +
                           calibration(R"("alpha_s": 1e-6, "beta_Bps": 1e-300, "launch_s": 5e-6)")),
                     {"/classes/nvlink/beta_Bps: must be a number >= 1e+06 and at most 1e+13"});
  // An efficiency of 50 gave 9432 GB/s of bus bandwidth on an H100 node.
  expect_input_error(ccsim("all_reduce_perf --calibration " + calibration(ok + R"(, "efficiency": [[1, 50]])")),
                     {"/classes/nvlink/efficiency/0/1: factor must be in (0, 2] (got 50)"});
}

TEST(HardeningRanges, SweepsThatWouldStallOrExplodeAreRefused) {
  // nccl-tests multiplies in double and truncates: 1 x 1.5 = 1, so the sweep stopped after one row.
  expect_input_error(ccsim("all_reduce_perf -b 1 -e 1K -f 1.5"), {"-f", "does not grow -b 1"});
  expect_input_error(ccsim("all_reduce_perf -b 8 -e 1M -f 1.0000001"), {"-f", "does not grow -b 8"});
  expect_input_error(ccsim("all_reduce_perf -b 8 -e 1M -f inf"), {"-f", "expected a finite number, got 'inf'"});
  expect_input_error(ccsim("all_reduce_perf -b 0 -e 1M -f 2"), {"-f", "does not grow -b 0"});
  // Materialised before any work: 4 GB and bad_alloc.
  expect_input_error(ccsim("all_reduce_perf -b 0 -e 1G -i 1"), {"-i", "1073741825 sizes, above ccsim's limit of 100000"});
  expect_input_error(ccsim("all_reduce_perf -b 8 -e 16777215T -f 2"), {"-e", "above ccsim's limit of 1 PiB"});
  // At the limit and below: accepted (closed form, so it is fast).
  SizeSweep s;
  s.min_bytes = 1;
  s.max_bytes = kMaxSweepSizes;
  s.step_bytes = 1;
  EXPECT_EQ(sweep_sizes(s).size(), kMaxSweepSizes);
  s.max_bytes = kMaxSweepSizes + 1;
  EXPECT_THROW(sweep_sizes(s), std::exception);
}

TEST(HardeningRanges, LongSweepsWarnUpFront) {
  // nccl-tests' default 1 MiB step up to 8 GiB: 8,192 sizes (94 s of engine time) without a word.
  const auto r = ccsim("all_reduce_perf -b 1M -e 2G -i 1M --model closed-form");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "ccsim: warning: 2048 sizes to predict (above 1000)\n");
}

}  // namespace
}  // namespace ccsim
