// MoE dispatch/combine traffic (scenarios/moe/traffic.h): a hand-built routing whose flows are
// written out by hand for every transport, and conservation/dedup checks of random routings
// against a separate per-token reference count.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "common/error.h"
#include "scenarios/moe/traffic.h"

namespace ccsim::moe {
namespace {

// (stage, src, dst, hop, tokens, messages)
using F = std::tuple<int, int, int, Hop, std::int64_t, std::int64_t>;
std::vector<F> flat(const PhaseTraffic& t) {
  std::vector<F> out;
  for (const Flow& f : t.flows) {
    out.emplace_back(f.stage, f.src, f.dst, f.hop, f.tokens, f.messages);
    EXPECT_DOUBLE_EQ(f.bytes, static_cast<double>(f.tokens * t.bytes_per_token));
  }
  return out;
}
constexpr Hop R = Hop::Rdma, N = Hop::Nvlink;

// 2 nodes x 2 GPUs, 8 experts (rank r hosts 2r, 2r+1), top-2, hidden 128 (fp8: 132 B, bf16: 256 B).
//   t0 (rank 0): experts 2, 4 -> ranks 1 (same node), 2 (node 1, local index 0)
//   t1 (rank 0): experts 4, 6 -> ranks 2, 3 (both node 1)
//   t2 (rank 1): experts 4, 5 -> rank 2 twice
//   t3 (rank 3): experts 0, 7 -> rank 0 (node 0) and itself
MoeLayer hand_layer() {
  MoeConfig c;
  c.tokens_per_rank = 0;
  c.hidden = 128;
  c.experts = 8;
  c.top_k = 2;
  c.ep = 4;
  c.gpus_per_node = 2;
  Routing r;
  r.ep = 4;
  r.top_k = 2;
  r.experts = 8;
  r.rank_offsets = {0, 2, 3, 3, 4};
  r.expert_ids = {2, 4, 4, 6, 4, 5, 0, 7};
  return make_layer(c, std::move(r), PlacementSpec{});
}

TEST(MoeTraffic, HandBuiltNccl) {
  const MoeLayer layer = hand_layer();
  const auto d = traffic(layer, Transport::Nccl, Phase::Dispatch);
  EXPECT_EQ(d.bytes_per_token, 132);
  // One message per (src, dst) with every (token, expert) pair: t2's two experts on rank 2 count twice.
  EXPECT_EQ(flat(d), (std::vector<F>{{0, 0, 1, N, 1, 1}, {0, 0, 2, R, 2, 1}, {0, 0, 3, R, 1, 1},
                                     {0, 1, 2, R, 2, 1}, {0, 3, 0, R, 1, 1}}));
  EXPECT_EQ(d.local_tokens, (std::vector<std::int64_t>{0, 0, 0, 1}));
  EXPECT_DOUBLE_EQ(d.rdma_bytes_sent[0], 3 * 132.0);
  EXPECT_DOUBLE_EQ(d.rdma_bytes_received[2], 4 * 132.0);
  EXPECT_DOUBLE_EQ(d.nvlink_bytes_received[1], 132.0);
  const auto c = traffic(layer, Transport::Nccl, Phase::Combine);
  EXPECT_EQ(c.bytes_per_token, 256);
  EXPECT_EQ(flat(c), (std::vector<F>{{0, 0, 3, R, 1, 1}, {0, 1, 0, N, 1, 1}, {0, 2, 0, R, 2, 1},
                                     {0, 2, 1, R, 2, 1}, {0, 3, 0, R, 1, 1}}));
}

TEST(MoeTraffic, HandBuiltDeepepNormal) {
  const MoeLayer layer = hand_layer();
  const auto d = traffic(layer, Transport::DeepepNormal, Phase::Dispatch);
  // t0: NVLink 0->1 direct, RDMA 0->2 (relay 2 hosts the expert: no forward).
  // t1: one RDMA 0->2, relay 2 forwards to 3.  t2: RDMA 1->3 (relay = node 1, local 1), 3 -> 2 once.
  // t3: RDMA 3->1 (relay = node 0, local 1), 1 -> 0; its own expert stays local.
  EXPECT_EQ(flat(d), (std::vector<F>{{0, 0, 1, N, 1, 1}, {0, 0, 2, R, 2, 2}, {0, 1, 3, R, 1, 1},
                                     {0, 3, 1, R, 1, 1}, {1, 1, 0, N, 1, 1}, {1, 2, 3, N, 1, 1},
                                     {1, 3, 2, N, 1, 1}}));
  EXPECT_EQ(d.local_tokens, (std::vector<std::int64_t>{0, 0, 0, 1}));
  // Relay 2 receives 2 RDMA copies and forwards 1 over NVLink.
  EXPECT_DOUBLE_EQ(d.rdma_bytes_received[2], 2 * 132.0);
  EXPECT_DOUBLE_EQ(d.nvlink_bytes_sent[2], 132.0);
  const auto c = traffic(layer, Transport::DeepepNormal, Phase::Combine);
  // Expert GPUs -> relay / owner over NVLink first, then relay -> owner over RDMA.
  EXPECT_EQ(flat(c), (std::vector<F>{{0, 0, 1, N, 1, 1}, {0, 1, 0, N, 1, 1}, {0, 2, 3, N, 1, 1},
                                     {0, 3, 2, N, 1, 1}, {1, 1, 3, R, 1, 1}, {1, 2, 0, R, 2, 2},
                                     {1, 3, 1, R, 1, 1}}));
  // DeepEP's logical numerators: (token, node) pairs per owner, own node included: rank 0: t0 {0,1}
  // + t1 {1} = 3, rank 1: 1, rank 2: 0, rank 3: t3 {0,1} = 2. Distinct tokens received: 1, 1, 3, 2.
  EXPECT_EQ(d.logical_rdma_bytes_per_rank, (std::vector<double>{3 * 132.0, 132.0, 0.0, 2 * 132.0}));
  EXPECT_DOUBLE_EQ(d.logical_rdma_bytes, 6 * 132.0 / 4);
  EXPECT_EQ(d.logical_nvlink_bytes_per_rank, (std::vector<double>{132.0, 132.0, 3 * 132.0, 2 * 132.0}));
  EXPECT_DOUBLE_EQ(c.logical_nvlink_bytes, 7 * 256.0 / 4);
}

TEST(MoeTraffic, HandBuiltLowLatencyAndAllGather) {
  const MoeLayer layer = hand_layer();
  const auto ll = traffic(layer, Transport::DeepepLowLatency, Phase::Dispatch);
  EXPECT_EQ(flat(ll), (std::vector<F>{{0, 0, 1, N, 1, 1}, {0, 0, 2, R, 2, 2}, {0, 0, 3, R, 1, 1},
                                      {0, 1, 2, R, 2, 2}, {0, 3, 0, R, 1, 1}}));
  TransportOptions pure;
  pure.pure_rdma = true;
  const auto ll_rdma = traffic(layer, Transport::DeepepLowLatency, Phase::Dispatch, pure);
  EXPECT_EQ(std::get<3>(flat(ll_rdma)[0]), R);
  EXPECT_DOUBLE_EQ(ll_rdma.total_nvlink_bytes(), 0.0);
  EXPECT_DOUBLE_EQ(ll_rdma.total_rdma_bytes(), 7 * 132.0);

  // Tokens per rank 2, 1, 0, 1: each goes to every other rank; combine returns each owner's tokens.
  const auto ag = traffic(layer, Transport::AllGather, Phase::Dispatch);
  EXPECT_EQ(flat(ag), (std::vector<F>{{0, 0, 1, N, 2, 1}, {0, 0, 2, R, 2, 1}, {0, 0, 3, R, 2, 1},
                                      {0, 1, 0, N, 1, 1}, {0, 1, 2, R, 1, 1}, {0, 1, 3, R, 1, 1},
                                      {0, 3, 0, R, 1, 1}, {0, 3, 1, R, 1, 1}, {0, 3, 2, N, 1, 1}}));
  const auto rs = traffic(layer, Transport::AllGather, Phase::Combine);
  EXPECT_EQ(flat(rs), (std::vector<F>{{0, 0, 1, N, 1, 1}, {0, 0, 3, R, 1, 1}, {0, 1, 0, N, 2, 1},
                                      {0, 1, 3, R, 1, 1}, {0, 2, 0, R, 2, 1}, {0, 2, 1, R, 1, 1},
                                      {0, 2, 3, N, 1, 1}, {0, 3, 0, R, 2, 1}, {0, 3, 1, R, 1, 1}}));
}

TEST(MoeTraffic, HandBuiltRoutingStats) {
  const RoutingStats s = routing_stats(hand_layer());
  EXPECT_DOUBLE_EQ(s.distinct_nodes_per_token, 6.0 / 4);
  EXPECT_DOUBLE_EQ(s.distinct_gpus_per_token, 7.0 / 4);
  EXPECT_EQ(s.rank_load, (std::vector<std::int64_t>{1, 1, 4, 2}));
  EXPECT_DOUBLE_EQ(s.max_over_mean_rank_load, 2.0);
  EXPECT_EQ(s.hottest_rank, 2);
  EXPECT_EQ(s.rank_tokens_received, (std::vector<std::int64_t>{1, 1, 3, 2}));
}

// Reference count, token by token with sets (independent of traffic()'s flat-array bookkeeping):
// dispatch flows of each transport keyed (stage, src, dst) -> tokens.
std::map<std::tuple<int, int, int>, std::int64_t> reference(const MoeLayer& layer, Transport t, std::int64_t& local) {
  std::map<std::tuple<int, int, int>, std::int64_t> m;
  const Routing& r = layer.routing;
  const int g = layer.config.gpus_per_node;
  local = 0;
  for (int src = 0; src < r.ep; ++src)
    for (std::int64_t tok = r.rank_offsets[src]; tok < r.rank_offsets[src + 1]; ++tok) {
      std::vector<int> pairs;
      for (int j = 0; j < r.top_k; ++j)
        pairs.push_back(layer.placement.choose_replica(r.expert_ids[tok * r.top_k + j], src, tok));
      if (t == Transport::Nccl) {
        for (int d : pairs) (d == src ? local : m[{0, src, d}]) += 1;
        continue;
      }
      const std::set<int> gpus(pairs.begin(), pairs.end());
      std::set<int> nodes;
      for (int d : gpus) {
        if (d == src) {
          ++local;
        } else if (d / g == src / g) {
          ++m[{0, src, d}];
        } else {
          const int relay = d / g * g + src % g;
          nodes.insert(d / g);
          if (d != relay) ++m[{1, relay, d}];
        }
      }
      for (int n : nodes) ++m[{0, src, n * g + src % g}];
    }
  return m;
}

TEST(MoeTraffic, ConservationAndDedupAgainstReference) {
  MoeConfig c;
  c.tokens_per_rank = 300;
  c.hidden = 7168;
  c.ep = 32;
  c.gpus_per_node = 8;
  for (const auto& placement : {PlacementSpec{}, parse_placement_spec("eplb-global:32")}) {
    const MoeLayer layer = make_layer(c, parse_routing_spec("zipf:1.0"), placement, 7);
    const RoutingStats st = routing_stats(layer);
    for (Transport t : {Transport::Nccl, Transport::DeepepNormal}) {
      std::int64_t ref_local = 0;
      const auto ref = reference(layer, t, ref_local);
      for (Phase ph : {Phase::Dispatch, Phase::Combine}) {
        const PhaseTraffic tr = traffic(layer, t, ph);
        std::map<std::tuple<int, int, int>, std::int64_t> got;
        for (const Flow& f : tr.flows) {
          // Dispatch orientation of the flow, to compare with the reference.
          const int stage = ph == Phase::Dispatch || t == Transport::Nccl ? f.stage : (f.hop == Hop::Rdma ? 0 : -1);
          if (stage >= 0) got[{stage, ph == Phase::Dispatch ? f.src : f.dst, ph == Phase::Dispatch ? f.dst : f.src}] = f.tokens;
          EXPECT_NE(f.src, f.dst);
          // Dedup: a token crosses to a node at most once, so an RDMA flow never exceeds its owner's tokens.
          if (t == Transport::DeepepNormal && f.hop == Hop::Rdma) {
            EXPECT_LE(f.tokens, c.tokens_per_rank);
          }
        }
        if (ph == Phase::Dispatch) {
          EXPECT_EQ(got, ref);
        }
        std::int64_t local = 0;
        for (auto x : tr.local_tokens) local += x;
        EXPECT_EQ(local, ref_local);
        // Bytes sent == bytes received in every phase.
        double sent = 0, received = 0;
        for (int i = 0; i < c.ep; ++i)
          sent += tr.rdma_bytes_sent[i] + tr.nvlink_bytes_sent[i],
              received += tr.rdma_bytes_received[i] + tr.nvlink_bytes_received[i];
        EXPECT_DOUBLE_EQ(sent, received);
        // Every (token, expert) pair arrives once (nccl) / every (token, GPU) once (deepep-normal):
        // arrivals at expert GPUs = non-relay-only deliveries + local.
        std::int64_t arrivals = local;
        if (ph == Phase::Dispatch)
          for (const Flow& f : tr.flows) {
            if (t == Transport::Nccl) {
              arrivals += f.tokens;
            } else if (f.hop == Hop::Nvlink) {
              arrivals += f.tokens;
            }
          }
        if (t == Transport::Nccl && ph == Phase::Dispatch) {
          EXPECT_EQ(arrivals, st.pairs);
        }
        if (t == Transport::DeepepNormal && ph == Phase::Dispatch) {
          // RDMA copies landing on a relay that serves the token are arrivals too.
          std::int64_t relay_hits = 0;
          for (int i = 0; i < c.ep; ++i) relay_hits += st.rank_tokens_received[i];
          relay_hits -= arrivals;
          std::int64_t rdma = 0;
          for (const Flow& f : tr.flows) rdma += f.hop == Hop::Rdma ? f.tokens : 0;
          EXPECT_GE(relay_hits, 0);
          EXPECT_LE(relay_hits, rdma);
          // RDMA copies = (token, remote node) pairs.
          EXPECT_NEAR(static_cast<double>(rdma),
                      st.distinct_nodes_per_token * st.tokens * st.remote_node_fraction, 1e-6);
        }
      }
    }
  }
}

TEST(MoeTraffic, SameSeedSameFlowsOtherSeedDifferent) {
  MoeConfig c;
  c.tokens_per_rank = 200;
  c.ep = 16;
  const auto run = [&](std::uint64_t seed) {
    return flat(traffic(make_layer(c, parse_routing_spec("zipf:0.8"), PlacementSpec{}, seed),
                        Transport::DeepepNormal, Phase::Dispatch));
  };
  EXPECT_EQ(run(1), run(1));
  EXPECT_NE(run(1), run(2));
}

TEST(MoeTraffic, TransportNames) {
  for (Transport t : {Transport::Nccl, Transport::DeepepNormal, Transport::DeepepLowLatency, Transport::AllGather})
    EXPECT_EQ(parse_transport(transport_name(t)), t);
  try {
    parse_transport("deepep");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--transport"), std::string::npos);
  }
}

}  // namespace
}  // namespace ccsim::moe
