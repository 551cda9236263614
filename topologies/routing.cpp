#include "topologies/routing.h"

#include <algorithm>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/property_map/function_property_map.hpp>
#include <limits>
#include <map>
#include <stdexcept>

#include "topologies/nvlink_domain.h"
#include "topologies/nvlink_mesh.h"

namespace ccsim {

VertexId hop_from(const Topology& topo, const Hop& h) {
  const Graph& g = topo.graph();
  return h.forward ? boost::source(h.edge, g) : boost::target(h.edge, g);
}
VertexId hop_to(const Topology& topo, const Hop& h) {
  const Graph& g = topo.graph();
  return h.forward ? boost::target(h.edge, g) : boost::source(h.edge, g);
}

namespace {

// Canonical hop: the stored descriptor always has source < target, `forward` says the direction.
Hop make_hop(const Topology& topo, VertexId from, VertexId to) {
  const VertexId lo = std::min(from, to), hi = std::max(from, to);
  return Hop{topo.edge_between(lo, hi), from == lo};
}


void append(Route& r, const Route& more) { r.insert(r.end(), more.begin(), more.end()); }

struct FoundTarget {};

class StopAtTarget : public boost::default_dijkstra_visitor {
 public:
  explicit StopAtTarget(VertexId target) : target_(target) {}
  void examine_vertex(VertexId u, const Graph&) const {
    if (u == target_) throw FoundTarget{};
  }

 private:
  VertexId target_;
};

// Preference weights: NVLink < PCIe bridge < inter-socket < network; latency breaks ties.
double kind_weight(LinkKind k) {
  switch (k) {
    case LinkKind::NvLink: return 1.0;
    case LinkKind::Pcie: return 100.0;
    case LinkKind::InterSocket: return 1e4;
    case LinkKind::Memory: return 1e5;
    case LinkKind::Network: return 1e6;
    case LinkKind::Reduction: return 1.0;  // a dead end: only routes that end at a reducer use it
  }
  return 1e6;
}

bool has_nvlink(const Topology& topo, VertexId v) {
  const Graph& g = topo.graph();
  for (auto [it, end] = boost::out_edges(v, g); it != end; ++it)
    if (g[*it].kind == LinkKind::NvLink) return true;
  return false;
}

// CPU (root complex) of the socket a vertex of a node hangs off, and the route up to it.
Route route_to_own_cpu(const Topology& topo, VertexId v, VertexId* cpu_out) {
  const int node = topo.vertex(v).node;
  for (int s = 0;; ++s) {
    VertexId cpu;
    if (!topo.find_vertex(VertexKind::Cpu, node, s, -1, &cpu)) break;
    if (cpu == v) {
      *cpu_out = cpu;
      return {};
    }
    Route r;
    try {
      r = route_between(topo, v, cpu);
    } catch (const std::runtime_error&) {
      continue;
    }
    bool crosses = false;
    for (const Hop& h : r)
      if (topo.link(h.edge).kind == LinkKind::InterSocket) crosses = true;
    if (!crosses) {
      *cpu_out = cpu;
      return r;
    }
  }
  throw std::runtime_error("topology: " + topo.vertex(v).name + " is not attached to any CPU");
}

// CPU -> host memory -> CPU (the memory link used once per direction).
Route memory_round_trip(const Topology& topo, VertexId cpu) {
  VertexId mem;
  const Vertex& c = topo.vertex(cpu);
  if (!topo.find_vertex(VertexKind::HostMemory, c.node, c.index, -1, &mem))
    throw std::runtime_error("topology: no host memory attached to " + c.name);
  return {make_hop(topo, cpu, mem), make_hop(topo, mem, cpu)};
}

// GPU -> NIC inside one node: straight through PCIe with GPUDirect RDMA, otherwise staged through
// host memory of the NIC's socket.
Route gpu_to_nic(const Topology& topo, VertexId gpu, VertexId nic) {
  if (topo.network.gpudirect_rdma) return route_between(topo, gpu, nic);
  VertexId cpu;
  const Route nic_up = route_to_own_cpu(topo, nic, &cpu);
  Route r = route_between(topo, gpu, cpu);
  append(r, memory_round_trip(topo, cpu));
  append(r, reverse_route(nic_up));
  return r;
}

// The node's P2P mode between two of its GPUs as NCCL's transports see it: NVLink P2P ("switch"),
// PCIe P2P ("switch" or "host"), or no P2P at all ("none": the SHM transport). A PCIe pair farther
// than NCCL's P2P level (node.pcie.nccl_p2p_level: PXB by default on Intel and ARM hosts) uses SHM.
std::string intra_node_mode(const Topology& topo, VertexId a, VertexId b) {
  // GPUs joined pair by pair: NVLink P2P between joined GPUs and through a GPU joined to both; the
  // other pairs (bridged pairs of different bridges) follow the PCIe rules below.
  if (topo.nccl_p2p && has_nvlink(topo, a) && has_nvlink(topo, b)) {
    const int la = topo.vertex(a).index, lb = topo.vertex(b).index;
    if (!nvlink_mesh(topo) || nvlink_links(topo, la, lb) > 0 || nvlink_relay_gpu(topo, la, lb) >= 0) return "switch";
  }
  if (!topo.nccl_p2p || topo.pcie_p2p == "none") return "none";
  return path_class(topo, a, b) > topo.pcie_p2p_level ? "none" : topo.pcie_p2p;
}

// Without P2P (node.pcie.p2p none, or node.nvlink.nccl_p2p false = NCCL_P2P_DISABLE) NCCL uses its
// SHM transport: the sender's kernel stores into a FIFO in pinned host memory and the receiver's
// kernel loads from it (NCCL_SHM_USE_CUDA_MEMCPY=0, the default). The FIFO lives on the receiver's
// side (NCCL_SHM_LOCALITY default 2, src/transport/shm.cc), so the sender's writes cross the
// inter-socket link when the two GPUs hang off different sockets and the receiver reads locally.
// Host memory carries the data twice (one write, one read) on one shared budget.
Route intra_node(const Topology& topo, VertexId a, VertexId b) {
  const std::string mode = intra_node_mode(topo, a, b);
  if (mode == "switch" && nvlink_mesh(topo)) {
    // GPUs joined pair by pair: a joined pair over its own link; an unjoined one over NVLink through a
    // GPU joined to both (NCCL's PATH_NVB, "P2P/indirect" through the intermediate GPU, src/graph/paths.cc;
    // NCCL_NVB_DISABLE=0 by default), the one with the most links to both.
    const int via = nvlink_relay_gpu(topo, topo.vertex(a).index, topo.vertex(b).index);
    if (via < 0) return route_between(topo, a, b);
    const VertexId vc = topo.gpu(topo.vertex(a).node * topo.gpus_per_node() + via);
    Route r = route_between(topo, a, vc);
    append(r, route_between(topo, vc, b));
    return r;
  }
  if (mode == "switch") return route_between(topo, a, b);
  VertexId cpu_a, cpu_b;
  Route r = route_to_own_cpu(topo, a, &cpu_a);
  const Route down = reverse_route(route_to_own_cpu(topo, b, &cpu_b));
  if (cpu_a != cpu_b) append(r, route_between(topo, cpu_a, cpu_b));
  if (mode == "none") append(r, memory_round_trip(topo, cpu_b));
  append(r, down);
  return r;
}

}  // namespace

bool nccl_shm_pair(const Topology& topo, int src_rank, int dst_rank) {
  const int gpn = topo.gpus_per_node();
  if (src_rank == dst_rank || src_rank / gpn != dst_rank / gpn) return false;
  return intra_node_mode(topo, topo.gpu(src_rank), topo.gpu(dst_rank)) == "none";
}

bool nccl_any_shm_pair(const Topology& topo) {
  for (int a = 0; a < topo.gpus_per_node(); ++a)
    for (int b = a + 1; b < topo.gpus_per_node(); ++b)
      if (nccl_shm_pair(topo, a, b)) return true;
  return false;
}

double nccl_shm_channel_Bps(const Topology& topo, int src_rank, int dst_rank) {
  const int gpus = topo.num_gpus();
  if (topo.shm_channel_Bps <= 0 || src_rank >= gpus || dst_rank >= gpus) return 0.0;
  return nccl_shm_pair(topo, src_rank, dst_rank) ? topo.shm_channel_Bps : 0.0;
}

Route reverse_route(const Route& route) {
  Route r;
  r.reserve(route.size());
  for (auto it = route.rbegin(); it != route.rend(); ++it) r.push_back(Hop{it->edge, !it->forward});
  return r;
}

namespace {
// Dijkstra from a to b over the whole graph (inside a's node when a and b share one).
Route node_route(const Topology& topo, VertexId a, VertexId b);
}  // namespace

Route route_between(const Topology& topo, VertexId a, VertexId b) {
  if (a == b) return {};
  const Graph& g = topo.graph();
  const int node_a = g[a].node, node_b = g[b].node;
  const bool same_node = node_a >= 0 && node_a == node_b;
  const std::size_t block = topo.node_vertex_block();
  if (same_node && block > 0) {
    // Inside a node the search never leaves it: node 0's route (computed once, over the same local
    // structure, so with the same ties) moved to node n. Dijkstra over the whole graph per call was
    // quadratic in the node count.
    const std::size_t base = static_cast<std::size_t>(node_a) * block;
    const VertexId a0 = a - base, b0 = b - base;
    const std::uint64_t key = (static_cast<std::uint64_t>(a0) << 32) | static_cast<std::uint64_t>(b0);
    auto it = topo.node0_route_cache.find(key);
    if (it == topo.node0_route_cache.end()) it = topo.node0_route_cache.emplace(key, node_route(topo, a0, b0)).first;
    if (base == 0) return it->second;
    Route r;
    r.reserve(it->second.size());
    for (const Hop& h : it->second) r.push_back(make_hop(topo, hop_from(topo, h) + base, hop_to(topo, h) + base));
    return r;
  }
  return node_route(topo, a, b);
}

namespace {

Route node_route(const Topology& topo, VertexId a, VertexId b) {
  const Graph& g = topo.graph();
  const int node_a = g[a].node, node_b = g[b].node;
  const bool same_node = node_a >= 0 && node_a == node_b;
  auto blocked = [&](VertexId v) {
    if (v == a || v == b) return false;
    const Vertex& x = g[v];
    if (x.kind == VertexKind::Gpu || x.kind == VertexKind::HostMemory) return true;
    if (same_node) return x.node != node_a || x.kind == VertexKind::Nic;
    return false;
  };
  const double inf = std::numeric_limits<double>::max();
  auto weight = boost::make_function_property_map<EdgeId, double>([&](EdgeId e) {
    if (blocked(boost::source(e, g)) || blocked(boost::target(e, g))) return inf;
    const Link& l = g[e];
    return kind_weight(l.kind) + l.latency_s;
  });
  const std::size_t n = boost::num_vertices(g);
  std::vector<VertexId> pred(n);
  std::vector<double> dist(n, inf);
  for (std::size_t i = 0; i < n; ++i) pred[i] = i;
  try {
    boost::dijkstra_shortest_paths(
        g, a,
        boost::predecessor_map(boost::make_iterator_property_map(pred.begin(), boost::get(boost::vertex_index, g)))
            .distance_map(boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g)))
            .weight_map(weight)
            .visitor(StopAtTarget(b)));
  } catch (const FoundTarget&) {
  }
  if (pred[b] == b)
    throw std::runtime_error("topology: no path from " + g[a].name + " to " + g[b].name);
  Route r;
  for (VertexId v = b; v != a; v = pred[v]) r.push_back(make_hop(topo, pred[v], v));
  std::reverse(r.begin(), r.end());
  return r;
}

}  // namespace

namespace {
Route compute_route_between_gpus(const Topology& topo, int src_rank, int dst_rank, int rail);
}  // namespace

namespace {

// The route cache's key of (src, dst, rail), after checking the ranks.
std::uint64_t checked_route_key(const Topology& topo, int src_rank, int dst_rank, int rail) {
  const int n = topo.num_gpus();
  if (src_rank < 0 || src_rank >= n || dst_rank < 0 || dst_rank >= n)
    throw std::out_of_range("route_between_gpus: rank out of range (" + std::to_string(src_rank) + ", " +
                            std::to_string(dst_rank) + " of " + std::to_string(n) + ")");
  return (static_cast<std::uint64_t>(src_rank) << 40) | (static_cast<std::uint64_t>(dst_rank) << 16) |
         static_cast<std::uint64_t>(rail + 2);
}

}  // namespace

Route route_between_gpus(const Topology& topo, int src_rank, int dst_rank, int rail) {
  const std::uint64_t key = checked_route_key(topo, src_rank, dst_rank, rail);
  if (src_rank == dst_rank) return {};
  // Schedules ask for the same few thousand routes many times (schedule building, symmetry checks,
  // the engine): each is computed once per topology.
  const auto cached = topo.route_cache.find(key);
  if (cached != topo.route_cache.end()) return cached->second;
  Route r = compute_route_between_gpus(topo, src_rank, dst_rank, rail);
  topo.route_cache.emplace(key, r);
  return r;
}

Route route_between_gpus_unmemoized(const Topology& topo, int src_rank, int dst_rank, int rail) {
  const std::uint64_t key = checked_route_key(topo, src_rank, dst_rank, rail);
  if (src_rank == dst_rank) return {};
  const auto cached = topo.route_cache.find(key);
  if (cached != topo.route_cache.end()) return cached->second;
  return compute_route_between_gpus(topo, src_rank, dst_rank, rail);
}

namespace {

Route compute_route_between_gpus(const Topology& topo, int src_rank, int dst_rank, int rail) {
  const int G = topo.gpus_per_node();
  const int ns = src_rank / G, nd = dst_rank / G, ls = src_rank % G;
  const VertexId gs = topo.gpu(src_rank), gd = topo.gpu(dst_rank);
  // kRailOwnNics inside one node: out through the source's NIC and back in through the destination's
  // (RDMA loopback through the leaf switches, as pure-RDMA GPU-initiated transports do).
  if (ns == nd && rail != kRailOwnNics) return intra_node(topo, gs, gd);

  const int nics = topo.nics_per_node();
  if (nics == 0) throw std::runtime_error("topology: no NIC to leave node " + std::to_string(ns));
  const int own = nic_for_gpu(topo, ls);
  const int r = rail < 0 ? own : rail;
  if (r >= nics)
    throw std::out_of_range("route_between_gpus: rail " + std::to_string(r) + " out of range (" +
                            std::to_string(nics) + " NICs per node)");
  // The destination's rail: the same NIC index (rail-aligned), or its own GPU's NIC.
  const int rd = rail == kRailOwnNics ? nic_for_gpu(topo, dst_rank % G) : r;
  const VertexId nic_s = topo.nic(ns, r), nic_d = topo.nic(nd, rd);

  Route route;
  bool done_src = false;
  const std::vector<int> mine = nics_of_gpu(topo, ls);
  const bool uses_rail = std::find(mine.begin(), mine.end(), r) != mine.end();
  if (!uses_rail && has_nvlink(topo, gs)) {
    // PXN: NVLink to the GPU whose channels use the rail's NIC (NCCL's ncclTopoGetLocalGpu), then its
    // PCIe path to the NIC. A GPU that drives several NICs (OCI BM.GPU4.8, AWS p5) reaches each of
    // them under its own PCIe switch.
    const int p = first_gpu_on_rail(topo, r);
    const VertexId gp = p >= 0 ? topo.gpu(ns * G + p) : gs;
    if (p >= 0 && p != ls && has_nvlink(topo, gp)) {
      route = route_between(topo, gs, gp);
      append(route, gpu_to_nic(topo, gp, nic_s));
      done_src = true;
    }
  }
  if (!done_src) route = gpu_to_nic(topo, gs, nic_s);

  const int group_s = ns / topo.nodes_per_leaf(), group_d = nd / topo.nodes_per_leaf();
  VertexId leaf_s, leaf_d;
  if (!topo.find_vertex(VertexKind::LeafSwitch, -1, r, group_s, &leaf_s) ||
      !topo.find_vertex(VertexKind::LeafSwitch, -1, rd, group_d, &leaf_d))
    throw std::runtime_error("topology: missing leaf switch for rail " + std::to_string(r));
  route.push_back(make_hop(topo, nic_s, leaf_s));
  if (leaf_s != leaf_d) {
    VertexId spine;
    if (!topo.find_vertex(VertexKind::SpineSwitch, -1, 0, -1, &spine))
      throw std::runtime_error("topology: missing spine switch");
    route.push_back(make_hop(topo, leaf_s, spine));
    route.push_back(make_hop(topo, spine, leaf_d));
  }
  route.push_back(make_hop(topo, leaf_d, nic_d));
  // In an NVLink domain of several hosts the rail's NIC may sit on another host than the destination
  // GPU, with no PCIe path between them: in through the GPU that drives the NIC, then NVLink.
  const int hosts = hosts_per_node(topo);
  if (hosts > 1 && (dst_rank % G) / (G / hosts) != rd / (nics / hosts)) {
    const int p = first_gpu_on_rail(topo, rd);
    const VertexId gp = topo.gpu(nd * G + p);
    append(route, reverse_route(gpu_to_nic(topo, gp, nic_d)));
    append(route, route_between(topo, gp, gd));
    return route;
  }
  append(route, reverse_route(gpu_to_nic(topo, gd, nic_d)));
  return route;
}

}  // namespace

PathClass path_class(const Topology& topo, VertexId a, VertexId b) {
  if (a == b) return PathClass::Loc;
  const Vertex& va = topo.vertex(a);
  const Vertex& vb = topo.vertex(b);
  if (va.node < 0 || vb.node < 0 || va.node != vb.node) return PathClass::Net;
  Route r;
  try {
    r = route_between(topo, a, b);
  } catch (const std::runtime_error&) {
    // Two hosts of one NVLink domain share only NVLink: a GPU has no path to another host's NIC or
    // CPU inside the node, as between nodes.
    if (hosts_per_node(topo) > 1) return PathClass::Net;
    throw;
  }
  bool inter_socket = false;
  for (const Hop& h : r) {
    const LinkKind k = topo.link(h.edge).kind;
    if (k == LinkKind::NvLink) return PathClass::Nvl;
    if (k == LinkKind::InterSocket) inter_socket = true;
  }
  if (inter_socket) return PathClass::Sys;
  const std::vector<VertexId> vs = route_vertices(topo, r);
  bool through_cpu = false;
  int switches = 0;
  for (std::size_t i = 1; i + 1 < vs.size(); ++i) {
    const VertexKind k = topo.vertex(vs[i]).kind;
    if (k == VertexKind::Cpu) through_cpu = true;
    if (k == VertexKind::PcieSwitch) ++switches;
  }
  if (va.kind == VertexKind::Cpu || vb.kind == VertexKind::Cpu) return PathClass::Phb;
  if (through_cpu) {
    const bool direct = topo.vertex(vs[1]).kind == VertexKind::Cpu || topo.vertex(vs[vs.size() - 2]).kind == VertexKind::Cpu;
    return direct ? PathClass::Phb : PathClass::Node;
  }
  return switches <= 1 ? PathClass::Pix : PathClass::Pxb;
}

double route_latency_s(const Topology& topo, const Route& route) {
  double s = 0;
  for (const Hop& h : route) s += topo.link(h.edge).latency_s;
  return s;
}

double route_bandwidth_Bps(const Topology& topo, const Route& route) {
  if (route.empty()) return std::numeric_limits<double>::infinity();
  std::map<const Link*, std::pair<int, int>> uses;
  for (const Hop& h : route) {
    auto& u = uses[&topo.link(h.edge)];
    (h.forward ? u.first : u.second) += 1;
  }
  double bw = std::numeric_limits<double>::infinity();
  for (const auto& [link, u] : uses) {
    const int k = link->shared_duplex ? u.first + u.second : std::max(u.first, u.second);
    bw = std::min(bw, link->bandwidth_Bps / k);
  }
  return bw;
}

std::vector<VertexId> route_vertices(const Topology& topo, const Route& route) {
  std::vector<VertexId> vs;
  if (route.empty()) return vs;
  vs.push_back(hop_from(topo, route.front()));
  for (const Hop& h : route) vs.push_back(hop_to(topo, h));
  return vs;
}

std::string format_route(const Topology& topo, const Route& route) {
  std::string s;
  for (VertexId v : route_vertices(topo, route)) {
    if (!s.empty()) s += " -> ";
    s += topo.vertex(v).name;
  }
  return s;
}

LinkDirectionKey link_direction_key(const Topology& topo, const Hop& h) {
  const bool shared = topo.link(h.edge).shared_duplex;
  const std::size_t a = boost::source(h.edge, topo.graph()), b = boost::target(h.edge, topo.graph());
  return LinkDirectionKey{std::min(a, b), std::max(a, b), shared ? 2 : (h.forward ? 1 : 0)};
}

std::string describe_link_direction(const Topology& topo, EdgeId e, int dir) {
  const auto& a = topo.vertex(boost::source(e, topo.graph()));
  const auto& b = topo.vertex(boost::target(e, topo.graph()));
  const bool fwd = dir != 0;
  return (fwd ? a.name : b.name) + (dir == 2 ? " <-> " : " -> ") + (fwd ? b.name : a.name) + " (" +
         topo.link(e).label + ")";
}

void LinkLoad::add(const Hop& h, double bytes) {
  const auto it =
      entries_.try_emplace(link_direction_key(*topo_, h), Entry{0.0, topo_->link(h.edge).bandwidth_Bps, h.edge}).first;
  it->second.bytes += bytes;
}

LinkLoad::Busiest LinkLoad::busiest() const {
  Busiest b;
  for (const auto& [key, e] : entries_) {
    const double t = e.bytes / e.bandwidth_Bps;
    if (t > b.time_s) {
      b.key = &key;
      b.entry = &e;
      b.time_s = t;
    }
  }
  return b;
}

}  // namespace ccsim
