// Routes through the topology graph, NCCL-style GPU->NIC affinity and nvidia-smi path classes.
#pragma once
#include "topologies/topology.h"

namespace ccsim {

// Every Hop of a route returned here holds the edge descriptor with source < target (the
// orientation the edge is stored with, see Topology::add_link); `forward` is true when the hop goes
// from the lower to the higher vertex id. Two hops over the same link compare equal by `edge`.

// Route between two GPUs (global ranks), as NCCL would move the data.
// Intra-node: NVLink (through the NVSwitch) when both GPUs have NVLink; otherwise PCIe according to
// the node's P2P mode ("switch": peer-to-peer through the closest common PCIe switch / root complex /
// inter-socket link; "host": always up to the CPU root complex and back down; "none": staged
// through host memory, GPU->..->CPU->memory->CPU->..->GPU).
// Inter-node: leaves through NIC `rail` of the source node (-1: the NIC affined to the source GPU)
// and enters through the NIC of the same index on the destination node (rail-aligned). If that NIC
// is not the source GPU's own and the GPU has NVLink, the data first crosses NVLink to the GPU
// affined to that NIC (PXN). Without GPUDirect RDMA, GPU<->NIC traffic is staged in host memory.
// Throws std::out_of_range on bad ranks/rails.
Route route_between_gpus(const Topology& topo, int src_rank, int dst_rank, int rail = -1);

// Generic preferred shortest path from a to b (Dijkstra): NVLink first, then fewer PCIe bridges,
// then lower latency. Never passes through another GPU, NIC or host memory; leaves the node only
// when a and b are in different nodes. Empty route when a == b. Throws std::runtime_error when
// there is no path.
Route route_between(const Topology& topo, VertexId a, VertexId b);

// NIC index used by local GPU `local_gpu` (same on every node): closest path class first,
// then highest route bandwidth, then the NIC least used by lower-numbered GPUs, then lowest index.
// Returns -1 when the node has no NIC.
int nic_for_gpu(const Topology& topo, int local_gpu);
// The first local GPU whose NIC is `rail` (nic_for_gpu(topo, g) == rail); -1 if none.
int first_gpu_on_rail(const Topology& topo, int rail);
// Computes the affinity of every local GPU (what build_topology stores in Topology::nic_affinity).
std::vector<int> compute_nic_affinity(const Topology& topo);

// nvidia-smi topo -m / NCCL path class between two vertices (GPUs, NICs, ...).
PathClass path_class(const Topology& topo, VertexId a, VertexId b);

// Reverses a route (b->a from a->b).
Route reverse_route(const Route& route);

// Sum of link latencies (one way).
double route_latency_s(const Topology& topo, const Route& route);
// Bottleneck bandwidth per direction: a link used k times in the same direction counts 1/k;
// a shared_duplex link used k times in any direction counts 1/k.
double route_bandwidth_Bps(const Topology& topo, const Route& route);

// Vertices visited by a route, starting with `start` (for printing / tests).
std::vector<VertexId> route_vertices(const Topology& topo, const Route& route);
// "n0.gpu0 -> n0.nvswitch -> n0.gpu1"
std::string format_route(const Topology& topo, const Route& route);

}  // namespace ccsim
