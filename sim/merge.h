// Flows that provably share path and timing are simulated as one. Records with the same source,
// destination, rail, family, step, delay, byte count and (merged) dependencies start together on the
// same route. Replacing each such bundle of k equal flows by one flow of k times the bytes leaves
// max-min sharing unchanged only if every bundle in the schedule has the same k, so merging is all
// or nothing: with uneven bundles the schedule is returned unchanged.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "algorithms/schedule.h"

namespace ccsim {

struct MergedSchedule {
  std::optional<Schedule> merged;        // the merged records; empty when nothing merged
  std::vector<std::uint32_t> merged_of;  // original transfer -> merged record
  int bundle = 1;                        // flows per merged record (1: nothing merged)

  // The schedule to simulate: the merged one, or the original (not copied: it can hold millions of records).
  const Schedule& schedule_or(const Schedule& original) const { return merged ? *merged : original; }
};

MergedSchedule merge_identical_transfers(const Schedule& schedule);

// The trivial result: nothing merged.
MergedSchedule unmerged(const Schedule& schedule);

}  // namespace ccsim
