// Real nccl-tests logs of all_gather, reduce_scatter and alltoall on 8-GPU H100 NVSwitch nodes
// (tests/data/nccl-tests, INDEX.md), each predicted from the dgx-h100 preset and what its source states,
// nothing fitted (docs/accuracy.md "All-gather, reduce-scatter and all-to-all on H100").
//
// The anchors are the links' bounds: one node's ring and all-to-all move every byte once per direction
// over each GPU's NVLink, 18 links x NCCL's 20.6 GB/s = 370.8 GB/s of busbw; across nodes a GPU's
// all-to-all sends half its data through its one 400 Gb/s NIC on 2 nodes (9/10 of it on 10), at IB's
// 0.97 of the line.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "algorithms/tuner.h"
#include "real_log_helpers.h"
#include "test_helpers.h"
#include "topologies/nccl_env.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

constexpr double kNvlinkBoundGBps = 18 * 20.6;
constexpr double kNicGBps = 400 / 8.0 * 0.97;

ValidatedRun validate_h100(const std::string& name) {
  return testing::validate_real_log(name, load_topology_spec("dgx-h100"), "dgx-h100");
}

// Together AI's H100 node with NCCL_ALGO=RING NCCL_NVLS_ENABLE=0 (its repository's "ring" configuration),
// -g 8, NCCL 2.26.2, 8 B to 8 GiB: both collectives meet both targets. Medians, latency / bandwidth:
// all_gather +3.5% / +6.9%, reduce_scatter +5.5% / +5.3%.
TEST(H100CollectiveLogs, RingAllGatherAndReduceScatterOnOneNode) {
  nlohmann::json spec = load_topology_spec("dgx-h100");
  apply_nccl_env(spec, "NCCL_NVLS_ENABLE=0", "--env", "test");
  ValidateOptions opts;
  opts.filter = parse_algo_filter("Ring", "", "test");
  for (const char* name : {"h100x8-1node-allgather-ring-g8-nccl2.26.2.txt", "h100x8-1node-reducescatter-ring-g8-nccl2.26.2.txt"}) {
    const ValidatedRun run = testing::validate_real_log(name, spec, "dgx-h100", opts);
    const ValidatedSize& last = run.sizes.back();
    EXPECT_EQ(last.size_bytes, 8589934592u) << name;
    EXPECT_EQ(last.nccl_algorithm, "Ring") << name;
    EXPECT_NEAR(last.predicted_busbw_GBps, kNvlinkBoundGBps, 0.005 * kNvlinkBoundGBps) << name;
    EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << name << " " << run.bandwidth.median_error;
    EXPECT_LT(std::fabs(run.latency.median_error), 0.20) << name << " " << run.latency.median_error;
  }
}

// Another cluster's node (one process per GPU, NCCL 2.29.2, 32 MiB to 16 GiB, NCCL's own choice): the
// ring collectives within the bandwidth target (+6.8%, +5.3%). Its all-to-all reaches 347.8 GB/s at 16
// GiB, 0.94 of the NVLink bound ccsim predicts there, but approaches it slowly (32-512 MiB 17-36% slower
// than predicted; median +14%): a known miss (docs/accuracy.md).
TEST(H100CollectiveLogs, OneNodeOfTheSecondCluster) {
  for (const char* name : {"h100x8-1node-allgather-nccl2.29.2.txt", "h100x8-1node-reducescatter-nccl2.29.2.txt"}) {
    const ValidatedRun run = validate_h100(name);
    EXPECT_NEAR(run.sizes.back().predicted_busbw_GBps, kNvlinkBoundGBps, 0.005 * kNvlinkBoundGBps) << name;
    EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << name << " " << run.bandwidth.median_error;
  }
  const ValidatedRun a2a = validate_h100("h100x8-1node-alltoall-nccl2.29.2.txt");
  const ValidatedSize& last = a2a.sizes.back();
  EXPECT_NEAR(last.predicted_busbw_GBps, kNvlinkBoundGBps, 0.005 * kNvlinkBoundGBps);
  EXPECT_NEAR(last.measured_busbw_GBps, 347.83, 1e-9);
  EXPECT_GT(a2a.bandwidth.median_error, 0.10);  // the slow approach: misses the target
}

// The same repository's clusters across nodes. Their network is not stated (no NCCL debug output), so
// the prediction takes dgx-h100's one 400 Gb/s InfiniBand NIC per GPU. 2 nodes, all-to-all: each GPU
// sends 8/16 of its data through its NIC, busbw = kNicGBps / (8/16) x 15/16 = 90.9; measured 75.2,
// which says 40.1 GB/s per NIC (+22%: that cluster's NICs deliver 0.83 of dgx-h100's, for reasons its
// log does not show). 10 nodes, all_gather: the ring's 16 channels of one thread block each bound it at
// 16 x 19.375 = 310 GB/s busbw, under NVLink's 370.8 and 8 NICs x 48.5; measured 324.3 = 8 x 40.5,
// the same per-NIC rate as the all-to-all's, 20.3 per channel (bandwidth side -3%; +20% while NVLink's
// bound set the prediction, docs/accuracy.md "A ring channel across nodes").
TEST(H100CollectiveLogs, AcrossNodesTheClustersNicsDeliverLessThanDgxH100s) {
  const ValidatedRun two = validate_h100("h100x16-2node-alltoall.txt");
  const ValidatedSize& a2a = two.sizes.back();
  EXPECT_NEAR(a2a.predicted_busbw_GBps, kNicGBps / (8.0 / 16) * 15 / 16, 0.005 * 90.9);
  const double nic_from_a2a = a2a.measured_busbw_GBps * 16 / 15 * 8 / 16;
  EXPECT_NEAR(nic_from_a2a, 40.1, 0.05);
  EXPECT_GT(two.bandwidth.median_error, 0.10);

  const ValidatedRun ag = validate_h100("h100x80-10node-allgather-nccl2.29.2.txt");
  EXPECT_EQ(ag.prediction.facts.nodes, 10);
  EXPECT_NEAR(ag.sizes.back().predicted_busbw_GBps, testing::kHopperNetRingGBps, 0.01 * testing::kHopperNetRingGBps);
  const double nic_from_ag = ag.sizes.back().measured_busbw_GBps / 8;
  EXPECT_NEAR(nic_from_ag, nic_from_a2a, 0.02 * nic_from_a2a);
  EXPECT_LT(std::fabs(ag.bandwidth.median_error), 0.10) << ag.bandwidth.median_error;
}

}  // namespace
}  // namespace ccsim
