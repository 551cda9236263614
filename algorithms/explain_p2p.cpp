#include "algorithms/explain_p2p.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "algorithms/collectives.h"
#include "algorithms/p2p.h"
#include "common/text.h"
#include "common/units.h"
#include "topologies/routing.h"
#include "topologies/transports.h"

namespace ccsim {

namespace {

bool crosses_nvlink(const Topology& topo, const Route& r) {
  return std::any_of(r.begin(), r.end(), [&](const Hop& h) { return topo.link(h.edge).kind == LinkKind::NvLink; });
}

// NCCL's transport from rank 0 to `dst`, as its Channel lines name it ("via P2P/IPC", "via SHM",
// "via NET/IB/0/GDRDMA"), in ccsim's words.
std::string transport_of(const Topology& topo, const P2pConfig& cfg, int dst) {
  const int gpn = topo.gpus_per_node();
  if (dst / gpn == 0) {
    if (nccl_shm_pair(topo, 0, dst)) return "SHM (a FIFO in pinned host memory)";
    if (crosses_nvlink(topo, route_between_gpus(topo, 0, dst))) return "P2P over NVLink";
    return topo.pcie_p2p == "host" ? "P2P over PCIe, through the root complex" : "P2P over PCIe";
  }
  const P2pPath path = p2p_message_path(topo, cfg, 0, dst);
  std::string t = std::string("NET (") + transport_info(topo.network.transport).label +
                  (topo.network.gpudirect_rdma ? ", GPU memory to NIC directly" : ", staged through host memory");
  if (path.nic_gpu >= 0 && path.nic_gpu != 0) t += ", PXN: the rail's GPU posts it";
  return t + ")";
}

std::string decision_line(const char* to_whom, const P2pConfig& cfg, double message_bytes, bool network) {
  const P2pOp op = nccl_p2p_op(cfg, message_bytes, network);
  std::ostringstream o;
  o << "  " << to_whom << ": " << format_bytes(message_bytes) << " per message, " << op.channels << " channel(s), "
    << to_string(op.proto) << " (LL up to " << op.channels << " x " << format_bytes(cfg.ll_threshold_bytes)
    << ", NCCL_P2P_LL_THRESHOLD), "
    << format_bytes(op.chunk_data_bytes) << " of data per chunk, " << op.chunks << " chunk(s), at most "
    << op.max_concurrent_peers << " peers in flight (" << cfg.p2p_channels << " / " << op.channels << " channels x "
    << kP2pOpsPerBatch << " rounds per batch";
  if (!cfg.multi_node && op.max_concurrent_peers == cfg.p2p_channels)
    o << "; in one node each round has its own base channel, so at most " << cfg.p2p_channels
      << " rounds, one batch per CTA at a time";
  o << ")\n";
  return o.str();
}

}  // namespace

std::string explain_p2p_report(const Topology& topo, const NcclTopoSummary& s, const std::string& collective,
                               std::uint64_t bytes) {
  if (collective != "sendrecv" && collective != "alltoall")
    throw std::invalid_argument("explain_p2p_report: not a point-to-point collective: " + collective);
  const bool alltoall = collective == "alltoall";
  const P2pConfig cfg = nccl_p2p_config(topo, s);
  const int n = topo.num_gpus(), gpn = topo.gpus_per_node();
  std::ostringstream o;
  o << "NCCL point-to-point model (" << collective
    << " is grouped ncclSend/ncclRecv: no tuner, no algorithm): NCCL 2.30 decisions (src/graph/paths.cc "
       "ncclTopoComputeP2pChannels, src/enqueue.cc addP2pToPlan), as ccsim restates them\n";
  o << "Topology: " << s.name << ", " << s.nnodes << " node(s) x " << s.ppn << " GPU(s) = " << n << " ranks\n";
  o << "Channels: p2pnChannels " << cfg.p2p_channels << " (pow2Up of the " << s.coll_channels
    << " coll channels), " << cfg.channels_per_peer << " per peer; chunk " << format_bytes(cfg.chunk_bytes) << " ("
    << cfg.chunk_param << "); PXN " << (cfg.pxn ? "on" : "off");
  if (cfg.multi_node && topo.nccl_channels.channels_per_net_peer > 0)
    o << "; NCCL_NCHANNELS_PER_NET_PEER " << topo.nccl_channels.channels_per_net_peer;
  if (cfg.multi_node) o << "; proxy " << strprintf("%g", cfg.proxy_cost_s * 1e6) << " us per network message (getNetOverhead)";
  o << "\n";

  // Rank 0's peers by transport (sendrecv: it sends to rank 1 and receives from rank n-1, the same kind
  // of connection on a symmetric node; alltoall: every other rank).
  std::vector<int> peers;
  if (n > 1) {
    if (alltoall)
      for (int r = 1; r < n; ++r) peers.push_back(r);
    else
      peers.push_back(1 % n);
  }
  std::map<std::string, std::vector<int>> by_kind;
  std::vector<std::string> order;
  for (int dst : peers) {
    const std::string k = transport_of(topo, cfg, dst);
    if (!by_kind.count(k)) order.push_back(k);
    by_kind[k].push_back(dst);
  }
  o << "Peers of rank 0 (" << (alltoall ? "it sends to every other rank" : "it sends to rank 1") << "):\n";
  if (peers.empty()) o << "  none: one rank\n";
  for (const std::string& k : order) {
    const int first = by_kind[k].front();
    const P2pPath path = p2p_message_path(topo, cfg, 0, first);
    o << "  " << k << ": " << by_kind[k].size() << " peer(s), e.g. rank " << first << " ("
      << to_string(path_class(topo, topo.gpu(0), topo.gpu(first))) << "): "
      << format_route(topo, route_between_gpus(topo, 0, first, path.rail)) << "\n";
  }

  // Per-message decisions at this size: each message from its own byte count.
  const double message = alltoall ? static_cast<double>(bytes) / std::max(1, n) : static_cast<double>(bytes);
  o << "At " << format_bytes(static_cast<double>(bytes)) << " (nccl-tests size" << (alltoall ? ", count x ranks" : "")
    << "):\n";
  const bool local_peers = std::any_of(peers.begin(), peers.end(), [&](int p) { return p / gpn == 0; });
  const bool remote_peers = std::any_of(peers.begin(), peers.end(), [&](int p) { return p / gpn != 0; });
  if (local_peers) o << decision_line("to a peer in the node", cfg, message, false);
  if (remote_peers) o << decision_line("to a peer across nodes", cfg, message, true);
  if (alltoall && !peers.empty()) {
    const P2pOp op = nccl_p2p_op(cfg, message, cfg.multi_node);
    const int waves = (static_cast<int>(peers.size()) + op.max_concurrent_peers - 1) / op.max_concurrent_peers;
    o << "  " << peers.size() << " peers in NCCL's round order (node-major), " << waves << " wave(s) of at most "
      << op.max_concurrent_peers << "\n";
  }

  // ccsim's closed form of the schedule (NCCL has no cost model for P2P).
  const double t = n < 2 ? 0.0
                   : alltoall ? alltoall_closed_form_time_s(topo, cfg, static_cast<double>(bytes))
                              : p2p_closed_form_time_s(topo, sendrecv_schedule(topo, cfg, static_cast<double>(bytes)));
  const double algbw = t > 0 ? static_cast<double>(bytes) / t / 1e9 : 0.0;
  o << "Prediction (ccsim's closed form of this schedule: per wave the largest fixed cost, launch + hop latency"
       " of Ring/<protocol> + proxy, plus the busiest link's bytes; `ccsim predict` replays it in the engine):\n  "
    << strprintf("%.2f", t * 1e6) << " us, algbw " << strprintf("%.2f", algbw) << " GB/s, busbw "
    << strprintf("%.2f", algbw * collective_busbw_factor(collective_info(collective), n)) << " GB/s\n\n";
  return o.str();
}

}  // namespace ccsim
