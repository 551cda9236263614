// Two of NCCL's cost-model rules for rings that the engine replays.
// 1. A ring across nodes pays NCCL's network overhead on every step inside a node (tuning.cc: Ring's
//    intraLat = max(intraLat, getNetOverhead), x3 on Simple; 1 us on Intel, 2 us on AMD).
// 2. Ring/LL and Ring/LL128 (and the chains of broadcast and reduce) run at most at NCCL's ceilings
//    (llMaxBws; perChMaxRingLL128Bws x the ring graph's channels), kernel rates that lie below the links (docs/nccl-model.md "Ceilings in
//    the engine"); every connection of a ring or a chain carries the whole stream, so each is capped.
// Expected times are summed by hand from NCCL 2.30's constants (baseLat Ring/LL 6.6 us, hwLat NVLink
// Ring/LL 0.6 us, llMaxBws) and the route of a network hop on dgx-h200 with RoCE, GPU -> NVSwitch ->
// GPU (PXN, 2 x 0.25 us) -> PCIe switch -> NIC (2 x 0.15) -> leaf -> NIC (RoCE's 3 us, half on each
// link) -> PCIe switch -> GPU (2 x 0.15) = 4.1 us, above NCCL's 2.7 us network step, so the hop
// costs its route.
#include <gtest/gtest.h>

#include <string>

#include "algorithms/nccl_channels.h"
#include "algorithms/ring.h"
#include "algorithms/step_timing.h"
#include "algorithms/tuner.h"
#include "scenarios/predict.h"
#include "test_helpers.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

// The engine's out-of-place time of one size on `nodes` x `preset` with --set `sets`, --algo/--proto.
double time_us(const std::string& preset, int nodes, const std::string& collective, const std::vector<std::string>& sets,
               std::uint64_t bytes, const std::string& algo = "Ring", const std::string& proto = "LL") {
  nlohmann::json spec = load_topology_spec(preset);
  spec["nodes"] = nodes;
  for (const auto& s : sets) apply_override(spec, s, "--set");
  PredictRequest req;
  req.collective = collective;
  req.sweep.min_bytes = req.sweep.max_bytes = bytes;
  req.filter = parse_algo_filter(algo, proto, "test");
  return predict(build_topology(spec, preset), req).rows.front().oop_time_us;
}

// 2 x dgx-h200, Ring/LL.
double h200_pair_us(const std::string& collective, const std::vector<std::string>& sets, std::uint64_t bytes) {
  return time_us("dgx-h200", 2, collective, sets, bytes);
}

TEST(RingNcclRules, StepTimingFloor) {
  const StepTiming ll = multi_node_ring_timing(ring_protocol(Proto::LL).timing, Proto::LL, 2, 2.0);
  EXPECT_DOUBLE_EQ(ll.nvlink_step_s, 2.0e-6);  // 0.6 -> AMD's 2
  EXPECT_DOUBLE_EQ(ll.pcie_step_s, 2.0e-6);    // PCIe Ring/LL 1.0 -> 2
  EXPECT_DOUBLE_EQ(ll.net_step_s, ring_protocol(Proto::LL).timing.net_step_s);  // the network step is NCCL's own
  const StepTiming simple = multi_node_ring_timing(ring_protocol(Proto::Simple).timing, Proto::Simple, 2, 1.0);
  EXPECT_DOUBLE_EQ(simple.nvlink_step_s, 3.4e-6);  // max(3.4, 3 x 1)
  EXPECT_DOUBLE_EQ(simple.pcie_step_s, 5.7e-6);
  // One node: unchanged.
  EXPECT_DOUBLE_EQ(multi_node_ring_timing(ring_protocol(Proto::LL).timing, Proto::LL, 1, 2.0).nvlink_step_s, 0.6e-6);
}

// all_gather of 1 KiB per rank on 2 x 8 H200 (Intel: 1 us), Ring/LL: one launch, then the chunk that
// starts at a node's second GPU takes 15 hops, 13 inside nodes and 2 across: 6.6 + 13 x 1.0 + 2 x 4.1
// = 27.8 us (it was 6.6 + 13 x 0.6 + 2 x 4.1 = 22.6 before the floor), and the stream, 15/16 KiB per
// connection, on the one channel of the 16 that NCCL runs at this size, at its share of the LL
// kernel's one-node ceiling (141 GB/s busBw; below the network's 39 GB/s): 0.11 us. GCP's A3 Ultra log
// of this run measures 28.05-28.70 us at 1-4 KiB (tests/data/nccl-tests, gcp-a3ultra).
TEST(RingNcclRules, AllGatherOnTwoIntelNodes) {
  const double first = testing::kFirstLaunchShareUs;  // nccl-tests' first iteration waits for its launch
  const double stream_us = 1024 * 15.0 / 16 / (141e9 / 16) * 1e6;
  EXPECT_NEAR(h200_pair_us("all_gather", {"node.nic.transport=roce"}, 1024), 6.6 + 13 * 1.0 + 2 * 4.1 + stream_us + first,
              0.05);
  // AMD's 2 us: 6.6 + 13 x 2 + 2 x 4.1 = 40.8.
  EXPECT_NEAR(h200_pair_us("all_gather", {"node.nic.transport=roce", "node.cpu.vendor=amd"}, 1024),
              6.6 + 13 * 2.0 + 2 * 4.1 + stream_us + first, 0.05);
}

// On one node there is no proxy in the ring's path: 7 NVLink hops of 0.6 us after the launch, and
// 7/8 KiB through each connection on one of NCCL's 24 channels (141 GB/s busBw over 24): 0.15 us.
TEST(RingNcclRules, NotOnOneNode) {
  EXPECT_NEAR(time_us("dgx-h200", 1, "all_gather", {}, 1024),
              6.6 + 7 * 0.6 + 1024 * 7.0 / 8 / (141e9 / 24) * 1e6 + testing::kFirstLaunchShareUs, 0.05);
}

// NCCL runs fewer channels for small operations (enqueue.cc: channels drop while the bytes are below
// channels x threads x the thread threshold, NCCL_LL_THREAD_THRESHOLD 8 x the ranks on Ring/LL), and
// the LL kernel's rate is per channel. all_reduce of 64 KiB on one A100 node, Ring/LL: 65536 <
// 24 x 512 x 64, so 2 of the 24 channels run, at 2/24 of Ampere's one-node llMaxBw (87.7 GB/s busBw):
// 6.6 + 14 x 0.6 + 2 x 7/8 x 64 KiB / 7.31 GB/s = 15.0 + 15.7 us. At 1 MiB all 24 run: 15.0 + 20.9.
// One process per GPU on a DGX A100 ("thanos", tests/data/nccl-tests/a100x8-1node-allreduce-mpi.txt)
// measures 31.82 and 37.89 us; with the whole ceiling at every size the replay said 16.5 us at 64 KiB.
TEST(RingNcclRules, FewerChannelsRunForSmallOperations) {
  const double first = testing::kFirstLaunchShareUs;
  const double ll_us = 6.6 + 14 * 0.6;
  EXPECT_NEAR(time_us("hgx-a100", 1, "all_reduce", {}, 64 << 10), ll_us + 1.75 * (64 << 10) / (87.7e9 * 2 / 24) * 1e6 + first,
              0.1);
  EXPECT_NEAR(time_us("hgx-a100", 1, "all_reduce", {}, 1 << 20), ll_us + 1.75 * (1 << 20) / 87.7e9 * 1e6 + first, 0.1);
  const Topology topo = testing::preset("hgx-a100", 1);
  const NcclTopoSummary s = summarize_for_nccl(topo);
  EXPECT_DOUBLE_EQ(nccl_running_channel_share(s, Algo::Ring, Proto::LL, 64 << 10), 2.0 / 24);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(s, Func::AllReduce, Algo::Ring, Proto::LL, 64 << 10), 87.7 * 2 / 24);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(s, Func::AllReduce, Algo::Ring, Proto::LL, 1 << 20), 87.7);
  // Across nodes the network's part stays: 2 x dgx-h200 at 512 KiB run 8 of 16 channels, 141 x 8/16
  // is above the 2-node llMaxBw (39), which binds as before.
  const NcclTopoSummary pair = summarize_for_nccl(testing::preset("dgx-h200", 2));
  EXPECT_DOUBLE_EQ(nccl_running_channel_share(pair, Algo::Ring, Proto::LL, 512 << 10), 8.0 / 16);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(pair, Func::AllReduce, Algo::Ring, Proto::LL, 512 << 10), 39.0);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(pair, Func::AllReduce, Algo::Ring, Proto::LL, 64 << 10), 141.0 / 16);
}

// all_gather of 512 KiB on 2 x 8 H200 (Intel), Ring/LL: the 1 KiB time above plus the stream through
// each connection, S (n-1)/n = 491520 B, at NCCL's llMaxBw for 2 Intel nodes (llMaxBws[0][1], 39
// GB/s busBw): 27.8 + 12.6 = 40.4 us. Without the ceiling the links (wire factor 2 on 8 NICs) gave
// 29.0 us; GCP's A3 Ultra log measures 42.75.
TEST(RingNcclRules, LlRunsAtNcclsCeilingAcrossNodes) {
  EXPECT_NEAR(h200_pair_us("all_gather", {"node.nic.transport=roce"}, 512 * 1024),
              27.8 + 491520 / 39e9 * 1e6 + testing::kFirstLaunchShareUs, 0.1);
}

// One node of 8 H100, all_reduce of 1 MiB, Ring/LL: 6.6 + 14 x 0.6 + 2 x 7/8 x 1 MiB at Hopper's
// one-node llMaxBw (141 GB/s busBw) = 6.6 + 8.4 + 13.01 = 28.01 us.
TEST(RingNcclRules, LlRunsAtNcclsCeilingOnOneNode) {
  EXPECT_NEAR(time_us("dgx-h100", 1, "all_reduce", {}, 1 << 20),
              6.6 + 14 * 0.6 + 2.0 * 7 / 8 * (1 << 20) / 141e9 * 1e6 + testing::kFirstLaunchShareUs, 0.02);
  // The cap per channel of the plan: llMaxBw / channels; Simple: 24 coll channels x one block's
  // 38.7 GB/s (Hopper's one-node perChMaxTreeBw) / channels.
  const Topology topo = testing::preset("dgx-h100", 1);
  const NcclTopoSummary s = summarize_for_nccl(topo);
  const RingPlan plan = plan_rings(topo, 4);
  EXPECT_DOUBLE_EQ(ring_channel_cap_Bps(s, plan, Proto::LL), 141e9 / 4);
  EXPECT_DOUBLE_EQ(ring_channel_cap_Bps(s, plan, Proto::LL128), s.ring.nChannels * 36.7e9 / 4);
  EXPECT_DOUBLE_EQ(ring_channel_cap_Bps(s, plan, Proto::Simple), 24 * 38.7e9 / 4);
}

// A chain (broadcast, reduce) carries its whole stream over every connection, so NCCL's Ring/LL
// ceiling bounds it too: broadcast of 64 MiB on one node of 8 H100, Ring/LL, moves S through each
// connection at most at llMaxBw (141 GB/s busBw = algBw for broadcast): at least 64 MiB / 141 GB/s =
// 476 us, plus the head chunk's fill. The links alone gave 376 us (178 GB/s).
TEST(RingNcclRules, ChainLlRunsAtNcclsCeiling) {
  const double t_us = time_us("dgx-h100", 1, "broadcast", {}, 64u << 20);
  const double floor_us = (64u << 20) / 141e9 * 1e6;
  EXPECT_GE(t_us, floor_us);
  EXPECT_LT(t_us, 1.04 * floor_us);
}

}  // namespace
}  // namespace ccsim
