#include "algorithms/p2p.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "topologies/routing.h"

namespace ccsim {
namespace {

int pow2_up(int x) {
  int p = 1;
  while (p < x) p <<= 1;
  return p;
}

bool has_nvlink(const Topology& topo) { return topo.has_nvswitch || topo.nvlinks_per_gpu > 0; }

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

namespace {

struct Message {
  int src, dst, round;
};

// Builds the records of a set of equally sized messages: protocol and channels per NCCL, waves of
// max_concurrent_peers rounds, delays = launch (first wave) + hop latency + proxy sweep.
Schedule p2p_schedule(const Topology& topo, const P2pConfig& cfg, const std::string& collective, double size_bytes,
                      double message_bytes, const std::vector<Message>& messages, const P2pScheduleOptions& options) {
  Schedule s;
  s.collective = collective;
  s.algorithm = "p2p";
  s.nranks = topo.num_gpus();
  s.size_bytes = size_bytes;
  s.families_follow_rails = false;
  const int gpn = topo.gpus_per_node();
  const bool multi = topo.num_nodes() > 1;
  const P2pOp net_op = nccl_p2p_op(cfg, message_bytes, true);
  const P2pOp local_op = nccl_p2p_op(cfg, message_bytes, false);

  struct Placed {
    int src, dst, rail, proxy, wave;
    bool net;
    const P2pOp* op;
  };
  std::vector<Placed> placed;
  for (const Message& m : messages) {
    Placed p{m.src, m.dst, -1, -1, 0, false, &local_op};
    p.net = multi && (m.src / gpn != m.dst / gpn);
    if (p.net) {
      p.op = &net_op;
      const int dst_rail = nic_for_gpu(topo, m.dst % gpn);
      if (cfg.pxn && dst_rail >= 0) {
        p.rail = dst_rail;
        const int relay = first_gpu_on_rail(topo, dst_rail);  // the PXN relay
        p.proxy = (m.src / gpn) * gpn + (relay >= 0 ? relay : m.src % gpn);
      } else {
        p.rail = nic_for_gpu(topo, m.src % gpn);
        p.proxy = m.src;
      }
    }
    p.wave = m.round / std::max(1, p.op->max_concurrent_peers);
    placed.push_back(p);
  }
  // Proxy load: network connections (sends it posts, receives it completes) per proxy and wave.
  std::map<std::pair<int, int>, int> load;
  for (const Placed& p : placed)
    if (p.net) {
      ++load[{p.proxy, p.wave}];
      ++load[{p.dst, p.wave}];
    }

  // Records in wave order; a record depends on the same rank's record max_concurrent rounds earlier.
  std::vector<std::size_t> order(placed.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return messages[a].round < messages[b].round;
  });
  std::map<std::pair<int, int>, std::uint32_t> record_of;  // (src, round) -> record
  for (std::size_t i : order) {
    const Placed& p = placed[i];
    const Message& m = messages[i];
    const RingProtocol proto = ring_protocol(p.op->proto);
    Transfer t;
    t.src = p.src;
    t.dst = p.dst;
    t.rail = p.rail;
    t.bytes = message_bytes * proto.wire_factor;
    t.delay_s = step_software_delay_s(topo, proto.timing, p.src, p.dst, p.rail);
    if (p.wave == 0) t.delay_s += proto.timing.launch_s;
    if (p.net && options.model_proxy) t.delay_s += cfg.proxy_cost_s * load[{p.proxy, p.wave}];
    t.step = p.wave;
    t.family = 0;
    t.channels = p.op->channels;
    t.chunks = std::max(1, p.op->chunks / std::max(1, p.op->channels));
    std::vector<std::uint32_t> deps;
    const int slot_round = m.round - p.op->max_concurrent_peers;
    if (slot_round >= 0) {
      auto it = record_of.find({m.src, slot_round});
      if (it != record_of.end()) deps.push_back(it->second);
    }
    record_of[{m.src, m.round}] = s.add(t, deps);
  }
  return s;
}

}  // namespace

Schedule sendrecv_schedule(const Topology& topo, const P2pConfig& cfg, double size_bytes,
                           const P2pScheduleOptions& options) {
  const int n = topo.num_gpus();
  std::vector<Message> messages;
  if (n >= 2)
    for (int r = 0; r < n; ++r) messages.push_back({r, (r + 1) % n, 0});
  return p2p_schedule(topo, cfg, "sendrecv", size_bytes, size_bytes, messages, options);
}

Schedule alltoall_schedule(const Topology& topo, const P2pConfig& cfg, double size_bytes,
                           const P2pScheduleOptions& options) {
  const int n = topo.num_gpus();
  std::vector<Message> messages;
  for (int r = 0; r < n; ++r) {
    const std::vector<int> peers = p2p_round_peers(n, topo.gpus_per_node(), r);
    for (int round = 1; round < n; ++round) messages.push_back({r, peers[static_cast<std::size_t>(round)], round});
  }
  return p2p_schedule(topo, cfg, "alltoall", size_bytes, n > 0 ? size_bytes / n : 0.0, messages, options);
}

double p2p_closed_form_time_s(const Topology& topo, const Schedule& s) {
  // Per wave: largest delay, and bytes per link direction (a shared-duplex link counts both ways).
  std::map<int, double> wave_delay;
  std::map<int, LinkLoad> wave_load;
  for (const Transfer& t : s.transfers) {
    wave_delay[t.step] = std::max(wave_delay[t.step], t.delay_s + route_latency_s(topo, route_between_gpus(topo, t.src, t.dst, t.rail)));
    LinkLoad& load = wave_load.try_emplace(t.step, topo).first->second;
    for (const Hop& h : route_between_gpus(topo, t.src, t.dst, t.rail)) load.add(h, t.bytes);
  }
  double total = 0;
  for (const auto& [wave, delay] : wave_delay) total += delay + wave_load.at(wave).busiest().time_s;
  return total;
}

}  // namespace ccsim
