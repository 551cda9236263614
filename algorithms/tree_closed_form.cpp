#include "algorithms/tree_closed_form.h"

#include <algorithm>
#include <limits>
#include <map>

#include "topologies/routing.h"

namespace ccsim {

TreeClosedForm tree_closed_form(const Topology& topo, const TreePlan& plan, double size_bytes,
                                const TreeScheduleOptions& options) {
  TreeClosedForm out;
  out.launch_s = options.timing.launch_s;
  out.chunks = tree_chunks(topo, plan, size_bytes, options);
  out.time_s = out.lower_bound_s = out.launch_s;
  if (topo.num_gpus() < 2 || plan.families.empty()) return out;
  const double C = out.chunks;

  // One chunk of every family: the schedule of size S / C with a single chunk, no launch in the
  // delays (added once) and no flow control (it only binds later chunks).
  TreeScheduleOptions one = options;
  one.max_chunks = 1;
  one.chunk_bytes = std::numeric_limits<double>::max();
  one.flow_control_slots = 0;
  one.launch_wave = 0;
  const Schedule s = tree_schedule(topo, plan, "all_reduce", size_bytes / C, one);
  const std::size_t count = s.transfers.size();

  // Routes, dependency depths and successors; bytes of one chunk per link direction (a shared-duplex
  // link counts both directions) and per (link direction, depth).
  using Key = std::pair<const void*, int>;
  const auto key_of = [&](const Hop& h) {
    return Key{h.edge.get_property(), topo.link(h.edge).shared_duplex ? 2 : (h.forward ? 1 : 0)};
  };
  std::vector<Route> routes(count);
  std::vector<int> depth(count, 0);
  std::vector<std::vector<std::uint32_t>> successors(count);
  std::map<Key, double> load;
  std::map<Key, EdgeId> edge_of;
  std::map<std::pair<Key, int>, int> at_depth;
  for (std::size_t i = 0; i < count; ++i) {
    const Transfer& t = s.transfers[i];
    routes[i] = route_between_gpus(topo, t.src, t.dst, t.rail);
    for (std::uint32_t k = 0; k < t.dep_count; ++k) {
      const auto d = s.deps_of(t)[k];
      depth[i] = std::max(depth[i], depth[d] + 1);
      successors[d].push_back(static_cast<std::uint32_t>(i));
    }
    for (const Hop& h : routes[i]) {
      load[key_of(h)] += t.bytes;
      edge_of.emplace(key_of(h), h.edge);
      ++at_depth[{key_of(h), depth[i]}];
    }
  }
  for (const auto& [k, bytes] : load) {
    const EdgeId e = edge_of.at(k);
    const double tau = bytes / topo.link(e).bandwidth_Bps;
    if (tau > out.stage_s) {
      out.stage_s = tau;
      const auto& a = topo.vertex(boost::source(e, topo.graph()));
      const auto& b = topo.vertex(boost::target(e, topo.graph()));
      const bool fwd = k.second != 0;
      out.bottleneck = (fwd ? a.name : b.name) + (k.second == 2 ? " <-> " : " -> ") + (fwd ? b.name : a.name) +
                       " (" + topo.link(e).label + ")";
    }
  }

  // The first chunk through the DAG (dependencies point to earlier records): every hop at its fixed
  // cost plus the chunk at its sibling-shared rate.
  std::vector<double> alpha(count), stage(count), head(count), finish(count), fixed(count), slowest(count);
  std::vector<int> hops(count);
  for (std::size_t i = 0; i < count; ++i) {
    const Transfer& t = s.transfers[i];
    int siblings = 1;
    for (const Hop& h : routes[i]) siblings = std::max(siblings, at_depth[{key_of(h), depth[i]}]);
    alpha[i] = t.delay_s + route_latency_s(topo, routes[i]);
    stage[i] = siblings * t.bytes / route_bandwidth_Bps(topo, routes[i]);
    std::int64_t from = -1;
    for (std::uint32_t k = 0; k < t.dep_count; ++k) {
      const auto d = s.deps_of(t)[k];
      if (from < 0 || finish[d] > finish[from]) from = d;
    }
    head[i] = (from >= 0 ? finish[from] : 0.0) + alpha[i];
    finish[i] = head[i] + stage[i];
    fixed[i] = (from >= 0 ? fixed[from] : 0.0) + alpha[i];
    slowest[i] = std::max(from >= 0 ? slowest[from] : 0.0, stage[i]);
    hops[i] = (from >= 0 ? hops[from] : 0) + 1;
    if (finish[i] > out.first_chunk_s) {
      out.first_chunk_s = finish[i];
      out.path_latency_s = fixed[i];
      out.path_hops = hops[i];
    }
  }
  out.time_s = out.launch_s + out.first_chunk_s + (C - 1) * out.stage_s;

  // The bound: a path's later chunks leave no faster than its slowest stage; a link direction starts
  // no earlier than its first byte, carries all its chunks, and is followed by its shortest tail.
  double bound = 0;
  for (std::size_t i = 0; i < count; ++i) bound = std::max(bound, finish[i] + (C - 1) * slowest[i]);
  std::vector<double> tail(count, 0.0);
  for (std::size_t i = count; i-- > 0;)
    for (auto j : successors[i]) tail[i] = std::max(tail[i], alpha[j] + stage[j] + tail[j]);
  std::map<Key, std::pair<double, double>> first_and_tail;  // per link direction: earliest head, shortest tail
  for (std::size_t i = 0; i < count; ++i)
    for (const Hop& h : routes[i]) {
      auto [it, inserted] = first_and_tail.emplace(key_of(h), std::make_pair(head[i], tail[i]));
      if (!inserted) it->second = {std::min(it->second.first, head[i]), std::min(it->second.second, tail[i])};
    }
  for (const auto& [k, ft] : first_and_tail)
    bound = std::max(bound, ft.first + C * load.at(k) / topo.link(edge_of.at(k)).bandwidth_Bps + ft.second);
  out.lower_bound_s = out.launch_s + bound;
  return out;
}

}  // namespace ccsim
