// The closed form of a pipelined tree all_reduce, the yardstick the engine's tree replay is tested
// against (docs/tree.md). A tree schedule moves C chunks through a DAG of hops (up the chains and the
// inter-node trees, then down); every connection sends its chunks one after the other. The textbook
// pipeline with one bottleneck stage:
//   T = launch + P - s_b + C * tau
// tau: the steady-state time per chunk at the busiest link direction: the one-chunk schedule puts
//      `load` bytes on it, so it passes one chunk of every connection every load / bandwidth seconds;
//      it is busy for C * tau;
// P:   the first chunk's longest dependency path, every hop costing NCCL's per-step latency (the
//      schedule's fixed delay plus the route latency) plus the chunk at the route's idle rate: while
//      the pipeline fills and drains the other hops carry fewer connections than in steady state;
// s_b: the slowest idle stage on that path, the one whose time the bottleneck's C * tau already holds.
// For 8 bytes (one chunk, negligible bytes) T is NCCL's Tree latency: launch + the path's hop costs.
#pragma once
#include <string>

#include "algorithms/tree.h"
#include "topologies/topology.h"

namespace ccsim {

struct TreeClosedForm {
  double time_s = 0;
  double launch_s = 0;
  double first_chunk_s = 0;  // P: longest path of one chunk (fixed costs + bytes at the idle rate)
  double slowest_idle_stage_s = 0;  // s_b
  double stage_s = 0;        // tau: time per chunk at the busiest link direction
  double path_latency_s = 0; // fixed costs along that path (the 8-byte limit of P)
  int chunks = 1;
  int path_hops = 0;         // hops on the longest path: 2((ppn - 1) + depth) for a balanced tree
  std::string bottleneck;    // the busiest link direction, e.g. "n0.nic0 -> leaf.g0.r0 (...)"
};

TreeClosedForm tree_closed_form(const Topology& topo, const TreePlan& plan, double size_bytes,
                                const TreeScheduleOptions& options);

}  // namespace ccsim
