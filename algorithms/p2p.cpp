#include "algorithms/p2p.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "algorithms/shm_two_way.h"
#include "common/error.h"
#include "common/flat_hash.h"
#include "topologies/nccl_hardware_figures.h"
#include "topologies/nvlink_mesh.h"
#include "topologies/routing.h"

namespace ccsim {
namespace {

int pow2_up(int x) {
  int p = 1;
  while (p < x) p <<= 1;
  return p;
}

bool has_nvlink(const Topology& topo) { return topo.nccl_p2p && (topo.has_nvswitch || topo.nvlinks_per_gpu > 0); }

// ncclTopoPathAllNVLink: every GPU pair of the node on an NVLink path of its own (an NVSwitch; GPUs
// joined pair by pair only when every pair is joined: NVB and PCIe pairs are farther than NVL).
bool all_pairs_nvlink(const Topology& topo) {
  if (!nvlink_mesh(topo)) return true;
  for (int a = 0; a < topo.gpus_per_node(); ++a)
    for (int b = 0; b < topo.gpus_per_node(); ++b)
      if (a != b && nvlink_links(topo, a, b) == 0) return false;
  return true;
}

}  // namespace

P2pConfig nccl_p2p_config(const Topology& topo, const NcclTopoSummary& summary) {
  P2pConfig c;
  c.nranks = topo.num_gpus();
  c.multi_node = topo.num_nodes() > 1;
  c.pxn = c.multi_node && has_nvlink(topo);
  c.proxy_cost_s = summary.net_overhead_us * 1e-6;
  // ncclTopoComputeP2pChannels: p2pnChannels from comm->nChannels (MIN/MAX_P2P_NCHANNELS 1/64).
  const int base = std::clamp(summary.coll_channels, 1, 64);
  int min_channels = base;
  // ncclTopoGetNchannels for every peer class present: 2 x the NVLinks of an NVLink path, else 2. On
  // GPUs joined pair by pair a peer's path is its pair's links, or NVB / PCIe (2) when not joined.
  const int gpn = topo.gpus_per_node();
  if (gpn > 1 && has_nvlink(topo) && nvlink_mesh(topo)) {
    for (int a = 0; a < gpn; ++a)
      for (int b = 0; b < gpn; ++b)
        if (a != b) min_channels = std::min(min_channels, 2 * std::max(1, nvlink_links(topo, a, b)));
  } else if (gpn > 1) {
    min_channels = std::min(min_channels, has_nvlink(topo) ? 2 * std::max(1, topo.nvlinks_per_gpu) : 2);
  }
  if (c.multi_node) {
    int net = topo.nccl_channels.channels_per_net_peer;  // NCCL_NCHANNELS_PER_NET_PEER, taken as it is
    if (net == 0) {
      // ncclTopoGetNchannels, unset: at least one channel per NIC the GPU uses (counted by bandwidth).
      const int nics = std::max(1, summary.net_count_by_bw);
      if (nccl_p2p_net_channels_by_bandwidth(summary.nccl_version)) {
        // NCCL 2.29+: one channel per 14 GB/s of the GPU's NICs, whatever the rank count (a 400 Gb/s
        // NIC, 48 GB/s in NCCL's units behind PCIe Gen5: 4). NCCL's divUp((int)netBw, 14).
        const int per_channel = kNcclP2pPerChannelNetGBps;
        net = std::max(nics, (static_cast<int>(summary.net_bw_by_count) + per_channel - 1) / per_channel);
      } else {
        // Up to 2.28: 2, halved while 2 x ranks exceeds 4 x the P2P channels ("avoid overloading
        // channels with 8+ operations").
        net = 2;
        while (net * c.nranks > base * 4 && net > 1) net /= 2;
        net = std::max(nics, net);
      }
    }
    min_channels = std::min(min_channels, net);
  }
  c.p2p_channels = pow2_up(base);
  c.channels_per_peer = std::min(pow2_up(min_channels), c.p2p_channels);
  // init.cc: p2pChunkSize, NCCL's default or the description's (Topology::p2p_chunks).
  if (c.multi_node) {
    // "GBx platforms only have 4 GPUs per host, which reduces the aggregation factor": NCCL doubles
    // the NET chunk on an Arm host (Grace: node.cpu.vendor nvidia) with sm100 or newer GPUs.
    const bool arm = topo.cpu_vendor == "nvidia" || topo.cpu_vendor == "arm";
    const bool doubled = arm && compcap_from_arch(topo.gpu_arch) >= 100;
    c.chunk_bytes = topo.p2p_chunks.net * (doubled ? 2 : 1);
    if (doubled) c.chunk_param = "NCCL_P2P_NET_CHUNKSIZE x 2 (Arm host, sm100+)";
  } else if (has_nvlink(topo) && all_pairs_nvlink(topo)) {
    c.chunk_bytes = topo.p2p_chunks.nvl;
    c.chunk_param = "NCCL_P2P_NVL_CHUNKSIZE";
  } else {
    c.chunk_bytes = topo.p2p_chunks.pci;
    c.chunk_param = "NCCL_P2P_PCI_CHUNKSIZE";
  }
  c.ll_threshold_bytes = topo.p2p_ll_threshold_bytes;
  // init.cc: "Make sure P2P chunksize is not larger than coll chunksize": at most one Simple step.
  const double simple_step = static_cast<double>(nccl_buffer_bytes(topo, Proto::Simple)) / nccl230::kSteps;
  if (c.chunk_bytes > simple_step) {
    c.chunk_bytes = simple_step;
    c.chunk_param = "NCCL_BUFFSIZE / 8";
  }
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
  op.proto = bytes <= op.channels * cfg.ll_threshold_bytes ? Proto::LL : Proto::Simple;
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
  // A channel's CTA runs its batches one after another, and a batch holds the operations of one
  // group of 8 consecutive rounds (NCCL_MAX_DEV_WORK_P2P_PER_BATCH; enqueue.cc ncclAddWorkBatchToPlan).
  // Across nodes the 8 rounds of a group share a base channel (channel.h ncclP2pChannelBaseForRound),
  // so p2pnChannels / nChannels bases x 8 rounds run at once. In one node the base is the round itself,
  // bit-reversed: rounds r and r + p2pnChannels share a CTA in different batches, so at most
  // p2pnChannels rounds run at once (fewer, 8 x p2pnChannels / nChannels, once a message's channels
  // make rounds of two groups share their CTAs).
  op.max_concurrent_peers = cfg.p2p_channels / op.channels * kP2pOpsPerBatch;
  if (!cfg.multi_node) op.max_concurrent_peers = std::min(op.max_concurrent_peers, cfg.p2p_channels);
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

P2pPath p2p_message_path(const Topology& topo, const P2pConfig& cfg, int src, int dst) {
  P2pPath path;
  const int gpn = std::max(1, topo.gpus_per_node());
  if (src / gpn == dst / gpn) return path;
  const int own = nic_for_gpu(topo, src % gpn);
  const int dst_rail = nic_for_gpu(topo, dst % gpn);
  path.rail = own;
  path.nic_gpu = src;
  if (cfg.pxn && dst_rail >= 0 && dst_rail != own) {
    // PXN: the GPU on the destination's rail sends it (the relay routing.h's route passes through).
    const int relay = first_gpu_on_rail(topo, dst_rail);
    if (relay >= 0) {
      path.rail = dst_rail;
      path.nic_gpu = (src / gpn) * gpn + relay;
    }
  }
  return path;
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

// Orbit representatives of an alltoall (alltoall_representatives): the messages of the nodes
// [0, node_shift) only (every node when node_shift is 0), and of their records only those whose
// source is a representative (local index 0 when the rails rotate).
struct OrbitMode {
  bool on = false;
  int node_shift = 0;
  bool rail_rotation = false;
};

class P2pBuilder {
 public:
  P2pBuilder(const Topology& topo, const P2pConfig& cfg, const P2pScheduleOptions& options, OrbitMode orbit = {})
      : topo_(topo), cfg_(cfg), options_(options), n_(topo.num_gpus()), gpn_(std::max(1, topo.gpus_per_node())),
        orbit_(orbit) {}

  Schedule build(const std::string& collective, double size_bytes, const std::vector<P2pMessage>& messages) {
    plan(messages);
    Schedule s;
    s.collective = collective;
    s.algorithm = "p2p";
    s.nranks = n_;
    s.size_bytes = size_bytes;
    s.families_follow_rails = false;
    // Each channel of a message is one thread block copying to the peer GPU: inside a node the
    // channels, not NVLink, bound a message below the links' rate (topologies/gpu_copy_rate.h).
    s.intra_node_channel_cap_Bps = topo_.p2p_channel_Bps;
    place_records();
    if (orbit_.on) {
      emit_representatives(s);
      return s;
    }
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
      const P2pPath path = p2p_message_path(topo_, cfg_, m.src, m.dst);
      p.rail = path.rail;
      p.nic_gpu = path.nic_gpu;
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
    // Orbit representatives of an alltoall plan only the messages of their own nodes, so a rank's
    // receives are not all there; in an alltoall a rank receives in each round from the rank as far
    // behind it as the round's peer is ahead, across nodes exactly when its own message of that round
    // crosses nodes, so per wave it receives as many network messages as it sends.
    for (const Planned& p : msgs_)
      if (p.net) {
        ++load_[load_index(p.nic_gpu, p.wave)];
        ++load_[load_index(orbit_.on ? p.src : p.dst, p.wave)];
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

  bool representative_source(int rank) const {
    return (orbit_.node_shift == 0 || rank / gpn_ < orbit_.node_shift) && (!orbit_.rail_rotation || rank % gpn_ == 0);
  }

  // Orbit mode: the records (then the legs) whose source is a representative, in creation order,
  // which is emit()'s order for an alltoall (every message waits for a message of an earlier round,
  // whose record is created in that round or before, so emit() adds each record when it reaches it).
  // A dependency is on the record the rotation that brings its source to a representative maps it
  // to (its source lies in a planned node, so the image is one of records_).
  void emit_representatives(Schedule& s) {
    const auto key_of = [](int src, int dst, int rail, int family, int step) {
      std::uint64_t key = 0;
      if (!pack_transfer_key(src, dst, rail, family, step, &key))
        throw std::logic_error("alltoall representatives: a record key out of range");
      return key;
    };
    FlatKeyMap index(records_.size());
    for (std::uint32_t r = 0; r < records_.size(); ++r) {
      const Pending& x = records_[r];
      index.insert(key_of(x.src, x.dst, x.rail, x.family, x.wave), r);
    }
    const int rails = std::max(1, topo_.nics_per_node());
    const auto rotate = [&](int rank, int local) {
      return (rank / gpn_) * gpn_ + ((rank % gpn_ + local) % gpn_ + gpn_) % gpn_;
    };
    std::vector<std::uint32_t> id(records_.size(), kNone);
    std::vector<std::uint32_t> deps;
    const auto add = [&](const Pending& x) {
      deps.clear();
      for (std::uint32_t d : x.deps) {
        const Pending& y = records_[d];
        const int local = orbit_.rail_rotation ? -(y.src % gpn_) : 0;
        const int rail = y.rail >= 0 ? ((y.rail + local) % rails + rails) % rails : y.rail;
        std::uint32_t image = kNone;
        if (!index.find(key_of(rotate(y.src, local), rotate(y.dst, local), rail, y.family, y.wave), &image) ||
            id[image] == kNone)
          throw std::logic_error("alltoall representatives: a dependency without an earlier representative");
        deps.push_back(id[image]);
      }
      return s.add(transfer_of(x), deps);
    };
    std::size_t kept = 0;
    for (std::uint32_t r = 0; r < records_.size(); ++r)
      if (representative_source(records_[r].src)) ++kept;
    for (const Pending& l : legs_)
      if (representative_source(l.src)) ++kept;
    s.transfers.reserve(kept);
    for (std::uint32_t r = 0; r < records_.size(); ++r)
      if (representative_source(records_[r].src)) id[r] = add(records_[r]);
    for (const Pending& l : legs_)
      if (representative_source(l.src)) add(l);
    s.keys_unique = true;
    // Finish times, as emit() has them: a record counts for its destination and its messages' senders.
    std::vector<std::uint32_t> begin(s.transfers.size() + 1, 0);
    for (std::uint32_t r = 0; r < records_.size(); ++r)
      if (id[r] != kNone) ++begin[id[r] + 1];
    for (const Planned& p : msgs_)
      if (id[p.record] != kNone) ++begin[id[p.record] + 1];
    for (std::size_t r = 1; r < begin.size(); ++r) begin[r] += begin[r - 1];
    s.finish_begin = begin;
    s.finish_ranks.assign(begin.back(), 0);
    for (std::uint32_t r = 0; r < records_.size(); ++r)
      if (id[r] != kNone) s.finish_ranks[begin[id[r]]++] = records_[r].dst;
    for (const Planned& p : msgs_)
      if (id[p.record] != kNone) s.finish_ranks[begin[id[p.record]]++] = p.src;
  }

  const Topology& topo_;
  const P2pConfig& cfg_;
  const P2pScheduleOptions options_;
  const int n_, gpn_;
  const OrbitMode orbit_;
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

Schedule alltoall_representatives(const Topology& topo, const P2pConfig& cfg, double size_bytes, int node_shift,
                                  bool rail_rotation, const P2pScheduleOptions& options) {
  const int n = topo.num_gpus();
  const int gpn = std::max(1, topo.gpus_per_node());
  if (!options.aggregate_pxn || node_shift < 0 || (node_shift > 0 && topo.num_nodes() % node_shift != 0))
    throw std::invalid_argument("alltoall_representatives: needs PXN aggregation and a node shift dividing the nodes");
  const double message = n > 0 ? size_bytes / n : 0.0;
  const int planned_nodes = node_shift > 0 ? node_shift : topo.num_nodes();
  std::vector<P2pMessage> messages;
  messages.reserve(static_cast<std::size_t>(planned_nodes) * gpn * static_cast<std::size_t>(std::max(0, n - 1)));
  for (int r = 0; r < planned_nodes * gpn; ++r) {
    const std::vector<int> peers = p2p_round_peers(n, topo.gpus_per_node(), r);
    for (int round = 1; round < n; ++round) messages.push_back({r, peers[static_cast<std::size_t>(round)], message});
  }
  OrbitMode orbit;
  orbit.on = true;
  orbit.node_shift = node_shift;
  orbit.rail_rotation = rail_rotation;
  return P2pBuilder(topo, cfg, options, orbit).build("alltoall", size_bytes, messages);
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
  // Per wave, the connections' time at their per-channel rate, the cap the engine puts on them: bytes
  // of the (src, dst) connection over rate x its channels. The rate: the schedule's between GPUs of
  // one node (a P2P channel's copy, Topology::p2p_channel_Bps), NCCL's SHM transport's
  // (Topology::shm_channel_Bps), the smaller where both apply.
  struct Capped {
    double bytes = 0, rate_Bps = 0;
    int channels = 0;
  };
  std::map<std::tuple<int, int, int>, Capped> capped_connection;
  const int gpn = std::max(1, topo.gpus_per_node());
  // SHM connections of GPUs that write and read host memory at once weigh more, as in the engine.
  const std::vector<double> weight = shm_two_way_weights(topo, s);
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const Transfer& t = s.transfers[i];
    const Route route = route_between_gpus(topo, t.src, t.dst, t.rail);
    wave_delay[t.step] = std::max(wave_delay[t.step], t.delay_s + route_latency_s(topo, route));
    LinkLoad& load = wave_load.try_emplace(t.step, topo).first->second;
    for (const Hop& h : route) load.add(h, t.bytes * weight[i]);
    const bool between_gpus = t.src < s.nranks && t.dst < s.nranks;
    const double rate = between_gpus ? s.connection_channel_cap_Bps(true, t.src / gpn != t.dst / gpn, false,
                                                                     nccl_shm_channel_Bps(topo, t.src, t.dst))
                                     : 0.0;
    if (rate > 0) {  // the same for every record of the pair
      Capped& c = capped_connection[{t.step, t.src, t.dst}];
      c.bytes += t.bytes;
      c.channels = std::max(c.channels, t.channels);
      c.rate_Bps = rate;
    }
  }
  std::map<int, double> wave_capped_s;
  for (const auto& [key, c] : capped_connection) {
    double& w = wave_capped_s[std::get<0>(key)];
    w = std::max(w, c.bytes / (c.rate_Bps * std::max(1, c.channels)));
  }
  double total = 0;
  for (const auto& [wave, delay] : wave_delay) {
    const auto capped = wave_capped_s.find(wave);
    total += delay + std::max(wave_load.at(wave).busiest().time_s, capped == wave_capped_s.end() ? 0.0 : capped->second);
  }
  return total;
}

}  // namespace ccsim

namespace ccsim {

namespace {

bool link_hop(const Topology& topo, VertexId from, VertexId to, Hop* out) {
  const VertexId lo = std::min(from, to), hi = std::max(from, to);
  const auto [e, found] = boost::edge(lo, hi, topo.graph());
  if (!found) return false;
  *out = Hop{e, from == lo};
  return true;
}

// The fabric alltoall_closed_form_time_s reasons about: every node a copy of node 0, link for link;
// every NIC linked to its group's leaf of its rail by a link equal to node 0's of that rail; every
// leaf linked to the spine by a link equal to group 0's leaf of its rail; no other link between them.
// Node 0's NIC links and the spine links of a full group and of the partial one, per rail.
struct UniformFabric {
  std::size_t block = 0;
  std::vector<Hop> nic_up;                          // per rail: node 0's NIC -> its leaf
  std::vector<Hop> spine_up_full, spine_up_partial;  // per rail: a full / the partial group's leaf -> spine
  bool ok = false;
};

UniformFabric uniform_fabric(const Topology& topo) {
  UniformFabric f;
  const int nodes = topo.num_nodes(), rails = topo.nics_per_node(), npl = std::max(1, topo.nodes_per_leaf());
  f.block = topo.node_vertex_block();
  if (nodes == 1) {
    f.ok = true;
    return f;
  }
  if (f.block == 0 || rails < 1) return f;
  const Graph& g = topo.graph();
  const int groups = (nodes + npl - 1) / npl;
  VertexId spine = 0;
  const bool has_spine = topo.find_vertex(VertexKind::SpineSwitch, -1, 0, -1, &spine);
  if (groups > 1 && !has_spine) return f;
  for (int r = 0; r < rails; ++r) {
    VertexId leaf, last;
    Hop up;
    if (!topo.find_vertex(VertexKind::LeafSwitch, -1, r, 0, &leaf) || !link_hop(topo, topo.nic(0, r), leaf, &up)) return f;
    f.nic_up.push_back(up);
    if (groups > 1) {
      Hop full, partial;
      if (!topo.find_vertex(VertexKind::LeafSwitch, -1, r, groups - 1, &last) || !link_hop(topo, leaf, spine, &full) ||
          !link_hop(topo, last, spine, &partial))
        return f;
      f.spine_up_full.push_back(full);
      f.spine_up_partial.push_back(partial);
    }
  }
  const auto node_of = [&](VertexId v) { return g[v].node; };
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    const VertexId a = boost::source(*it, g), b = boost::target(*it, g);
    const Vertex &x = g[a], &y = g[b];
    const Link& l = g[*it];
    if (node_of(a) >= 0 && node_of(b) >= 0) {
      if (node_of(a) != node_of(b)) return f;
      const std::size_t base = static_cast<std::size_t>(node_of(a)) * f.block;
      if (a < base || b < base || a - base >= f.block || b - base >= f.block) return f;
      Hop h;
      if (!link_hop(topo, a - base, b - base, &h) || !same_link_properties(l, topo.link(h.edge))) return f;
      continue;
    }
    const Vertex& in_node = node_of(a) >= 0 ? x : y;
    const Vertex& outside = node_of(a) >= 0 ? y : x;
    if (node_of(a) >= 0 || node_of(b) >= 0) {
      // A NIC and the leaf of its rail in its node's group.
      if (in_node.kind != VertexKind::Nic || outside.kind != VertexKind::LeafSwitch || in_node.index < 0 ||
          in_node.index >= rails || outside.index != in_node.index || outside.group != in_node.node / npl ||
          !same_link_properties(l, topo.link(f.nic_up[static_cast<std::size_t>(in_node.index)].edge)))
        return f;
      continue;
    }
    // A leaf and the spine (unused with one group): a full group's like group 0's; the partial
    // group's (its bandwidth follows its node count) of the same latency.
    const Vertex& leaf = x.kind == VertexKind::LeafSwitch ? x : y;
    const Vertex& other = x.kind == VertexKind::LeafSwitch ? y : x;
    if (leaf.kind != VertexKind::LeafSwitch || other.kind != VertexKind::SpineSwitch || other.index != 0 ||
        leaf.index < 0 || leaf.index >= rails)
      return f;
    if (groups < 2) continue;
    const auto r = static_cast<std::size_t>(leaf.index);
    const Link& full = topo.link(f.spine_up_full[r].edge);
    const bool partial_group = nodes % npl != 0 && leaf.group == groups - 1;
    if (partial_group ? !same_link_properties(l, topo.link(f.spine_up_partial[r].edge)) || l.latency_s != full.latency_s ||
                            l.kind != full.kind || l.shared_duplex != full.shared_duplex
                      : !same_link_properties(l, full))
      return f;
  }
  f.ok = true;
  return f;
}

// Pairs (A, A + delta mod nodes) with both nodes in one leaf group of `size` consecutive nodes.
long same_group_pairs(long size, long nodes, long delta) {
  return std::max(0L, size - delta) + std::max(0L, size - nodes + delta);
}

// A message from local GPU l of node 0 to local GPU m of another node, as routing.cpp routes it
// between node 0 and a node of the other class: node 0's links it crosses as sender and, moved to
// node 0, as receiver, and its fixed-cost latencies.
struct NetPattern {
  int rail = -1, relay = 0;
  bool leg = false;
  double leg_latency = 0;
  std::vector<Hop> node_hops;  // node 0's links (the leg, the relay to its NIC, the receiving side)
  std::size_t leg_hops = 0;    // how many of node_hops are the leg's
  double leg_weight = 1;       // the leg's SHM two-way weight (algorithms/shm_two_way.h)
  double full_latency[2] = {0, 0}, record_latency[2] = {0, 0};  // per class: 0 inside a group, 1 across
};

// Splits route(node 0 GPU -> node `b` GPU, rail) into node 0's hops, the fabric and node b's hops
// (moved to node 0); false when it does not have that shape.
bool split_route(const Topology& topo, const UniformFabric& f, const Route& route, int b, int rail, bool across,
                 std::vector<Hop>* node_hops) {
  const Graph& g = topo.graph();
  std::size_t i = 0;
  const auto in_node = [&](const Hop& h, int node) {
    return g[hop_from(topo, h)].node == node && g[hop_to(topo, h)].node == node;
  };
  while (i < route.size() && in_node(route[i], 0)) node_hops->push_back(route[i++]);
  const std::size_t fabric = across ? 4 : 2;
  if (i + fabric > route.size()) return false;
  const Hop& up = route[i];
  if (up.edge != f.nic_up[static_cast<std::size_t>(rail)].edge || up.forward != f.nic_up[static_cast<std::size_t>(rail)].forward)
    return false;
  const VertexId leaf_d = hop_from(topo, route[i + fabric - 1]);
  if (g[leaf_d].kind != VertexKind::LeafSwitch || hop_to(topo, route[i + fabric - 1]) != topo.nic(b, rail)) return false;
  if (across && g[hop_to(topo, route[i + 1])].kind != VertexKind::SpineSwitch) return false;
  i += fabric;
  const std::size_t base = static_cast<std::size_t>(b) * f.block;
  for (; i < route.size(); ++i) {
    if (!in_node(route[i], b)) return false;
    Hop h;
    if (!link_hop(topo, hop_from(topo, route[i]) - base, hop_to(topo, route[i]) - base, &h)) return false;
    node_hops->push_back(h);
  }
  return true;
}

bool same_hops(const std::vector<Hop>& a, const std::vector<Hop>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].edge != b[i].edge || a[i].forward != b[i].forward) return false;
  return true;
}

}  // namespace

std::optional<double> alltoall_closed_form_by_counts(const Topology& topo, const P2pConfig& cfg, double size_bytes) {
  const int nodes = topo.num_nodes(), gpn = std::max(1, topo.gpus_per_node()), n = topo.num_gpus();
  if (n < 2) return 0.0;
  const UniformFabric fabric = uniform_fabric(topo);
  if (!fabric.ok) return std::nullopt;
  const double message = size_bytes / n;
  const P2pOp op = nccl_p2p_op(cfg, message, nodes > 1);  // protocol and rounds in flight as for every message
  const RingProtocol proto = ring_protocol(op.proto);
  const double wire = message * proto.wire_factor;
  const int in_flight = std::max(1, op.max_concurrent_peers);
  const long npl = std::max(1, topo.nodes_per_leaf());
  const long full_groups = nodes / npl, partial = nodes % npl;
  const bool several_groups = nodes > npl;
  const int rails = std::max(1, topo.nics_per_node());

  // An alltoall's GPUs all send and receive, so every SHM pair's records carry the two-way weight
  // (algorithms/shm_two_way.h), unless a measured per-channel SHM rate stands for it.
  const bool two_way = topo.shm_channel_Bps == 0 && topo.shm_two_way_efficiency < 1;
  const auto pair_weight = [&](int a, int b) {
    return two_way && nccl_shm_pair(topo, a, b) ? 1.0 / topo.shm_two_way_efficiency : 1.0;
  };
  // Inside a node: route, NCCL's step latency, route latency and weight per pair of local indices.
  struct Local {
    Route route;
    double step = 0, latency = 0, weight = 1;
  };
  std::vector<Local> local(static_cast<std::size_t>(gpn * gpn));
  for (int l = 0; l < gpn; ++l)
    for (int m = 0; m < gpn; ++m) {
      if (l == m) continue;
      Local& x = local[static_cast<std::size_t>(l * gpn + m)];
      x.route = route_between_gpus(topo, l, m);
      x.step = step_latency_s(topo, proto.timing, l, m, -1);
      x.latency = route_latency_s(topo, x.route);
      x.weight = pair_weight(l, m);
    }
  // Across nodes, per pair of local indices and class (inside a group: node 0 -> 1; across: 0 -> npl).
  std::vector<NetPattern> net(nodes > 1 ? static_cast<std::size_t>(gpn * gpn) : 0);
  const bool has_class[2] = {npl >= 2 && nodes >= 2, several_groups};
  const int rep_node[2] = {1, static_cast<int>(npl)};
  for (int l = 0; l < gpn && nodes > 1; ++l)
    for (int m = 0; m < gpn; ++m) {
      NetPattern& p = net[static_cast<std::size_t>(l * gpn + m)];
      bool first = true;
      for (int c = 0; c < 2; ++c) {
        if (!has_class[c]) continue;
        const int b = rep_node[c];
        const P2pPath path = p2p_message_path(topo, cfg, l, b * gpn + m);
        if (path.rail < 0 || path.rail >= rails || path.nic_gpu < 0 || path.nic_gpu >= gpn) return std::nullopt;
        const Route record = route_between_gpus(topo, path.nic_gpu, b * gpn + m, path.rail);
        std::vector<Hop> hops;
        double leg_latency = 0;
        if (path.nic_gpu != l) {
          const Route& leg = local[static_cast<std::size_t>(l * gpn + path.nic_gpu)].route;
          hops.assign(leg.begin(), leg.end());
          p.leg_hops = leg.size();
          p.leg_weight = local[static_cast<std::size_t>(l * gpn + path.nic_gpu)].weight;
          leg_latency = route_latency_s(topo, route_between_gpus(topo, l, path.nic_gpu));
        }
        if (!split_route(topo, fabric, record, b, path.rail, c == 1, &hops)) return std::nullopt;
        if (first) {
          p.rail = path.rail;
          p.relay = path.nic_gpu;
          p.leg = path.nic_gpu != l;
          p.leg_latency = leg_latency;
          p.node_hops = std::move(hops);
          first = false;
        } else if (p.rail != path.rail || p.relay != path.nic_gpu || !same_hops(p.node_hops, hops)) {
          return std::nullopt;
        }
        // fixed_s's route latency: through the relay, its leg plus the relay's route.
        p.record_latency[c] = route_latency_s(topo, record);
        p.full_latency[c] = p.leg ? p.leg_latency + p.record_latency[c]
                                  : route_latency_s(topo, route_between_gpus(topo, l, b * gpn + m, path.rail));
      }
    }

  // Per wave: the schedule's records are one per message inside a node, one per (sending GPU,
  // destination) across nodes, one leg per (sender, relay); each node sends and receives the same
  // pattern, so node 0's links carry every node's load.
  double total = 0;
  const int waves = (n - 1) / in_flight + 1;
  std::vector<long> intra_count(static_cast<std::size_t>(gpn * gpn)), net_count(intra_count.size());
  std::vector<long> posted(static_cast<std::size_t>(gpn));
  std::vector<double> spine_full(static_cast<std::size_t>(rails)), spine_partial(static_cast<std::size_t>(rails));
  // First message of each record and leg of the wave: (l, m, nodes delta).
  struct First {
    int l, m;
    long delta;
    bool leg;
  };
  std::vector<First> firsts;
  std::vector<char> record_seen, leg_seen;
  for (int w = 0; w < waves; ++w) {
    const long lo = std::max(1L, static_cast<long>(w) * in_flight), hi = std::min<long>(n, static_cast<long>(w + 1) * in_flight);
    if (lo >= hi) continue;
    std::fill(intra_count.begin(), intra_count.end(), 0);
    std::fill(net_count.begin(), net_count.end(), 0);
    std::fill(posted.begin(), posted.end(), 0);
    std::fill(spine_full.begin(), spine_full.end(), 0.0);
    std::fill(spine_partial.begin(), spine_partial.end(), 0.0);
    firsts.clear();
    long received = 0;  // network messages each GPU receives this wave: one per round across nodes
    long delta_seen = -1;
    for (long round = lo; round < hi; ++round) {
      const long delta = round / gpn;
      const int ld = static_cast<int>(round % gpn);
      if (delta == 0) {
        for (int l = 0; l < gpn; ++l) ++intra_count[static_cast<std::size_t>(l * gpn + (l + ld) % gpn)];
        continue;
      }
      if (delta != delta_seen) {  // records are per destination node: a new delta, new records
        delta_seen = delta;
        record_seen.assign(static_cast<std::size_t>(gpn * gpn), 0);
      }
      if (leg_seen.empty()) leg_seen.assign(static_cast<std::size_t>(gpn * gpn), 0);
      ++received;
      const long cross_full = npl - same_group_pairs(npl, nodes, delta);
      const long cross_partial = partial > 0 ? partial - same_group_pairs(partial, nodes, delta) : 0;
      for (int l = 0; l < gpn; ++l) {
        const int m = (l + ld) % gpn;
        const NetPattern& p = net[static_cast<std::size_t>(l * gpn + m)];
        ++net_count[static_cast<std::size_t>(l * gpn + m)];
        ++posted[static_cast<std::size_t>(p.relay)];
        if (several_groups) {
          spine_full[static_cast<std::size_t>(p.rail)] += static_cast<double>(cross_full);
          spine_partial[static_cast<std::size_t>(p.rail)] += static_cast<double>(cross_partial);
        }
        char& seen = record_seen[static_cast<std::size_t>(p.relay * gpn + m)];
        if (!seen) {
          seen = 1;
          firsts.push_back({l, m, delta, false});
        }
        if (p.leg) {
          char& leg = leg_seen[static_cast<std::size_t>(l * gpn + p.relay)];
          if (!leg) {
            leg = 1;
            firsts.push_back({l, m, delta, true});
          }
        }
      }
    }
    std::fill(leg_seen.begin(), leg_seen.end(), 0);
    // The largest fixed cost of the wave's records (p2p_closed_form_time_s: delay + route latency).
    double delay = 0;
    const double launch = w == 0 ? proto.timing.launch_s : 0.0;
    for (int l = 0; l < gpn; ++l)
      for (int m = 0; m < gpn; ++m)
        if (intra_count[static_cast<std::size_t>(l * gpn + m)] > 0) {
          const Local& x = local[static_cast<std::size_t>(l * gpn + m)];
          const double fixed = std::max(x.step, x.latency) + launch;
          delay = std::max(delay, std::max(0.0, fixed - x.latency) + x.latency);
        }
    for (const First& f : firsts) {
      const NetPattern& p = net[static_cast<std::size_t>(f.l * gpn + f.m)];
      const long same = full_groups * same_group_pairs(npl, nodes, f.delta) +
                        (partial > 0 ? same_group_pairs(partial, nodes, f.delta) : 0);
      const bool present[2] = {same > 0, same < nodes};
      for (int c = 0; c < 2; ++c) {
        if (!present[c]) continue;
        double fixed = std::max(proto.timing.net_step_s, p.full_latency[c]) + launch;
        fixed += cfg.proxy_cost_s * static_cast<double>(posted[static_cast<std::size_t>(p.relay)] + received);
        const double own = f.leg ? p.leg_latency : p.record_latency[c];
        delay = std::max(delay, std::max(0.0, fixed - own) + own);
      }
    }
    // The busiest link direction: node 0's links (every node's), a full group's and the partial
    // group's spine links.
    LinkLoad load(topo);
    for (int l = 0; l < gpn; ++l)
      for (int m = 0; m < gpn; ++m) {
        const std::size_t k = static_cast<std::size_t>(l * gpn + m);
        if (intra_count[k] > 0)
          for (const Hop& h : local[k].route)
            load.add(h, static_cast<double>(intra_count[k]) * wire * local[k].weight);
        if (net_count[k] > 0) {
          const NetPattern& p = net[k];
          const double bytes = static_cast<double>(net_count[k]) * wire;
          for (std::size_t i = 0; i < p.node_hops.size(); ++i)
            load.add(p.node_hops[i], i < p.leg_hops ? bytes * p.leg_weight : bytes);
          const Hop& up = fabric.nic_up[static_cast<std::size_t>(p.rail)];
          load.add(up, bytes);
          load.add(Hop{up.edge, !up.forward}, bytes);
        }
      }
    double busiest = load.busiest().time_s;
    // A P2P channel's copy rate caps each connection inside a node (Topology::p2p_channel_Bps, as
    // p2p_closed_form_time_s): per pair of GPUs, its messages and a sender's legs to it as relay.
    if (topo.p2p_channel_Bps > 0) {
      const double rate = topo.p2p_channel_Bps * std::max(1, op.channels);
      std::vector<double> pair_bytes(static_cast<std::size_t>(gpn * gpn), 0.0);
      for (int l = 0; l < gpn; ++l)
        for (int m = 0; m < gpn; ++m) {
          const std::size_t k = static_cast<std::size_t>(l * gpn + m);
          pair_bytes[k] += static_cast<double>(intra_count[k]) * wire;
          if (net_count[k] > 0 && net[k].leg)
            pair_bytes[static_cast<std::size_t>(l * gpn + net[k].relay)] += static_cast<double>(net_count[k]) * wire;
        }
      for (double b : pair_bytes) busiest = std::max(busiest, b / rate);
    }
    if (several_groups) {
      LinkLoad spine(topo);
      for (int r = 0; r < rails; ++r) {
        const Hop& full = fabric.spine_up_full[static_cast<std::size_t>(r)];
        const Hop& part = fabric.spine_up_partial[static_cast<std::size_t>(r)];
        if (spine_full[static_cast<std::size_t>(r)] > 0 && full_groups > 0) {
          spine.add(full, spine_full[static_cast<std::size_t>(r)] * wire);
          spine.add(Hop{full.edge, !full.forward}, spine_full[static_cast<std::size_t>(r)] * wire);
        }
        if (spine_partial[static_cast<std::size_t>(r)] > 0) {
          spine.add(part, spine_partial[static_cast<std::size_t>(r)] * wire);
          spine.add(Hop{part.edge, !part.forward}, spine_partial[static_cast<std::size_t>(r)] * wire);
        }
      }
      busiest = std::max(busiest, spine.busiest().time_s);
    }
    total += delay + busiest;
  }
  return total;
}

double alltoall_closed_form_time_s(const Topology& topo, const P2pConfig& cfg, double size_bytes) {
  // The counts do not see per-connection caps: with an SHM channel rate, the schedule's closed form.
  if (topo.shm_channel_Bps == 0)
    if (const std::optional<double> t = alltoall_closed_form_by_counts(topo, cfg, size_bytes)) return *t;
  if (topo.num_gpus() > kMaxAlltoallClosedFormScheduleGpus)
    throw InputError("--nodes", std::to_string(topo.num_gpus()) +
                                    " GPUs: alltoall's closed form needs every node a copy of node 0 and equal NIC"
                                    " and spine links per rail (docs/collectives.md); on other fabrics it builds the"
                                    " schedule, at most " +
                                    std::to_string(kMaxAlltoallClosedFormScheduleGpus) + " GPUs");
  return p2p_closed_form_time_s(topo, alltoall_schedule(topo, cfg, size_bytes));
}

}  // namespace ccsim
