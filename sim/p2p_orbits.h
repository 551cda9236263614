// Alltoall schedules generated as orbit representatives (the ring's: sim/ring_orbits.h). The whole
// alltoall of n GPUs plans n(n-1) messages (16.8 M at 4096 GPUs) into about n x nodes records, of
// which the engine simulates one per orbit of the fabric's rotations (sim/symmetry.h) after
// find_quotient has proven, record by record and route by route, that the rotations map the schedule
// onto itself: at 4096 dgx-h100 GPUs that proof took 52 s and the schedule 2.8 GiB. Here the proof is
// made on what the schedule is made of, and only the representatives are built:
//   - the messages are every ordered pair of ranks with the same bytes; a message's round depends on
//     the node and local-index differences only (p2p_round), and with the round its wave, its slot
//     dependency and NCCL's decisions for it (which depend on its bytes and whether it crosses nodes);
//   - where a message leaves (p2p_message_path: its rail and the GPU whose NIC sends it) depends on
//     the local indices only and must rotate with them under the rail rotation: checked for every
//     pair of local indices;
//   - one protocol for every message, so records are told apart by family 0 (messages and their
//     network parts) and 1 (PXN legs) only, and the waves fit the builder's family counter;
//   - every record's route maps under each generator onto the route of its image, link for link with
//     equal links (the check find_quotient makes): checked on every record of the whole schedule,
//     orbit by orbit, each route computed once (route_between_gpus_unmemoized) and compared with its
//     neighbours under both generators (VertexRotation); the delays (route latencies, NCCL's step
//     latency by the first link's kind, launch, proxy load) are then equal on images.
// The generators are find_quotient's (node rotation by fabric_node_shift, rail rotation), each kept
// when its checks hold; the records and their order are those find_quotient keeps of
// alltoall_schedule, so the replay is the same (tests/test_scale.cpp: bit-identical results).
#pragma once
#include <cstddef>
#include <optional>

#include "algorithms/p2p.h"
#include "algorithms/schedule.h"
#include "topologies/topology.h"

namespace ccsim {

// The orbit representatives of alltoall_schedule(topo, cfg, size_bytes, options) (Schedule::orbit_order
// and kin set); nullopt when no rotation holds, without PXN aggregation, and when the messages it
// would plan (those of nodes [0, node shift), every node without node rotation) are more than
// `max_messages` (then `*messages` says how many, before any is planned; 0 otherwise).
std::optional<Schedule> alltoall_orbit_schedule(const Topology& topo, const P2pConfig& cfg, double size_bytes,
                                                const P2pScheduleOptions& options = {},
                                                std::size_t max_messages = static_cast<std::size_t>(-1),
                                                std::size_t* messages = nullptr);

}  // namespace ccsim
