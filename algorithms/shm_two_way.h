// NCCL's SHM transport between two GPUs of a node, when a GPU both writes into and reads from pinned
// host memory in the same operation (docs/topology.md node.pcie.shm_two_way_efficiency): the weight
// each record's bytes carry on the links. One rule for the engine (sim/engine.cpp) and the closed
// forms that mirror it (algorithms/p2p.cpp p2p_closed_form_time_s).
#pragma once
#include <vector>

#include "algorithms/schedule.h"
#include "topologies/topology.h"

namespace ccsim {

// Per record of `s`: 1 / node.pcie.shm_two_way_efficiency for an SHM connection (nccl_shm_pair) one of
// whose GPUs both sends and receives SHM traffic in the schedule (rings, all_gather, alltoall; a
// broadcast's root only writes, its leaf only reads), 1 otherwise, and 1 everywhere when
// node.pcie.shm_channel_GBps is given (a rate measured from a run already holds it). The ranks' roles
// are read from the records at hand: orbit representatives (sim/ring_orbits.h) carry the same roles
// on every rank of their orbit, and those schedules are never PCIe-only SHM nodes.
std::vector<double> shm_two_way_weights(const Topology& topo, const Schedule& s);

}  // namespace ccsim
