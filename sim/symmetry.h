// Symmetry is free speed. When rotating the cluster by `shift` nodes maps the topology onto itself
// and the schedule onto itself (every transfer onto a transfer with the same bytes, delay and rotated
// dependencies), all transfers in one orbit start and end at the same instants under max-min sharing.
// The engine then simulates one representative per orbit, on links folded onto their orbit's
// representative, and reads every other transfer's times off its representative.
#pragma once
#include <cstdint>
#include <vector>

#include "algorithms/schedule.h"
#include "topologies/topology.h"

namespace ccsim {

struct Quotient {
  int shift_nodes = 0;   // generator: rotation by this many nodes (0: no symmetry used)
  int order = 1;         // number of images of each transfer
  std::vector<std::uint32_t> rep_of;  // transfer -> its representative (a transfer whose source is in nodes [0, shift))
  std::vector<std::uint32_t> reps;    // representatives, ascending
};

// Smallest node rotation that is an automorphism of the topology (0 if none but the identity).
int node_rotation_shift(const Topology& topo);

// Image of vertex v under rotation by k nodes (k a multiple of the shift).
VertexId rotate_vertex(const Topology& topo, VertexId v, int k);

// The orbit representative of a link traversal (edge + direction) under the rotation group.
Hop canonical_hop(const Topology& topo, const Hop& hop, int shift);

// Builds the quotient; falls back to the identity (every transfer its own representative) when the
// schedule is not invariant.
Quotient find_quotient(const Topology& topo, const Schedule& schedule);

// The identity quotient.
Quotient identity_quotient(const Schedule& schedule);

}  // namespace ccsim
