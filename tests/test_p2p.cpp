// NCCL's P2P path with per-message sizes (alltoallv_schedule, algorithms/p2p.h) against hand-derived
// numbers: the round of each pair, the protocol and fixed cost of each message from its own size,
// zero-byte messages, slot dependencies of sparse messages, a closed form of an uneven alltoallv on
// two nodes, and PXN aggregation against the unaggregated replay (same op time and per-rank finish
// times, same bytes on every link, fewer flows).
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "algorithms/nccl_channels.h"
#include "algorithms/p2p.h"
#include "sim/engine.h"
#include "common/error.h"
#include "topologies/nccl_env.h"
#include "topologies/routing.h"
#include "topologies/spec.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

using testing::preset;

// dgx-h100 with nominal NIC and PCIe rates (efficiency 1): the 400 Gb/s NIC (50 GB/s per direction)
// is the narrowest link of every cross-node route (PCIe Gen5 x16 63 GB/s, NVLink 450 GB/s).
Topology nominal_dgx_h100(int nodes) {
  nlohmann::json spec = load_topology_spec("dgx-h100");
  set_node_count(spec, nodes);
  spec["node"]["nic"]["efficiency"] = 1.0;
  spec["node"]["pcie"]["efficiency"] = 1.0;
  return build_topology(spec, "test");
}

// `nccl_version`: whose channel rule (--nccl-version); "" for the default, NCCL 2.30.
P2pConfig config_of(const Topology& topo, const std::string& nccl_version = "") {
  NcclTopoSummary sum = summarize_for_nccl(topo);
  if (!nccl_version.empty()) sum.nccl_version = parse_nccl_version(nccl_version, "test");
  return nccl_p2p_config(topo, sum);
}

// The record carrying src -> dst (unaggregated schedules: one per message).
const Transfer& record(const Schedule& s, int src, int dst) {
  for (const Transfer& t : s.transfers)
    if (t.src == src && t.dst == dst) return t;
  throw std::logic_error("no record " + std::to_string(src) + " -> " + std::to_string(dst));
}

double fixed_s(const Topology& topo, const Transfer& t) {
  return t.delay_s + route_latency_s(topo, route_between_gpus(topo, t.src, t.dst, t.rail));
}

P2pScheduleOptions unaggregated() {
  P2pScheduleOptions o;
  o.aggregate_pxn = false;
  return o;
}

// NCCL_P2P_NET_CHUNKSIZE (node.nic.p2p_chunk_bytes) sets the chunk and, through minPart = chunk / 2
// and maxPart = chunk across nodes, how a message is split. A 1 MiB message on 2 DGX H100 nodes (4
// channels per peer, NCCL 2.29+'s one per 14 GB/s of NIC; nChannelsMin 2 with 16 ranks and 32 p2p channels):
//   128 KiB (NCCL's default): channels min(2, ceil(1 MiB / 64 KiB)) = 2, parts of 512 KiB above the
//     128 KiB max part double them to 4 (the most per peer); 1 MiB is not below 8 chunks, so 128 KiB
//     chunks: 256 KiB / 128 KiB = 2 per channel, 8 in all;
//   512 KiB (aws-ofi-nccl's on p5): channels min(2, ceil(1 MiB / 256 KiB)) = 2; 1 MiB < 8 x 512 KiB
//     halves the chunk to 256 KiB: 2 per channel, 4 in all.
TEST(P2pMessages, TheNetChunkSizeSplitsMessages) {
  const Topology def = nominal_dgx_h100(2);
  nlohmann::json spec = load_topology_spec("dgx-h100");
  set_node_count(spec, 2);
  spec["node"]["nic"]["p2p_chunk_bytes"] = 524288;
  const Topology big = build_topology(spec, "test");
  const P2pConfig c0 = config_of(def), c1 = config_of(big);
  EXPECT_EQ(c0.chunk_bytes, 131072);
  EXPECT_EQ(c1.chunk_bytes, 524288);
  EXPECT_STREQ(c1.chunk_param, "NCCL_P2P_NET_CHUNKSIZE");
  const P2pOp a = nccl_p2p_op(c0, 1 << 20, true), b = nccl_p2p_op(c1, 1 << 20, true);
  EXPECT_EQ(a.channels, 4);
  EXPECT_EQ(a.chunk_data_bytes, 131072);
  EXPECT_EQ(a.chunks, 8);
  EXPECT_EQ(b.channels, 2);
  EXPECT_EQ(b.chunk_data_bytes, 262144);
  EXPECT_EQ(b.chunks, 4);
  // The preset that carries it, and the setting that writes it.
  EXPECT_EQ(config_of(preset("aws-p5", 2)).chunk_bytes, 524288);
  nlohmann::json env = load_topology_spec("dgx-h100");
  const NcclEnvNote n = apply_nccl_env(env, "NCCL_P2P_NET_CHUNKSIZE=524288", "--env", "test");
  EXPECT_TRUE(n.modelled);
  EXPECT_EQ(env["node"]["nic"]["p2p_chunk_bytes"], 524288);
  EXPECT_THROW(apply_nccl_env(env, "NCCL_P2P_NET_CHUNKSIZE=100", "--env", "test"), InputError);
  // One node of all-NVLink pairs takes the NVL chunk; without NVLink, the PCI one. None exceeds one
  // Simple step (init.cc: p2pChunkSize x NCCL_STEPS <= NCCL_BUFFSIZE): 1 MiB is cut to 4 MiB / 8 =
  // 512 KiB, unless the buffer is 8 MiB.
  nlohmann::json one = load_topology_spec("dgx-h100");
  apply_nccl_env(one, "NCCL_P2P_NVL_CHUNKSIZE=1048576", "--env", "test");
  const P2pConfig capped = config_of(build_topology(one, "test"));
  EXPECT_EQ(capped.chunk_bytes, 524288);
  EXPECT_STREQ(capped.chunk_param, "NCCL_BUFFSIZE / 8");
  apply_nccl_env(one, "NCCL_BUFFSIZE=8388608", "--env", "test");
  EXPECT_EQ(config_of(build_topology(one, "test")).chunk_bytes, 1048576);
  nlohmann::json pcie = load_topology_spec("pcie-gen4-8gpu");
  EXPECT_EQ(apply_nccl_env(pcie, "NCCL_P2P_NVL_CHUNKSIZE=1048576", "--env", "test").effect,
            "no effect: the node has no node.nvlink");
  apply_nccl_env(pcie, "NCCL_P2P_PCI_CHUNKSIZE=262144", "--env", "test");
  const P2pConfig cp = config_of(build_topology(pcie, "test"));
  EXPECT_EQ(cp.chunk_bytes, 262144);
  EXPECT_STREQ(cp.chunk_param, "NCCL_P2P_PCI_CHUNKSIZE");
}

// NCCL_NCHANNELS_PER_NET_PEER replaces NCCL's rule for peers across the network (paths.cc
// ncclTopoGetNchannels). NCCL 2.29+: max(NICs, ceil(NIC GB/s / 14)), whatever the ranks: on dgx-h100
// (one 400 Gb/s NIC per GPU, 48 GB/s in NCCL's units) 4, on 2 nodes (16 p2p channels: per peer
// min(16, NVLink 2 x 18, 4)) as on 32. Up to 2.28: 2, halved while 2 x ranks > 4 x p2pnChannels: 2 on
// 2 nodes, 1 on 32 (2 x 256 > 4 x 16). The setting: 8 and 4 whatever the version.
TEST(P2pMessages, ChannelsPerNetPeerSetting) {
  EXPECT_EQ(config_of(testing::preset("dgx-h100", 2)).channels_per_peer, 4);
  EXPECT_EQ(config_of(testing::preset("dgx-h100", 32)).channels_per_peer, 4);
  EXPECT_EQ(config_of(testing::preset("dgx-h100", 2), "2.28").channels_per_peer, 2);
  EXPECT_EQ(config_of(testing::preset("dgx-h100", 32), "2.28").channels_per_peer, 1);
  EXPECT_EQ(config_of(testing::preset("dgx-h100", 2, {}, {"NCCL_NCHANNELS_PER_NET_PEER=8"})).channels_per_peer, 8);
  EXPECT_EQ(config_of(testing::preset("dgx-h100", 32, {}, {"NCCL_NCHANNELS_PER_NET_PEER=4"}), "2.28").channels_per_peer, 4);
  // Two 100 Gb/s NICs per GPU (oci-a100: 12.5 GB/s each, counted until they reach the GPU's 24 GB/s
  // PCIe Gen4 path): at least one channel per NIC, 2 either way.
  EXPECT_EQ(config_of(testing::preset("oci-a100", 2)).channels_per_peer, 2);
  EXPECT_EQ(config_of(testing::preset("oci-a100", 2), "2.28").channels_per_peer, 2);
  // One node has no network peer: nothing changes (pow2Up(min(24 coll channels, NVLink 36)) = 32).
  EXPECT_EQ(config_of(testing::preset("dgx-h100", 1, {}, {"NCCL_NCHANNELS_PER_NET_PEER=1"})).channels_per_peer, 32);
}

// NCCL_P2P_LL_THRESHOLD: a message of at most channels x threshold goes by LL (addP2pToPlan). A
// 16 KiB message on one channel is LL by default (16 KiB <= 1 x 16 KiB), Simple with 0, and a 64 KiB
// message is LL with 64 KiB.
TEST(P2pMessages, LLThresholdSetting) {
  const P2pConfig def = config_of(testing::preset("dgx-h100", 2));
  EXPECT_EQ(nccl_p2p_op(def, 16384, true).channels, 1);
  EXPECT_EQ(nccl_p2p_op(def, 16384, true).proto, Proto::LL);
  EXPECT_EQ(nccl_p2p_op(def, 65536, true).proto, Proto::Simple);
  const P2pConfig never = config_of(testing::preset("dgx-h100", 2, {}, {"NCCL_P2P_LL_THRESHOLD=0"}));
  EXPECT_EQ(nccl_p2p_op(never, 16384, true).proto, Proto::Simple);
  const P2pConfig big = config_of(testing::preset("dgx-h100", 2, {}, {"NCCL_P2P_LL_THRESHOLD=65536"}));
  EXPECT_EQ(nccl_p2p_op(big, 65536, true).channels, 1);
  EXPECT_EQ(nccl_p2p_op(big, 65536, true).proto, Proto::LL);
  EXPECT_THROW(testing::preset("dgx-h100", 2, {}, {"NCCL_P2P_LL_THRESHOLD=-1"}), InputError);
}

// NCCL doubles the NET chunk on an Arm host with sm100+ GPUs (init.cc: "GBx platforms only have 4
// GPUs per host"): two GB200 trays over the network, 2 x 128 KiB; two x86 B200 nodes keep 128 KiB.
TEST(P2pMessages, ArmHostsWithSm100DoubleTheNetChunk) {
  const P2pConfig gb = config_of(testing::preset("gb200-nvl72", 2, {"node.nvlink.domain_size=1"}));
  EXPECT_EQ(gb.chunk_bytes, 262144);
  EXPECT_STREQ(gb.chunk_param, "NCCL_P2P_NET_CHUNKSIZE x 2 (Arm host, sm100+)");
  EXPECT_EQ(config_of(testing::preset("dgx-b200", 2)).chunk_bytes, 131072);
}

TEST(P2pMessages, RoundIsThePositionInNcclsRoundOrder) {
  for (int src = 0; src < 12; ++src) {
    const std::vector<int> peers = p2p_round_peers(12, 4, src);
    for (int round = 0; round < 12; ++round) EXPECT_EQ(p2p_round(12, 4, src, peers[round]), round) << src;
  }
  // 3 nodes x 4 GPUs: rank 6 (node 1, local 2) reaches rank 1 (node 0, local 1) two nodes and three GPUs ahead.
  EXPECT_EQ(p2p_round(12, 4, 6, 1), 2 * 4 + 3);
}

TEST(P2pMessages, EachMessageTakesTheProtocolOfItsOwnSize) {
  // Two dgx-h100 nodes (Intel CPUs: NCCL's proxy cost 1 us per network message). From rank 0:
  // 4 KiB and 1 MiB to GPUs of its node (1, 2) and of the other node (9, 10). NCCL: LL when bytes <=
  // channels x 16384, so 4 KiB (1 channel) is LL and 1 MiB Simple, in the same group.
  const Topology topo = preset("dgx-h100", 2);
  const P2pConfig cfg = config_of(topo);
  ASSERT_DOUBLE_EQ(cfg.proxy_cost_s, 1e-6);
  const double small = 4096, big = 1 << 20;
  const Schedule s = alltoallv_schedule(topo, cfg, {{0, 1, small}, {0, 2, big}, {0, 9, small}, {0, 10, big}}, unaggregated());
  ASSERT_EQ(s.transfers.size(), 4u);
  EXPECT_EQ(s.collective, "alltoallv");
  EXPECT_DOUBLE_EQ(s.size_bytes, 2 * small + 2 * big);
  // Wire bytes: LL sends a 4-byte flag with every 4 bytes of data.
  EXPECT_DOUBLE_EQ(record(s, 0, 1).bytes, 2 * small);
  EXPECT_DOUBLE_EQ(record(s, 0, 2).bytes, big);
  EXPECT_DOUBLE_EQ(record(s, 0, 9).bytes, 2 * small);
  EXPECT_DOUBLE_EQ(record(s, 0, 10).bytes, big);
  // Across nodes 1 MiB runs on 4 channels (NCCL 2.29+'s 4 per network peer; docs/collectives.md), 4 KiB on 1.
  EXPECT_EQ(record(s, 0, 9).channels, 1);
  EXPECT_EQ(record(s, 0, 10).channels, 4);
  // Fixed cost across nodes: launch (LL 6.6 us, Simple 8.4 us) + NET hop (LL 2.7 us, Simple 14 us)
  // + the proxy's sweep. PXN: 0 -> 9 is posted by GPU 1 (rail 1), 0 -> 10 by GPU 2 (rail 2), each
  // proxy with that one send and no receive: 1 x 1 us.
  EXPECT_EQ(record(s, 0, 9).rail, 1);
  EXPECT_EQ(record(s, 0, 10).rail, 2);
  EXPECT_NEAR(fixed_s(topo, record(s, 0, 9)), (6.6 + 2.7 + 1) * 1e-6, 1e-12);
  EXPECT_NEAR(fixed_s(topo, record(s, 0, 10)), (8.4 + 14 + 1) * 1e-6, 1e-12);
  // Inside the node: launch + NVLink hop, no proxy (NCCL 2.30 hwLat NVLink Ring: LL 0.6 us, Simple 0.6 us).
  const double nvl_ll = ring_protocol(Proto::LL).timing.nvlink_step_s, nvl_simple = ring_protocol(Proto::Simple).timing.nvlink_step_s;
  EXPECT_NEAR(fixed_s(topo, record(s, 0, 1)), 6.6e-6 + nvl_ll, 1e-12);
  EXPECT_NEAR(fixed_s(topo, record(s, 0, 2)), 8.4e-6 + nvl_simple, 1e-12);
}

TEST(P2pMessages, ZeroByteMessagesCostAProxyTurnAndSelfCopiesNothing) {
  // NCCL posts a 0-byte send as one LL operation with one proxy step (addP2pToPlan: nChannels 1,
  // nsteps 1): a record of 0 bytes with the LL fixed cost. The copy to itself is not simulated.
  const Topology topo = preset("dgx-h100", 2);
  const P2pConfig cfg = config_of(topo);
  const Schedule s = alltoallv_schedule(topo, cfg, {{3, 3, 1 << 20}, {3, 11, 0}}, unaggregated());
  ASSERT_EQ(s.transfers.size(), 1u);
  const Transfer& t = s.transfers[0];
  EXPECT_EQ(t.bytes, 0.0);
  // Rank 3 -> rank 11 (local 3, rail 3): its own NIC, its proxy posts one send: 6.6 + 2.7 + 1 us.
  EXPECT_EQ(t.rail, 3);
  EXPECT_NEAR(fixed_s(topo, t), (6.6 + 2.7 + 1) * 1e-6, 1e-12);
  const SimResult r = simulate_one(topo, s, {});
  EXPECT_NEAR(r.time_s, (6.6 + 2.7 + 1) * 1e-6, 1e-12);
}

TEST(P2pMessages, BadMessagesAreRejected) {
  const Topology topo = preset("dgx-h100", 1);
  const P2pConfig cfg = config_of(topo);
  EXPECT_THROW(alltoallv_schedule(topo, cfg, {{0, 8, 1.0}}), std::invalid_argument);
  EXPECT_THROW(alltoallv_schedule(topo, cfg, {{-1, 2, 1.0}}), std::invalid_argument);
  EXPECT_THROW(alltoallv_schedule(topo, cfg, {{0, 2, -1.0}}), std::invalid_argument);
  EXPECT_THROW(alltoallv_schedule(topo, cfg, {{0, 2, 1.0}, {1, 2, 1.0}, {0, 2, 5.0}}), std::invalid_argument);
}

TEST(P2pMessages, SparseMessagesWaitOnlyForTheMessageInTheirSlot) {
  // Two dgx-h100 nodes with comm->nChannels = 1: p2pnChannels 1, one channel per message, so 8
  // rounds in flight; round r waits for round r - 8 of the same rank when that rank sends in it.
  // Rank 0 sends in rounds 1 (rank 1), 9 (rank 9) and 10 (rank 10): round 9 waits for round 1;
  // round 10 would wait for round 2, in which rank 0 sends nothing: it does not wait.
  const Topology topo = preset("dgx-h100", 2);
  const P2pConfig cfg = nccl_p2p_config(topo, testing::summary_with_channels(topo, 1));
  ASSERT_EQ(nccl_p2p_op(cfg, 1 << 20, true).max_concurrent_peers, 8);
  const Schedule s = alltoallv_schedule(topo, cfg, {{0, 1, 1 << 20}, {0, 9, 1 << 20}, {0, 10, 1 << 20}}, unaggregated());
  ASSERT_EQ(s.transfers.size(), 3u);
  // Records in round order: 0 -> 1 (round 1, wave 0), 0 -> 9 (round 9, wave 1), 0 -> 10 (round 10, wave 1).
  EXPECT_EQ(s.transfers[0].dst, 1);
  EXPECT_EQ(s.transfers[1].dst, 9);
  EXPECT_EQ(s.transfers[2].dst, 10);
  EXPECT_EQ(s.transfers[1].step, 1);
  ASSERT_EQ(s.transfers[1].dep_count, 1u);
  EXPECT_EQ(s.deps_of(s.transfers[1])[0], 0u);
  EXPECT_EQ(s.transfers[2].dep_count, 0u);
}

TEST(P2pMessages, OneNvlinkDomainRunsOneRoundPerChannelAtATime) {
  // 64 GPUs in one NVLink domain (16 GB200 trays): one node to NCCL (MNNVL fuses the clique's
  // topology), p2pnChannels 32. Round r's base channel is reverseBits(r mod 32) and a CTA runs one
  // batch of rounds at a time, so rounds 33..63 each wait for the round 32 before them on their CTA:
  // 31 of every rank's 63 messages carry one dependency (NCCL 2.29 channel.h, enqueue.cc).
  nlohmann::json spec = load_topology_spec("gb200-nvl72");
  apply_override(spec, "node.nvlink.domain_size=16", "test");
  set_node_count(spec, 16);
  const Topology topo = build_topology(spec, "gb200-nvl72");
  ASSERT_EQ(topo.num_nodes(), 1);
  ASSERT_EQ(topo.num_gpus(), 64);
  const P2pConfig cfg = config_of(topo);
  ASSERT_EQ(cfg.p2p_channels, 32);
  const double size = 32.0 * (1 << 20);  // 512 KiB per peer: one channel each
  EXPECT_EQ(nccl_p2p_op(cfg, size / 64, false).max_concurrent_peers, 32);
  const Schedule s = alltoall_schedule(topo, cfg, size, unaggregated());
  ASSERT_EQ(s.transfers.size(), 64u * 63u);
  std::size_t waiting = 0;
  for (const Transfer& t : s.transfers) {
    if (t.dep_count == 0) continue;
    ++waiting;
    ASSERT_EQ(t.dep_count, 1u);
    const Transfer& slot = s.transfers[s.deps_of(t)[0]];
    EXPECT_EQ(slot.src, t.src);
    EXPECT_EQ(((t.dst - slot.dst) % 64 + 64) % 64, 32);  // the round 32 earlier
  }
  EXPECT_EQ(waiting, 64u * 31u);
}

// The uneven alltoallv of the closed-form and aggregation tests: every rank sends to every other; a
// cross-node message's size depends on the source node and the destination GPU, a message inside a
// node is LL-sized (4 KiB .. 12 KiB).
std::vector<P2pMessage> uneven_messages(const Topology& topo, double unit_bytes) {
  const int n = topo.num_gpus(), g = topo.gpus_per_node();
  std::vector<P2pMessage> m;
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      if (s == d) continue;
      const double bytes = s / g == d / g ? 4096.0 * (1 + (s + d) % 3) : unit_bytes * (1 + d % g + 3 * (s / g));
      m.push_back({s, d, bytes});
    }
  return m;
}

TEST(P2pMessages, UnevenAlltoallvOnTwoNodesMatchesTheBusiestNic) {
  // 2 nominal dgx-h100 nodes. With PXN every cross-node message to GPU d leaves through the NIC of
  // d's rail: NIC r of node A sends the 8 messages from A's GPUs to GPU r of the other node, each of
  // unit x (1 + r + 3A) bytes (Simple). The busiest NIC direction is node 1's rail 7:
  // 8 x 11 units. All cross-node messages have one fixed cost: launch 8.4 + NET hop 14 + the proxy
  // sweep of the rail GPU (8 sends it posts + 8 receives it completes: 16 x 1 us) = 38.4 us. Inside a
  // node, LL messages of at most 12 KiB finish long before. So T = 38.4 us + 88 units / 50 GB/s.
  const Topology topo = nominal_dgx_h100(2);
  const P2pConfig cfg = config_of(topo);
  const double unit = 256.0 * 1024;
  const double expected = 38.4e-6 + 8 * 11 * unit / 50e9;
  for (const bool aggregate : {false, true}) {
    P2pScheduleOptions o;
    o.aggregate_pxn = aggregate;
    const Schedule s = alltoallv_schedule(topo, cfg, uneven_messages(topo, unit), o);
    const SimResult r = simulate_one(topo, s, {});
    EXPECT_NEAR(r.time_s, expected, 1e-9 * expected) << "aggregate " << aggregate;
    EXPECT_NEAR(p2p_closed_form_time_s(topo, s), expected, 1e-9 * expected) << "aggregate " << aggregate;
    // Every rank of node 1 sends on rail 7 and GPU 15 receives on it: they finish last.
    for (int rank = 8; rank < 16; ++rank) EXPECT_NEAR(r.rank_finish_s[rank], expected, 1e-9 * expected) << rank;
  }
}

// The aggregated and the unaggregated replay of one alltoallv: same op time and per-rank finish
// times, the same bytes on every link direction, and the number of records each needs.
void expect_aggregation_matches(const Topology& topo, const P2pConfig& cfg, const std::vector<P2pMessage>& messages,
                                double tolerance, std::size_t* records_unaggregated, std::size_t* records_aggregated) {
  const Schedule whole = alltoallv_schedule(topo, cfg, messages, unaggregated());
  const Schedule grouped = alltoallv_schedule(topo, cfg, messages);
  *records_unaggregated = whole.transfers.size();
  *records_aggregated = grouped.transfers.size();
  EngineOptions no_symmetry;
  no_symmetry.exploit_symmetry = false;
  const SimResult a = simulate_one(topo, whole, no_symmetry);
  const SimResult b = simulate_one(topo, grouped, no_symmetry);
  EXPECT_NEAR(b.time_s, a.time_s, tolerance * a.time_s);
  ASSERT_EQ(a.rank_finish_s.size(), b.rank_finish_s.size());
  for (std::size_t i = 0; i < a.rank_finish_s.size(); ++i)
    EXPECT_NEAR(b.rank_finish_s[i], a.rank_finish_s[i], tolerance * a.time_s) << "rank " << i;
  std::map<std::pair<std::string, std::string>, double> bytes_a;
  for (const auto& l : a.links) bytes_a[{l.from, l.to}] = l.bytes;
  ASSERT_EQ(a.links.size(), b.links.size());
  for (const auto& l : b.links) EXPECT_NEAR(bytes_a[std::make_pair(l.from, l.to)], l.bytes, 1e-9 * l.bytes) << l.from << "->" << l.to;
}

TEST(P2pAggregation, SameTimesAsOneRecordPerMessageOnFourDgxH100Nodes) {
  // 4 nodes, uneven sizes (cross-node: unit x (1 + local index of the destination + 3 x source node),
  // LL and Simple across nodes), in one wave with NCCL's channels.
  const Topology topo = preset("dgx-h100", 4);
  std::size_t whole = 0, grouped = 0;
  expect_aggregation_matches(topo, config_of(topo), uneven_messages(topo, 3000.0), 1e-9, &whole, &grouped);
  // One record per message: 32 x 31. Aggregated: 32 x 7 inside nodes, one network record per
  // (source node, destination GPU) = 4 x 24, and one NVLink leg per (GPU, relay) = 32 x 7.
  EXPECT_EQ(whole, 32u * 31u);
  EXPECT_EQ(grouped, 32u * 7u + 4u * 24u + 32u * 7u);
}

TEST(P2pAggregation, SameTimesWithRoundsInSeveralWaves) {
  // comm->nChannels = 2 with NCCL 2.28's rule: p2pnChannels 2, one channel per message (network peers:
  // 2 halved while 2 x 32 ranks > 4 x 2), so 16 rounds in flight: wave 0 = rounds 1..15 (inside the
  // node, then the next node), wave 1 = rounds 16..31 (two and three nodes ahead), each message
  // waiting for its rank's message 16 rounds earlier.
  const Topology topo = preset("dgx-h100", 4);
  NcclTopoSummary summary = testing::summary_with_channels(topo, 2);
  summary.nccl_version = parse_nccl_version("2.28", "test");
  const P2pConfig cfg = nccl_p2p_config(topo, summary);
  ASSERT_EQ(nccl_p2p_op(cfg, 1 << 20, true).max_concurrent_peers, 16);
  // Wave 1's first cross-node round (two nodes ahead) waits for messages inside the node, of 4 to
  // 12 KiB, which end up to 0.16 us apart; its records start with the last of them, and their NIC
  // shares shift: the op time and every finish time stay within 0.3% (measured 626.0 against
  // 627.8 us). Waves made of cross-node rounds only are exact (see the test above).
  std::size_t whole = 0, grouped = 0;
  expect_aggregation_matches(topo, cfg, uneven_messages(topo, 64.0 * 1024), 3e-3, &whole, &grouped);
  // Aggregated: 224 messages inside nodes; network records: one per (node, destination GPU, wave) =
  // 4 x 24 (two destination nodes in wave 1 share a record only with the same destination GPU: none);
  // NVLink legs: per GPU 7 relays in each of the 2 waves.
  EXPECT_EQ(whole, 32u * 31u);
  EXPECT_EQ(grouped, 224u + 4u * 24u + 2u * 32u * 7u);
}

TEST(P2pAggregation, NothingToAggregateWithoutPxn) {
  // pcie-gen4-8gpu: no NVLink, so no PXN; each GPU's messages leave by its own NIC (2 per node,
  // shared by 4 GPUs each): every record is one message, aggregated or not.
  const Topology topo = preset("pcie-gen4-8gpu", 2);
  const P2pConfig cfg = config_of(topo);
  ASSERT_FALSE(cfg.pxn);
  std::size_t whole = 0, grouped = 0;
  expect_aggregation_matches(topo, cfg, uneven_messages(topo, 20000.0), 1e-9, &whole, &grouped);
  EXPECT_EQ(whole, grouped);
}

TEST(P2pAggregation, UniformAlltoallKeepsItsBytes) {
  // Bytes conservation: every message's wire bytes are carried once, aggregated or not; per rank
  // (unaggregated) each sends (n - 1) messages of size / n.
  const Topology topo = preset("dgx-h100", 2);
  const P2pConfig cfg = config_of(topo);
  const double size = 16.0 * (1 << 20);
  const Schedule whole = alltoall_schedule(topo, cfg, size, unaggregated());
  const Schedule grouped = alltoall_schedule(topo, cfg, size);
  for (double b : whole.bytes_sent_per_rank()) EXPECT_DOUBLE_EQ(b, 15 * size / 16);
  double network_whole = 0, network_grouped = 0;
  for (const Transfer& t : whole.transfers) network_whole += t.rail >= 0 ? t.bytes : 0;
  for (const Transfer& t : grouped.transfers) network_grouped += t.rail >= 0 ? t.bytes : 0;
  EXPECT_DOUBLE_EQ(network_whole, 16 * 8 * size / 16);
  EXPECT_DOUBLE_EQ(network_grouped, network_whole);
}

// alltoall_closed_form_time_s counts what the schedule holds instead of building it (17 GB at 32768
// GPUs): the same number as p2p_closed_form_time_s over alltoall_schedule, with and without leaf
// groups (full, partial, one node each), PXN or not, one node, a multi-host NVLink domain, LL and
// Simple messages, one wave and many.
TEST(P2pClosedForm, AlltoallByCountsEqualsTheSchedulesClosedForm) {
  std::vector<std::pair<std::string, Topology>> topos;
  for (const char* name : {"dgx-h100", "hgx-a100", "pcie-gen4-8gpu", "aws-p5"})
    for (int nodes : {1, 2, 3}) topos.emplace_back(std::string(name) + " x" + std::to_string(nodes), preset(name, nodes));
  // NVLink domains of 18 trays (72 GPUs) as nodes.
  for (int trays : {18, 36}) topos.emplace_back("gb200-nvl72 x" + std::to_string(trays), preset("gb200-nvl72", trays));
  for (const auto& [nodes, per_leaf] : std::vector<std::pair<int, int>>{{8, 4}, {10, 4}, {7, 3}, {5, 1}, {12, 4}}) {
    for (const char* name : {"dgx-h100", "hgx-a100"}) {
      nlohmann::json spec = load_topology_spec(name);
      set_node_count(spec, nodes);
      apply_override(spec, "fabric.nodes_per_leaf=" + std::to_string(per_leaf), "test");
      topos.emplace_back(std::string(name) + " x" + std::to_string(nodes) + " leaf " + std::to_string(per_leaf),
                         build_topology(spec, "test"));
    }
  }
  topos.emplace_back("1-GPU x16 leaf 5", build_topology(testing::single_gpu_nodes_spec(16, 5, 2.0), "test"));
  for (const auto& [label, topo] : topos) {
    const P2pConfig cfg = config_of(topo);
    const double n = topo.num_gpus();
    for (double size : {64.0 * n, 1.0 * (1 << 20), 1.0 * (1 << 30), 3e8 + 7}) {
      const double expected = p2p_closed_form_time_s(topo, alltoall_schedule(topo, cfg, size));
      const std::optional<double> counted = alltoall_closed_form_by_counts(topo, cfg, size);
      ASSERT_TRUE(counted.has_value()) << label;
      // Equal bytes summed message by message there, multiplied by their count here.
      EXPECT_NEAR(*counted, expected, 1e-13 * expected) << label << ", " << size << " bytes";
      EXPECT_EQ(alltoall_closed_form_time_s(topo, cfg, size), *counted);
    }
  }
}

// 32768 GPUs (4096 nominal dgx-h100 nodes, 128 leaf groups), 1 GiB: 32 KiB messages, Simple on one
// channel, so p2p_channels / 1 x 8 rounds in flight per wave. In every wave each node sends one
// message per round across nodes on each rail (GPU l's message to local GPU l + d leaves through the
// NIC of rail l + d, sent by the GPU on it), so a NIC carries R_w messages of 32 KiB each way
// (R_w: the wave's rounds across nodes; wave 0 starts at round 1 and its first 7 stay inside the
// node), the leaf-spine links (32 x 400 Gb/s) at most 32 R_w, PCIe (64 GB/s) and NVLink less. The
// fixed cost of a network record: NCCL's NET hop 14 us (above any route's latency), launch 8.4 us in
// wave 0, and the relay GPU's proxy sweep of R_w sends and R_w receives at 1 us each:
//   T = sum_w 14 us + [w = 0] 8.4 us + 2 R_w x 1 us + R_w x 32 KiB / 50 GB/s.
TEST(P2pClosedForm, AlltoallAt32768GpusIsTheHandDerivedOne) {
  const Topology topo = nominal_dgx_h100(4096);
  const P2pConfig cfg = config_of(topo);
  const double size = 1 << 30, message = size / 32768;
  const P2pOp op = nccl_p2p_op(cfg, message, true);
  ASSERT_EQ(op.proto, Proto::Simple);
  ASSERT_EQ(op.channels, 1);
  const int in_flight = op.max_concurrent_peers;
  ASSERT_EQ(in_flight, cfg.p2p_channels * 8);
  double expected = 0;
  for (int w = 0; w * in_flight < 32768; ++w) {
    const int first = std::max(8, w * in_flight), last = std::min(32768, (w + 1) * in_flight);  // rounds across nodes
    const double rounds = last - first;
    expected += 14e-6 + (w == 0 ? 8.4e-6 : 0.0) + 2 * rounds * 1e-6 + rounds * message / 50e9;
  }
  const std::optional<double> t = alltoall_closed_form_by_counts(topo, cfg, size);
  ASSERT_TRUE(t.has_value());
  EXPECT_NEAR(*t, expected, 1e-9 * expected);
}

}  // namespace
}  // namespace ccsim
