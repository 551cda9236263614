// The closed form of a pipelined tree all_reduce, the yardstick the engine's tree replay is tested
// against (docs/tree.md). A tree schedule moves C chunks through a DAG of hops (up the chains and the
// inter-node trees, then down); every connection sends its chunks one after the other (FIFO).
//
// Estimate, the textbook pipeline with one bottleneck:
//   T = launch + P + (C - 1) * tau
// P:   the first chunk's longest dependency path, every hop costing NCCL's per-step latency (the
//      schedule's fixed delay plus the route latency) plus the chunk at its share of the hop's links:
//      siblings (hops of the same depth that share a link direction, e.g. two children sending to
//      their parent) split it;
// tau: the steady-state time per chunk at the busiest link direction: the one-chunk schedule puts
//      `load` bytes on it, so it passes one chunk of every connection every load / bandwidth seconds.
// Exact for one chunk (the latency-bound regime: 8 B gives NCCL's Tree latency) and within 2% of
// the engine for many (the bandwidth-bound regime).
//
// Lower bound, which no schedule of these hops can beat:
//   T >= launch + max(P + (C - 1) * (slowest sibling-shared stage on the critical path),
//                     max over link directions L of (first byte on L + C * load_L / bw_L + shortest tail after L))
// Between the two regimes (a few chunks whose time is comparable to the step latency) the engine's
// work-conserving links start the bottleneck's work while the pipeline still fills, and the engine
// lies between the bound and the estimate (docs/tree.md has the ratios).
#pragma once
#include <string>

#include "algorithms/tree.h"
#include "topologies/topology.h"

namespace ccsim {

struct TreeClosedForm {
  double time_s = 0;          // the estimate
  double lower_bound_s = 0;   // the bound
  double launch_s = 0;
  double first_chunk_s = 0;   // P: longest path of one chunk (fixed costs + bytes at the sibling-shared rate)
  double stage_s = 0;         // tau: time per chunk at the busiest link direction
  double path_latency_s = 0;  // fixed costs along that path (the 8-byte limit of P)
  int chunks = 1;
  int path_hops = 0;          // hops on the longest path: 2((ppn - 1) + depth) for a balanced tree
  std::string bottleneck;     // the busiest link direction, e.g. "n0.nic0 -> leaf.g0.r0 (...)"
};

TreeClosedForm tree_closed_form(const Topology& topo, const TreePlan& plan, double size_bytes,
                                const TreeScheduleOptions& options);

}  // namespace ccsim
