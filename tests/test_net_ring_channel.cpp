// A ring channel across nodes (Topology::net_ring_channel_Bps, docs/accuracy.md "A ring channel across
// nodes"): on the archs whose P2P channel rate was measured (A100, H100/H200), every connection of a
// Simple ring or chain whose path crosses the network moves at most one P2P channel's rate per channel
// NCCL runs. Expected values by hand: 9.79 bytes per SM cycle (55.19 GB/s on 4 channels at A100's 1.41
// GHz) at H100's 1.98 GHz = 19.375 GB/s per channel; a ring's busbw is the rate of each of its
// connections summed over the channels, so 16 channels (2 x dgx-h100: 2 x 8 NIC rails) hold 310 GB/s,
// below NVLink's 370.8 (18 links x NCCL's 20.6).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/nccl_channels.h"
#include "algorithms/ring.h"
#include "algorithms/tuner.h"
#include "real_log_helpers.h"
#include "scenarios/predict.h"
#include "test_helpers.h"
#include "topologies/gpu_copy_rate.h"
#include "topologies/nccl_env.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

constexpr double kH100ChannelBps = testing::kHopperChannelGBps * 1e9;  // 19.375 GB/s

Topology described(const std::string& preset, int nodes, const std::vector<std::string>& sets,
                   const std::vector<std::string>& envs = {}) {
  nlohmann::json spec = load_topology_spec(preset);
  spec["nodes"] = nodes;
  for (const auto& s : sets) apply_override(spec, s, "--set");
  for (const auto& e : envs) apply_nccl_env(spec, e, "--env " + e, preset);
  return build_topology(spec, preset);
}

// The engine's out-of-place busbw of one all_gather size, Ring/Simple.
double ring_busbw_GBps(const Topology& topo, std::uint64_t bytes) {
  PredictRequest req;
  req.collective = "all_gather";
  req.sweep.min_bytes = req.sweep.max_bytes = bytes;
  req.filter = parse_algo_filter("Ring", "Simple", "test");
  return predict(topo, req).rows.front().oop_busbw_GBps;
}

TEST(NetRingChannel, DefaultIsTheMeasuredP2pChannelRate) {
  EXPECT_NEAR(default_net_ring_channel_Bps("sm90"), kH100ChannelBps, 1e6);
  EXPECT_NEAR(default_net_ring_channel_Bps("sm80"), 55.19 / 4 * 1e9, 1e6);  // A100's own measurement
  // Clock-scaled rates without a measurement on the arch: no cap (Blackwell's rings across nodes run
  // faster per channel than its clock-scaled 19.4: GCP A4, 377 GB/s on 16 channels).
  EXPECT_EQ(default_net_ring_channel_Bps("sm100"), 0.0);
  EXPECT_EQ(default_net_ring_channel_Bps("sm70"), 0.0);
  EXPECT_EQ(default_net_ring_channel_Bps("sm86"), 0.0);
  EXPECT_GT(default_p2p_channel_Bps("sm100"), 0.0);  // the P2P cap itself stays
  EXPECT_NEAR(described("dgx-h100", 2, {}).net_ring_channel_Bps, kH100ChannelBps, 1e6);
  EXPECT_EQ(described("dgx-h100", 2, {"node.gpu.net_ring_channel_GBps=0"}).net_ring_channel_Bps, 0.0);
}

// Per plan channel: the rate x the channels NCCL runs / the plan's channels. 2 x dgx-h100 runs 16 coll
// channels on 16 plan channels; NCCL_MIN_CTAS=24 runs 24 on the same plan; one node has no network hop.
TEST(NetRingChannel, CapPerPlanChannel) {
  const Topology pair = described("dgx-h100", 2, {});
  const NcclTopoSummary s = summarize_for_nccl(pair);
  const RingPlan plan = plan_rings(pair, default_ring_channels(pair));
  ASSERT_EQ(plan.total_channels(), 16);
  EXPECT_NEAR(ring_replay_channel_cap_Bps(pair, s, plan, Proto::Simple, 8e9), kH100ChannelBps, 1e6);
  // LL and LL128 keep NCCL's own ceilings.
  EXPECT_DOUBLE_EQ(ring_replay_channel_cap_Bps(pair, s, plan, Proto::LL128, 8e9), ring_channel_cap_Bps(s, plan, Proto::LL128, 8e9));

  const Topology ctas = described("dgx-h100", 2, {}, {"NCCL_MIN_CTAS=24"});
  const NcclTopoSummary s24 = summarize_for_nccl(ctas);
  EXPECT_NEAR(ring_replay_channel_cap_Bps(ctas, s24, plan_rings(ctas, default_ring_channels(ctas)), Proto::Simple, 8e9),
              kH100ChannelBps * 24 / 16, 1e6);

  const Topology one = described("dgx-h100", 1, {});
  const NcclTopoSummary s1 = summarize_for_nccl(one);
  const RingPlan plan1 = plan_rings(one, default_ring_channels(one));
  EXPECT_DOUBLE_EQ(ring_replay_channel_cap_Bps(one, s1, plan1, Proto::Simple, 8e9), ring_channel_cap_Bps(s1, plan1, Proto::Simple, 8e9));
}

// The engine: 16 channels x 19.375 GB/s = 310 GB/s busbw on 2 x dgx-h100 (five Hopper clusters measure
// 320-340); 24 channels (NCCL_MIN_CTAS=24) reach NVLink's 370.8; without the cap, NVLink's again.
TEST(NetRingChannel, HopperRingAcrossNodesRunsAtItsChannels) {
  const std::uint64_t size = 8ull << 30;
  EXPECT_NEAR(ring_busbw_GBps(described("dgx-h100", 2, {}), size), 16 * kH100ChannelBps / 1e9, 0.01 * 310);
  EXPECT_NEAR(ring_busbw_GBps(described("dgx-h100", 2, {}, {"NCCL_MIN_CTAS=24"}), size), 370.8, 0.01 * 370.8);
  EXPECT_NEAR(ring_busbw_GBps(described("dgx-h100", 2, {"node.gpu.net_ring_channel_GBps=0"}), size), 370.8,
              0.01 * 370.8);
  // One node: NVLink-bound as before (24 channels, no network hop).
  EXPECT_NEAR(ring_busbw_GBps(described("dgx-h100", 1, {}), size), 370.8, 0.01 * 370.8);
}

// predict's report says so where the channels bound the ring below its links (the header line
// "# ring channels across nodes: 16 x 19.38 GB/s = 310.0 GB/s busbw at most ..."), and not on one node.
TEST(NetRingChannel, TheReportNamesTheChannelsBound) {
  PredictRequest req;
  req.collective = "all_gather";
  req.sweep.min_bytes = req.sweep.max_bytes = 8ull << 30;
  const Prediction pair = predict(described("dgx-h100", 2, {}), req);
  EXPECT_EQ(pair.report.facts.ring_channel_bound_channels, 16);
  EXPECT_NEAR(pair.report.facts.ring_channel_bound_GBps, 16 * testing::kHopperChannelGBps, 1e-6);
  EXPECT_EQ(predict(described("dgx-h100", 1, {}), req).report.facts.ring_channel_bound_GBps, 0.0);
}

// validate names the bound as a setting where it holds the ring's plateau: Voltage Park's 4 H100 nodes,
// all_gather, 16 channels x 19.375 = 310 GB/s busbw below NVLink's 370.8; ceil(370.8 / 19.375) = 20
// channels reach the links. Not on one node, where the ring's 24 channels are NVLink-bound.
TEST(NetRingChannel, ValidateNamesTheChannelCountAsASetting) {
  const auto cause = [](const ValidatedRun& run) -> const LikelyCause* {
    for (const auto& c : run.causes)
      if (c.id == "ring-channels") return &c;
    return nullptr;
  };
  const ValidatedRun four = testing::validate_real_log("h100x32-4node-voltagepark-ib-allgather-nccl2.24.3.txt",
                                                      load_topology_spec("dgx-h100"), "dgx-h100");
  const LikelyCause* c = cause(four);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->informational);
  EXPECT_NE(c->evidence.find("16 channels x 19.38 GB/s = 310.00 GB/s"), std::string::npos) << c->evidence;
  EXPECT_NE(c->next.find("NCCL_MIN_NCHANNELS=20"), std::string::npos) << c->next;
  const ValidatedRun one = testing::validate_real_log("h100x8-1node-allgather-ring-g8-nccl2.26.2.txt",
                                                     load_topology_spec("dgx-h100"), "dgx-h100");
  EXPECT_EQ(cause(one), nullptr);
}

// Blackwell has no default cap: 2 x dgx-b200 over RoCE stays at its 8 NICs' ring bound (8 x 400 Gb/s
// x RoCE's 0.95 / 8 GPUs x 8 = 380 GB/s), as GCP's A4 logs measure (377).
TEST(NetRingChannel, BlackwellRingAcrossNodesKeepsItsNics) {
  EXPECT_NEAR(ring_busbw_GBps(described("dgx-b200", 2, {"node.nic.transport=roce"}), 8ull << 30), 380.0, 0.01 * 380);
}

}  // namespace
}  // namespace ccsim
