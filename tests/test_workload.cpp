// The workload layer: schedules composed into one simulation, per-rank start and finish per operation.
#include <gtest/gtest.h>

#include "topologies/routing.h"
#include "test_helpers.h"
#include "workloads/workload.h"

namespace ccsim {
namespace {

// One transfer a -> b of `bytes`, no delay.
Schedule one_transfer(int nranks, int a, int b, double bytes) {
  Schedule s;
  s.collective = "test";
  s.algorithm = "p2p";
  s.nranks = nranks;
  Transfer t;
  t.src = a;
  t.dst = b;
  t.bytes = bytes;
  s.add(t, {});
  return s;
}

// The whole-NVLink rate of one H100 (18 links x 20.6 GB/s, NCCL's per-link figure: docs/topology.md).
constexpr double kH100NvlinkBps = 18 * 20.6e9;
constexpr double kBytes = 100e6;

class WorkloadTest : public ::testing::Test {
 protected:
  Topology topo = testing::preset("dgx-h100", 1);
  double hop_latency(int a, int b) const { return route_latency_s(topo, route_between_gpus(topo, a, b, -1)); }
};

TEST_F(WorkloadTest, BarrierRunsTheSecondOperationAfterTheFirstEverywhere) {
  // GPU0 -> GPU1, then (barrier, 5 us of compute) GPU2 -> GPU3: disjoint links, so only the barrier orders them.
  std::vector<WorkloadOp> ops(2);
  ops[0] = {"first", one_transfer(8, 0, 1, kBytes)};
  ops[1] = {"second", one_transfer(8, 2, 3, kBytes), WorkloadOp::Start::AfterBarrier, 0, 5e-6};
  const WorkloadResult r = simulate_workload(topo, ops, EngineOptions{});
  const double first = hop_latency(0, 1) + kBytes / kH100NvlinkBps;
  ASSERT_EQ(r.ops.size(), 2u);
  EXPECT_NEAR(r.ops[0].finish_s, first, first * 1e-9);
  EXPECT_NEAR(r.ops[1].start_s, first + 5e-6, 1e-12);
  EXPECT_NEAR(r.ops[1].time_s(), hop_latency(2, 3) + kBytes / kH100NvlinkBps, first * 1e-9);
  // Every rank waits for the barrier, also those that took no part in the first operation.
  EXPECT_NEAR(r.ops[1].rank_start_s[7], first + 5e-6, 1e-12);
  EXPECT_NEAR(r.ops[1].rank_finish_s[3], r.ops[1].finish_s, 1e-15);
  EXPECT_EQ(r.ops[1].rank_finish_s[0], 0.0);
}

TEST_F(WorkloadTest, PerRankStartLetsUninvolvedRanksGoAtOnce) {
  // Same operations, but each rank starts the second as soon as its own part of the first is done:
  // GPU2 took no part, so both transfers run side by side on disjoint links.
  std::vector<WorkloadOp> ops(2);
  ops[0] = {"first", one_transfer(8, 0, 1, kBytes)};
  ops[1] = {"second", one_transfer(8, 2, 3, kBytes), WorkloadOp::Start::AfterRank, 0, 0.0};
  const WorkloadResult r = simulate_workload(topo, ops, EngineOptions{});
  const double one = hop_latency(0, 1) + kBytes / kH100NvlinkBps;
  EXPECT_NEAR(r.ops[1].finish_s, one, one * 1e-9);
  EXPECT_EQ(r.ops[1].rank_start_s[2], 0.0);
  // A rank that received in the first operation starts the second when its receive is done.
  std::vector<WorkloadOp> chained(2);
  chained[0] = {"first", one_transfer(8, 0, 1, kBytes)};
  chained[1] = {"second", one_transfer(8, 1, 2, kBytes), WorkloadOp::Start::AfterRank, 0, 0.0};
  const WorkloadResult c = simulate_workload(topo, chained, EngineOptions{});
  EXPECT_NEAR(c.ops[1].rank_start_s[1], one, one * 1e-9);
  EXPECT_NEAR(c.ops[1].finish_s, 2 * one, one * 1e-9);
}

TEST_F(WorkloadTest, OverlappingOperationsShareTheirLinks) {
  // Both operations send from GPU0 at time zero: they share GPU0's NVLink, so each takes twice as long.
  std::vector<WorkloadOp> ops(2);
  ops[0] = {"a", one_transfer(8, 0, 1, kBytes)};
  ops[1] = {"b", one_transfer(8, 0, 2, kBytes)};
  const WorkloadResult r = simulate_workload(topo, ops, EngineOptions{});
  const double shared = hop_latency(0, 1) + 2 * kBytes / kH100NvlinkBps;
  EXPECT_NEAR(r.ops[0].finish_s, shared, shared * 1e-6);
  EXPECT_NEAR(r.ops[1].finish_s, shared, shared * 1e-6);
}

TEST_F(WorkloadTest, MarkersCarryDelaysButNoBytes) {
  // A marker between two transfers: the second waits for the first plus the marker's delay.
  Schedule s = one_transfer(8, 0, 1, kBytes);
  Transfer m;
  m.src = m.dst = 1;
  m.delay_s = 3e-6;
  const auto marker = s.add(m, {0});
  Transfer t;
  t.src = 1;
  t.dst = 2;
  t.bytes = kBytes;
  s.add(t, {marker});
  const SimResult r = simulate_one(topo, s, EngineOptions{});
  const double one = hop_latency(0, 1) + kBytes / kH100NvlinkBps;
  EXPECT_NEAR(r.time_s, 2 * one + 3e-6, one * 1e-9);
  for (const LinkStat& l : r.links) EXPECT_NEAR(l.bytes, kBytes, 1.0) << l.from << "->" << l.to;
}

TEST(Workload, RefusesAnOperationThatFollowsALaterOne) {
  std::vector<WorkloadOp> ops(1);
  ops[0] = {"x", one_transfer(2, 0, 1, 1.0), WorkloadOp::Start::AfterBarrier, 0, 0.0};
  EXPECT_THROW(compose_workload(ops, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace ccsim
