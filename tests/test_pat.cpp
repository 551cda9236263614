// NCCL's PAT (algorithms/pat.h) against hand-derived numbers: steps and blocks per dimension,
// bytes per rank, the refusal rules, and the engine against the closed form on uniform clusters of
// single-GPU nodes.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/pat.h"
#include "algorithms/ring.h"
#include "common/error.h"
#include "sim/engine.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

using testing::preset;
using testing::single_gpu_nodes_spec;

constexpr double kNicBps = 400e9 / 8;  // single_gpu_nodes_spec's NIC, the narrowest link of every hop

Topology uniform(int n) { return build_topology(single_gpu_nodes_spec(n, 512, 1.0), "test"); }

TEST(Pat, StepsAndBlocksPerDimension) {
  // 8 ranks: dimensions 0, 1, 2 move 4, 2, 1 blocks (offsets t with lowest set bit k: {1,3,5,7},
  // {2,6}, {4}); 7 blocks = (n-1)/n of the buffer in 3 steps vs the ring's 7.
  EXPECT_EQ(pat_steps(8), 3);
  EXPECT_EQ(pat_blocks(8, 0), 4);
  EXPECT_EQ(pat_blocks(8, 1), 2);
  EXPECT_EQ(pat_blocks(8, 2), 1);
  EXPECT_EQ(ring_steps("all_gather", 8), 7);
  // 6 ranks (not a power of two): t in 1..5 -> lowest bit 0: {1,3,5}, 1: {2}, 2: {4}.
  EXPECT_EQ(pat_steps(6), 3);
  EXPECT_EQ(pat_blocks(6, 0), 3);
  EXPECT_EQ(pat_blocks(6, 1), 1);
  EXPECT_EQ(pat_blocks(6, 2), 1);
  for (int n = 2; n <= 64; ++n) {
    int total = 0;
    for (int k = 0; k < pat_steps(n); ++k) total += pat_blocks(n, k);
    EXPECT_EQ(total, n - 1) << n;
  }
}

TEST(Pat, ScheduleBytesPeersAndDependencies) {
  const Topology topo = uniform(8);
  const double S = 8e6;
  const Schedule rs = pat_schedule(topo, "reduce_scatter", S);
  ASSERT_EQ(rs.transfers.size(), 3u * 8);
  // reduce_scatter: step k sends to rank + 2^k, 4, 2, 1 blocks of S/8.
  for (const auto& t : rs.transfers) {
    EXPECT_EQ(t.dst, (t.src + (1 << t.step)) % 8);
    EXPECT_DOUBLE_EQ(t.bytes, (8 >> (t.step + 1)) * S / 8);
    EXPECT_EQ(t.dep_count, t.step == 0 ? 0u : 2u);
  }
  // all_gather: the reverse: dimension 2 first (1 block to rank - 4), dimension 0 last (4 blocks to rank - 1).
  const Schedule ag = pat_schedule(topo, "all_gather", S);
  for (const auto& t : ag.transfers) {
    const int dim = 2 - t.step;
    EXPECT_EQ(t.dst, ((t.src - (1 << dim)) % 8 + 8) % 8);
    EXPECT_DOUBLE_EQ(t.bytes, (8 >> (dim + 1)) * S / 8);
  }
  // Every rank sends (n-1)/n S, as with the ring.
  for (double b : ag.bytes_sent_per_rank()) EXPECT_NEAR(b, 7.0 / 8 * S, 1e-6);
}

TEST(Pat, RefusesWhatNcclDoesNotRun) {
  EXPECT_THROW(pat_schedule(preset("dgx-h100", 2), "all_gather", 1e6), InputError);  // 8 GPUs per node
  EXPECT_THROW(pat_schedule(uniform(4), "all_reduce", 1e6), InputError);
  EXPECT_THROW(pat_schedule(uniform(1), "all_gather", 1e6), InputError);
}

TEST(Pat, EngineMatchesClosedFormAndHandNumbers) {
  // Hand closed form on single-GPU nodes (NIC 50 GB/s, route latency below the step cost):
  //   T = 8 us + sum_k (4 us + 2.8 us x blocks_k) + (n-1)/n S / beta
  //     = 8 + 4 log2(n) + 2.8 (n-1) us + (n-1)/n S / beta.
  for (int n : {2, 8, 32}) {
    const Topology topo = uniform(n);
    const int d = pat_steps(n);
    for (const std::string coll : {"all_gather", "reduce_scatter"}) {
      const std::vector<double> sizes = {8.0 * n, 1 << 20, 256.0 * (1 << 20)};
      const Schedule s = pat_schedule(topo, coll, sizes.back());
      const auto results = simulate_sweep(topo, s, sizes, {});
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const double hand = (8 + 4.0 * d + 2.8 * (n - 1)) * 1e-6 + (n - 1.0) / n * sizes[i] / kNicBps;
        EXPECT_NEAR(pat_time_s(topo, coll, sizes[i]), hand, 1e-9) << coll << " n=" << n;
        EXPECT_NEAR(results[i].time_s, hand, 0.01 * hand) << coll << " n=" << n << " size=" << sizes[i];
      }
      // Node rotation maps PAT onto itself: one representative per step.
      EXPECT_EQ(results.back().symmetry_order, n) << coll << " n=" << n;
    }
  }
}

TEST(Pat, FewerStepsThanTheRingForSmallMessages) {
  // 32 nodes, 8 bytes per rank: PAT pays 5 steps, the ring 31 (NCCL Ring/Simple: 14 us per step).
  const Topology topo = uniform(32);
  const double pat = pat_time_s(topo, "all_gather", 256);
  const double ring_hand = 8.4e-6 + 31 * 14e-6;
  EXPECT_LT(pat, ring_hand / 3);
}

}  // namespace
}  // namespace ccsim
