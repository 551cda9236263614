// Ring schedules generated as orbit representatives only. The whole ring schedule of n GPUs holds
// 2(n-1) steps x n ranks x F families records (268 M at 4096 GPUs, 17 GB), of which the engine
// simulates one per orbit of the fabric's rotations (sim/symmetry.h) after proving, record by
// record, that the rotations map the schedule onto itself. Here the proof is made on what the
// schedule is made of instead — the ring plan's hops (source, destination, rail, delay, channels and
// chunks per family and position) and the routes of the hops — and only the representatives are
// emitted, with their dependencies pointing at the representatives of the whole schedule's. The
// records and their order are those find_quotient keeps of ring_schedule, so the replay is the same
// (tests/test_scale.cpp: byte-identical results with and without it).
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "algorithms/ring.h"
#include "algorithms/schedule.h"
#include "topologies/topology.h"

namespace ccsim {

// The orbit representatives of ring_schedule(topo, plan, collective, size_bytes, options) under the
// rotations the fabric allows and the plan and routes respect (Schedule::orbit_order and kin set);
// nullopt when no rotation holds or the schedule is expanded per channel and chunk (then
// ring_schedule and find_quotient do the work), and when the representatives would be more than
// `max_records` (then `*records` says how many, before any is built; 0 otherwise).
std::optional<Schedule> ring_orbit_schedule(const Topology& topo, const RingPlan& plan, const std::string& collective,
                                            double size_bytes, const RingScheduleOptions& options,
                                            std::size_t max_records = static_cast<std::size_t>(-1),
                                            std::size_t* records = nullptr);

// ring_orbit_schedule, or the whole ring_schedule when it gives nothing.
Schedule ring_schedule_for_engine(const Topology& topo, const RingPlan& plan, const std::string& collective,
                                  double size_bytes, const RingScheduleOptions& options);

}  // namespace ccsim
