#include "scenarios/moe/traffic.h"

#include <algorithm>

#include "common/error.h"

namespace ccsim::moe {
namespace {

// Calls f(src, token, pairs, distinct, n_distinct) for every token: `pairs` holds the rank serving
// each of its k (token, expert) pairs (after replica choice), `distinct` the distinct ranks,
// ascending (so the GPUs of one node are adjacent).
template <typename F>
void for_each_token(const MoeLayer& layer, F f) {
  const Routing& r = layer.routing;
  const int k = r.top_k;
  std::vector<int> pairs(k), distinct(k);
  for (int src = 0; src < r.ep; ++src) {
    for (std::int64_t t = r.rank_offsets[src]; t < r.rank_offsets[src + 1]; ++t) {
      const std::int32_t* experts = &r.expert_ids[t * k];
      int n = 0;
      for (int j = 0; j < k; ++j) {
        const int dst = layer.placement.choose_replica(experts[j], src, t);
        pairs[j] = dst;
        int i = n;  // insertion into the sorted distinct list
        while (i > 0 && distinct[i - 1] > dst) --i;
        if (i > 0 && distinct[i - 1] == dst) continue;
        for (int m = n; m > i; --m) distinct[m] = distinct[m - 1];
        distinct[i] = dst;
        ++n;
      }
      f(src, t, pairs.data(), distinct.data(), n);
    }
  }
}

bool operator<(const Flow& a, const Flow& b) {
  if (a.stage != b.stage) return a.stage < b.stage;
  if (a.src != b.src) return a.src < b.src;
  return a.dst < b.dst;
}

// Sorts by (stage, src, dst) and merges entries of the same key (same link class by construction).
void sort_and_merge(std::vector<Flow>& flows) {
  std::sort(flows.begin(), flows.end(), [](const Flow& a, const Flow& b) { return a < b; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    if (out > 0 && flows[out - 1].stage == flows[i].stage && flows[out - 1].src == flows[i].src &&
        flows[out - 1].dst == flows[i].dst) {
      flows[out - 1].messages += flows[i].messages;
      flows[out - 1].tokens += flows[i].tokens;
    } else {
      flows[out++] = flows[i];
    }
  }
  flows.resize(out);
}

}  // namespace

Transport parse_transport(const std::string& text, const std::string& where) {
  if (text == "nccl") return Transport::Nccl;
  if (text == "deepep-normal") return Transport::DeepepNormal;
  if (text == "deepep-ll") return Transport::DeepepLowLatency;
  if (text == "allgather") return Transport::AllGather;
  throw InputError(where, "unknown transport '" + text + "' (nccl, deepep-normal, deepep-ll, allgather)");
}

const char* transport_name(Transport t) {
  switch (t) {
    case Transport::Nccl: return "nccl";
    case Transport::DeepepNormal: return "deepep-normal";
    case Transport::DeepepLowLatency: return "deepep-ll";
    case Transport::AllGather: return "allgather";
  }
  return "";
}
const char* phase_name(Phase p) { return p == Phase::Dispatch ? "dispatch" : "combine"; }
const char* hop_name(Hop h) { return h == Hop::Rdma ? "rdma" : "nvlink"; }

double PhaseTraffic::total_rdma_bytes() const {
  double s = 0;
  for (double b : rdma_bytes_sent) s += b;
  return s;
}
double PhaseTraffic::total_nvlink_bytes() const {
  double s = 0;
  for (double b : nvlink_bytes_sent) s += b;
  return s;
}

MoeLayer make_layer(const MoeConfig& config, Routing routing, const PlacementSpec& placement) {
  validate(config);
  if (routing.ep != config.ep || routing.top_k != config.top_k || routing.experts != config.experts ||
      routing.rank_offsets.size() != static_cast<std::size_t>(config.ep) + 1 ||
      routing.expert_ids.size() != static_cast<std::size_t>(routing.tokens()) * config.top_k)
    throw InputError("routing", "routing shape does not match the configuration (EP, top-k, experts)");
  MoeLayer layer;
  layer.config = config;
  layer.placement_spec = placement;
  layer.routing = std::move(routing);
  if (placement.kind == PlacementKind::Contiguous) {
    layer.placement = contiguous_placement(config);
  } else {
    const auto counts = layer.routing.expert_counts();
    layer.eplb_load.assign(counts.begin(), counts.end());
    layer.placement = eplb_placement(config, layer.eplb_load, placement);
  }
  return layer;
}

MoeLayer make_layer(const MoeConfig& config, const RoutingSpec& routing_spec, const PlacementSpec& placement,
                    std::uint64_t seed) {
  validate(config);
  MoeLayer layer;
  layer.config = config;
  layer.routing_spec = routing_spec;
  layer.placement_spec = placement;
  layer.seed = seed;
  layer.routing = make_routing(config, routing_spec, seed);
  if (placement.kind == PlacementKind::Contiguous) {
    layer.placement = contiguous_placement(config);
    return layer;
  }
  if (placement.fit == EplbFit::Measured || routing_spec.kind == RoutingKind::Trace) {
    const auto counts = layer.routing.expert_counts();
    layer.eplb_load.assign(counts.begin(), counts.end());
  } else {  // the expected load: what a long history of this routing converges to
    layer.eplb_load = expected_inclusion(expert_popularity(config, routing_spec, seed), config.top_k);
    for (double& x : layer.eplb_load) x *= static_cast<double>(layer.routing.tokens());
  }
  layer.placement = eplb_placement(config, layer.eplb_load, placement);
  return layer;
}

RoutingStats routing_stats(const MoeLayer& layer) {
  const int ep = layer.config.ep, g = layer.config.gpus_per_node;
  RoutingStats st;
  st.tokens = layer.routing.tokens();
  st.pairs = st.tokens * layer.routing.top_k;
  st.rank_load.assign(ep, 0);
  st.rank_tokens_received.assign(ep, 0);
  std::int64_t nodes = 0, gpus = 0, remote_nodes = 0;
  for_each_token(layer, [&](int src, std::int64_t, const int* pairs, const int* distinct, int n) {
    for (int j = 0; j < layer.routing.top_k; ++j) ++st.rank_load[pairs[j]];
    gpus += n;
    int last_node = -1;
    for (int i = 0; i < n; ++i) {
      ++st.rank_tokens_received[distinct[i]];
      const int node = distinct[i] / g;
      if (node == last_node) continue;
      last_node = node;
      ++nodes;
      remote_nodes += node != src / g;
    }
  });
  if (st.tokens > 0) {
    st.distinct_nodes_per_token = static_cast<double>(nodes) / st.tokens;
    st.distinct_gpus_per_token = static_cast<double>(gpus) / st.tokens;
    st.remote_node_fraction = static_cast<double>(remote_nodes) / nodes;
  }
  const auto imbalance = [](const std::vector<std::int64_t>& load, int& hottest) {
    hottest = static_cast<int>(std::max_element(load.begin(), load.end()) - load.begin());
    std::int64_t total = 0;
    for (auto x : load) total += x;
    return total > 0 ? static_cast<double>(load[hottest]) * load.size() / total : 0.0;
  };
  st.max_over_mean_rank_load = imbalance(st.rank_load, st.hottest_rank);
  st.expert_load = layer.routing.expert_counts();
  st.max_over_mean_expert_load = imbalance(st.expert_load, st.hottest_expert);
  return st;
}

TokenCounts count_tokens(const MoeLayer& layer, Transport transport, const TransportOptions& options) {
  const MoeConfig& c = layer.config;
  const Routing& r = layer.routing;
  const int ep = c.ep, g = c.gpus_per_node, nodes = c.nodes();
  const auto node_of = [g](int rank) { return rank / g; };
  const auto hop_between = [&](int a, int b) { return node_of(a) == node_of(b) ? Hop::Nvlink : Hop::Rdma; };

  TokenCounts out;
  out.transport = transport;
  out.local_tokens.assign(ep, 0);
  out.logical_node_pairs.assign(ep, 0);
  out.logical_tokens_received.assign(ep, 0);
  std::vector<std::int64_t>& logical_node_pairs = out.logical_node_pairs;
  std::vector<std::int64_t>& logical_tokens_received = out.logical_tokens_received;

  // Flows are built in dispatch orientation (src = token owner side); combine reverses them.
  std::vector<Flow>& flows = out.flows;
  std::vector<std::int64_t> row(ep, 0);          // nccl/ll: pairs src -> dst; normal: RDMA copies src -> node
  std::vector<std::int64_t> direct(g, 0);        // normal: NVLink copies src -> local GPU
  std::vector<std::int64_t> forward;             // normal: relay -> local GPU of the relay's node, [relay * g + l]
  if (transport == Transport::DeepepNormal) forward.assign(static_cast<std::size_t>(ep) * g, 0);
  int current_src = -1;
  const auto flush_src = [&](int src) {
    if (src < 0) return;
    if (transport == Transport::Nccl || transport == Transport::DeepepLowLatency) {
      for (int dst = 0; dst < ep; ++dst) {
        if (row[dst] == 0) continue;
        Flow f;
        f.src = src;
        f.dst = dst;
        f.hop = transport == Transport::DeepepLowLatency && options.pure_rdma ? Hop::Rdma : hop_between(src, dst);
        f.tokens = row[dst];
        f.messages = transport == Transport::Nccl ? 1 : row[dst];
        flows.push_back(f);
        row[dst] = 0;
      }
    } else if (transport == Transport::DeepepNormal) {
      for (int node = 0; node < nodes; ++node) {
        if (row[node] == 0) continue;
        flows.push_back(Flow{src, node * g + src % g, Hop::Rdma, 0, 0.0, row[node], row[node]});
        row[node] = 0;
      }
      for (int l = 0; l < g; ++l) {
        if (direct[l] == 0) continue;
        flows.push_back(Flow{src, node_of(src) * g + l, Hop::Nvlink, 0, 0.0, direct[l], direct[l]});
        direct[l] = 0;
      }
    }
  };

  for_each_token(layer, [&](int src, std::int64_t, const int* pairs, const int* distinct, int n) {
    if (src != current_src) {
      flush_src(current_src);
      current_src = src;
    }
    const int own_node = node_of(src);
    int last_node = -1;
    for (int i = 0; i < n; ++i) {
      ++logical_tokens_received[distinct[i]];
      if (node_of(distinct[i]) != last_node) ++logical_node_pairs[src], last_node = node_of(distinct[i]);
    }
    switch (transport) {
      case Transport::Nccl:
      case Transport::DeepepLowLatency:
        for (int j = 0; j < r.top_k; ++j) {
          if (pairs[j] == src) ++out.local_tokens[src];
          else ++row[pairs[j]];
        }
        break;
      case Transport::DeepepNormal: {
        last_node = -1;
        for (int i = 0; i < n; ++i) {
          const int dst = distinct[i], node = node_of(dst);
          if (dst == src) {
            ++out.local_tokens[src];
          } else if (node == own_node) {
            ++direct[dst % g];
          } else {
            const int relay = node * g + src % g;
            if (node != last_node) ++row[node], last_node = node;  // one RDMA copy per remote node
            if (dst != relay) ++forward[static_cast<std::size_t>(relay) * g + dst % g];
          }
        }
        break;
      }
      case Transport::AllGather: break;
    }
  });
  flush_src(current_src);

  if (transport == Transport::DeepepNormal) {
    for (int relay = 0; relay < ep; ++relay)
      for (int l = 0; l < g; ++l) {
        const std::int64_t n = forward[static_cast<std::size_t>(relay) * g + l];
        if (n > 0) flows.push_back(Flow{relay, node_of(relay) * g + l, Hop::Nvlink, 1, 0.0, n, n});
      }
  }
  if (transport == Transport::AllGather) {
    // Dispatch: every rank's tokens to every other rank. Combine (reduce-scatter): rank s returns
    // to rank d the partial outputs of d's tokens; in dispatch orientation that is d -> s with d's
    // tokens, the same as the all-gather flow, reversed below.
    for (int s = 0; s < ep; ++s) {
      const std::int64_t own = r.rank_offsets[s + 1] - r.rank_offsets[s];
      out.local_tokens[s] = own;
      if (own == 0) continue;
      for (int d = 0; d < ep; ++d)
        if (d != s) flows.push_back(Flow{s, d, hop_between(s, d), 0, 0.0, 1, own});
    }
  }
  return out;
}

PhaseTraffic phase_traffic(const MoeLayer& layer, const TokenCounts& counts, Phase phase) {
  const MoeConfig& c = layer.config;
  const int ep = c.ep;
  const Transport transport = counts.transport;
  PhaseTraffic out;
  out.phase = phase;
  out.transport = transport;
  out.bytes_per_token = bytes_per_token(phase == Phase::Dispatch ? c.dispatch_dtype : c.combine_dtype, c.hidden);
  out.local_tokens = counts.local_tokens;
  const std::vector<std::int64_t>& logical_node_pairs = counts.logical_node_pairs;
  const std::vector<std::int64_t>& logical_tokens_received = counts.logical_tokens_received;
  std::vector<Flow> flows = counts.flows;
  if (phase == Phase::Combine) {
    for (Flow& f : flows) {
      std::swap(f.src, f.dst);
      // deepep-normal: the relay's RDMA copy back to the owner is now the second hop; the NVLink
      // copies to the relay (and same-node direct copies) leave the expert GPUs first.
      if (transport == Transport::DeepepNormal) f.stage = f.hop == Hop::Rdma ? 1 : 0;
    }
  }
  sort_and_merge(flows);

  const double bpt = static_cast<double>(out.bytes_per_token);
  out.rdma_bytes_sent.assign(ep, 0);
  out.rdma_bytes_received.assign(ep, 0);
  out.nvlink_bytes_sent.assign(ep, 0);
  out.nvlink_bytes_received.assign(ep, 0);
  for (Flow& f : flows) {
    f.bytes = static_cast<double>(f.tokens) * bpt;
    auto& sent = f.hop == Hop::Rdma ? out.rdma_bytes_sent : out.nvlink_bytes_sent;
    auto& received = f.hop == Hop::Rdma ? out.rdma_bytes_received : out.nvlink_bytes_received;
    sent[f.src] += f.bytes;
    received[f.dst] += f.bytes;
  }
  out.flows = std::move(flows);
  out.local_bytes.resize(ep);
  out.logical_rdma_bytes_per_rank.resize(ep);
  out.logical_nvlink_bytes_per_rank.resize(ep);
  for (int i = 0; i < ep; ++i) {
    out.local_bytes[i] = static_cast<double>(out.local_tokens[i]) * bpt;
    out.logical_rdma_bytes_per_rank[i] = static_cast<double>(logical_node_pairs[i]) * bpt;
    out.logical_nvlink_bytes_per_rank[i] = static_cast<double>(logical_tokens_received[i]) * bpt;
    out.logical_rdma_bytes += out.logical_rdma_bytes_per_rank[i] / ep;
    out.logical_nvlink_bytes += out.logical_nvlink_bytes_per_rank[i] / ep;
  }
  return out;
}

PhaseTraffic traffic(const MoeLayer& layer, Transport transport, Phase phase, const TransportOptions& options) {
  return phase_traffic(layer, count_tokens(layer, transport, options), phase);
}

}  // namespace ccsim::moe
