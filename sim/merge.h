// Flows that provably share path and timing are simulated as one. Records with the same source,
// destination, rail, family, step, delay, byte count and (merged) dependencies start together on the
// same route. Replacing each such bundle of k equal flows by one flow of k times the bytes leaves
// max-min sharing unchanged only if every bundle in the schedule has the same k, so merging is all
// or nothing: with uneven bundles the schedule is returned unchanged.
#pragma once
#include <cstdint>
#include <vector>

#include "algorithms/schedule.h"

namespace ccsim {

struct MergedSchedule {
  Schedule schedule;                     // the merged records
  std::vector<std::uint32_t> merged_of;  // original transfer -> merged record
  int bundle = 1;                        // flows per merged record (1: nothing merged)
};

MergedSchedule merge_identical_transfers(const Schedule& schedule);

}  // namespace ccsim
