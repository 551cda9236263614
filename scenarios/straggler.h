// A straggler: one rank enters the collective late (a slow data loader, a GC pause, a rank still
// in its previous kernel). Every other rank's collective then takes longer, since data must pass
// through the late rank; the late rank's own collective time (finish - its own start) is the
// shortest, which is how NCCL slowness is diagnosed from per-rank timings: the rank that waited
// least is the one everyone waited for.
#pragma once
#include <vector>

#include "algorithms/schedule.h"
#include "sim/engine.h"

namespace ccsim {

// The schedule with `rank` starting `delay_s` late: every transfer that `rank` sends and that has
// no dependency (where the rank's part of the collective begins) gets `delay_s` more fixed delay.
// Transfers that depend on those are delayed by the replay itself.
Schedule delay_rank_start(Schedule schedule, int rank, double delay_s);

struct StragglerTimes {
  std::vector<double> per_rank_s;  // per rank: rank_finish_s - that rank's own start
  int shortest_rank = 0;           // the rank whose collective was shortest (first on ties)
};

// Per-rank collective times of a replay where `late_rank` started `delay_s` late (0: no straggler).
StragglerTimes per_rank_collective_times(const SimResult& result, int late_rank, double delay_s);

}  // namespace ccsim
