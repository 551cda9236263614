// A workload: several collective operations on one topology (an MoE layer's dispatch then combine; later a
// dispatch overlapping a data-parallel all_reduce) composed into ONE simulation, so that they share links
// when they overlap, and read back per operation and per rank. The slowest rank is what routing skew and
// stragglers are about, so every operation reports each rank's start and finish, not only the last end.
//
// Composition: the operations' schedules are concatenated (steps shifted so that records of different
// operations never share a key); an operation that starts after another waits through markers
// (Transfer::is_marker), zero-byte join points of the engine:
//   - Start::AfterBarrier: one marker depends on every record of the earlier operation; every record of
//     this operation without dependencies depends on it (a global barrier, as benchmarks separate kernels).
//   - Start::AfterRank: per rank, a marker depends on the earlier operation's records that rank sends or
//     receives (and on the earlier operation's own markers at that rank); the rank's first records of this
//     operation wait for it (the rank starts as soon as its own part is done, as a real layer runs).
// `gap_s` (compute between the two, e.g. the expert GEMMs) is the markers' delay.
#pragma once
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "sim/engine.h"
#include "topologies/topology.h"

namespace ccsim {

struct WorkloadOp {
  enum class Start { AtZero, AfterBarrier, AfterRank };
  std::string name;
  Schedule schedule;           // GPU endpoints only (no switch endpoints)
  Start start = Start::AtZero;
  int after = -1;              // index of an earlier operation (Start::AfterBarrier / AfterRank)
  double gap_s = 0;            // seconds between the earlier operation's end and this one's start
};

// Where operation k lies in the composed schedule: its gate markers [gate_begin, begin), then its own
// records [begin, end).
struct ComposedRange {
  std::size_t gate_begin = 0, begin = 0, end = 0;
};

struct OpTiming {
  std::string name;
  double start_s = 0;                  // earliest record start (markers excluded)
  double finish_s = 0;                 // latest record end, markers included (a marker can close a pipeline)
  std::vector<double> rank_start_s;    // per rank: when this operation could start at that rank
  std::vector<double> rank_finish_s;   // per rank: last end of a record it sends or receives, or of a
                                       // marker at that rank (0 when it takes no part)
  double time_s() const { return finish_s - start_s; }
};

struct WorkloadResult {
  std::vector<OpTiming> ops;
  SimResult sim;                       // the whole simulation (links over all operations)
  Schedule composed;                   // what was simulated
  std::vector<ComposedRange> ranges;   // per operation: where its gates and records are in `composed`
};

// Concatenates the operations into one schedule (see above). Throws std::invalid_argument when an
// operation names a later one, the rank counts differ or a schedule has switch endpoints.
Schedule compose_workload(const std::vector<WorkloadOp>& ops, std::vector<ComposedRange>* ranges);

// Simulates the composed workload in one engine run (record_transfers on; symmetry and merging off, since
// skewed workloads have neither) and reads each operation's per-rank times.
WorkloadResult simulate_workload(const Topology& topo, const std::vector<WorkloadOp>& ops, EngineOptions options);

}  // namespace ccsim
