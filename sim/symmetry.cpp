#include "sim/symmetry.h"

#include <algorithm>
#include <cmath>
#include "common/flat_hash.h"

namespace ccsim {

namespace {

int leaf_groups(const Topology& topo) {
  const int npl = std::max(1, topo.nodes_per_leaf());
  return (topo.num_nodes() + npl - 1) / npl;
}

}  // namespace

int node_rotation_shift(const Topology& topo) {
  const int nodes = topo.num_nodes();
  if (nodes <= 1) return 0;
  const int groups = leaf_groups(topo);
  int shift = 1;
  if (groups > 1) {
    if (nodes % topo.nodes_per_leaf() != 0) return 0;
    shift = topo.nodes_per_leaf();
  }
  if (shift >= nodes) return 0;
  // Verify: every link maps to a link of the same kind, bandwidth and latency.
  const Graph& g = topo.graph();
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    const VertexId a = rotate_vertex(topo, boost::source(*it, g), shift);
    const VertexId b = rotate_vertex(topo, boost::target(*it, g), shift);
    const auto [e, found] = boost::edge(a, b, g);
    if (!found) return 0;
    const Link& l = g[*it];
    const Link& m = g[e];
    if (l.kind != m.kind || l.bandwidth_Bps != m.bandwidth_Bps || l.latency_s != m.latency_s ||
        l.shared_duplex != m.shared_duplex)
      return 0;
  }
  return shift;
}

VertexId rotate_vertex(const Topology& topo, VertexId v, int k) {
  const Vertex& x = topo.vertex(v);
  const int nodes = topo.num_nodes();
  int node = x.node, group = x.group;
  if (x.node >= 0) {
    node = ((x.node + k) % nodes + nodes) % nodes;
  } else if (x.kind == VertexKind::LeafSwitch) {
    const int groups = leaf_groups(topo);
    if (groups > 1) group = ((x.group + k / topo.nodes_per_leaf()) % groups + groups) % groups;
  } else {
    return v;  // spine and other shared vertices are fixed
  }
  VertexId out;
  if (!topo.find_vertex(x.kind, node, x.index, group, &out)) return v;
  return out;
}

Hop canonical_hop(const Topology& topo, const Hop& hop, int shift) {
  if (shift <= 0) return hop;
  const Graph& g = topo.graph();
  const VertexId from = hop.forward ? boost::source(hop.edge, g) : boost::target(hop.edge, g);
  const VertexId to = hop.forward ? boost::target(hop.edge, g) : boost::source(hop.edge, g);
  // The lowest node touched by the link decides which rotation brings it into nodes [0, shift).
  int anchor = -1;
  for (VertexId v : {from, to}) {
    const Vertex& x = topo.vertex(v);
    int n = x.node;
    if (n < 0 && x.kind == VertexKind::LeafSwitch && leaf_groups(topo) > 1) n = x.group * topo.nodes_per_leaf();
    if (n >= 0 && (anchor < 0 || n < anchor)) anchor = n;
  }
  if (anchor < 0) return hop;
  const int k = -(anchor / shift) * shift;
  if (k == 0) return hop;
  const VertexId a = rotate_vertex(topo, from, k), b = rotate_vertex(topo, to, k);
  const auto [e, found] = boost::edge(a, b, g);
  if (!found) return hop;
  // Edges are stored from the lower to the higher vertex id; forward means in that direction.
  return Hop{e, a < b};
}

Quotient identity_quotient(const Schedule& schedule) {
  Quotient q;
  const auto n = static_cast<std::uint32_t>(schedule.transfers.size());
  q.rep_of.resize(n);
  q.reps.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) q.rep_of[i] = q.reps[i] = i;
  return q;
}

Quotient find_quotient(const Topology& topo, const Schedule& schedule) {
  const int shift = node_rotation_shift(topo);
  if (shift == 0) return identity_quotient(schedule);
  const int gpn = topo.gpus_per_node();
  const int n = schedule.nranks;
  const int rank_shift = shift * gpn;
  const auto count = schedule.transfers.size();

  FlatKeyMap index(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto& t = schedule.transfers[i];
    std::uint64_t key;
    if (!pack_transfer_key(t.src, t.dst, t.rail, t.family, t.step, &key) || !index.insert(key, i))
      return identity_quotient(schedule);  // records are not unique: cannot tell images apart
  }
  auto rotate = [&](std::uint32_t id, int ranks, std::uint32_t* out) {
    const auto& t = schedule.transfers[id];
    std::uint64_t key;
    return pack_transfer_key((t.src + ranks) % n, (t.dst + ranks) % n, t.rail, t.family, t.step, &key) &&
           index.find(key, out);
  };
  // Invariance under the generator implies invariance under the whole cyclic group.
  std::vector<std::uint32_t> rotated_deps, image_deps;
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto& t = schedule.transfers[i];
    std::uint32_t j;
    if (!rotate(i, rank_shift, &j)) return identity_quotient(schedule);
    const auto& u = schedule.transfers[j];
    if (u.dep_count != t.dep_count || u.delay_s != t.delay_s ||
        std::fabs(u.bytes - t.bytes) > 1e-12 * std::max(1.0, std::fabs(t.bytes)))
      return identity_quotient(schedule);
    rotated_deps.clear();
    image_deps.assign(schedule.deps_of(u), schedule.deps_of(u) + u.dep_count);
    for (std::uint32_t k = 0; k < t.dep_count; ++k) {
      std::uint32_t d;
      if (!rotate(schedule.deps_of(t)[k], rank_shift, &d)) return identity_quotient(schedule);
      rotated_deps.push_back(d);
    }
    std::sort(rotated_deps.begin(), rotated_deps.end());
    std::sort(image_deps.begin(), image_deps.end());
    if (rotated_deps != image_deps) return identity_quotient(schedule);
  }
  Quotient q;
  q.shift_nodes = shift;
  q.order = topo.num_nodes() / shift;
  q.rep_of.resize(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const int src_node = schedule.transfers[i].src / gpn;
    const int k = (src_node / shift) * rank_shift;
    std::uint32_t r = i;
    if (k != 0 && !rotate(i, n - k, &r)) return identity_quotient(schedule);
    q.rep_of[i] = r;
    if (r == i) q.reps.push_back(i);
  }
  return q;
}

}  // namespace ccsim
