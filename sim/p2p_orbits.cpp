#include "sim/p2p_orbits.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/flat_hash.h"
#include "sim/symmetry.h"
#include "topologies/routing.h"

namespace ccsim {

namespace {

int mod(int a, int m) { return ((a % m) + m) % m; }

// Under the rail rotation a message from local GPU l to local GPU m of another node leaves through
// the rail and the sending GPU of the message from l - 1 to m - 1, each moved by one.
bool paths_follow_rail_rotation(const Topology& topo, const P2pConfig& cfg) {
  const int gpn = topo.gpus_per_node(), rails = std::max(1, topo.nics_per_node());
  for (int l = 0; l < gpn; ++l)
    for (int m = 0; m < gpn; ++m) {
      const P2pPath a = p2p_message_path(topo, cfg, l, gpn + m);
      const P2pPath b = p2p_message_path(topo, cfg, (l + 1) % gpn, gpn + (m + 1) % gpn);
      const int rail = a.rail >= 0 ? (a.rail + 1) % rails : a.rail;
      const int sender = a.nic_gpu >= 0 ? (a.nic_gpu / gpn) * gpn + (a.nic_gpu % gpn + 1) % gpn : a.nic_gpu;
      if (b.rail != rail || b.nic_gpu != sender) return false;
    }
  return true;
}

struct RouteVerdict {
  bool node = true;
  bool rail = true;
};

// Whether every route of the schedule maps onto its image's under each generator: the routes of
// the orbit of each distinct (src, dst, rail) of the representatives, over the group that
// `node_shift` and `rail_rotation` generate (a free action on ranks, so the orbits are the whole
// schedule's routes, each once), each compared with its images under both generators.
RouteVerdict routes_follow_rotations(const Topology& topo, const Schedule& reps, int node_shift, bool rail_rotation,
                                     std::size_t* routes) {
  RouteVerdict v;
  v.node = node_shift > 0;
  v.rail = rail_rotation;
  const int gpn = topo.gpus_per_node(), rails = std::max(1, topo.nics_per_node());
  const int node_steps = node_shift > 0 ? topo.num_nodes() / node_shift : 1;
  const int local_steps = rail_rotation ? gpn : 1;
  const VertexRotation by_nodes(topo, Rotation{node_shift, 0});
  const VertexRotation by_rail(topo, Rotation{0, 1});
  FlatKeyMap seen(reps.transfers.size());
  std::vector<Route> orbit(static_cast<std::size_t>(node_steps) * static_cast<std::size_t>(local_steps));
  for (const Transfer& t : reps.transfers) {
    std::uint64_t key = 0;
    if (!pack_transfer_key(t.src, t.dst, t.rail, 0, 0, &key)) return RouteVerdict{false, false};
    if (!seen.insert(key, 0)) continue;
    for (int k = 0; k < node_steps; ++k)
      for (int j = 0; j < local_steps; ++j) {
        const Rotation r{k * node_shift, j};
        ++*routes;
        orbit[static_cast<std::size_t>(k * local_steps + j)] =
            route_between_gpus_unmemoized(topo, rotate_gpu_rank(topo, t.src, r), rotate_gpu_rank(topo, t.dst, r),
                                          t.rail >= 0 ? mod(t.rail + j, rails) : t.rail);
      }
    for (int k = 0; k < node_steps; ++k)
      for (int j = 0; j < local_steps; ++j) {
        const Route& route = orbit[static_cast<std::size_t>(k * local_steps + j)];
        if (v.node && !by_nodes.maps_onto(route, orbit[static_cast<std::size_t>(((k + 1) % node_steps) * local_steps + j)]))
          v.node = false;
        if (v.rail && !by_rail.maps_onto(route, orbit[static_cast<std::size_t>(k * local_steps + (j + 1) % local_steps)]))
          v.rail = false;
      }
    if (!v.node && !v.rail) break;
  }
  return v;
}

}  // namespace

std::optional<Schedule> alltoall_orbit_schedule(const Topology& topo, const P2pConfig& cfg, double size_bytes,
                                                const P2pScheduleOptions& options, std::size_t max_messages,
                                                std::size_t* messages_needed) {
  if (messages_needed) *messages_needed = 0;
  const int n = topo.num_gpus(), gpn = topo.gpus_per_node();
  if (n < 2 || !options.aggregate_pxn || n >= (1 << 18) || topo.nics_per_node() >= 62) return std::nullopt;
  // One protocol and one round structure for every message; the waves must fit the builder's
  // family counter (algorithms/p2p.cpp: 12 bits), so that families are 0 and 1 only.
  const P2pOp op = nccl_p2p_op(cfg, size_bytes / n, topo.num_nodes() > 1);
  if ((n - 1) / std::max(1, op.max_concurrent_peers) >= (1 << 12)) return std::nullopt;
  int shift = fabric_node_shift(topo);
  bool rail = fabric_rail_rotation(topo) && paths_follow_rail_rotation(topo, cfg);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (shift == 0 && !rail) return std::nullopt;
    const int planned_nodes = shift > 0 ? shift : topo.num_nodes();
    const std::size_t planned = static_cast<std::size_t>(planned_nodes) * static_cast<std::size_t>(gpn) *
                                static_cast<std::size_t>(n - 1);
    if (planned > max_messages) {
      if (messages_needed) *messages_needed = planned;
      return std::nullopt;
    }
    const auto t0 = std::chrono::steady_clock::now();
    Schedule s = alltoall_representatives(topo, cfg, size_bytes, shift, rail, options);
    const auto t1 = std::chrono::steady_clock::now();
    std::size_t routes = 0;
    const RouteVerdict v = routes_follow_rotations(topo, s, shift, rail, &routes);
    if (std::getenv("CCSIM_PROFILE"))
      std::fprintf(stderr, "[profile] alltoall representatives %.3f s (%zu messages, %zu records), route proof %.3f s (%zu routes)\n",
                   std::chrono::duration<double>(t1 - t0).count(), planned, s.transfers.size(),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count(), routes);
    // A generator whose routes do not follow: the representatives of the others, whose routes were
    // checked on every record already.
    if (v.node != (shift > 0) || v.rail != rail) {
      if (attempt > 0) return std::nullopt;
      shift = v.node ? shift : 0;
      rail = v.rail;
      continue;
    }
    s.orbit_node_shift = shift;
    s.orbit_rail_rotation = rail;
    s.orbit_order = (shift > 0 ? topo.num_nodes() / shift : 1) * (rail ? gpn : 1);
    s.orbit_full_records = s.transfers.size() * static_cast<std::size_t>(s.orbit_order);
    return s;
  }
  return std::nullopt;
}

}  // namespace ccsim
