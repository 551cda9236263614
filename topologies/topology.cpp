#include "topologies/topology.h"

#include <algorithm>
#include <deque>
#include <stdexcept>

#include "common/error.h"

namespace ccsim {

const char* to_string(VertexKind kind) {
  switch (kind) {
    case VertexKind::Gpu: return "GPU";
    case VertexKind::NvSwitch: return "NVSwitch";
    case VertexKind::PcieSwitch: return "PCIe switch";
    case VertexKind::Cpu: return "CPU";
    case VertexKind::HostMemory: return "host memory";
    case VertexKind::Nic: return "NIC";
    case VertexKind::LeafSwitch: return "leaf switch";
    case VertexKind::SpineSwitch: return "spine switch";
    case VertexKind::Reducer: return "switch reduction unit";
  }
  return "?";
}

const char* to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::NvLink: return "NVLink";
    case LinkKind::Pcie: return "PCIe";
    case LinkKind::InterSocket: return "inter-socket";
    case LinkKind::Memory: return "memory";
    case LinkKind::Network: return "network";
    case LinkKind::Reduction: return "in-switch reduction";
  }
  return "?";
}

const char* to_string(Transport transport) {
  switch (transport) {
    case Transport::InfiniBand: return "ib";
    case Transport::RoCE: return "roce";
    case Transport::TcpSockets: return "tcp";
    case Transport::GpuDirectTcpx: return "tcpx";
    case Transport::GpuDirectTcpxo: return "tcpxo";
    case Transport::Efa: return "efa";
  }
  return "?";
}

const char* to_string(PathClass c) {
  switch (c) {
    case PathClass::Loc: return "X";
    case PathClass::Nvl: return "NV";
    case PathClass::Pix: return "PIX";
    case PathClass::Pxb: return "PXB";
    case PathClass::Phb: return "PHB";
    case PathClass::Node: return "NODE";
    case PathClass::Sys: return "SYS";
    case PathClass::Net: return "NET";
  }
  return "?";
}

const char* nccl_level_name(PathClass c) {
  return c == PathClass::Node ? "PHB" : c == PathClass::Nvl ? "NVL" : to_string(c);
}

bool nccl_level_from_name(const std::string& name, PathClass* out) {
  for (PathClass c : {PathClass::Nvl, PathClass::Pix, PathClass::Pxb, PathClass::Node, PathClass::Sys})
    if (name == nccl_level_name(c)) {
      *out = c;
      return true;
    }
  if (name != "LOC") return false;
  *out = PathClass::Loc;
  return true;
}

VertexId Topology::add_vertex(const Vertex& v) {
  const auto key = std::make_tuple(static_cast<int>(v.kind), v.node, v.index, v.group);
  if (by_key_.count(key))
    throw std::logic_error("topology: duplicate vertex " + v.name);
  const VertexId id = boost::add_vertex(v, graph_);
  by_key_[key] = id;
  return id;
}

EdgeId Topology::add_link(VertexId a, VertexId b, const Link& link) {
  if (a == b) throw std::logic_error("topology: self link on " + graph_[a].name);
  if (boost::edge(a, b, graph_).second)
    throw std::logic_error("topology: duplicate link " + graph_[a].name + " - " + graph_[b].name);
  if (!(link.bandwidth_Bps > 0))
    throw std::logic_error("topology: link " + graph_[a].name + " - " + graph_[b].name + " has no bandwidth");
  // Stored with source < target, so that every edge descriptor (from boost::edges, out_edges or
  // a route's Hop) agrees on which direction is "forward".
  return boost::add_edge(std::min(a, b), std::max(a, b), link, graph_).first;
}

bool Topology::find_vertex_by_name(const std::string& name, VertexId* out) const {
  for (auto [it, end] = boost::vertices(graph_); it != end; ++it)
    if (graph_[*it].name == name) {
      *out = *it;
      return true;
    }
  return false;
}

bool Topology::find_vertex(VertexKind kind, int node, int index, int group, VertexId* out) const {
  const auto it = by_key_.find(std::make_tuple(static_cast<int>(kind), node, index, group));
  if (it == by_key_.end()) return false;
  if (out) *out = it->second;
  return true;
}

EdgeId Topology::edge_between(VertexId a, VertexId b) const {
  const auto [e, ok] = boost::edge(a, b, graph_);
  if (!ok) throw std::logic_error("topology: no link between " + graph_[a].name + " and " + graph_[b].name);
  return e;
}

namespace {

// Vertices reachable from `start`, optionally staying inside one node (node >= 0).
std::vector<bool> reachable(const Graph& g, VertexId start, int node) {
  std::vector<bool> seen(boost::num_vertices(g), false);
  std::deque<VertexId> queue{start};
  seen[start] = true;
  while (!queue.empty()) {
    const VertexId u = queue.front();
    queue.pop_front();
    for (auto [it, end] = boost::adjacent_vertices(u, g); it != end; ++it) {
      const VertexId v = *it;
      if (seen[v] || (node >= 0 && g[v].node != node)) continue;
      seen[v] = true;
      queue.push_back(v);
    }
  }
  return seen;
}

// The size of node 0's vertex block when every node n's vertices are [n * B, (n + 1) * B) and match
// node 0's kind, index and degree vertex for vertex (build_topology adds each node's vertices and
// links in the same order); 0 when not.
std::size_t identical_node_block(const Graph& g, int num_nodes) {
  std::size_t block = 0;
  const std::size_t nv = boost::num_vertices(g);
  while (block < nv && g[block].node == 0) ++block;
  if (block == 0 || block * static_cast<std::size_t>(num_nodes) > nv) return 0;
  for (std::size_t v = block; v < nv; ++v)
    if (g[v].node == 0) return 0;  // node 0's vertices are not contiguous
  for (std::size_t v = block; v < block * static_cast<std::size_t>(num_nodes); ++v) {
    const Vertex& x = g[v];
    const Vertex& o = g[v % block];
    if (x.node != static_cast<int>(v / block) || x.kind != o.kind || x.index != o.index ||
        boost::out_degree(v, g) != boost::out_degree(v % block, g))
      return 0;
  }
  return block;
}

}  // namespace

void Topology::finalize(int num_nodes, int gpus_per_node, int nodes_per_leaf) {
  if (num_nodes < 1) throw InputError("/nodes", "must be >= 1 (got " + std::to_string(num_nodes) + ")");
  if (gpus_per_node < 1)
    throw InputError("/node/gpu/count", "must be >= 1 (got " + std::to_string(gpus_per_node) + ")");
  num_nodes_ = num_nodes;
  gpus_per_node_ = gpus_per_node;
  nodes_per_leaf_ = nodes_per_leaf < 1 ? 1 : nodes_per_leaf;

  std::vector<int> nic_count(num_nodes, 0);
  for (auto [it, end] = boost::vertices(graph_); it != end; ++it) {
    const Vertex& v = graph_[*it];
    if (v.kind == VertexKind::Nic && v.node >= 0 && v.node < num_nodes) ++nic_count[v.node];
  }
  nics_per_node_ = nic_count[0];
  for (int n = 1; n < num_nodes; ++n)
    if (nic_count[n] != nics_per_node_)
      throw std::logic_error("topology: nodes have different NIC counts");

  gpus_.assign(static_cast<std::size_t>(num_nodes) * gpus_per_node, VertexId{});
  nics_.assign(static_cast<std::size_t>(num_nodes) * nics_per_node_, VertexId{});
  for (int n = 0; n < num_nodes; ++n) {
    for (int i = 0; i < gpus_per_node; ++i) {
      VertexId v;
      if (!find_vertex(VertexKind::Gpu, n, i, -1, &v))
        throw std::logic_error("topology: missing GPU " + std::to_string(i) + " of node " + std::to_string(n));
      gpus_[static_cast<std::size_t>(n) * gpus_per_node + i] = v;
    }
    for (int i = 0; i < nics_per_node_; ++i) {
      VertexId v;
      if (!find_vertex(VertexKind::Nic, n, i, -1, &v))
        throw std::logic_error("topology: missing NIC " + std::to_string(i) + " of node " + std::to_string(n));
      nics_[static_cast<std::size_t>(n) * nics_per_node_ + i] = v;
    }
  }

  if (num_nodes > 1 && nics_per_node_ == 0)
    throw InputError("/node/nic", "a cluster of " + std::to_string(num_nodes) +
                                      " nodes needs NICs, but the GPUs have no NIC to reach other nodes "
                                      "(set /node/nic/count >= 1)");

  node_vertex_block_ = identical_node_block(graph_, num_nodes);
  // Every GPU must reach every other GPU and every NIC of its node without leaving the node (with
  // identical node blocks, node 0 answers for all).
  for (int n = 0; n < (node_vertex_block_ > 0 ? 1 : num_nodes); ++n) {
    const VertexId g0 = gpu(n * gpus_per_node);
    const auto seen = reachable(graph_, g0, n);
    for (int i = 1; i < gpus_per_node; ++i) {
      const VertexId g = gpu(n * gpus_per_node + i);
      if (!seen[g])
        throw InputError("/node", "GPU " + graph_[g].name + " is disconnected: no NVLink or PCIe path to " +
                                      graph_[g0].name);
    }
    for (int i = 0; i < nics_per_node_; ++i) {
      const VertexId v = nic(n, i);
      if (!seen[v])
        throw InputError("/node", "NIC " + graph_[v].name + " cannot be reached from GPU " + graph_[g0].name +
                                      " (no PCIe path)");
    }
  }
  if (num_nodes > 1) {
    const auto seen = reachable(graph_, gpu(0), -1);
    for (int r = 0; r < num_gpus(); ++r)
      if (!seen[gpu(r)])
        throw InputError("/fabric", "GPU " + graph_[gpu(r)].name + " cannot be reached from " +
                                        graph_[gpu(0)].name + " through the network");
  }
}

}  // namespace ccsim
