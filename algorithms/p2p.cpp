#include "algorithms/p2p.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "topologies/routing.h"

namespace ccsim {
namespace {

int pow2_up(int x) {
  int p = 1;
  while (p < x) p <<= 1;
  return p;
}

bool has_nvlink(const Topology& topo) { return topo.nccl_p2p && (topo.has_nvswitch || topo.nvlinks_per_gpu > 0); }

}  // namespace

P2pConfig nccl_p2p_config(const Topology& topo, int coll_channels, double net_overhead_us) {
  P2pConfig c;
  c.nranks = topo.num_gpus();
  c.multi_node = topo.num_nodes() > 1;
  c.pxn = c.multi_node && has_nvlink(topo);
  c.proxy_cost_s = net_overhead_us * 1e-6;
  // ncclTopoComputeP2pChannels: p2pnChannels from comm->nChannels (MIN/MAX_P2P_NCHANNELS 1/64).
  const int base = std::clamp(coll_channels, 1, 64);
  int min_channels = base;
  // ncclTopoGetNchannels for every peer class present.
  if (topo.gpus_per_node() > 1)
    min_channels = std::min(min_channels, has_nvlink(topo) ? 2 * std::max(1, topo.nvlinks_per_gpu) : 2);
  if (c.multi_node) {
    int net = 2;  // NCCL_NCHANNELS_PER_NET_PEER unset: 2 per NIC, fewer at scale
    while (net * c.nranks > base * 4 && net > 1) net /= 2;
    min_channels = std::min(min_channels, std::max(1, net));  // netCountByBw = 1 (one NIC drives a GPU)
  }
  c.p2p_channels = pow2_up(base);
  c.channels_per_peer = std::min(pow2_up(min_channels), c.p2p_channels);
  // init.cc: p2pChunkSize.
  if (c.multi_node)
    c.chunk_bytes = kP2pNetChunkBytes;
  else if (has_nvlink(topo))
    c.chunk_bytes = kP2pNvlChunkBytes;
  else
    c.chunk_bytes = kP2pPciChunkBytes;
  return c;
}

P2pOp nccl_p2p_op(const P2pConfig& cfg, double bytes, bool network) {
  P2pOp op;
  const int max_ch = cfg.channels_per_peer;
  int min_ch = max_ch;
  while (min_ch * cfg.nranks > cfg.p2p_channels && min_ch > 1) min_ch /= 2;
  const double step = cfg.chunk_bytes;
  if (bytes <= 0) {
    op.channels = 1;
  } else {
    const double min_part = cfg.multi_node ? step / 2 : step / 8;
    const double max_part = cfg.multi_node ? step : step * 32;
    op.channels = std::min<int>(min_ch, static_cast<int>(std::ceil(bytes / min_part)));
    op.channels = std::max(1, op.channels);
    double part = std::max(min_part, std::ceil(bytes / op.channels));
    while (part > max_part && op.channels <= max_ch / 2) {
      op.channels *= 2;
      part = std::ceil(bytes / op.channels);
    }
  }
  op.proto = bytes <= op.channels * kP2pLLThresholdBytes ? Proto::LL : Proto::Simple;
  double chunk = op.proto == Proto::LL ? kP2pLLStepWireBytes : step;
  if (network) {
    if (op.proto == Proto::Simple && bytes < step)
      chunk /= 4;
    else if (bytes < 8 * step)
      chunk /= 2;
  }
  op.chunk_data_bytes = op.proto == Proto::LL ? chunk / 2 : chunk;
  const double per_channel = std::ceil(bytes / op.channels);
  op.chunks = bytes <= 0 ? 1 : op.channels * std::max(1, static_cast<int>(std::ceil(per_channel / op.chunk_data_bytes)));
  op.max_concurrent_peers = cfg.p2p_channels / op.channels * kP2pOpsPerBatch;
  return op;
}

std::vector<int> p2p_round_peers(int nranks, int gpus_per_node, int rank) {
  std::vector<int> peers;
  const int ppn = std::max(1, gpus_per_node);
  const int nodes = nranks / ppn;
  const int node = rank / ppn, local = rank % ppn;
  for (int r = 0; r < nranks; ++r) {
    const int node_delta = r / ppn, local_delta = r % ppn;
    peers.push_back(((node + node_delta) % nodes) * ppn + (local + local_delta) % ppn);
  }
  return peers;
}

int p2p_round(int nranks, int gpus_per_node, int src, int dst) {
  const int ppn = std::max(1, gpus_per_node);
  const int nodes = std::max(1, nranks / ppn);
  const int node_delta = ((dst / ppn - src / ppn) % nodes + nodes) % nodes;
  const int local_delta = ((dst % ppn - src % ppn) % ppn + ppn) % ppn;
  return node_delta * ppn + local_delta;
}

namespace {

constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

// One message as NCCL runs it.
struct Planned {
  int src = 0, dst = 0, round = 0;
  double bytes = 0;
  P2pOp op;            // NCCL's decisions for its size (addP2pToPlan)
  bool net = false;    // crosses nodes
  int rail = -1;       // NIC index (network messages)
  int nic_gpu = -1;    // the GPU whose NIC sends it (itself, or the PXN relay), whose proxy posts it
  int wave = 0;        // round / max_concurrent_peers
  std::uint32_t dep = kNone;  // the same rank's message max_concurrent_peers rounds earlier (its slot)
  std::uint32_t record = kNone;  // the record that carries it
};

// A record under construction: one message, or (PXN aggregation) the network part of several.
struct Pending {
  int src = 0, dst = 0, rail = -1, family = 0, wave = 0;
  std::uint32_t first = 0;     // its first message
  double wire_bytes = 0;
  std::vector<std::uint32_t> deps;  // records
};

struct KeyHash {
  std::size_t operator()(const std::pair<std::uint64_t, std::uint64_t>& k) const {
    return std::hash<std::uint64_t>()(k.first * 0x9E3779B97F4A7C15ull ^ k.second);
  }
};

class P2pBuilder {
 public:
  P2pBuilder(const Topology& topo, const P2pConfig& cfg, const P2pScheduleOptions& options)
      : topo_(topo), cfg_(cfg), options_(options), n_(topo.num_gpus()), gpn_(std::max(1, topo.gpus_per_node())) {}

  Schedule build(const std::string& collective, double size_bytes, const std::vector<P2pMessage>& messages) {
    plan(messages);
    Schedule s;
    s.collective = collective;
    s.algorithm = "p2p";
    s.nranks = n_;
    s.size_bytes = size_bytes;
    s.families_follow_rails = false;
    place_records();
    if (emit(s)) return s;
    P2pScheduleOptions whole = options_;
    whole.aggregate_pxn = false;
    return P2pBuilder(topo_, cfg_, whole).build(collective, size_bytes, messages);
  }

 private:
  // NCCL's decisions per message: round, op (protocol, channels), route, proxy, slot dependency.
  void plan(const std::vector<P2pMessage>& messages) {
    msgs_.reserve(messages.size());
    for (const P2pMessage& m : messages) {
      if (m.src < 0 || m.src >= n_ || m.dst < 0 || m.dst >= n_)
        throw std::invalid_argument("alltoallv: message " + std::to_string(m.src) + " -> " + std::to_string(m.dst) +
                                    " names a rank outside 0.." + std::to_string(n_ - 1));
      if (!std::isfinite(m.bytes) || m.bytes < 0)
        throw std::invalid_argument("alltoallv: message " + std::to_string(m.src) + " -> " + std::to_string(m.dst) +
                                    " has " + std::to_string(m.bytes) + " bytes (must be finite and >= 0)");
      if (m.src == m.dst) continue;  // a copy inside the GPU
      Planned p;
      p.src = m.src;
      p.dst = m.dst;
      p.bytes = m.bytes;
      p.round = p2p_round(n_, gpn_, m.src, m.dst);
      p.net = m.src / gpn_ != m.dst / gpn_;
      p.op = nccl_p2p_op(cfg_, m.bytes, p.net);
      if (p.net) {
        const int own = nic_for_gpu(topo_, m.src % gpn_);
        const int dst_rail = nic_for_gpu(topo_, m.dst % gpn_);
        p.rail = own;
        p.nic_gpu = m.src;
        if (cfg_.pxn && dst_rail >= 0 && dst_rail != own) {
          // PXN: the GPU on the destination's rail sends it (the relay routing.h's route passes through).
          const int relay = first_gpu_on_rail(topo_, dst_rail);
          if (relay >= 0) {
            p.rail = dst_rail;
            p.nic_gpu = (m.src / gpn_) * gpn_ + relay;
          }
        }
      }
      p.wave = p.round / std::max(1, p.op.max_concurrent_peers);
      msgs_.push_back(p);
    }
    // Per rank, its messages by round: duplicates, and each message's slot dependency.
    std::vector<std::uint32_t> by_rank(msgs_.size());
    for (std::uint32_t i = 0; i < by_rank.size(); ++i) by_rank[i] = i;
    const auto earlier = [&](std::uint32_t a, std::uint32_t b) {
      return std::tie(msgs_[a].src, msgs_[a].round) < std::tie(msgs_[b].src, msgs_[b].round);
    };
    if (!std::is_sorted(by_rank.begin(), by_rank.end(), earlier)) std::sort(by_rank.begin(), by_rank.end(), earlier);
    for (std::size_t i = 1; i < by_rank.size(); ++i) {
      const Planned &a = msgs_[by_rank[i - 1]], &b = msgs_[by_rank[i]];
      if (a.src == b.src && a.round == b.round)
        throw std::invalid_argument("alltoallv: two messages " + std::to_string(a.src) + " -> " + std::to_string(a.dst) +
                                    " (one per pair; NCCL would run the second in a later epoch)");
    }
    for (std::size_t i = 0; i < by_rank.size();) {
      std::size_t j = i;
      while (j < by_rank.size() && msgs_[by_rank[j]].src == msgs_[by_rank[i]].src) ++j;
      for (std::size_t k = i; k < j; ++k) {
        Planned& p = msgs_[by_rank[k]];
        const int slot_round = p.round - p.op.max_concurrent_peers;
        if (slot_round < 1) continue;  // round 0 is the self copy
        const auto it = std::lower_bound(by_rank.begin() + static_cast<std::ptrdiff_t>(i), by_rank.begin() + static_cast<std::ptrdiff_t>(k), slot_round,
                                         [&](std::uint32_t x, int r) { return msgs_[x].round < r; });
        if (it != by_rank.begin() + static_cast<std::ptrdiff_t>(k) && msgs_[*it].round == slot_round) p.dep = *it;
      }
      i = j;
    }
    // Proxy load per (proxy, wave): the network connections it posts (sends) and completes (receives).
    for (const Planned& p : msgs_) waves_ = std::max(waves_, p.wave + 1);
    load_.assign(static_cast<std::size_t>(n_) * static_cast<std::size_t>(waves_), 0);
    for (const Planned& p : msgs_)
      if (p.net) {
        ++load_[load_index(p.nic_gpu, p.wave)];
        ++load_[load_index(p.dst, p.wave)];
      }
  }

  std::size_t load_index(int rank, int wave) const {
    return static_cast<std::size_t>(rank) * static_cast<std::size_t>(waves_) + static_cast<std::size_t>(wave);
  }

  // Messages to records, in round order (so that every dependency points to an earlier record).
  void place_records() {
    std::vector<std::uint32_t> order(msgs_.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return msgs_[a].round < msgs_[b].round; });
    std::unordered_map<std::pair<std::uint64_t, std::uint64_t>, std::uint32_t, KeyHash> group_of, leg_of;
    std::unordered_map<std::uint64_t, int> variants;  // (src, dst, rail, wave) -> records so far (family)
    const auto family_for = [&](const Planned& p, int src, int dst, int rail, int parity) {
      const std::uint64_t base = (static_cast<std::uint64_t>(src) << 40) ^ (static_cast<std::uint64_t>(dst) << 18) ^
                                 (static_cast<std::uint64_t>(rail + 1) << 12) ^ static_cast<std::uint64_t>(p.wave) ^
                                 (static_cast<std::uint64_t>(parity) << 63);
      return 2 * variants[base]++ + parity;
    };
    const bool aggregate = options_.aggregate_pxn;
    for (std::uint32_t i : order) {
      Planned& p = msgs_[i];
      const std::uint32_t dep = p.dep == kNone ? kNone : msgs_[p.dep].record;
      const Proto proto = p.op.proto;
      const double wire = p.bytes * ring_protocol(proto).wire_factor;
      if (!(aggregate && p.net)) {
        p.record = open_record(p, i, p.src, p.dst, p.rail, 0, dep);
        records_[p.record].wire_bytes += wire;
        continue;
      }
      // The network part: one record per (sending GPU, destination, wave, protocol), waiting for the
      // slot predecessors of all its messages. Where the traffic is regular (each GPU of the node
      // sends to the destination) every record on a NIC stands for equally many messages, so one flow
      // per record keeps the messages' max-min shares; where predecessors end at different instants
      // the record starts with the last of them (docs/collectives.md, "PXN aggregation").
      const auto key = std::make_pair((static_cast<std::uint64_t>(p.nic_gpu) << 32) | static_cast<std::uint32_t>(p.dst),
                                      (static_cast<std::uint64_t>(p.wave) << 2) | static_cast<std::uint64_t>(proto));
      auto found = group_of.find(key);
      if (found == group_of.end())
        found = group_of.emplace(key, open_record(p, i, p.nic_gpu, p.dst, p.rail, family_for(p, p.nic_gpu, p.dst, p.rail, 0), kNone)).first;
      add_dep(records_[found->second], dep);
      p.record = found->second;
      records_[p.record].wire_bytes += wire;
      if (p.nic_gpu == p.src) continue;
      // The NVLink leg to the relay: one per (sender, relay, wave, protocol), after every other record.
      const auto leg_key = std::make_pair((static_cast<std::uint64_t>(p.src) << 32) | static_cast<std::uint32_t>(p.nic_gpu),
                                          (static_cast<std::uint64_t>(p.wave) << 2) | static_cast<std::uint64_t>(proto));
      auto leg = leg_of.find(leg_key);
      if (leg == leg_of.end()) {
        Pending r;
        r.src = p.src;
        r.dst = p.nic_gpu;
        r.rail = -1;
        r.family = family_for(p, p.src, p.nic_gpu, -1, 1);
        r.wave = p.wave;
        r.first = i;
        leg = leg_of.emplace(leg_key, static_cast<std::uint32_t>(legs_.size())).first;
        legs_.push_back(std::move(r));
      }
      Pending& l = legs_[leg->second];
      l.wire_bytes += wire;
      add_dep(l, dep);
    }
  }

  static void add_dep(Pending& r, std::uint32_t dep) {
    if (dep != kNone && std::find(r.deps.begin(), r.deps.end(), dep) == r.deps.end()) r.deps.push_back(dep);
  }

  std::uint32_t open_record(const Planned& p, std::uint32_t message, int src, int dst, int rail, int family,
                            std::uint32_t dep) {
    Pending r;
    r.src = src;
    r.dst = dst;
    r.rail = rail;
    r.family = family;
    r.wave = p.wave;
    r.first = message;
    if (dep != kNone) r.deps.push_back(dep);
    records_.push_back(std::move(r));
    return static_cast<std::uint32_t>(records_.size()) - 1;
  }

  // Fixed cost of a message from "all dependencies done" to its first byte at the destination:
  // launch (first wave), NCCL's per-hop latency of its class, the proxy's sweep (network).
  double fixed_s(const Planned& p) const {
    const RingProtocol proto = ring_protocol(p.op.proto);
    // The whole route's latency: through the relay, its NVLink leg plus the relay's own route (the
    // routes aggregated records take, computed once per record instead of once per message).
    const double route_latency =
        p.nic_gpu >= 0 && p.nic_gpu != p.src
            ? route_latency_s(topo_, route_between_gpus(topo_, p.src, p.nic_gpu)) +
                  route_latency_s(topo_, route_between_gpus(topo_, p.nic_gpu, p.dst, p.rail))
            : route_latency_s(topo_, route_between_gpus(topo_, p.src, p.dst, p.rail));
    const double step = p.net ? proto.timing.net_step_s : step_latency_s(topo_, proto.timing, p.src, p.dst, p.rail);
    double fixed = std::max(step, route_latency);
    if (p.wave == 0) fixed += proto.timing.launch_s;
    if (p.net && options_.model_proxy) fixed += cfg_.proxy_cost_s * load_[load_index(p.nic_gpu, p.wave)];
    return fixed;
  }

  Transfer transfer_of(const Pending& r) const {
    const Planned& p = msgs_[r.first];
    const P2pOp& op = p.op;
    Transfer t;
    t.src = r.src;
    t.dst = r.dst;
    t.rail = r.rail;
    t.bytes = r.wire_bytes;
    // The engine adds the route's own latency.
    t.delay_s = std::max(0.0, fixed_s(p) - route_latency_s(topo_, route_between_gpus(topo_, r.src, r.dst, r.rail)));
    t.step = r.wave;
    t.family = r.family;
    t.channels = op.channels;
    t.chunks = std::max(1, op.chunks / std::max(1, op.channels));
    return t;
  }

  // Adds the records, each after its dependencies (depth first, in creation order); false when the
  // aggregated records depend on each other in a cycle (only possible with fewer rounds in flight
  // than GPUs per node), then nothing is added.
  bool emit(Schedule& s) {
    std::vector<std::uint32_t> id(records_.size(), kNone);
    std::vector<char> state(records_.size(), 0);  // 0 not seen, 1 waiting for its dependencies, 2 added
    std::vector<std::uint32_t> stack, deps;
    s.transfers.reserve(records_.size() + legs_.size());
    for (std::uint32_t root = 0; root < records_.size(); ++root) {
      stack.push_back(root);
      while (!stack.empty()) {
        const std::uint32_t r = stack.back();
        if (state[r] == 2) {
          stack.pop_back();
        } else if (state[r] == 0) {
          state[r] = 1;
          for (std::uint32_t d : records_[r].deps) {
            if (state[d] == 1) return false;
            if (state[d] == 0) stack.push_back(d);
          }
        } else {
          stack.pop_back();
          deps.clear();
          for (std::uint32_t d : records_[r].deps) deps.push_back(id[d]);
          id[r] = s.add(transfer_of(records_[r]), deps);
          state[r] = 2;
        }
      }
    }
    for (const Pending& l : legs_) {
      deps.clear();
      for (std::uint32_t d : l.deps) deps.push_back(id[d]);
      s.add(transfer_of(l), deps);
    }
    // Keys are unique by construction: one message per (src, dst); aggregated records and legs are
    // told apart by family (even: messages and their network parts, odd: legs).
    s.keys_unique = true;
    if (!options_.aggregate_pxn) return true;
    // Finish times: a record counts for the senders of its messages and its destination; legs for nobody.
    std::vector<std::uint32_t> begin(s.transfers.size() + 1, 0);
    for (const Planned& p : msgs_) ++begin[id[p.record] + 1];
    for (std::size_t r = 0; r < records_.size(); ++r) ++begin[id[r] + 1];
    for (std::size_t r = 1; r < begin.size(); ++r) begin[r] += begin[r - 1];
    s.finish_begin = begin;
    s.finish_ranks.assign(begin.back(), 0);
    for (std::size_t r = 0; r < records_.size(); ++r) s.finish_ranks[begin[id[r]]++] = records_[r].dst;
    for (const Planned& p : msgs_) s.finish_ranks[begin[id[p.record]]++] = p.src;
    return true;
  }

  const Topology& topo_;
  const P2pConfig& cfg_;
  const P2pScheduleOptions options_;
  const int n_, gpn_;
  std::vector<Planned> msgs_;
  int waves_ = 0;
  std::vector<int> load_;
  std::vector<Pending> records_, legs_;
};

double total_bytes(const std::vector<P2pMessage>& messages) {
  double total = 0;
  for (const P2pMessage& m : messages) total += m.bytes;
  return total;
}

}  // namespace

Schedule alltoallv_schedule(const Topology& topo, const P2pConfig& cfg, const std::vector<P2pMessage>& messages,
                            const P2pScheduleOptions& options) {
  return P2pBuilder(topo, cfg, options).build("alltoallv", total_bytes(messages), messages);
}

Schedule sendrecv_schedule(const Topology& topo, const P2pConfig& cfg, double size_bytes,
                           const P2pScheduleOptions& options) {
  const int n = topo.num_gpus();
  std::vector<P2pMessage> messages;
  if (n >= 2)
    for (int r = 0; r < n; ++r) messages.push_back({r, (r + 1) % n, size_bytes});
  return P2pBuilder(topo, cfg, options).build("sendrecv", size_bytes, messages);
}

Schedule alltoall_schedule(const Topology& topo, const P2pConfig& cfg, double size_bytes,
                           const P2pScheduleOptions& options) {
  const int n = topo.num_gpus();
  const double message = n > 0 ? size_bytes / n : 0.0;
  std::vector<P2pMessage> messages;
  messages.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(std::max(0, n - 1)));
  for (int r = 0; r < n; ++r) {
    const std::vector<int> peers = p2p_round_peers(n, topo.gpus_per_node(), r);
    for (int round = 1; round < n; ++round) messages.push_back({r, peers[static_cast<std::size_t>(round)], message});
  }
  return P2pBuilder(topo, cfg, options).build("alltoall", size_bytes, messages);
}

double p2p_closed_form_time_s(const Topology& topo, const Schedule& s) {
  // Per wave: largest delay, and bytes per link direction (a shared-duplex link counts both ways).
  std::map<int, double> wave_delay;
  std::map<int, LinkLoad> wave_load;
  for (const Transfer& t : s.transfers) {
    const Route route = route_between_gpus(topo, t.src, t.dst, t.rail);
    wave_delay[t.step] = std::max(wave_delay[t.step], t.delay_s + route_latency_s(topo, route));
    LinkLoad& load = wave_load.try_emplace(t.step, topo).first->second;
    for (const Hop& h : route) load.add(h, t.bytes);
  }
  double total = 0;
  for (const auto& [wave, delay] : wave_delay) total += delay + wave_load.at(wave).busiest().time_s;
  return total;
}

}  // namespace ccsim
