// NVLS and NVLSTree (algorithms/nvls.h) against hand-derived numbers: bytes per GPU link (S(1 + 1/n)
// each way for all_reduce), NCCL's one-node chunk rule and the kernel's pipeline fill, the engine
// against ccsim's closed form, the switch's reduction rate as a bottleneck, Ring vs NVLS on dgx-h100,
// and NCCL's applicability rules as input errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "algorithms/closed_form.h"
#include "algorithms/nccl_channels.h"
#include "algorithms/nvls.h"
#include "algorithms/ring.h"
#include "cli_runner.h"
#include "common/error.h"
#include "sim/engine.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

using testing::preset;

// One NVSwitch node of `gpus` GPUs with NVLink SHARP: 4 links x 25 GB/s at efficiency 1 = 100 GB/s per
// direction per GPU, 0.5 us GPU-to-GPU (0.25 us per GPU<->switch link); multimem traffic at the full
// NVLink data rate (nvls_efficiency 1), so that the hand derivations count data bytes. With nodes > 1: one NIC per GPU
// sharing a PCIe Gen5 x16 switch with it (efficiency 1: 63 GB/s), `nic_gbps` InfiniBand at efficiency 1.
nlohmann::json nvls_spec(int gpus, int nodes = 1, double nic_gbps = 100, double reduce_GBps = 0) {
  nlohmann::json nvlink = {{"generation", 4}, {"links_per_gpu", 4},   {"GBps_per_link", 25.0}, {"efficiency", 1.0},
                           {"latency_us", 0.5}, {"nvswitch", true}, {"nvls", true}, {"nvls_efficiency", 1.0}};
  if (reduce_GBps > 0) nvlink["nvls_reduce_GBps"] = reduce_GBps;
  nlohmann::json spec = {{"format", "ccsim-topology/1"},
                         {"name", "test-nvls"},
                         {"nodes", nodes},
                         {"node",
                          {{"gpu", {{"model", "H100-SXM5-80GB"}, {"arch", "sm90"}, {"count", gpus}}},
                           {"nvlink", nvlink},
                           {"cpu", {{"sockets", 1}, {"vendor", "intel"}}},
                           {"pcie",
                            {{"generation", 5}, {"lanes", 16}, {"switches_per_socket", gpus}, {"efficiency", 1.0}}},
                           {"nic",
                            {{"count", gpus}, {"Gbps", nic_gbps}, {"efficiency", 1.0}, {"transport", "ib"}}}}},
                         {"fabric", {{"kind", "rail-optimized-fat-tree"}, {"nodes_per_leaf", 64}}}};
  return spec;
}

constexpr double kB = 100e9;          // GPU <-> NVSwitch, per direction
constexpr double kIntraS = 25e-6;     // NCCL 2.30 hwLat[NVLINK][NVLS][Simple] (baseLat 0)
constexpr double kNetStepS = 20.9e-6; // hwLat[NET][NVLSTree][Simple]

// Bytes per direction on the GPU <-> NVSwitch links and the reduction link, from the engine.
struct LinkBytes {
  std::map<std::string, double> up, down;  // by GPU name
  double to_reducer = 0, from_reducer = 0;
};
LinkBytes link_bytes(const SimResult& r) {
  LinkBytes b;
  for (const auto& l : r.links) {
    if (l.kind == LinkKind::Reduction) {
      (l.to.find("sharp") != std::string::npos ? b.to_reducer : b.from_reducer) += l.bytes;
    } else if (l.kind == LinkKind::NvLink) {
      if (l.to.find("nvswitch") != std::string::npos) b.up[l.from] += l.bytes;
      else b.down[l.to] += l.bytes;
    }
  }
  return b;
}

TEST(Nvls, TopologyHasTheSwitchReducer) {
  const Topology t = build_topology(nvls_spec(8), "test");
  VertexId red, sw;
  ASSERT_TRUE(t.find_vertex(VertexKind::Reducer, 0, 0, -1, &red));
  ASSERT_TRUE(t.find_vertex(VertexKind::NvSwitch, 0, 0, -1, &sw));
  EXPECT_EQ(t.vertex(red).name, "n0.nvswitch.sharp");
  // Default: not limiting = every GPU port's operands at full rate, 8 x 100 GB/s.
  EXPECT_DOUBLE_EQ(t.link(t.edge_between(sw, red)).bandwidth_Bps, 8 * kB);
  const Topology slow = build_topology(nvls_spec(8, 1, 100, 250), "test");
  VertexId sw2, red2;
  ASSERT_TRUE(slow.find_vertex(VertexKind::Reducer, 0, 0, -1, &red2));
  ASSERT_TRUE(slow.find_vertex(VertexKind::NvSwitch, 0, 0, -1, &sw2));
  EXPECT_DOUBLE_EQ(slow.link(slow.edge_between(sw2, red2)).bandwidth_Bps, 250e9);
  // The key needs nvls; a non-NVLS preset has no reducer.
  nlohmann::json bad = nvls_spec(8);
  bad["node"]["nvlink"]["nvls"] = false;
  bad["node"]["nvlink"]["nvls_reduce_GBps"] = 100;
  EXPECT_THROW(build_topology(bad, "test"), InputError);
  EXPECT_FALSE(preset("hgx-a100", 1).find_vertex(VertexKind::Reducer, 0, 0, -1, &red));
  EXPECT_TRUE(preset("dgx-h100", 2).find_vertex(VertexKind::Reducer, 1, 0, -1, &red));
}

TEST(Nvls, AllReduceBytesPerLinkAreSTimesOnePlusOneOverN) {
  // n = 8, S = 8 MB. Head j's slice is S/8: 8 operands of S/8 up to the reducer, S/8 down to j,
  // S/8 from j to the switch, 8 copies of S/8 down. Per GPU: up 8 x S/8 + S/8 = S(1 + 1/8),
  // down S/8 + 8 x S/8 = S(1 + 1/8); the reduction link takes 64 x S/8 = 8 S and returns 8 x S/8 = S.
  const Topology topo = build_topology(nvls_spec(8), "test");
  const double S = 8e6;
  const Schedule s = nvls_schedule(topo, "all_reduce", S, Proto::Simple);
  ASSERT_EQ(s.switches.size(), 2u);
  EXPECT_EQ(s.switches[0], "n0.nvswitch");
  EXPECT_EQ(s.switches[1], "n0.nvswitch.sharp");
  EXPECT_EQ(s.transfers.size(), 8u * (8 + 1 + 1 + 8));
  const auto sent = s.bytes_sent_per_rank(), received = s.bytes_received_per_rank();
  ASSERT_EQ(sent.size(), 10u);
  for (int g = 0; g < 8; ++g) {
    EXPECT_NEAR(sent[g], S * 9 / 8, 1e-6);
    EXPECT_NEAR(received[g], S * 9 / 8, 1e-6);
  }
  EXPECT_NEAR(received[8], S, 1e-6);      // switch: the 8 stores
  EXPECT_NEAR(sent[8], 8 * S, 1e-6);      // switch: 8 copies of each
  EXPECT_NEAR(received[9], 8 * S, 1e-6);  // reducer: every GPU's whole buffer
  EXPECT_NEAR(sent[9], S, 1e-6);          // reducer: the sums
  // The ring moves 2(n-1)/n S = 1.75 S per GPU and direction; NVLS 1.125 S.
  const SimResult r = simulate_one(topo, s, {});
  const LinkBytes b = link_bytes(r);
  ASSERT_EQ(b.up.size(), 8u);
  ASSERT_EQ(b.down.size(), 8u);
  for (const auto& [gpu, bytes] : b.up) EXPECT_NEAR(bytes, S * 9 / 8, 1e-3) << gpu;
  for (const auto& [gpu, bytes] : b.down) EXPECT_NEAR(bytes, S * 9 / 8, 1e-3) << gpu;
  EXPECT_NEAR(b.to_reducer, 8 * S, 1e-3);
  EXPECT_NEAR(b.from_reducer, S, 1e-3);
  EXPECT_EQ(r.symmetry_order, 1);  // schedules with switch endpoints are simulated whole
  EXPECT_EQ(r.rank_finish_s.size(), 8u);
}

TEST(Nvls, ReduceScatterAndAllGatherAreTheHalves) {
  const Topology topo = build_topology(nvls_spec(4), "test");
  const double S = 4e6;
  // reduce_scatter: ld_reduce only. Up S (4 operands of S/4), down S/4.
  const auto rs = nvls_schedule(topo, "reduce_scatter", S, Proto::Simple);
  EXPECT_EQ(rs.transfers.size(), 4u * (4 + 1));
  for (int g = 0; g < 4; ++g) {
    EXPECT_NEAR(rs.bytes_sent_per_rank()[g], S, 1e-6);
    EXPECT_NEAR(rs.bytes_received_per_rank()[g], S / 4, 1e-6);
  }
  // all_gather (S = gathered size): st only. Up S/4, down S.
  const auto ag = nvls_schedule(topo, "all_gather", S, Proto::Simple);
  EXPECT_EQ(ag.transfers.size(), 4u * (1 + 4));
  for (int g = 0; g < 4; ++g) {
    EXPECT_NEAR(ag.bytes_sent_per_rank()[g], S / 4, 1e-6);
    EXPECT_NEAR(ag.bytes_received_per_rank()[g], S, 1e-6);
  }
}

TEST(Nvls, NcclChunkFollowsTheSize) {
  // enqueue.cc calcCollChunking for NVLS: 128 KiB, then 64 KiB below 64 x ops x 128 KiB, 32 KiB below
  // 8 x ops x 64 KiB, 16 KiB below 2 x ops x 32 KiB; dgx-h100: ops = 16 channels x 8 heads = 128, so
  // the thresholds are 1 GiB, 64 MiB and 8 MiB.
  const double KiB = 1024, MiB = KiB * KiB, GiB = MiB * KiB;
  EXPECT_EQ(nccl_nvls_chunk_bytes(16 * GiB, 16, 8), 128 * KiB);
  EXPECT_EQ(nccl_nvls_chunk_bytes(1 * GiB, 16, 8), 128 * KiB);
  EXPECT_EQ(nccl_nvls_chunk_bytes(1 * GiB - 1, 16, 8), 64 * KiB);
  EXPECT_EQ(nccl_nvls_chunk_bytes(64 * MiB, 16, 8), 64 * KiB);
  EXPECT_EQ(nccl_nvls_chunk_bytes(64 * MiB - 1, 16, 8), 32 * KiB);
  EXPECT_EQ(nccl_nvls_chunk_bytes(8 * MiB, 16, 8), 32 * KiB);
  EXPECT_EQ(nccl_nvls_chunk_bytes(8 * MiB - 1, 16, 8), 16 * KiB);
  EXPECT_EQ(nccl_nvls_chunk_bytes(8, 16, 8), 16 * KiB);
  // A larger starting chunk (NCCL_NVLS_CHUNKSIZE=1 MiB is held at the Simple step, 4 MiB / 8 = 512 KiB)
  // keeps it from 64 x 128 x 512 KiB = 4 GiB on and drops straight to 64 KiB below.
  EXPECT_EQ(nccl_nvls_chunk_bytes(4 * GiB, 16, 8, 512 * KiB), 512 * KiB);
  EXPECT_EQ(nccl_nvls_chunk_bytes(4 * GiB - 1, 16, 8, 512 * KiB), 64 * KiB);
  nlohmann::json big = nvls_spec(8);
  big["node"]["nvlink"]["nvls_chunk_bytes"] = 1 << 20;
  const Topology topo = build_topology(big, "test");
  // At 4 GiB: 2 loops of 16 x 8 x 512 KiB = 64 MiB at 100 GB/s x 8 / 9 (the test node's rate).
  EXPECT_NEAR(nvls_pipeline_fill_s(topo, "all_reduce", 4 * GiB), 2 * 64 * MiB * 9 / 8 / kB, 1e-12);
  // NCCL's heads set the loop: 4 heads on the 8-GPU test node give 16 x 4 x 128 KiB = 8 MiB loops at
  // 1 GiB (the chunk stays 128 KiB: 1 GiB >= 64 x 64 x 128 KiB), half of every GPU's 16 MiB.
  NvlsOptions four;
  four.heads = 4;
  const Topology node = build_topology(nvls_spec(8), "test");
  EXPECT_NEAR(nvls_pipeline_fill_s(node, "all_reduce", 1 * GiB, four), 2 * 8 * MiB * 9 / 8 / kB, 1e-12);
  EXPECT_NEAR(nvls_pipeline_fill_s(node, "all_reduce", 1 * GiB), 2 * 16 * MiB * 9 / 8 / kB, 1e-12);
  // A 72-GPU NVLink domain has 32 (NCCL_MAX_NVLS_ARITY), which predict hands the replay.
  EXPECT_EQ(summarize_for_nccl(preset("gb200-nvl72", 18)).nvls_graph.nChannels, 32);
  EXPECT_EQ(nvls_kernel_stages("all_reduce"), 3);  // scatter, ld_reduce + st, gather
  EXPECT_EQ(nvls_kernel_stages("reduce_scatter"), 2);
  EXPECT_EQ(nvls_kernel_stages("all_gather"), 2);
}

TEST(Nvls, ExplainShowsWhatTheReplayAddsToNcclsModel) {
  // dgx-h100 at 8 MiB: NCCL picks NVLS; its chunk is 32 KiB (8 MiB < 8 x 128 x 64 KiB, not < 2 x 128 x
  // 32 KiB), loops 16 channels x 8 heads x 32 KiB = 4 MiB, fill 2 x 4 MiB x 9/8 / (18 x 20.6 GB/s x 0.85).
  const double fill_us = 2 * 4194304.0 * 9 / 8 / (18 * 20.6e9 * 0.85) * 1e6;
  ASSERT_NEAR(fill_us, 29.94, 0.005);
  const auto r = testing::run_ccsim("explain --topology dgx-h100 -b 8M");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("chunk 32 KiB x 16 channels x 8 heads = loops of 4.00 MiB; pipeline fill 2 loop(s) = 29.94 us"),
            std::string::npos)
      << r.out;
  // Not where NCCL picks a ring (1 MiB), nor across nodes (NVLSTree).
  EXPECT_EQ(testing::run_ccsim("explain --topology dgx-h100 -b 1M").out.find("Replay (ccsim"), std::string::npos);
  EXPECT_EQ(testing::run_ccsim("explain --topology dgx-h100 --nodes 2 -b 1G").out.find("Replay (ccsim"),
            std::string::npos);
}

TEST(Nvls, EngineMatchesClosedFormForEveryCollective) {
  // Simple is the only protocol NCCL 2.30 runs NVLS with. Hand: T = 25 us + bytes on the busiest
  // GPU link direction / 100 GB/s (reducer not limiting: 8 S / 800 GB/s = S / 100 GB/s < 1.125 S / B),
  // plus the pipeline fill: (stages - 1) loops of 16 channels x 8 heads x NCCL's chunk at that rate,
  // or the whole operation where it is smaller than a loop. Loops: 2 MiB (16 KiB chunks) at 8 B and
  // 1 MiB, 8 MiB (64 KiB) at 64 MiB, 16 MiB (128 KiB) at 1 GiB.
  const Topology topo = build_topology(nvls_spec(8), "test");
  const std::vector<double> sizes = {8, 1 << 20, 64 << 20, 1 << 30};
  const std::vector<double> loops = {2 << 20, 2 << 20, 8 << 20, 16 << 20};
  const std::map<std::string, std::pair<double, int>> per_byte_and_stages = {
      {"all_reduce", {9.0 / 8 / kB, 3}}, {"reduce_scatter", {1.0 / kB, 2}}, {"all_gather", {1.0 / kB, 2}}};
  for (const auto& [coll, k_stages] : per_byte_and_stages) {
    const auto [k, stages] = k_stages;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const double hand = kIntraS + sizes[i] * k + (stages - 1) * std::min(sizes[i], loops[i]) * k;
      EXPECT_NEAR(nvls_closed_form_time_s(topo, coll, sizes[i]), hand, 1e-12 * hand);
      const SimResult r = simulate_one(topo, nvls_schedule(topo, coll, sizes[i], Proto::Simple), {});
      EXPECT_NEAR(r.time_s, hand, 0.02 * hand) << coll << " " << sizes[i];
    }
  }
  // The bytes are linear in the size (the fill is not: it is in the delays); rebuilding gives the
  // scaled records.
  const Schedule a = nvls_schedule(topo, "all_reduce", 1e6, Proto::Simple);
  const Schedule b = nvls_schedule(topo, "all_reduce", 3e6, Proto::Simple).scaled_to(1e6);
  ASSERT_EQ(a.transfers.size(), b.transfers.size());
  for (std::size_t i = 0; i < a.transfers.size(); ++i) EXPECT_DOUBLE_EQ(a.transfers[i].bytes, b.transfers[i].bytes);
}

TEST(Nvls, SlowSwitchReductionLimitsAllReduce) {
  // R = 200 GB/s for 8 GPUs: the reducer must take 8 S, 8 S / 200 GB/s = S / 25 GB/s, 3.6x the links' S x 1.125 / 100 GB/s.
  // The pipeline fill runs at the same rate: 2 loops of 128 x 64 KiB = 8 MiB (256 MB < 1 GiB).
  const Topology topo = build_topology(nvls_spec(8, 1, 100, 200), "test");
  const double S = 256e6, loop = 8 << 20;
  const double hand = kIntraS + 8 * (S + 2 * loop) / 200e9;
  EXPECT_NEAR(nvls_closed_form_time_s(topo, "all_reduce", S), hand, 1e-12 * hand);
  const SimResult r = simulate_one(topo, nvls_schedule(topo, "all_reduce", S, Proto::Simple), {});
  EXPECT_NEAR(r.time_s, hand, 0.02 * hand);
  // all_gather does not reduce: unaffected (one loop of fill, its two stages).
  const double ag_hand = kIntraS + (S + loop) / kB;
  const SimResult ag = simulate_one(topo, nvls_schedule(topo, "all_gather", S, Proto::Simple), {});
  EXPECT_NEAR(ag.time_s, ag_hand, 0.02 * ag_hand);
}

TEST(Nvls, ForcedRingIsSlowerOnDgxH100ByTheBytesPerLinkRatio) {
  // dgx-h100: 8 GPUs, 370.8 GB/s per GPU <-> NVSwitch direction, multimem traffic at NCCL's
  // nvlsEfficiency 0.85 of it (Hopper). At 4 GiB the bandwidth terms dominate: ring 2(n-1)/n S / B,
  // NVLS (1 + 1/n) S / (0.85 B), ratio 1.75 x 0.85 / 1.125 = 1.32 (latencies: ring 8.4 + 14 x 3.4 us,
  // NVLS 25 us, 0.5% of the times). Measured H100 nodes: about 480 vs 360 GB/s busbw, 1.3.
  const Topology topo = preset("dgx-h100", 1);
  ASSERT_DOUBLE_EQ(topo.nvls_efficiency, 0.85);
  const double S = 4.0 * (1ull << 30);
  const double B = 18 * 20.6e9;
  const SimResult nv = simulate_one(topo, nvls_schedule(topo, "all_reduce", S, Proto::Simple), {});
  const Schedule ring = ring_schedule(topo, plan_rings(topo, 24), "all_reduce", S, {});
  const SimResult rg = simulate_one(topo, ring, {});
  const double nv_hand = kIntraS + S * 9 / 8 / (0.85 * B);
  const double ring_hand = 8.4e-6 + 14 * 3.4e-6 + S * 14 / 8 / B;
  EXPECT_NEAR(nv.time_s, nv_hand, 0.02 * nv_hand);
  EXPECT_NEAR(rg.time_s, ring_hand, 0.02 * ring_hand);
  EXPECT_NEAR(rg.time_s / nv.time_s, ring_hand / nv_hand, 0.02 * ring_hand / nv_hand);
  EXPECT_GT(rg.time_s / nv.time_s, 1.28);
  EXPECT_LT(rg.time_s / nv.time_s, 1.36);
  // On the wire each GPU link carries the data S (1 + 1/n) weighed by 1 / 0.85.
  for (const auto& l : nv.links)
    if (l.from == "n0.gpu0" && l.to == "n0.nvswitch") {
      EXPECT_NEAR(l.bytes, S * 9 / 8 / 0.85, 1e-6 * S);
    }
}

TEST(Nvls, NcclApplicabilityAsInputErrors) {
  const Topology one = build_topology(nvls_spec(8), "test");
  EXPECT_THROW(nvls_schedule(one, "all_reduce", 1e6, Proto::LL), InputError);
  EXPECT_THROW(nvls_schedule(one, "all_reduce", 1e6, Proto::LL128), InputError);
  EXPECT_THROW(nvls_schedule(one, "broadcast", 1e6, Proto::Simple), InputError);
  EXPECT_THROW(nvls_schedule(preset("hgx-a100", 1), "all_reduce", 1e6, Proto::Simple), InputError);
  EXPECT_THROW(nvls_schedule(preset("dgx-h100", 2), "all_reduce", 1e6, Proto::Simple), InputError);
  EXPECT_THROW(nvls_tree_schedule(one, "all_reduce", 1e6, Proto::Simple), InputError);
  EXPECT_THROW(nvls_tree_schedule(preset("dgx-h100", 2), "all_gather", 1e6, Proto::Simple), InputError);
  EXPECT_THROW(nvls_tree_schedule(preset("dgx-h100", 2), "all_reduce", 1e6, Proto::LL128), InputError);
}

TEST(NvlsTree, StructureAndBytesByHand) {
  // 2 nodes x 4 GPUs: 4 heads (GPU h owns NIC h), 2 trees per head = 8 families of S/8.
  const Topology topo = build_topology(nvls_spec(4, 2), "test");
  EXPECT_EQ(nvls_tree_heads(topo), (std::vector<int>{0, 1, 2, 3}));
  const double S = 8e6;
  NvlsOptions o;
  const int C = nvls_tree_chunks(topo, S, o);
  // Every one of the 16 NVLS channels serves the 4 heads, half of them in each tree: a family (head,
  // tree) of S/8 = 1 MB runs on 8 channels, 125 kB per channel. NCCL's chunk: 128 KiB on 2 nodes,
  // 64 KiB because S < 4 x (16 x 4 units) x 128 KiB = 32 MiB, kept since S >= 64 x 64 KiB = 4 MiB:
  // ceil(125000 / 65536) = 2 chunks.
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(S, 16, 4, 2), 65536);
  EXPECT_EQ(C, 2);
  const Schedule s = nvls_tree_schedule(topo, "all_reduce", S, Proto::Simple);
  EXPECT_EQ(s.switches.size(), 4u);
  // Per chunk and family: per node 4 operands + 1 sum + 1 store + 4 copies = 10, and 1 up + 1 down.
  EXPECT_EQ(s.transfers.size(), static_cast<std::size_t>(C) * 8 * (2 * 10 + 2));
  // Every GPU sends S operands and receives S of copies; a head h also sends and receives its
  // slice S/4 to / from the switch side, and S/4 over the network (2 trees x S/8, one up + one down:
  // with 2 nodes each head sends S/8 up in one tree and S/8 down in the other).
  const auto sent = s.bytes_sent_per_rank(), received = s.bytes_received_per_rank();
  for (int r = 0; r < 8; ++r) {
    EXPECT_NEAR(sent[r], S + S / 4 + S / 4, 1e-3) << r;
    EXPECT_NEAR(received[r], S + S / 4 + S / 4, 1e-3) << r;
  }
  // Inter-node transfers are head to head on the head's rail.
  for (const auto& t : s.transfers)
    if (t.src < 8 && t.dst < 8 && t.src / 4 != t.dst / 4) {
      EXPECT_EQ(t.src % 4, t.dst % 4);
      EXPECT_EQ(t.rail, t.src % 4);
    }
}

TEST(NvlsTree, NcclChunkRuleByHand) {
  // NCCL's calcCollChunking for NVLSTree on 2 x dgx-h100: 16 channels x 8 heads = 128 (channel, head)
  // units; 128 KiB from 4 x 128 x 128 KiB = 64 MiB up, 64 KiB from 128 x 64 KiB = 8 MiB up, 32 KiB below.
  const double MiB = 1 << 20;
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(1024 * MiB, 16, 8, 2), 131072);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(64 * MiB, 16, 8, 2), 131072);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(64 * MiB - 1, 16, 8, 2), 65536);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(8 * MiB, 16, 8, 2), 65536);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(8 * MiB - 1, 16, 8, 2), 32768);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(8, 16, 8, 2), 32768);
  // From 4 nodes on NCCL_NVLSTREE_MAX_CHUNKSIZE's default caps it at 64 KiB.
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(1024 * MiB, 16, 8, 4), 65536);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(4 * MiB, 16, 8, 4), 32768);
  // sm100 across nodes runs 32 channels: 256 units double the thresholds.
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(64 * MiB, 32, 8, 2), 65536);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(128 * MiB, 32, 8, 2), 131072);
  // A larger NCCL_NVLS_CHUNKSIZE (1 MiB) steps down to 256 KiB below 32 x 128 x 1 MiB = 4 GiB and to
  // 128 KiB below 16 x 128 x 256 KiB = 512 MiB; any chunk is a multiple of Simple's 512-byte grain.
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(4096 * MiB, 16, 8, 2, 1 << 20), 1 << 20);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(1024 * MiB, 16, 8, 2, 1 << 20), 262144);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(256 * MiB, 16, 8, 2, 1 << 20), 131072);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(1024 * MiB, 16, 8, 2, 100000), 99840);
  // NCCL_NVLSTREE_MAX_CHUNKSIZE set: it replaces the 4-node 64 KiB default and caps the chunk anywhere.
  // aws-ofi-nccl's p5 values (both 512 KiB): 512 KiB from 32 x 128 x 512 KiB = 2 GiB up on 4 nodes,
  // 256 KiB below it, 128 KiB below 16 x 128 x 256 KiB = 512 MiB.
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(2048 * MiB, 16, 8, 4, 524288, 524288), 524288);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(1024 * MiB, 16, 8, 4, 524288, 524288), 262144);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(256 * MiB, 16, 8, 4, 524288, 524288), 131072);
  EXPECT_DOUBLE_EQ(nccl_nvls_tree_chunk_bytes(1024 * MiB, 16, 8, 2, 131072, 32768), 32768);
}

TEST(NvlsTree, LatencyBoundMatchesNcclNvlsTreeLatency) {
  // 8 bytes: the intra-node ld_reduce (25 us incl. its route), 2 d network hops of 20.9 us, then the
  // store (0.25 us physical). NCCL: 25 + 2 log2(nodes) x 20.9 us.
  for (int nodes : {2, 4}) {
    const Topology topo = build_topology(nvls_spec(4, nodes), "test");
    const int d = nodes == 2 ? 1 : 2;
    const double hand = kIntraS + 2 * d * kNetStepS + 0.25e-6;
    const SimResult r = simulate_one(topo, nvls_tree_schedule(topo, "all_reduce", 8, Proto::Simple), {});
    EXPECT_NEAR(r.time_s, hand, 0.02 * hand) << nodes;
  }
  const Topology dgx = preset("dgx-h100", 2);
  const SimResult r = simulate_one(dgx, nvls_tree_schedule(dgx, "all_reduce", 8, Proto::Simple), {});
  EXPECT_NEAR(r.time_s, kIntraS + 2 * kNetStepS, 0.02 * (kIntraS + 2 * kNetStepS));
}

TEST(NvlsTree, NetworkBoundMatchesPipelineClosedForm) {
  // 100 Gb/s NICs (12.5 GB/s) under 100 GB/s NVLink: the network sets the pace.
  for (int nodes : {2, 4}) {
    const Topology topo = build_topology(nvls_spec(4, nodes, 100), "test");
    const double S = 256.0 * (1 << 20);
    NvlsOptions o;
    const int C = nvls_tree_chunks(topo, S, o);
    // 256 MiB over 16 channels x 4 heads = 4 MiB per channel and head, in NCCL's chunk of 128 KiB on 2
    // nodes (S is past every shrinking threshold) and 64 KiB from 4 nodes on: 32 and 64 chunks.
    ASSERT_EQ(C, nodes == 2 ? 32 : 64);
    // Hand: one record of a family stands for its 8 channels, c = S / (2 x 4 x C) (1 MiB, 512 KiB); r =
    // 12.5 GB/s / 2 (2 nodes) or / 4; the first chunk's ld_reduce (8 families on each GPU link), 2d
    // network hops at the idle 12.5 GB/s, its store, then one chunk per period c / r:
    // T = 25 us + 8 c / B + 2 d (20.9 us + c / 12.5 GB/s) + c / B + (C - 1) c / r.
    const double c = S / 8 / C;
    const int d = nodes == 2 ? 1 : 2;
    const double r = 12.5e9 / (nodes == 2 ? 2 : 4);
    const double hand = kIntraS + 8 * c / kB + 2 * d * (kNetStepS + c / 12.5e9) + c / kB + (C - 1) * c / r;
    EXPECT_NEAR(nvls_tree_closed_form_time_s(topo, S, o), hand, 1e-9 * hand);
    SimResult res = [&] {
      EngineOptions e;
      e.pipeline_depth = kNvlsPipelineDepth;
      return simulate_one(topo, nvls_tree_schedule(topo, "all_reduce", S, Proto::Simple), e);
    }();
    EXPECT_NEAR(res.time_s, hand, 0.02 * hand) << nodes << " nodes: engine " << res.time_s;
  }
}

TEST(NvlsTree, RailSymmetryWithTheFixedReducerLeavesResultsUnchanged) {
  // Rotating GPUs, NICs and rails by one maps head h's families onto head h+1's; the NVSwitch and
  // its reduction units stay where they are. The engine simulates 1/8 of the flows and gives the
  // folded reduction link 1/8 of its capacity (it carries one family in eight). Proof: identical
  // per-rank finish times and per-link bytes with and without the lever, with NCCL's channel cap.
  const Topology dgx = preset("dgx-h100", 2);
  NvlsOptions o;
  o.channel_rate_cap_Bps = nvls_tree_channel_cap_Bps(summarize_for_nccl(dgx));
  const Schedule s = nvls_tree_schedule(dgx, "all_reduce", 8 << 20, o);
  EngineOptions with_lever, plain;
  with_lever.pipeline_depth = plain.pipeline_depth = kNvlsPipelineDepth;
  plain.exploit_symmetry = false;
  const SimResult with = simulate_one(dgx, s, with_lever);
  const SimResult without = simulate_one(dgx, s, plain);
  EXPECT_EQ(with.symmetry_order, 8);
  EXPECT_EQ(without.symmetry_order, 1);
  EXPECT_EQ(with.flows_simulated * 8, without.flows_simulated);
  EXPECT_NEAR(with.time_s, without.time_s, 1e-9 * without.time_s);
  ASSERT_EQ(with.rank_finish_s.size(), without.rank_finish_s.size());
  for (std::size_t i = 0; i < with.rank_finish_s.size(); ++i)
    EXPECT_NEAR(with.rank_finish_s[i], without.rank_finish_s[i], 1e-9 * without.time_s) << i;
  std::map<std::string, double> bytes_without;
  for (const auto& l : without.links) bytes_without[l.from + ">" + l.to] = l.bytes;
  ASSERT_EQ(with.links.size(), without.links.size());
  for (const auto& l : with.links)
    EXPECT_NEAR(l.bytes, bytes_without[l.from + ">" + l.to], 1e-9 * l.bytes) << l.from << " -> " << l.to;
}

TEST(NvlsTree, NcclChannelCeilingOnDgxH100) {
  // NCCL 2.30 caps NVLSTree at perChMaxNVLSTreeBws (Hopper: 57.7 GB/s per channel on 2 nodes, 45.5
  // beyond) x the NVLS graph's 8 channels of busBw: algBw 8 x 57.7 x 16/30 = 246.19 GB/s on 2 nodes,
  // 8 x 45.5 x 32/62 = 187.87 GB/s on 4. Spread over the 16 NVLS channels NCCL runs: 15.39 and 11.74
  // GB/s per channel. A channel serves the 8 heads and a family runs on 8 channels, so a family's
  // connection gets 8 x 1/8 of a channel's cap, below its 48.5 / 2 (or / 4) GB/s of NIC.
  const struct {
    int nodes;
    double algbw_GBps;
  } cases[] = {{2, 8 * 57.7 * 16 / 30}, {4, 8 * 45.5 * 32 / 62}};
  for (const auto& k : cases) {
    const Topology dgx = preset("dgx-h100", k.nodes);
    const NcclTopoSummary sum = summarize_for_nccl(dgx);
    EXPECT_NEAR(nccl_busbw_ceiling_GBps(sum, Func::AllReduce, Algo::NVLSTree, Proto::Simple),
                k.algbw_GBps * 2 * (k.nodes * 8 - 1) / (k.nodes * 8), 1e-9 * k.algbw_GBps);
    NvlsOptions o;
    o.channel_rate_cap_Bps = nvls_tree_channel_cap_Bps(sum);
    EXPECT_NEAR(o.channel_rate_cap_Bps, k.algbw_GBps * 1e9 / 16, 1e-6 * o.channel_rate_cap_Bps);
    EngineOptions e;
    e.pipeline_depth = kNvlsPipelineDepth;
    // The chunk cap and half of it: 32 and 64 chunks per family of NCCL's nominal chunk (128 KiB on 2
    // nodes: 512 MiB and 1 GiB; 64 KiB on 4: 256 and 512 MiB). The engine follows the closed form,
    // and its steady state (one more chunk per family costs one period) is the cap.
    const double S2 = nvls_tree_chunk_cap_bytes(dgx, o), S1 = S2 / 2;
    EXPECT_DOUBLE_EQ(S2, 64 * (k.nodes == 2 ? 131072.0 : 65536.0) * 16 * 8);
    const double t1 = simulate_one(dgx, nvls_tree_schedule(dgx, "all_reduce", S1, o), e).time_s;
    const double t2 = simulate_one(dgx, nvls_tree_schedule(dgx, "all_reduce", S2, o), e).time_s;
    EXPECT_NEAR(t1, nvls_tree_closed_form_time_s(dgx, S1, o), 0.02 * t1) << k.nodes;
    EXPECT_NEAR(t2, nvls_tree_closed_form_time_s(dgx, S2, o), 0.02 * t2) << k.nodes;
    EXPECT_NEAR((S2 - S1) / (t2 - t1) / 1e9, k.algbw_GBps, 0.01 * k.algbw_GBps) << k.nodes;
  }
}

}  // namespace
}  // namespace ccsim
