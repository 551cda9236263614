// Symmetry is free speed. ccsim looks for two rotations of the cluster:
//   - node rotation: node i -> i + s (s = 1, or the leaf-group size when the fabric has several
//     leaf groups), order N/s;
//   - rail rotation: local GPU g -> g + 1, NIC r -> r + 1 (and with them PCIe switch, leaf rail and
//     the rail's families: ring family r, tree families 2r and 2r+1, i.e. family f -> f + families_per_rail),
//     order G (GPUs per node), when every node has as many NICs as GPUs.
// A rotation is used only when it maps the schedule onto itself (every transfer onto a transfer with
// the same bytes and delay, dependencies onto dependencies) and every route onto the route of the
// image transfer, link for link with equal bandwidth and latency. Then all transfers of one orbit
// start and end at the same instants under max-min sharing: the engine simulates one representative
// per orbit, on links folded onto their orbit's representative, and reads every other transfer's
// times off its representative. No transfer is fixed by a non-trivial rotation. A used link may be
// fixed only between an NVSwitch and its reduction units (NVLS schedules' switch endpoints, which the
// rail rotation fixes): a folded link whose orbit has s of the group's `order` images carries the
// representatives of order / s real flows per real flow it stands for, so the engine gives it s / order
// of its capacity (and reports order / s times its folded bytes); s = order everywhere else.
#pragma once
#include <cstdint>
#include <vector>

#include "algorithms/schedule.h"
#include "topologies/topology.h"

namespace ccsim {

struct Rotation {
  int nodes = 0;  // multiple of the node shift
  int local = 0;  // 0 .. G-1
};

struct Quotient {
  int node_shift = 0;    // 0: node rotation not used
  bool rail_rotation = false;
  int order = 1;         // images per representative
  std::vector<std::uint32_t> rep_of;  // transfer -> its representative
  std::vector<std::uint32_t> reps;    // representatives, ascending
};

// Image of vertex v under a rotation; false when v has no image (e.g. a CPU socket under rail rotation).
bool rotate_vertex(const Topology& topo, VertexId v, Rotation r, VertexId* out);

// The orbit representative of a link traversal under the quotient's rotations.
Hop canonical_hop(const Topology& topo, const Hop& hop, const Quotient& q);

// Number of distinct images of a link traversal under the quotient's group (its orbit size).
int link_orbit_size(const Topology& topo, const Hop& hop, const Quotient& q);

// Builds the quotient; falls back to fewer rotations, down to the identity, when the schedule or
// the routes are not invariant.
Quotient find_quotient(const Topology& topo, const Schedule& schedule);

// For generators of orbit representatives (sim/ring_orbits.h), which prove a schedule's invariance
// from what it is made of instead of from its records:
// the smallest node rotation the fabric allows (1 in one leaf group, the group size with several
// equal groups, 0 for none), and whether rail rotation may hold (one NIC per GPU, or one node).
int fabric_node_shift(const Topology& topo);
bool fabric_rail_rotation(const Topology& topo);
// Image of a GPU rank.
int rotate_gpu_rank(const Topology& topo, int rank, Rotation r);
// route_between_gpus(src, dst, rail) maps under r onto the route of the image, link for link with
// equal links, and r moves every link of it (the check find_quotient makes for every route).
bool gpu_route_invariant(const Topology& topo, int src, int dst, int rail, Rotation r);
// A rotation's image of every vertex, looked up once (rotate_vertex searches the topology's maps
// per call): for proofs over millions of routes (sim/p2p_orbits.h).
class VertexRotation {
 public:
  VertexRotation(const Topology& topo, Rotation r);
  // gpu_route_invariant's check on two routes already computed: `route` maps under the rotation onto
  // `image`, link for link with equal links, and the rotation moves every link of it.
  bool maps_onto(const Route& route, const Route& image) const;

 private:
  const Topology* topo_;
  std::vector<VertexId> image_;
  std::vector<char> has_image_;
};
// The quotient of an orbit-representative schedule (Schedule::orbit_order > 1): every record its own
// representative, the group the generator proved.
Quotient orbit_quotient(const Schedule& schedule);

// The identity quotient: every transfer its own representative.
Quotient identity_quotient(const Schedule& schedule);

}  // namespace ccsim
