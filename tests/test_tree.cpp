// NCCL's Tree all_reduce (algorithms/tree.h) against hand-derived numbers: NCCL's double binary tree
// shapes, dependency chains and hop counts, bytes per rank, and the engine's times in the latency-
// and bandwidth-bound regimes on uniform clusters of single-GPU nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "algorithms/nccl_channels.h"
#include "algorithms/ring.h"
#include "algorithms/tree.h"
#include "algorithms/tree_closed_form.h"
#include "sim/engine.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

using testing::preset;
using testing::single_gpu_nodes_spec;

// single_gpu_nodes_spec: 400 Gb/s NIC = 50 GB/s per direction is the narrowest link of every hop.
// NCCL 2.30 Tree/Simple: baseLat 8.4 us, hwLat NET 14 us, NVLink 4.0 us, PCI 4.0 us.
constexpr double kNicBps = 400e9 / 8;
constexpr double kLaunchS = 8.4e-6;
constexpr double kNetStepS = 14e-6;
constexpr double kNvlStepS = 4.0e-6;

int ceil_log2(int n) {
  int d = 0;
  while ((1 << d) < n) ++d;
  return d;
}

Topology uniform(int n) { return build_topology(single_gpu_nodes_spec(n, 512, 1.0), "test"); }

// Longest chain of dependent transfers (counted in transfers) and the most inter-node transfers on
// any chain.
struct Chains {
  int longest = 0;
  int most_inter = 0;
};
Chains chains(const Schedule& s, int gpus_per_node) {
  std::vector<int> len(s.transfers.size()), inter(s.transfers.size());
  Chains c;
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const Transfer& t = s.transfers[i];
    int l = 0, x = 0;
    for (std::uint32_t k = 0; k < t.dep_count; ++k) {
      const auto d = s.deps_of(t)[k];
      EXPECT_LT(d, i);
      l = std::max(l, len[d]);
      x = std::max(x, inter[d]);
    }
    len[i] = l + 1;
    inter[i] = x + (t.src / gpus_per_node != t.dst / gpus_per_node ? 1 : 0);
    c.longest = std::max(c.longest, len[i]);
    c.most_inter = std::max(c.most_inter, inter[i]);
  }
  return c;
}

TEST(Tree, BtreeMatchesNcclIllustration) {
  // trees.cc's picture for 14 ranks: 0 -> 8; 8 -> 4, 12; 4 -> 2, 6; 12 -> 10, 13; 2 -> 1, 3; ...
  EXPECT_EQ(nccl_btree(14, 0).up, -1);
  EXPECT_EQ(nccl_btree(14, 0).down0, -1);
  EXPECT_EQ(nccl_btree(14, 0).down1, 8);
  EXPECT_EQ(nccl_btree(14, 8).up, 0);
  EXPECT_EQ(nccl_btree(14, 8).down0, 4);
  EXPECT_EQ(nccl_btree(14, 8).down1, 12);
  EXPECT_EQ(nccl_btree(14, 12).down0, 10);
  EXPECT_EQ(nccl_btree(14, 12).down1, 13);
  EXPECT_EQ(nccl_btree(14, 13).up, 12);
  EXPECT_EQ(nccl_btree(14, 9).up, 10);
  EXPECT_EQ(nccl_btree(14, 1).down0, -1);
  // The mirror for 12 ranks: root 11 -> 3; 3 -> 1, 7; 7 -> 5, 9; 1 -> 0, 2.
  EXPECT_EQ(nccl_dtree(12, 11, 1).up, -1);
  EXPECT_EQ(nccl_dtree(12, 11, 1).down1, 3);
  EXPECT_EQ(nccl_dtree(12, 3, 1).up, 11);
  EXPECT_EQ(nccl_dtree(12, 7, 1).up, 3);
  EXPECT_EQ(nccl_dtree(12, 0, 1).up, 1);
  // The shift for 13 ranks: root 1 -> 9; 9 -> 5, 0; 0 -> 11.
  EXPECT_EQ(nccl_dtree(13, 1, 1).up, -1);
  EXPECT_EQ(nccl_dtree(13, 9, 1).up, 1);
  EXPECT_EQ(nccl_dtree(13, 0, 1).up, 9);
  EXPECT_EQ(nccl_dtree(13, 11, 1).up, 0);
}

TEST(Tree, DoubleBinaryTreeShape) {
  for (int n = 2; n <= 64; ++n) {
    const Topology topo = uniform(n);
    const TreePlan plan = plan_trees(topo, 2);
    ASSERT_EQ(plan.families.size(), 2u);
    for (const auto& f : plan.families) {
      // Both trees span the nodes, have binary fan-out and depth ceil(log2 n).
      int roots = 0;
      for (int v = 0; v < n; ++v) {
        roots += f.parent_node[v] < 0;
        EXPECT_LE(f.child_nodes[v].size(), 2u);
        for (int c : f.child_nodes[v]) EXPECT_EQ(f.parent_node[c], v);
      }
      EXPECT_EQ(roots, 1) << n;
      EXPECT_EQ(f.depth(), ceil_log2(n)) << "n=" << n << " tree " << f.tree;
    }
    if (n % 2 == 0) {
      // Complementary (mirror): no node is interior (has children) in both trees.
      for (int v = 0; v < n; ++v)
        EXPECT_FALSE(!plan.families[0].child_nodes[v].empty() && !plan.families[1].child_nodes[v].empty())
            << "n=" << n << " node " << v;
    }
  }
}

TEST(Tree, CriticalPathHopsAgainstRing) {
  // One chunk (8 bytes): the longest chain of dependent transfers is up and down the tree,
  // 2 ((ppn - 1) + depth) transfers; with one GPU per node 2 ceil(log2 n), vs the ring's 2 (n - 1).
  for (int n : {2, 4, 8, 32}) {
    const Topology topo = uniform(n);
    const Schedule s = tree_schedule(topo, plan_trees(topo, 2), "all_reduce", 8, {});
    const Chains c = chains(s, 1);
    EXPECT_EQ(c.longest, 2 * ceil_log2(n)) << n;
    EXPECT_EQ(c.most_inter, 2 * ceil_log2(n)) << n;
    EXPECT_EQ(ring_steps("all_reduce", n), 2 * (n - 1));
    // Per tree, every non-root rank sends up once and receives down once: 2 (n - 1) transfers.
    EXPECT_EQ(s.transfers.size(), 2u * 2 * (n - 1));
  }
  // 4 dgx-h100 nodes (ppn 8): 2 (7 + 2) = 18 transfers, 4 of them between nodes; 8 rails x 2 trees.
  const Topology dgx = preset("dgx-h100", 4);
  const TreePlan plan = plan_trees(dgx, 16);
  EXPECT_EQ(plan.families.size(), 16u);
  const Schedule s = tree_schedule(dgx, plan, "all_reduce", 8, {});
  const Chains c = chains(s, 8);
  EXPECT_EQ(c.longest, 2 * (7 + 2));
  EXPECT_EQ(c.most_inter, 4);
  // Inter-node transfers leave from and arrive at the family's head GPU, on the family's rail.
  for (const auto& t : s.transfers) {
    const TreeFamily& f = plan.families[t.family];
    if (t.src / 8 != t.dst / 8) {
      EXPECT_EQ(t.rail, f.rail);
      EXPECT_EQ(t.src % 8, f.chain[0]);
      EXPECT_EQ(t.dst % 8, f.chain[0]);
    } else {
      EXPECT_EQ(t.rail, -1);
    }
  }
}

TEST(Tree, ChunksArePipelinedNotStoreAndForward) {
  const Topology topo = uniform(8);
  const TreePlan plan = plan_trees(topo, 2);
  // 1 GiB: 512 MiB per tree and channel = 1024 NCCL chunks of 512 KiB, capped at 64.
  EXPECT_EQ(tree_chunks(topo, plan, 1 << 30, {}), 64);
  EXPECT_EQ(tree_chunks(topo, plan, 3.0 * 512 * 1024 * 2, {}), 3);
  EXPECT_EQ(tree_chunks(topo, plan, 8, {}), 1);
  const Schedule s = tree_schedule(topo, plan, "all_reduce", 1 << 30, {});
  EXPECT_EQ(s.transfers.size(), 64u * 2 * 2 * 7);
  // No chunk waits for another chunk: the chains stay as long as with one chunk.
  EXPECT_EQ(chains(s, 1).longest, 2 * 3);
  // Every connection carries its chunks in order, one record per chunk.
  std::map<std::tuple<int, int, int>, int> next;
  for (const auto& t : s.transfers) {
    int& k = next[{t.src, t.dst, t.family}];
    EXPECT_EQ(t.step, k);
    ++k;
    EXPECT_DOUBLE_EQ(t.bytes, (1 << 30) / 2.0 / 64);
  }
}

TEST(Tree, BytesPerRankByHand) {
  // 4 single-GPU nodes. Tree 0 (btree): 0 -> 2 -> {1, 3}. Tree 1 (mirror): 3 -> 1 -> {2, 0}.
  // Each tree carries S/2; every tree edge moves S/2 up and S/2 down.
  //   rank 0: tree 0 sends 0->2 (down);           tree 1 sends 0->1 (up)            -> 2 x S/2 = S
  //   rank 1: tree 0 sends 1->2 (up);             tree 1 sends 1->3, 1->2, 1->0     -> 4 x S/2 = 2S
  //   rank 2: tree 0 sends 2->0, 2->1, 2->3;      tree 1 sends 2->1 (up)            -> 2S
  //   rank 3: tree 0 sends 3->2 (up);             tree 1 sends 3->1 (down)          -> S
  // So a GPU sends S (root or leaf in both trees' sense: one edge per tree) or 2S (interior in one
  // tree: three edges there, one in the other); 2 (n-1) S in all, like the ring's 2 (n-1)/n S per rank.
  const Topology topo = uniform(4);
  const double S = 1e6;
  const Schedule s = tree_schedule(topo, plan_trees(topo, 2), "all_reduce", S, {});
  const auto sent = s.bytes_sent_per_rank();
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_NEAR(sent[0], S, 1e-6);
  EXPECT_NEAR(sent[1], 2 * S, 1e-6);
  EXPECT_NEAR(sent[2], 2 * S, 1e-6);
  EXPECT_NEAR(sent[3], S, 1e-6);
  // In the engine the busiest link direction (NIC of rank 1 or 2) carries 2S.
  const SimResult r = simulate_one(topo, s, {});
  double most = 0;
  for (const auto& l : r.links) most = std::max(most, l.bytes);
  EXPECT_NEAR(most, 2 * S, 1e-3 * S);
  // LL doubles the bytes on the wire.
  TreeScheduleOptions ll;
  ll.wire_factor = 2.0;
  const auto sent_ll = tree_schedule(topo, plan_trees(topo, 2), "all_reduce", S, ll).bytes_sent_per_rank();
  EXPECT_NEAR(sent_ll[1], 4 * S, 1e-6);
}

TEST(Tree, TimingConstantsAreNcclTreeRows) {
  const StepTiming t = tree_step_timing(Proto::Simple);
  EXPECT_DOUBLE_EQ(t.launch_s, kLaunchS);
  EXPECT_DOUBLE_EQ(t.net_step_s, kNetStepS);
  EXPECT_DOUBLE_EQ(t.nvlink_step_s, kNvlStepS);
  EXPECT_DOUBLE_EQ(t.pcie_step_s, 4.0e-6);
  EXPECT_DOUBLE_EQ(tree_step_timing(Proto::LL).net_step_s, 5.0e-6);
  EXPECT_DOUBLE_EQ(tree_step_timing(Proto::LL).launch_s, 6.8e-6);
  EXPECT_THROW(tree_schedule(uniform(2), plan_trees(uniform(2), 2), "all_gather", 8, {}), std::invalid_argument);
}

TEST(Tree, LatencyBoundAllReduceMatchesNcclTreeLatency) {
  // 8 bytes: the critical path is 2 ceil(log2 n) network hops, each costing NCCL's Tree NET latency
  // (route latency + software delay = 14 us), plus the launch once: NCCL's Tree AllReduce latency
  // baseLat + 2 log2(n) interLat for ppn = 1 (powers of two).
  for (int n : {2, 4, 8, 32}) {
    const Topology topo = uniform(n);
    const Schedule s = tree_schedule(topo, plan_trees(topo, 2), "all_reduce", 8, {});
    const double expected = kLaunchS + 2 * ceil_log2(n) * kNetStepS;
    EXPECT_NEAR(simulate_one(topo, s, {}).time_s, expected, 0.02 * expected) << n;
  }
  // Two dgx-h100 nodes: baseLat + 2 ((ppn - 1) intraLat + log2(2) interLat) = 8.4 + 2 (7 x 4 + 14) us.
  const Topology dgx = preset("dgx-h100", 2);
  const Schedule s = tree_schedule(dgx, plan_trees(dgx, 16), "all_reduce", 8, {});
  const double expected = kLaunchS + 2 * (7 * kNvlStepS + kNetStepS);
  EXPECT_NEAR(simulate_one(dgx, s, {}).time_s, expected, 0.02 * expected);
  // One dgx-h100 node: only the chain, baseLat + 2 (ppn - 1) intraLat = 8.4 + 2 x 7 x 4 us.
  const Topology one = preset("dgx-h100", 1);
  const Schedule s1 = tree_schedule(one, plan_trees(one, 16), "all_reduce", 8, {});
  EXPECT_EQ(chains(s1, 8).longest, 2 * 7);
  const double expected1 = kLaunchS + 2 * 7 * kNvlStepS;
  EXPECT_NEAR(simulate_one(one, s1, {}).time_s, expected1, 0.02 * expected1);
}

TEST(Tree, BandwidthBoundAllReduceMatchesPipelineClosedForm) {
  // Closed form of the pipelined double binary tree on single-GPU nodes (NIC bandwidth beta):
  //  - Each tree carries S/2 in C chunks of c = S/(2C). Its critical path has L = 2d stages
  //    (d = ceil(log2 n) levels up, d down); a pipeline of L stages moving C chunks takes
  //    (C + L - 1) stage times, and a stage costs the per-step latency (hidden behind the data once
  //    the pipeline is full, paid L times on the first chunk) plus c / r.
  //  - r is a flow's share of the busiest NIC direction in steady state. For n >= 4 a node interior
  //    in one tree (two children) sends on its NIC: up + 2 x down in that tree and up in the other
  //    = 4 flows of equal rate, so r = beta/4 (its NIC carries 4 x S/2 = 2S in all: the lower bound
  //    T >= 2S/beta). For n = 2 each direction carries 2 flows (tree 0 down, tree 1 up): r = beta/2.
  //  T = launch + 2d alpha + (C + 2d - 1) c / r.
  const double S = 1 << 30;
  for (int n : {2, 4, 8}) {
    const Topology topo = uniform(n);
    const TreePlan plan = plan_trees(topo, 2);
    const int C = tree_chunks(topo, plan, S, {});
    ASSERT_EQ(C, 64);
    const int d = ceil_log2(n);
    const double c = S / 2 / C;
    const double r = n == 2 ? kNicBps / 2 : kNicBps / 4;
    const double expected = kLaunchS + 2 * d * kNetStepS + (C + 2 * d - 1) * c / r;
    const double got = simulate_one(topo, tree_schedule(topo, plan, "all_reduce", S, {}), {}).time_s;
    EXPECT_NEAR(got, expected, 0.02 * expected) << n;
  }
  // Deeper trees: the engine stays above the 2S/beta bound and the pipeline formula's error grows
  // with the depth (max-min sharing between chunk-coupled flows and free-running leaf flows; see
  // docs/tree.md): measured +2.3% at n = 16, +4.5% at n = 32 with 64 chunks.
  for (int n : {16, 32}) {
    const Topology topo = uniform(n);
    const double got = simulate_one(topo, tree_schedule(topo, plan_trees(topo, 2), "all_reduce", S, {}), {}).time_s;
    EXPECT_GT(got, 2 * S / kNicBps) << n;
    EXPECT_LT(got, 1.25 * 2 * S / kNicBps) << n;
  }
}

TEST(Tree, NcclChunkSizesPerProtocol) {
  // NCCL 2.30 (enqueue.cc): one slot of the protocol's buffer per chunk and channel.
  //   Simple: 4 MiB / 8 slots = 524288; LL: 8 lines x 512 threads x 8 slots x 16 B / 8 / 2 (flags) = 32768;
  //   LL128: 120 x 640 x 8 x 8 B / 8 = 614400 B of lines, 15/16 data = 576000.
  EXPECT_DOUBLE_EQ(nccl_tree_chunk_bytes(Proto::Simple, 1 << 30, 16, 32, 256, nccl230::buff_bytes(Proto::Simple)), 524288);
  // NCCL_BUFFSIZE 8 MiB (aws-ofi-nccl's on p5): 1 MiB Simple chunks.
  EXPECT_DOUBLE_EQ(nccl_tree_chunk_bytes(Proto::Simple, 1 << 30, 16, 32, 256, 8 << 20), 1 << 20);
  EXPECT_DOUBLE_EQ(nccl_tree_chunk_bytes(Proto::LL, 1 << 30, 16, 32, 256, nccl230::buff_bytes(Proto::LL)), 32768);
  EXPECT_DOUBLE_EQ(nccl_tree_chunk_bytes(Proto::LL128, 1 << 30, 16, 32, 256, nccl230::buff_bytes(Proto::LL128)), 576000);
  // LL128 at 64 MiB on 32 x 8 GPUs with 16 channels: nsteps = 1 + log2(32) + 0.1 x 8 = 6.8, so
  // halve while 2^26 / (16 chunk) < 6.8 x 64 / 8 = 54.4 and chunk > 128 KiB: 576000 (7) -> 288000 (14)
  // -> 144000 (29) -> 72000; then 2^26 / (16 x 72000) = 58 >= 13.6 stops the second loop; the
  // LL128 grain (32 x 8 / 16 x 15 x 8 = 1920 B) rounds 72000 down to 37 x 1920 = 71040.
  EXPECT_DOUBLE_EQ(nccl_tree_chunk_bytes(Proto::LL128, 64 << 20, 16, 32, 256, nccl230::buff_bytes(Proto::LL128)), 71040);
  // Chunks per family for one dgx-h100 cluster of 32 nodes (16 channels, one per family), LL at 1 MiB:
  // 1 MiB / 16 / 32 KiB = 2.
  const Topology dgx = preset("dgx-h100", 32);
  const TreePlan plan = plan_trees(dgx, 16);
  EXPECT_EQ(tree_chunks(dgx, plan, 1 << 20, tree_options(Proto::LL)), 2);
  EXPECT_EQ(tree_chunks(dgx, plan, 1 << 30, tree_options(Proto::Simple)), 64);  // 128 NCCL chunks, capped
}

TEST(Tree, RailSymmetryLeavesResultsUnchanged) {
  // Families 2r and 2r+1 ride rail r; rotating GPUs, NICs and rails by one maps the tree families of
  // rail r onto those of rail r+1, so the engine simulates 1/8 of the flows on a dgx-h100. Proof:
  // identical per-rank finish times and link bytes with and without the lever.
  const Topology dgx = preset("dgx-h100", 2);
  TreeScheduleOptions o = tree_options(Proto::Simple);
  o.max_chunks = 4;
  const Schedule s = tree_schedule(dgx, plan_trees(dgx, 16), "all_reduce", 64 << 20, o);
  EngineOptions plain;
  plain.exploit_symmetry = false;
  const SimResult with = simulate_one(dgx, s, {});
  const SimResult without = simulate_one(dgx, s, plain);
  EXPECT_EQ(with.symmetry_order, 8);
  EXPECT_EQ(without.symmetry_order, 1);
  EXPECT_EQ(with.flows_simulated * 8, without.flows_simulated);
  ASSERT_EQ(with.rank_finish_s.size(), without.rank_finish_s.size());
  for (std::size_t i = 0; i < with.rank_finish_s.size(); ++i)
    EXPECT_NEAR(with.rank_finish_s[i], without.rank_finish_s[i], 1e-9 * without.time_s) << i;
  ASSERT_EQ(with.links.size(), without.links.size());
  double bytes_with = 0, bytes_without = 0;
  for (const auto& l : with.links) bytes_with += l.bytes;
  for (const auto& l : without.links) bytes_without += l.bytes;
  EXPECT_NEAR(bytes_with, bytes_without, 1e-9 * bytes_without);
}

TEST(Tree, SizeGroupsReplayLikePerSizeSchedules) {
  // The per-size lever: sizes with the same chunk count share one schedule scaled by the engine.
  // 8 single-GPU nodes, 2 channels: per channel S/2 in 512 KiB chunks, capped at 16:
  // 8 B, 64 KiB -> 1; 4 MiB -> 4; 6 MiB -> 6; 64 MiB -> 64 -> 16.
  const Topology topo = uniform(8);
  const TreePlan plan = plan_trees(topo, 2);
  TreeScheduleOptions o = tree_options(Proto::Simple);
  o.max_chunks = 16;
  const std::vector<double> sizes = {8, 65536, 4 << 20, 6 << 20, 64 << 20};
  const auto groups = tree_schedules_for_sizes(topo, plan, "all_reduce", sizes, o);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].chunks, 1);
  EXPECT_EQ(groups[0].indices, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(groups[1].chunks, 4);
  EXPECT_EQ(groups[2].chunks, 6);
  EXPECT_EQ(groups[3].chunks, 16);
  std::vector<SweepJob> jobs;
  for (const auto& g : groups) {
    SweepJob j;
    j.schedule = &g.schedule;
    for (auto i : g.indices) j.sizes_bytes.push_back(sizes[i]);
    j.pipeline_depth = kTreeSlots;
    jobs.push_back(j);
  }
  const auto swept = simulate_sweeps(topo, jobs, {});
  for (std::size_t k = 0; k < groups.size(); ++k)
    for (std::size_t j = 0; j < groups[k].indices.size(); ++j) {
      const double size = sizes[groups[k].indices[j]];
      const double direct = simulate_one(topo, tree_schedule(topo, plan, "all_reduce", size, o), {}).time_s;
      EXPECT_NEAR(swept[k][j].time_s, direct, 1e-9 * direct) << size;
    }
}

TEST(Tree, EngineWithinTwoPercentOfClosedFormForEveryProtocol) {
  // NCCL's options (FIFO connections, NCCL's chunking capped at 64 chunks) on uncongested clusters
  // of single-GPU nodes, as deep as 32 nodes: in the latency-bound regime (up to one chunk per
  // family: 8 B .. 32 KiB) the estimate is exact, in the bandwidth-bound one (64 chunks: 256 MiB,
  // 1 GiB) within 2%.
  for (Proto p : {Proto::LL, Proto::LL128, Proto::Simple}) {
    const TreeScheduleOptions o = tree_options(p);
    for (int n : {2, 4, 8, 16, 32}) {
      const Topology topo = uniform(n);
      const TreePlan plan = plan_trees(topo, 2);
      for (double S : {8.0, 2048.0, 32768.0, 256.0 * (1 << 20), 1.0 * (1 << 30)}) {
        const TreeClosedForm cf = tree_closed_form(topo, plan, S, o);
        const double got = simulate_one(topo, tree_schedule(topo, plan, "all_reduce", S, o), {}).time_s;
        const double tolerance = cf.chunks == 1 ? 1e-3 : 0.02;
        EXPECT_NEAR(got, cf.time_s, tolerance * cf.time_s) << to_string(p) << " n=" << n << " S=" << S;
      }
    }
  }
}

TEST(Tree, EngineBetweenTheBoundAndTheEstimateAtEverySize) {
  // Between the regimes (a few chunks of about a step latency each) the engine's links start the
  // bottleneck's work while the pipeline fills: it is faster than the estimate, never faster than
  // the bound (docs/tree.md: engine / estimate 0.84 .. 1.00).
  for (Proto p : {Proto::LL, Proto::LL128, Proto::Simple}) {
    const TreeScheduleOptions o = tree_options(p);
    for (int n : {2, 4, 8, 16, 32}) {
      const Topology topo = uniform(n);
      const TreePlan plan = plan_trees(topo, 2);
      for (double S = 8; S <= (1 << 30); S *= 4) {
        const TreeClosedForm cf = tree_closed_form(topo, plan, S, o);
        const double got = simulate_one(topo, tree_schedule(topo, plan, "all_reduce", S, o), {}).time_s;
        EXPECT_GE(got, cf.lower_bound_s * (1 - 1e-6)) << to_string(p) << " n=" << n << " S=" << S;
        EXPECT_LE(got, cf.time_s * 1.005) << to_string(p) << " n=" << n << " S=" << S;
        EXPECT_GE(got, 0.8 * cf.time_s) << to_string(p) << " n=" << n << " S=" << S;
      }
    }
  }
}

TEST(Tree, ClosedFormByHandOnSingleGpuNodes) {
  // n = 8 single-GPU nodes, Simple, 1 GiB: 2 channels, 512 MiB each = 1024 NCCL chunks -> 64;
  // c = S / 2 / 64 = 8 MiB. Busiest NIC direction: 4 connections x c (interior in one tree, leaf in
  // the other) -> tau = 4c / beta. Longest path: 2 x 3 network hops of 14 us each; tree 0 is
  // 0 <- 4 <- {2, 6} <- {1, 3, 5, 7}: up from a leaf, two siblings share the parent's NIC twice and
  // the root's single child once; down, the root's NIC serves one child and the others two: 10 c / beta.
  // Each chunk occupies the links as c / 0.92 bytes: NCCL's Tree all_reduce efficiency.
  const Topology topo = uniform(8);
  const TreeClosedForm cf = tree_closed_form(topo, plan_trees(topo, 2), 1 << 30, tree_options(Proto::Simple));
  const double c = (1 << 30) / 2.0 / 64 / 0.92;
  const double tau = 4 * c / kNicBps;
  EXPECT_EQ(cf.chunks, 64);
  EXPECT_EQ(cf.path_hops, 6);
  EXPECT_NEAR(cf.stage_s, tau, 1e-12);
  EXPECT_NEAR(cf.first_chunk_s, 6 * kNetStepS + 10 * c / kNicBps, 1e-9);
  EXPECT_NEAR(cf.time_s, kLaunchS + 6 * kNetStepS + 10 * c / kNicBps + 63 * tau, 1e-9);
}

TEST(Tree, SeedClaimForcedRingFourToSevenTimesSlowerOnThirtyTwoNodes) {
  // The seed: on 32 nodes a forced Ring is 4-7x slower than Tree for small and medium messages
  // (ring 510 steps vs tree 2 x (7 + 5)). 32 x dgx-h100, LL (NCCL's pick at these sizes).
  const Topology dgx = preset("dgx-h100", 32);
  const TreePlan tp = plan_trees(dgx, 16);
  const RingPlan rp = plan_rings(dgx, 16);
  const RingProtocol ll = ring_protocol(Proto::LL);
  RingScheduleOptions ro;
  ro.timing = ll.timing;
  ro.wire_factor = ll.wire_factor;
  EngineOptions eo;
  eo.pipeline_depth = ll.pipeline_depth;
  const std::vector<double> sizes = {128, 512 * 1024};
  const auto ring = simulate_sweep(dgx, ring_schedule(dgx, rp, "all_reduce", sizes.back(), ro), sizes, eo);
  // Tree latency by hand: baseLat 6.8 + 2 (7 x 0.6 + 5 x 5.0) = 65.2 us.
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double tree = simulate_one(dgx, tree_schedule(dgx, tp, "all_reduce", sizes[i], tree_options(Proto::LL)), {}).time_s;
    if (i == 0) {
      EXPECT_NEAR(tree, 65.2e-6, 0.01 * 65.2e-6);
    }
    const double ratio = ring[i].time_s / tree;
    EXPECT_GT(ratio, 4.0) << sizes[i];
    EXPECT_LT(ratio, 7.0) << sizes[i];
  }
}

TEST(Tree, FlowControlWaitsForTheReceiversForwardOfAnOlderChunk) {
  // flow_control_slots = 2: chunk k of a connection waits until its receiver has passed chunk k - 2
  // on: up the tree (or, at the root, down to its first child), or down to its first child; a leaf
  // receiving on the way down writes to its output and holds no slot back. 4 single-GPU nodes:
  // tree 0 = 0 -> 2 -> {1, 3}, tree 1 = 3 -> 1 -> {2, 0}.
  const Topology topo = uniform(4);
  const TreePlan plan = plan_trees(topo, 2);
  TreeScheduleOptions o;
  o.flow_control_slots = 2;
  o.max_chunks = 4;
  const Schedule s = tree_schedule(topo, plan, "all_reduce", 64 << 20, o);
  int credits = 0;
  for (const Transfer& t : s.transfers) {
    const TreeFamily& f = plan.families[t.family];
    const bool up = f.parent_node[t.src] == t.dst;
    const bool holds = up || !f.child_nodes[t.dst].empty();
    bool credit = false;
    for (std::uint32_t k = 0; k < t.dep_count; ++k) {
      const Transfer& d = s.transfers[s.deps_of(t)[k]];
      credit |= d.step == t.step - 2 && d.family == t.family && d.src == t.dst;
    }
    EXPECT_EQ(credit, t.step >= 2 && holds) << t.src << "->" << t.dst << " chunk " << t.step;
    credits += credit;
  }
  // Per tree and chunk k >= 2: 3 up transfers and 1 down transfer into an interior rank.
  EXPECT_EQ(credits, 2 * 2 * (3 + 1));
}

TEST(Tree, NcclChannelCeilingBindsSimpleAcrossNodes) {
  // 2 x dgx-h100: NCCL caps Tree at perChMaxTreeBws (Hopper, 2 nodes: 41.4 GB/s) x the tree graph's 8
  // channels = 331.2 GB/s of busBw, algBw = busBw / 2 = 165.6 GB/s, below what the links give a
  // 16-family tree (its chains' NVLink ports: about 212 GB/s in the engine). Spread over the plan's 16
  // channels: 10.35 GB/s per family across nodes. The engine's steady state (one more chunk per
  // family costs one period) is that ceiling.
  const Topology dgx = preset("dgx-h100", 2);
  const NcclTopoSummary sum = summarize_for_nccl(dgx);
  ASSERT_EQ(sum.tree.nChannels, 8);
  EXPECT_NEAR(nccl_busbw_ceiling_GBps(sum, Func::AllReduce, Algo::Tree, Proto::Simple), 8 * 41.4, 1e-9);
  const TreePlan plan = plan_trees(dgx, 16);
  TreeScheduleOptions o = tree_options(Proto::Simple);
  o.channel_rate_cap_Bps = tree_channel_cap_Bps(sum, plan, Proto::Simple);
  EXPECT_NEAR(o.channel_rate_cap_Bps, 8 * 41.4 / 2 * 1e9 / 16, 1.0);
  const double cap = tree_chunk_cap_bytes(dgx, plan, o);  // 64 chunks of 512 KiB x 16 channels
  ASSERT_DOUBLE_EQ(cap, 512.0 * (1 << 20));
  const double t1 = simulate_one(dgx, tree_schedule(dgx, plan, "all_reduce", cap / 2, o), {}).time_s;
  const double t2 = simulate_one(dgx, tree_schedule(dgx, plan, "all_reduce", cap, o), {}).time_s;
  EXPECT_NEAR(cap / 2 / (t2 - t1) / 1e9, 8 * 41.4 / 2, 0.01 * 165.6);
  // Without the ceiling the links allow 18% more: NCCL's Tree all_reduce efficiency, 0.92 of the
  // rate the links give the bytes alone (212 GB/s).
  o.channel_rate_cap_Bps = 0;
  const auto link_rate_GBps = [&](const TreeScheduleOptions& opt) {
    const double u1 = simulate_one(dgx, tree_schedule(dgx, plan, "all_reduce", cap / 2, opt), {}).time_s;
    const double u2 = simulate_one(dgx, tree_schedule(dgx, plan, "all_reduce", cap, opt), {}).time_s;
    return cap / 2 / (u2 - u1) / 1e9;
  };
  const double with_efficiency = link_rate_GBps(o);
  EXPECT_GT(with_efficiency, 1.15 * 165.6);
  TreeScheduleOptions bytes_alone = o;
  bytes_alone.wire_factor = 1.0;
  EXPECT_NEAR(with_efficiency / link_rate_GBps(bytes_alone), 0.92, 0.005);
}

TEST(Tree, CutThroughProtocolsPayTheirCeilingOnceWhereTheDataEnters) {
  // LL forwards lines as they arrive, so NCCL's per-channel ceiling r costs a chunk c / r once, at
  // the chain tail that feeds the pipeline (Schedule::source_channel_cap_Bps), not at every hop.
  // 8 single-GPU nodes, LL, 64 KiB: 2 families of one chunk, c = 32 KiB of data = 64 KiB / 0.92 on the
  // wire (LL's flags, NCCL's Tree all_reduce efficiency). Capped at r = 1 GB/s of data (2 / 0.92 GB/s
  // of wire), a leaf's send takes 32 KiB / 1 GB/s instead of its sibling-shared 2 x 64 KiB / 0.92 / 50
  // GB/s; the rest of the 6-hop path is unchanged.
  const Topology topo = uniform(8);
  const TreePlan plan = plan_trees(topo, 2);
  TreeScheduleOptions o = tree_options(Proto::LL);
  const double S = 64 * 1024;
  const double free_s = simulate_one(topo, tree_schedule(topo, plan, "all_reduce", S, o), {}).time_s;
  o.channel_rate_cap_Bps = 1e9;
  const Schedule capped = tree_schedule(topo, plan, "all_reduce", S, o);
  EXPECT_DOUBLE_EQ(capped.source_channel_cap_Bps, 2e9 / 0.92);
  EXPECT_DOUBLE_EQ(capped.inter_node_channel_cap_Bps, 0.0);
  const double capped_s = simulate_one(topo, capped, {}).time_s;
  const double wire = 64.0 * 1024 / 0.92;
  const double hand = wire / (2e9 / 0.92) - 2 * wire / kNicBps;
  EXPECT_NEAR(capped_s - free_s, hand, 0.03 * hand);
  // Simple copies whole chunks hop by hop: its ceiling caps every hop across nodes.
  TreeScheduleOptions simple = tree_options(Proto::Simple);
  simple.channel_rate_cap_Bps = 1e9;
  const Schedule hop_by_hop = tree_schedule(topo, plan, "all_reduce", S, simple);
  EXPECT_DOUBLE_EQ(hop_by_hop.inter_node_channel_cap_Bps, 1e9 / 0.92);
  EXPECT_DOUBLE_EQ(hop_by_hop.source_channel_cap_Bps, 0.0);
}

}  // namespace
}  // namespace ccsim
