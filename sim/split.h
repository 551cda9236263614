// Independent components in separate simulations (docs/engine.md "Split replay").
//
// Max-min sharing couples two flows only through a constraint they both cross (a link direction, a
// GPU's issue resource). A schedule whose records fall into groups that share no constraint, and
// whose only dependencies between groups go through zero-byte markers that no group waits for, is
// replayed exactly by one simulation per group: each group sees the same rates at the same times.
// A "cut" (a marker that every earlier record precedes and every later record follows, the barrier
// between two operations of a workload) splits the schedule in time first: the records after it
// start from its end, which is known once the records before it are done.
//
// SimGrid pays for one big system at every event (the full max-min update walks every flow, and
// each completion scans every flow in flight), so a schedule of many small groups (an MoE layer's
// rails and nodes) runs orders of magnitude faster split. Results agree with the one-simulation
// replay to SimGrid's precision (tests: SplitReplay.*).
#pragma once
#include <cstddef>
#include <vector>

#include "sim/engine.h"

namespace ccsim {

// The replay of `schedule` as simulate_one (without symmetry and merging; record_transfers is
// always on), split at those of `cut_candidates` that are cuts and into independent groups. Falls
// back to one simulation when nothing splits or the split could change a result (a route whose
// records would not all land in one group: its common delay, which the engine folds into the
// route's latency, would differ).
SimResult simulate_split(const Topology& topo, const Schedule& schedule, EngineOptions options,
                         const std::vector<std::size_t>& cut_candidates);

// How the last simulate_split call in this process divided its schedule (for tests and profiling).
struct SplitStats {
  std::size_t segments = 0;     // time segments (cuts + 1)
  std::size_t simulations = 0;  // SimGrid simulations run
  std::size_t largest = 0;      // records in the largest one
};
SplitStats last_split_stats();

}  // namespace ccsim
