// Pipelines past their chunk cap. Chunked schedules (Tree, NVLSTree, CollNet) build at most a fixed
// number of chunks per connection, to bound the flows the engine simulates. NCCL keeps its chunk size
// and runs more chunks instead; once the pipeline is full every extra chunk costs one period, so the
// operation time is affine in the number of chunks. Simulating the schedule at its cap (C chunks of
// the nominal size, size_full) and at half of it (C/2 chunks, size_full / 2) measures that period;
// larger sizes extend the line: T(S) = T(full) + (S - full) (T(full) - T(half)) / (full - half).
// Enlarging the chunks instead (what the builders do past the cap) would also stretch the pipeline's
// fill and drain with the chunk size.
#pragma once
#include "sim/engine.h"

namespace ccsim {

// The result at `size_bytes` (> full_size_bytes) extended from the two simulations: the operation
// time and every rank's finish time on the line through them; link bytes scale with the size, link
// busy times follow their own line (a link absent at half size scales with the size).
SimResult extend_pipeline(const SimResult& half, const SimResult& full, double full_size_bytes, double size_bytes);

}  // namespace ccsim
