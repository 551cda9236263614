// `ccsim moe`'s simulation: MoE phases as schedules on the engine (scenarios/moe/transport_schedule.h) and
// the layer report (scenarios/moe/layer_report.h).
#include <gtest/gtest.h>

#include <algorithm>

#include "scenarios/moe/layer_report.h"
#include "scenarios/moe/transport_schedule.h"
#include "test_helpers.h"
#include "topologies/spec.h"
#include "topologies/routing.h"

namespace ccsim::moe {
namespace {

MoeConfig small_layer(int ep, int tokens) {
  MoeConfig c;
  c.tokens_per_rank = tokens;
  c.hidden = 7168;
  c.experts = 64;
  c.top_k = 8;
  c.ep = ep;
  c.gpus_per_node = 8;
  return c;
}

// The same schedule with every transfer split into `pieces` equal transfers on their own lanes (one flow
// per piece), markers waiting for every piece of what they waited for.
Schedule split_transfers(const Schedule& s, int pieces) {
  Schedule out = s;
  out.transfers.clear();
  out.deps.clear();
  std::vector<std::vector<std::uint32_t>> images(s.transfers.size());
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const Transfer& t = s.transfers[i];
    std::vector<std::uint32_t> deps;
    for (std::uint32_t k = 0; k < t.dep_count; ++k)
      for (std::uint32_t d : images[s.deps_of(t)[k]]) deps.push_back(d);
    const int n = t.is_marker() ? 1 : pieces;
    for (int p = 0; p < n; ++p) {
      Transfer c = t;
      c.bytes = t.bytes / n;
      c.lane = p;
      images[i].push_back(out.add(c, deps));
    }
  }
  return out;
}

double total_bytes(const Schedule& s) {
  double b = 0;
  for (const Transfer& t : s.transfers) b += t.bytes;
  return b;
}

TEST(MoeSchedule, OneFlowPerPairEqualsManyFlowsPerPair) {
  // The speed lever: a pair's tokens as one flow. Flows on one route that start together share it
  // equally under max-min, so splitting each pair's bytes into 6 flows changes no time.
  const Topology topo = testing::preset("dgx-h100", 2);
  const MoeLayer layer = make_layer(small_layer(16, 64), parse_routing_spec("zipf:1.2"), PlacementSpec{}, 7);
  const TransportCosts costs = transport_costs(topo);
  EngineOptions options;
  options.exploit_symmetry = options.merge_identical = false;
  for (Transport transport : {Transport::DeepepNormal, Transport::DeepepLowLatency}) {
    const Schedule one = phase_schedule(topo, layer, traffic(layer, transport, Phase::Dispatch), costs);
    const Schedule many = split_transfers(one, 6);
    ASSERT_GT(many.transfers.size(), one.transfers.size());
    const SimResult a = simulate_one(topo, one, options), b = simulate_one(topo, many, options);
    EXPECT_NEAR(a.time_s, b.time_s, a.time_s * 1e-9) << transport_name(transport);
    for (std::size_t r = 0; r < a.rank_finish_s.size(); ++r)
      EXPECT_NEAR(a.rank_finish_s[r], b.rank_finish_s[r], a.time_s * 1e-9) << "rank " << r;
  }
}

TEST(MoeSchedule, SchedulesCarryExactlyTheTrafficsBytes) {
  const Topology topo = testing::preset("dgx-h100", 2);
  const MoeLayer layer = make_layer(small_layer(16, 128), parse_routing_spec("uniform"), PlacementSpec{}, 3);
  const TransportCosts costs = transport_costs(topo);
  for (Transport transport : {Transport::Nccl, Transport::DeepepNormal, Transport::DeepepLowLatency})
    for (Phase phase : {Phase::Dispatch, Phase::Combine}) {
      const PhaseTraffic t = traffic(layer, transport, phase);
      const Schedule s = phase_schedule(topo, layer, t, costs);
      double wire = 0;
      for (const Flow& f : t.flows) wire += f.bytes;
      // NCCL's LL messages carry a flag per 4 data bytes; Simple ones carry the data.
      if (transport == Transport::Nccl)
        EXPECT_GE(total_bytes(s), wire * (1 - 1e-12)) << transport_name(transport);
      else
        EXPECT_NEAR(total_bytes(s), wire, wire * 1e-12) << transport_name(transport) << " " << phase_name(phase);
    }
}

TEST(MoeSchedule, LowLatencyDispatchOnOneNodeIsBoundByTheBusiestNvlink) {
  // One node: every put crosses the NVSwitch. No schedule can beat the busiest GPU link (bytes / NVLink
  // rate); max-min sharing of equally started flows stays within a few percent of that bound.
  const Topology topo = testing::preset("dgx-h100", 1);
  const MoeLayer layer = make_layer(small_layer(8, 512), parse_routing_spec("uniform"), PlacementSpec{}, 5);
  const PhaseTraffic t = traffic(layer, Transport::DeepepLowLatency, Phase::Dispatch);
  const TransportCosts costs = transport_costs(topo);
  const SimResult r = simulate_one(topo, phase_schedule(topo, layer, t, costs), EngineOptions{});
  const double nvlink_Bps = 18 * 20.6e9;  // NCCL's NVLink4 per-link figure x 18 links (docs/topology.md)
  double busiest = 0;
  for (std::size_t g = 0; g < 8; ++g)
    busiest = std::max({busiest, t.nvlink_bytes_sent[g], t.nvlink_bytes_received[g]});
  const double latency = route_latency_s(topo, route_between_gpus(topo, 0, 1, -1));
  const double bound = costs.deepep_launch_s + latency + busiest / nvlink_Bps;
  EXPECT_GE(r.time_s, bound * (1 - 1e-9));
  EXPECT_LE(r.time_s, bound * 1.05);
}

TEST(MoeSchedule, IssueRateBoundsTinyMessages) {
  // 64-byte tokens: bytes are nothing, the NIC's message rate is everything. At 1 M messages/s the GPU
  // with the most puts takes puts / rate seconds.
  nlohmann::json spec = load_topology_spec("dgx-h100");
  set_node_count(spec, 1);
  apply_override(spec, "node.nic.message_rate_Mps=1", "test");
  const Topology topo = build_topology(spec, "test");
  MoeConfig c = small_layer(8, 256);
  c.hidden = 32;  // bf16: 64 bytes per token
  c.dispatch_dtype = WireDtype::Bf16;
  const MoeLayer layer = make_layer(c, parse_routing_spec("uniform"), PlacementSpec{}, 9);
  const PhaseTraffic t = traffic(layer, Transport::DeepepLowLatency, Phase::Dispatch);
  const TransportCosts costs = transport_costs(topo);
  ASSERT_DOUBLE_EQ(costs.gpu_message_rate_per_s, 1e6);
  const SimResult r = simulate_one(topo, phase_schedule(topo, layer, t, costs), EngineOptions{});
  std::vector<double> puts(8, 0.0);
  for (const Flow& f : t.flows) puts[static_cast<std::size_t>(f.src)] += static_cast<double>(f.messages);
  const double most = *std::max_element(puts.begin(), puts.end());
  EXPECT_NEAR(r.time_s, costs.deepep_launch_s + most / 1e6, 0.05 * most / 1e6);
}

TEST(MoeLayerReport, SkewMakesTheHottestRankSlowAndEplbWinsItBack) {
  // EP32 on 4 H800 nodes (8 NVLinks per GPU), 512 tokens per rank: production-like skew (hottest rank
  // 2.5x the mean, DeepSeek-R1 at EP32) against EPLB with 32 redundant experts.
  nlohmann::json spec = load_topology_spec("dgx-h100");
  set_node_count(spec, 4);
  apply_override(spec, "node.nvlink.links_per_gpu=8", "test");
  const Topology topo = build_topology(spec, "h800");
  LayerRequest q;
  q.config = small_layer(32, 512);
  q.config.experts = 256;
  q.config.node_limit = 4;
  q.transports = {Transport::Nccl, Transport::DeepepNormal};
  q.routing = parse_routing_spec("uniform");
  const LayerReport uniform = run_layer(topo, q);
  q.routing = parse_routing_spec("ratio:2.5");
  const LayerReport skewed = run_layer(topo, q);
  q.placement = parse_placement_spec("eplb:32");
  const LayerReport balanced = run_layer(topo, q);
  EXPECT_NEAR(skewed.routing.max_over_mean_rank_load, 2.5, 0.25);
  EXPECT_LT(balanced.routing.max_over_mean_rank_load, 1.25);

  // NCCL's all-to-all has no dedup: the hottest rank's NIC receives ~2.5x the mean rank's bytes, so the
  // phase, bound by that NIC, takes about twice as long; EPLB brings it back near the uniform time.
  const PhaseReport& u = uniform.transports[0].dispatch;
  const PhaseReport& k = skewed.transports[0].dispatch;
  const PhaseReport& e = balanced.transports[0].dispatch;
  EXPECT_GT(k.time_us, 1.8 * u.time_us);
  EXPECT_LT(e.time_us, 1.15 * u.time_us);
  EXPECT_EQ(k.slowest_rank, skewed.routing.hottest_rank);
  EXPECT_EQ(k.bottleneck, "rdma");
  // DeepEP's dedup sends one RDMA copy per (token, node): skew inside a node lands on NVLink (3.4x the
  // NIC's rate on H800), so the same skew costs less than it does NCCL, and EPLB still wins it back.
  const double normal_uniform = uniform.transports[1].dispatch.time_us;
  const double normal_skewed = skewed.transports[1].dispatch.time_us;
  EXPECT_GT(normal_skewed, 1.2 * normal_uniform);
  EXPECT_LT(normal_skewed / normal_uniform, k.time_us / u.time_us);
  EXPECT_LT(balanced.transports[1].dispatch.time_us, 1.1 * normal_uniform);
}

// DeepEP's published benchmark (deepseek-ai/DeepEP docs/legacy.md, V1 performance tables; H800 with
// ~160 GB/s NVLink and one 400 Gb/s CX-7 per GPU; 7168 hidden, 256 experts, top-8, FP8 dispatch, BF16
// combine). ccsim gets there from bytes, dedup, link rates and documented per-message costs alone; the
// whole comparison is in docs/moe.md. Here the cases within the issue's 20% aim: ratio of times.
LayerReport deepep_case(int ep, int tokens, Transport transport) {
  nlohmann::json spec = load_topology_spec("dgx-h100");
  set_node_count(spec, ep / 8);
  apply_override(spec, "node.nvlink.links_per_gpu=8", "test");
  const Topology topo = build_topology(spec, "h800");
  LayerRequest q;
  q.config = small_layer(ep, tokens);
  q.config.experts = 256;
  q.config.node_limit = transport == Transport::DeepepNormal ? 4 : 0;  // top-4 groups in the prefill benchmark
  q.transports = {transport};
  return run_layer(topo, q);
}

TEST(MoeAgainstDeepEp, NormalKernelsBottleneckBandwidth) {
  struct Published {
    int ep;
    const char* cls;
    double dispatch_GBps, combine_GBps;
  };
  for (const Published& d : {Published{8, "nvlink", 153, 158}, Published{32, "rdma", 58, 57}, Published{64, "rdma", 51, 50}}) {
    const LayerReport r = deepep_case(d.ep, 4096, Transport::DeepepNormal);
    const PhaseReport& dispatch = r.transports[0].dispatch;
    const PhaseReport& combine = r.transports[0].combine;
    const bool rdma = std::string(d.cls) == "rdma";
    // Equal logical bytes: published bandwidth / ccsim's = ccsim's time / published time.
    EXPECT_NEAR(d.dispatch_GBps / (rdma ? dispatch.rdma_logical_GBps : dispatch.nvlink_logical_GBps), 1.0, 0.2) << "EP" << d.ep;
    EXPECT_NEAR(d.combine_GBps / (rdma ? combine.rdma_logical_GBps : combine.nvlink_logical_GBps), 1.0, 0.2) << "EP" << d.ep;
  }
}

TEST(MoeAgainstDeepEp, LowLatencyKernelsAtEp32) {
  // 128 tokens per rank: DeepEP 155 us dispatch, 273 us combine.
  const LayerReport r = deepep_case(32, 128, Transport::DeepepLowLatency);
  EXPECT_NEAR(r.transports[0].dispatch.time_us / 155.0, 1.0, 0.2);
  EXPECT_NEAR(r.transports[0].combine.time_us / 273.0, 1.0, 0.2);
}

}  // namespace
}  // namespace ccsim::moe
