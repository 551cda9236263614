// The closed-form alpha-beta model of ring collectives, the yardstick the engine is tested against:
//   all_reduce:                 T = launch + 2(n-1)*alpha + 2(n-1)/n * S/beta
//   all_gather, reduce_scatter: T = launch +  (n-1)*alpha +  (n-1)/n * S/beta
// where alpha is the fixed cost of one step and beta the bandwidth one ring step gets.
#pragma once
#include <string>

#include "algorithms/ring.h"
#include "algorithms/step_timing.h"
#include "topologies/topology.h"

namespace ccsim {

struct AlphaBeta {
  double launch_s = 0;   // once per operation
  double alpha_s = 0;    // per step: mean over the ring's hops of max(NCCL per-step latency, route latency)
  double beta_Bps = 0;   // per step: S/n bytes cross every hop in (S/n)/beta seconds at the bottleneck
  std::string bottleneck;  // the link that sets beta, e.g. "n0.nic0 -> leaf.g0.r0 (NDR 400Gb/s IB)"
};

double ring_closed_form_time_s(const std::string& collective, int nranks, double size_bytes, const AlphaBeta& ab);

// alpha and beta of a ring plan on a topology. beta accounts for families that share a link
// direction: a link carrying k of the F families' hops gives beta = bandwidth * F / k.
// `wire_factor` is the protocol's bytes on the wire per data byte (beta shrinks by it).
AlphaBeta ring_alpha_beta(const Topology& topo, const RingPlan& plan, const StepTiming& timing, double wire_factor = 1.0);

// The knee S* = n * alpha * beta: below it the latency bill dominates, above it the bandwidth bill.
double knee_bytes(int nranks, const AlphaBeta& ab);

}  // namespace ccsim
