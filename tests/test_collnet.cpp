// CollNetDirect (algorithms/collnet.h) against hand-derived numbers: bytes per GPU, NIC and SHARP
// reducer, NCCL's CollNetDirect latency for 8 bytes, and the engine against the pipeline closed form
// when the network is the bottleneck.
#include <gtest/gtest.h>

#include "algorithms/collnet.h"
#include "common/error.h"
#include "sim/engine.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

// `nodes` x 4 GPUs on an NVSwitch (4 x 25 GB/s, efficiency 1 = 100 GB/s), one NIC per GPU behind its
// PCIe Gen5 switch, `nic_gbps` IB at efficiency 1, one leaf group whose switches reduce (SHARP).
nlohmann::json sharp_spec(int nodes, double nic_gbps, bool sharp = true) {
  return {{"format", "ccsim-topology/1"},
          {"name", "test-sharp"},
          {"nodes", nodes},
          {"node",
           {{"gpu", {{"model", "H100-SXM5-80GB"}, {"arch", "sm90"}, {"count", 4}}},
            {"nvlink", {{"links_per_gpu", 4}, {"GBps_per_link", 25.0}, {"efficiency", 1.0}, {"latency_us", 0.5}}},
            {"cpu", {{"sockets", 1}, {"vendor", "intel"}}},
            {"pcie", {{"generation", 5}, {"lanes", 16}, {"switches_per_socket", 4}, {"efficiency", 1.0}}},
            {"nic", {{"count", 4}, {"Gbps", nic_gbps}, {"efficiency", 1.0}, {"transport", "ib"}}}}},
          {"fabric", {{"kind", "rail-optimized-fat-tree"}, {"nodes_per_leaf", 32}, {"sharp", sharp}}}};
}

TEST(CollNet, BytesByHand) {
  // 2 nodes x 4 GPUs, S = 8 MB, 4 heads (GPU h owns NIC h) of S/4 each. A GPU sends its 3 other
  // slices to their heads (3S/4) and, as a head, its sum to 3 local GPUs (3S/4): 1.5 S = 2(G-1)/G S
  // over NVLink, plus S/4 to the leaf reducer. The reducer of rail h takes 2 x S/4 and returns 2 x S/4.
  const Topology topo = build_topology(sharp_spec(2, 400), "test");
  ASSERT_TRUE(collnet_supported(topo));
  const double S = 8e6;
  const Schedule s = collnet_direct_schedule(topo, "all_reduce", S, Proto::Simple);
  ASSERT_EQ(s.switches.size(), 4u);
  EXPECT_EQ(s.switches[0], "leaf.g0.r0.sharp");
  const auto sent = s.bytes_sent_per_rank(), received = s.bytes_received_per_rank();
  for (int r = 0; r < 8; ++r) {
    EXPECT_NEAR(sent[r], 1.5 * S + S / 4, 1e-3) << r;
    EXPECT_NEAR(received[r], 1.5 * S + S / 4, 1e-3) << r;
  }
  for (int h = 0; h < 4; ++h) {
    EXPECT_NEAR(received[8 + h], 2 * S / 4, 1e-3);
    EXPECT_NEAR(sent[8 + h], 2 * S / 4, 1e-3);
  }
  EXPECT_THROW(collnet_direct_schedule(build_topology(sharp_spec(2, 400, false), "test"), "all_reduce", S, Proto::Simple),
               InputError);
  EXPECT_THROW(collnet_direct_schedule(topo, "all_reduce", S, Proto::LL), InputError);
  EXPECT_THROW(collnet_direct_schedule(topo, "all_gather", S, Proto::Simple), InputError);
}

TEST(CollNet, LatencyIsNcclCollNetDirectLatency) {
  // NCCL: 2 (min(1, ppn-1) 3.7 + 0.4 (ppn-1)) + 31 us = 2 (3.7 + 1.2) + 31 = 40.8 us for ppn 4.
  for (int nodes : {2, 8}) {
    const Topology topo = build_topology(sharp_spec(nodes, 400), "test");
    const SimResult r = simulate_one(topo, collnet_direct_schedule(topo, "all_reduce", 8, Proto::Simple), {});
    EXPECT_NEAR(r.time_s, 40.8e-6, 0.02 * 40.8e-6) << nodes;
  }
}

// Each head's uplink carries only its ups and its downlink only the sums; the schedule's connections
// are FIFO (a NIC serves a queue pair's requests in order). With up to 8 chunks of a connection
// sharing a link side by side instead, the ups finished together and the last 8 sums formed a tail
// (3.28 ms against 2.84 ms here).
TEST(CollNet, NetworkBoundMatchesPipelineClosedForm) {
  // 50 Gb/s NICs (6.25 GB/s): each head's NIC carries its slice S/4 up and the sum S/4 down, one flow
  // each way per chunk; NVLink moves 1.5 S at 100 GB/s, far faster. Chunks c = S/4/C pipelined through
  // two network stages (up, down): T = 40.8 us + 3c / 100 GB/s (first chunk's writes to the head)
  //   + (C + 1) c / beta + 3c / 100 GB/s (last chunk's writes from the head).
  const Topology topo = build_topology(sharp_spec(4, 50), "test");
  const double S = 64.0 * (1 << 20);
  CollNetOptions o;
  const int C = collnet_chunks(topo, S, o);
  ASSERT_EQ(C, 32);  // 16 MiB per head / 512 KiB
  const double c = S / 4 / C, beta = 6.25e9, B = 100e9;
  const double hand = 40.8e-6 + 3 * c / B + (C + 1) * c / beta + 3 * c / B;
  EngineOptions e;
  e.pipeline_depth = kCollNetPipelineDepth;
  const SimResult r = simulate_one(topo, collnet_direct_schedule(topo, "all_reduce", S, Proto::Simple), e);
  EXPECT_NEAR(r.time_s, hand, 0.02 * hand) << "engine " << r.time_s << " hand " << hand;
  // The reducer of each rail took 4 x S/4 (one slice per node).
  double to_reducers = 0;
  for (const auto& l : r.links)
    if (l.kind == LinkKind::Reduction && l.to.find("sharp") != std::string::npos) to_reducers += l.bytes;
  EXPECT_NEAR(to_reducers, 4 * S, 1e-3 * S);
}

TEST(CollNetChain, BytesByHand) {
  // 2 nodes x 4 GPUs, S = 8 MB. Rail h's chain starts at GPU h and carries S/4: 3 hops up, the head
  // to and from the reducer, 3 hops down. Across the 4 rails every GPU holds every chain position
  // once: positions 0, 1, 2 send S/4 twice (up or to the reducer, and down), position 3 once (up):
  // 1.75 S sent and, symmetrically, received. Each reducer takes and returns 2 x S/4.
  const Topology topo = build_topology(sharp_spec(2, 400), "test");
  const double S = 8e6;
  const Schedule s = collnet_chain_schedule(topo, "all_reduce", S, Proto::Simple);
  const auto sent = s.bytes_sent_per_rank(), received = s.bytes_received_per_rank();
  for (int r = 0; r < 8; ++r) {
    EXPECT_NEAR(sent[r], 1.75 * S, 1e-3) << r;
    EXPECT_NEAR(received[r], 1.75 * S, 1e-3) << r;
  }
  for (int h = 0; h < 4; ++h) {
    EXPECT_NEAR(received[8 + h], 2 * S / 4, 1e-3);
    EXPECT_NEAR(sent[8 + h], 2 * S / 4, 1e-3);
  }
  EXPECT_THROW(collnet_chain_schedule(topo, "all_reduce", S, Proto::LL128), InputError);
}

TEST(CollNetChain, LatencyIsNcclCollNetChainLatency) {
  // NCCL: 2 (ppn-1) intraLat + interLat = 2 x 3 x 2.8 + 30 = 46.8 us for ppn 4.
  for (int nodes : {2, 8}) {
    const Topology topo = build_topology(sharp_spec(nodes, 400), "test");
    const SimResult r = simulate_one(topo, collnet_chain_schedule(topo, "all_reduce", 8, Proto::Simple), {});
    EXPECT_NEAR(r.time_s, 46.8e-6, 0.02 * 46.8e-6) << nodes;
  }
}

TEST(CollNetChain, NetworkBoundMatchesPipelineClosedForm) {
  // 50 Gb/s NICs (6.25 GB/s): chunks c = S/4/C go up 3 NVLink hops (100 GB/s), through the network
  // up and down, then 3 hops down; the network stages set the pace:
  // T = 46.8 us + 3c/B + (C + 1) c/beta + 3c/B.
  const Topology topo = build_topology(sharp_spec(4, 50), "test");
  const double S = 64.0 * (1 << 20);
  const int C = collnet_chunks(topo, S, CollNetOptions{});
  ASSERT_EQ(C, 32);
  const double c = S / 4 / C, beta = 6.25e9, B = 100e9;
  const double hand = 46.8e-6 + 3 * c / B + (C + 1) * c / beta + 3 * c / B;
  EngineOptions e;
  e.pipeline_depth = kCollNetPipelineDepth;
  const SimResult r = simulate_one(topo, collnet_chain_schedule(topo, "all_reduce", S, Proto::Simple), e);
  EXPECT_NEAR(r.time_s, hand, 0.02 * hand) << "engine " << r.time_s << " hand " << hand;
}

}  // namespace
}  // namespace ccsim
