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
                     {"/node/nvlink/GBps_per_link: must be at most 10000 (got 1e+300; docs/topology.md, Limits)"});
  // 1e308 oversubscription printed inf.
  expect_input_error(ccsim("all_reduce_perf --nodes 2 --set fabric.oversubscription=1e308"),
                     {"/fabric/oversubscription: must be at most 1000 (got 1e+308"});
  expect_input_error(ccsim("all_reduce_perf --set node.nic.Gbps=1e9"), {"/node/nic/Gbps: must be at most 100000"});
  expect_input_error(ccsim("all_reduce_perf --set node.nvlink.latency_us=1e12"),
                     {"/node/nvlink/latency_us: must be at most 1e+06"});
  // An NVLS efficiency of 1e-10 printed 2349 GB/s of bus bandwidth on an H100 node (multimem bytes
  // scaled by 1e10 beyond what the engine's solver resolves); 1% is the floor of every efficiency.
  expect_input_error(ccsim("all_reduce_perf --set node.nvlink.nvls_efficiency=1e-10"),
                     {"/node/nvlink/nvls_efficiency: must be a fraction in [0.01, 1] (got 1e-10)"});
  // The bounds leave real hardware alone: NVLink5 (50 GB/s per link), XDR NICs (1600 Gb/s).
  EXPECT_EQ(ccsim("all_reduce_perf -b 1M -e 1M --set node.nvlink.GBps_per_link=50 --set node.nic.Gbps=1600").code, 0);
}

std::string calibration(const std::string& nvlink_fields) {
  return write_temp("cal.json", R"({"format": "ccsim-calibration/1", "classes": {"nvlink": {"collective": "all_reduce", )"
                                R"("ranks": 8, "nodes": 1, )" + nvlink_fields + "}}}");
}

// Rates had no lower bound (only > 0): 1e-308 GB/s per link printed inf, 1e-300 Gb/s NICs 2e303 us.
TEST(HardeningRanges, BandwidthsHaveALowerBoundOnEveryPath) {
  expect_input_error(ccsim("all_reduce_perf -b 1G -e 1G --set node.nvlink.GBps_per_link=1e-308"),
                     {"/node/nvlink/GBps_per_link: must be at least 0.001 (got 1e-308; docs/topology.md, Limits)"});
  expect_input_error(ccsim("all_reduce_perf --nodes 2 --set node.nic.Gbps=1e-300"),
                     {"/node/nic/Gbps: must be at least 0.008 (got 1e-300"});
  expect_input_error(ccsim("all_reduce_perf --set node.cpu.inter_socket_GBps=1e-300"),
                     {"/node/cpu/inter_socket_GBps: must be at least 0.001"});
  expect_input_error(ccsim("all_reduce_perf --set node.pcie.p2p=none --set node.cpu.host_memory_GBps=1e-300"),
                     {"/node/cpu/host_memory_GBps: must be at least 0.001"});
  expect_input_error(ccsim("all_reduce_perf --algo NVLS --set node.nvlink.nvls_reduce_GBps=1e-300"),
                     {"/node/nvlink/nvls_reduce_GBps: must be at least 0.001"});
  expect_input_error(ccsim("all_reduce_perf --nodes 2 --algo CollNetDirect --set fabric.sharp=true "
                           "--set fabric.sharp_reduce_GBps=1e-300"),
                     {"/fabric/sharp_reduce_GBps: must be at least 0.001"});
  expect_input_error(ccsim("all_reduce_perf --set node.nic.message_rate_Mps=1e-300"),
                     {"/node/nic/message_rate_Mps: must be at least 0.001"});
  // A topology file takes the same path.
  std::string slow = hardening::slurp(std::string(CCSIM_SOURCE_DIR) + "/topologies/presets/dgx-h100.json");
  const std::string rate = "\"GBps_per_link\": 25.0";
  ASSERT_NE(slow.find(rate), std::string::npos);
  slow.replace(slow.find(rate), rate.size(), "\"GBps_per_link\": 1e-308");
  expect_input_error(ccsim("all_reduce_perf --topology " + write_temp("slow.json", slow)),
                     {"slow.json: /node/nvlink/GBps_per_link: must be at least 0.001"});
  // At the bounds: accepted, with finite times.
  const auto r = ccsim("all_reduce_perf -b 1M -e 1M --model closed-form --set node.nvlink.GBps_per_link=0.001");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.find("inf"), std::string::npos);
  EXPECT_EQ(r.out.find("nan"), std::string::npos);
}

TEST(HardeningRanges, CalibratedBandwidthTimesEfficiencyIsBounded) {
  const std::string head = R"("alpha_s": 1e-6, "launch_s": 5e-6, )";
  // 1e-300 gave 4e11 us; beta 1e13 with a factor 2 gave 16,636 GB/s of bus bandwidth.
  expect_input_error(ccsim("all_reduce_perf --calibration " + calibration(head + R"("beta_Bps": 3e11, "efficiency": [[1, 1e-300]])")),
                     {"/classes/nvlink/efficiency/0/1: factor 1e-300 x beta_Bps 3e+11", "is outside 1e6 (1 MB/s) .. 1e13 B/s"});
  expect_input_error(ccsim("all_reduce_perf --calibration " + calibration(head + R"("beta_Bps": 1e13, "efficiency": [[1, 2]])")),
                     {"/classes/nvlink/efficiency/0/1: factor 2 x beta_Bps 1e+13 = 2e+13 B/s is outside"});
  EXPECT_EQ(ccsim("all_reduce_perf -b 1M -e 1M --calibration " +
                  calibration(head + R"("beta_Bps": 3e11, "efficiency": [[1, 0.5], [1048576, 1.05]])")).code,
            0);
}

TEST(HardeningRanges, SimGridConfigurationIsCheckedBeforeSimGridSeesIt) {
  // "garbage" made SimGrid print a backtrace.
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=garbage"),
                     {"CCSIM_SIMGRID_CFG: expected KEY:VALUE", "network/model", "(got 'garbage')"});
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=host/model:x"), {"CCSIM_SIMGRID_CFG"});
  EXPECT_EQ(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=surf/precision:1e-9").code, 0);
  // Known keys with values SimGrid aborts on (signal 6) or that give times beyond physics.
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=network/model:bogus"),
                     {"CCSIM_SIMGRID_CFG: network/model must be one of CM02, LV08 (got 'bogus')"});
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=network/bandwidth-factor:0"),
                     {"CCSIM_SIMGRID_CFG: network/bandwidth-factor must be a number in (0, 1] (got '0')"});
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=surf/precision:abc"),
                     {"CCSIM_SIMGRID_CFG: surf/precision must be a number in [1e-15, 0.01] (got 'abc')"});
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=network/latency-factor:1e300"),
                     {"CCSIM_SIMGRID_CFG: network/latency-factor must be a number in (0, 10] (got '1e300')"});
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=network/optim:full"),
                     {"network/optim must be one of Full, Lazy (got 'full')"});
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=network/TCP-gamma:1"), {"CCSIM_SIMGRID_CFG"});
  // Cross traffic on aborted SimGrid: ccsim's platform has no reverse routes.
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=network/crosstraffic:1"),
                     {"network/crosstraffic must be one of 0, no, false, off (got '1')"});
  // Every allowed key reaches SimGrid without an abort.
  for (const std::string ok : {"network/model:LV08", "network/optim:Lazy", "network/maxmin-selective-update:yes",
                                "network/crosstraffic:0", "network/latency-factor:2", "network/bandwidth-factor:0.9",
                                "network/weight-S:8775", "maxmin/precision:1e-9"}) {
    const auto r = ccsim("all_reduce_perf -b 1M -e 1M", "", "CCSIM_SIMGRID_CFG=" + ok);
    EXPECT_EQ(r.code, 0) << ok << ": " << r.err;
  }
}


TEST(HardeningRanges, CalibrationValuesHavePhysicalBounds) {
  const std::string ok = R"("alpha_s": 1e-6, "beta_Bps": 3e11, "launch_s": 5e-6)";
  ASSERT_EQ(ccsim("all_reduce_perf -b 1M -e 1M --calibration " + calibration(ok)).code, 0);
  // alpha_s 1e300 hung the engine.
  expect_input_error(ccsim("all_reduce_perf --calibration " +
                           calibration(R"("alpha_s": 1e300, "beta_Bps": 3e11, "launch_s": 5e-6)")),
                     {"/classes/nvlink/alpha_s: must be at most 1 (got 1e+300; docs/calibration.md, Limits)"});
  // Tiny betas printed inf.
  expect_input_error(ccsim("all_reduce_perf --calibration " +
                           calibration(R"("alpha_s": 1e-6, "beta_Bps": 1e-300, "launch_s": 5e-6)")),
                     {"/classes/nvlink/beta_Bps: must be at least 1e+06 (1 MB/s; got 1e-300"});
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
