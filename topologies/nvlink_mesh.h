#pragma once
// GPUs joined pair by pair by NVLink, without an NVSwitch (node.nvlink.peers): a 2-GPU bridge,
// DGX-1's hybrid cube-mesh of 8 V100, 4 GPUs fully connected. Rings and chains can only step
// between joined GPUs, so they follow Hamiltonian cycles and paths of the pairs' graph, found the
// way NCCL's topology search finds its rings (src/graph/search.cc): depth first, next GPU by the
// bandwidth left on the link to it, each ring taking one channel's speed on every link it uses.
#include <vector>

#include "topologies/topology.h"

namespace ccsim {

// True when the node's GPUs are joined pair by pair and NCCL's P2P transport uses NVLink.
bool nvlink_mesh(const Topology& topo);

// NVLinks between local GPUs a and b of a mesh node; 0 when not joined (or not a mesh).
int nvlink_links(const Topology& topo, int a, int b);

// The GPU an unjoined pair's P2P traffic goes through over NVLink: one joined to both, the most links
// to both, then the lowest index (NCCL's PATH_NVB). -1 when a and b are joined or none is.
int nvlink_relay_gpu(const Topology& topo, int a, int b);

// A GPU's NVLink bandwidth per direction: the sum of its NVLink links (the one to its NVSwitch, or one
// per joined peer); 0 without NVLink.
double gpu_nvlink_Bps(const Topology& topo, VertexId gpu);

// Directed rings (local GPU orders, each starting at GPU 0) over the joined pairs, found one after
// the other, each taking one channel on every link it steps over; a pair of `links` NVLinks carries
// floor(links x channels_per_link) channels per direction. At most max_rings. Empty when the pairs
// hold no ring through every GPU, and below 3 GPUs (a bridged pair's ring is its one link both ways).
std::vector<std::vector<int>> nvlink_mesh_rings(const Topology& topo, double channels_per_link, int max_rings);

// A chain through every local GPU over joined pairs, from `first`, ending at `last` (or anywhere
// with last = -1); the pairs with more NVLinks first. Empty when there is none.
std::vector<int> nvlink_mesh_path(const Topology& topo, int first, int last);

// A ring through every local GPU that takes joined pairs where it can: for boards whose pairs hold no
// ring (bridged pairs: A40, RTX 3090, H100 NVL), where the other hops cross PCIe.
std::vector<int> nvlink_mixed_ring(const Topology& topo);

}  // namespace ccsim
