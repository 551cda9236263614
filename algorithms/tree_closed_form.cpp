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
  if (topo.num_gpus() < 2 || plan.families.empty()) return out;

  // One chunk of every family: the schedule of size S / C with a single chunk, no launch in the
  // delays (added once) and no flow control (it only binds later chunks).
  TreeScheduleOptions one = options;
  one.max_chunks = 1;
  one.chunk_bytes = std::numeric_limits<double>::max();
  one.flow_control_slots = 0;
  one.launch_wave = 0;
  const Schedule s = tree_schedule(topo, plan, "all_reduce", size_bytes / out.chunks, one);

  // Bytes of one chunk per link direction (a shared-duplex link counts both directions).
  using Key = std::pair<const void*, int>;
  std::map<Key, double> load;
  std::map<Key, EdgeId> edge_of;
  std::vector<Route> routes;
  routes.reserve(s.transfers.size());
  const auto key_of = [&](const Hop& h) {
    return Key{h.edge.get_property(), topo.link(h.edge).shared_duplex ? 2 : (h.forward ? 1 : 0)};
  };
  for (const Transfer& t : s.transfers) {
    routes.push_back(route_between_gpus(topo, t.src, t.dst, t.rail));
    for (const Hop& h : routes.back()) {
      load[key_of(h)] += t.bytes;
      edge_of.emplace(key_of(h), h.edge);
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

  // Longest path of the one-chunk DAG (dependencies point to earlier records), every hop at its
  // fixed cost plus the chunk at the route's idle rate; the path's slowest idle stage is the one the
  // bottleneck replaces by tau.
  std::vector<double> finish(s.transfers.size(), 0.0), fixed(s.transfers.size(), 0.0), slowest(s.transfers.size(), 0.0);
  std::vector<int> hops(s.transfers.size(), 0);
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const Transfer& t = s.transfers[i];
    std::uint32_t from = 0;
    bool any = false;
    for (std::uint32_t k = 0; k < t.dep_count; ++k) {
      const auto d = s.deps_of(t)[k];
      if (!any || finish[d] > finish[from]) from = d;
      any = true;
    }
    const double idle = t.bytes / route_bandwidth_Bps(topo, routes[i]);
    const double alpha = t.delay_s + route_latency_s(topo, routes[i]);
    finish[i] = (any ? finish[from] : 0.0) + alpha + idle;
    fixed[i] = (any ? fixed[from] : 0.0) + alpha;
    slowest[i] = std::max(any ? slowest[from] : 0.0, idle);
    hops[i] = (any ? hops[from] : 0) + 1;
    if (finish[i] > out.first_chunk_s) {
      out.first_chunk_s = finish[i];
      out.path_latency_s = fixed[i];
      out.path_hops = hops[i];
      out.slowest_idle_stage_s = slowest[i];
    }
  }
  out.time_s = out.launch_s + out.first_chunk_s - out.slowest_idle_stage_s + out.chunks * out.stage_s;
  return out;
}

}  // namespace ccsim
