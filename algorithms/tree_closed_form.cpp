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
  using Key = LinkDirectionKey;
  const auto key_of = [&](const Hop& h) { return link_direction_key(topo, h); };
  std::vector<Route> routes(count);
  std::vector<int> depth(count, 0);
  std::vector<std::vector<std::uint32_t>> successors(count);
  LinkLoad load(topo);
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
      load.add(h, t.bytes);
      ++at_depth[{key_of(h), depth[i]}];
    }
  }
  const LinkLoad::Busiest busiest = load.busiest();
  if (busiest.entry) {
    out.stage_s = busiest.time_s;
    out.bottleneck = describe_link_direction(topo, busiest.entry->edge, busiest.key->dir);
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
  for (const auto& [k, ft] : first_and_tail) {
    const LinkLoad::Entry& e = load.entries().at(k);
    bound = std::max(bound, ft.first + C * e.bytes / e.bandwidth_Bps + ft.second);
  }
  out.lower_bound_s = out.launch_s + bound;
  return out;
}

}  // namespace ccsim
