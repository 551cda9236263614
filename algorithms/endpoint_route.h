// Routes of a schedule's transfers, for schedules whose endpoints include switches (Schedule::switches):
// between two GPUs as NCCL moves the data (routing.h route_between_gpus, with the transfer's rail);
// to or from a switch along the preferred graph path (routing.h route_between: NVLink first).
#pragma once
#include <map>
#include <tuple>

#include "algorithms/schedule.h"
#include "topologies/routing.h"

namespace ccsim {

// The topology vertex of endpoint `e` of `s`: GPU rank e, or the switch named s.switches[e - nranks].
// Throws std::invalid_argument when the endpoint is out of range or the name is not a vertex.
VertexId endpoint_vertex(const Topology& topo, const Schedule& s, int e);

// Route of a transfer src -> dst of `s` (rail applies to GPU-to-GPU transfers only).
Route transfer_route(const Topology& topo, const Schedule& s, int src, int dst, int rail);

// route_latency_s(transfer_route(...)) memoized per (src, dst, rail): routes to or from a switch are
// not memoized by routing.cpp, and a builder asks for the same hop once per chunk. One cache serves
// one topology and one schedule's endpoints (the key holds neither).
class RouteLatencyCache {
 public:
  double latency_s(const Topology& topo, const Schedule& s, int src, int dst, int rail);

 private:
  std::map<std::tuple<int, int, int>, double> memo_;
};

}  // namespace ccsim
