// The discrete-event engine: builds a SimGrid platform from the Topology and replays a Schedule with
// flow-level max-min bandwidth sharing (SimGrid's CM02 model with its TCP and LV08 corrections off,
// so an uncongested transfer takes exactly route latency + bytes / bottleneck bandwidth).
//
// Replay semantics: a transfer becomes ready when all its dependencies have finished; it starts
// `delay_s` later and then occupies every link of its route. Up to `pipeline_depth` consecutive
// transfers of one connection (same source, destination, rail, family and lane) may be in flight at
// once, as NCCL's NCCL_STEPS slots allow (Simple: 8 slots / 2 per slice = 4).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "algorithms/nccl_model.h"
#include "algorithms/schedule.h"
#include "topologies/topology.h"

namespace ccsim {

struct EngineOptions {
  bool exploit_symmetry = true;  // simulate one transfer per orbit of the node-rotation symmetry
  bool merge_identical = true;   // merge channels/chunks that share path and timing
  int pipeline_depth = nccl230::kSteps / 2;  // slices in flight per connection: NCCL_STEPS (8) / Simple SLICESTEPS (2)
  int parallel_jobs = 2;         // simulations run side by side in child processes
  bool record_transfers = false; // return start/end of every transfer
  // simulate_workload only: one simulation per group of records that share no constraint, and per
  // barrier-separated operation (sim/split.h; exact up to SimGrid's precision, docs/engine.md).
  bool split_independent = false;
  // Solve max-min with sim/fluid_network.h instead of SimGrid: the same model, re-solved only where
  // a completion can change rates (docs/engine.md, "The fluid solver"). For systems of thousands of
  // concurrent flows (an MoE layer's rails), where SimGrid's full re-solve per event dominates.
  bool fluid_solver = false;
};

struct LinkStat {
  std::string from, to;   // vertex names, in the direction of traffic
  std::string label;      // link description
  LinkKind kind = LinkKind::NvLink;
  double bandwidth_Bps = 0;
  double bytes = 0;       // bytes carried in this direction
  double busy_s = 0;      // time with at least one flow on it
};

struct SimResult {
  double time_s = 0;                      // last transfer end (operation time)
  std::vector<double> rank_finish_s;      // per rank: end of the last transfer it sends or receives
  std::vector<double> transfer_start_s;   // per schedule transfer (record_transfers only)
  std::vector<double> transfer_end_s;
  std::vector<LinkStat> links;            // every link direction that carried bytes, busiest first
  std::size_t transfers = 0;              // records in the schedule
  std::size_t flows_simulated = 0;        // SimGrid flows actually created
  int symmetry_order = 1;                 // images per simulated transfer
  int merge_bundle = 1;                   // flows per merged record
};

// Simulates each schedule independently (in parallel child processes) and returns their results in order.
std::vector<SimResult> simulate(const Topology& topo, const std::vector<Schedule>& schedules,
                                const EngineOptions& options);

// A size sweep of one schedule: `reference` is simulated once per size with every byte count scaled
// by size / reference.size_bytes (ring and tree schedules are linear in the size). The size-independent
// preparation (merging, symmetry) is done once.
std::vector<SimResult> simulate_sweep(const Topology& topo, const Schedule& reference,
                                      const std::vector<double>& sizes_bytes, const EngineOptions& options);

// Several sweeps at once (e.g. the sizes of a prediction that run with different protocols): the
// schedules' preparation is shared where their structure is the same, and all sizes of all sweeps
// share one pool of child processes. `pipeline_depth` overrides the options' per sweep.
struct SweepJob {
  const Schedule* schedule = nullptr;
  std::vector<double> sizes_bytes;
  int pipeline_depth = nccl230::kSteps / 2;
  bool fluid_solver = false;  // this sweep on sim/fluid_network.h (EngineOptions::fluid_solver), whatever the options say
};
std::vector<std::vector<SimResult>> simulate_sweeps(const Topology& topo, const std::vector<SweepJob>& sweeps,
                                                    const EngineOptions& options);

SimResult simulate_one(const Topology& topo, const Schedule& schedule, const EngineOptions& options);

}  // namespace ccsim
