// Human-readable topology report printed by `ccsim topo`.
#pragma once
#include <string>

#include "topologies/topology.h"

namespace ccsim {

// Header (name, nodes, GPUs per node, GPU model, NVLink, NICs, transport, GDR), an
// `nvidia-smi topo -m` style matrix of node `node` (GPU0.., NIC0..; X / NV# / PIX / PXB / PHB /
// NODE / SYS) with legends, the GPU -> NIC affinity and the link kinds with their bandwidth per
// direction (GB/s) and latency (us), fabric links included. Throws std::out_of_range on a bad node.
std::string format_topology_report(const Topology& topo, int node = 0);

// The matrix cell between two vertices of one node: "X", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS".
std::string topo_matrix_cell(const Topology& topo, VertexId a, VertexId b);

}  // namespace ccsim
