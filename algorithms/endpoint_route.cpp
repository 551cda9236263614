#include "algorithms/endpoint_route.h"

#include <stdexcept>

namespace ccsim {

VertexId endpoint_vertex(const Topology& topo, const Schedule& s, int e) {
  if (e >= 0 && e < s.nranks) return topo.gpu(e);
  const int k = e - s.nranks;
  if (k < 0 || k >= static_cast<int>(s.switches.size()))
    throw std::invalid_argument("schedule endpoint " + std::to_string(e) + " out of range (" +
                                std::to_string(s.num_endpoints()) + " endpoints)");
  VertexId v;
  if (!topo.find_vertex_by_name(s.switches[k], &v))
    throw std::invalid_argument("schedule switch endpoint '" + s.switches[k] + "' is not a vertex of topology " +
                                topo.name);
  return v;
}

Route transfer_route(const Topology& topo, const Schedule& s, int src, int dst, int rail) {
  if (src < s.nranks && dst < s.nranks) return route_between_gpus(topo, src, dst, rail);
  return route_between(topo, endpoint_vertex(topo, s, src), endpoint_vertex(topo, s, dst));
}

double RouteLatencyCache::latency_s(const Topology& topo, const Schedule& s, int src, int dst, int rail) {
  const auto key = std::make_tuple(src, dst, rail);
  auto it = memo_.find(key);
  if (it == memo_.end()) it = memo_.emplace(key, route_latency_s(topo, transfer_route(topo, s, src, dst, rail))).first;
  return it->second;
}

}  // namespace ccsim
