// NCCL's PAT ("Parallel Aggregated Trees", NCCL 2.23+) for reduce_scatter and all_gather with one GPU
// per node (src/include/collectives.h, PatRSAlgorithm / PatAGAlgorithm), as a Schedule.
//
// reduce_scatter: the partial sums for destination D form a binomial tree over the offsets
// t = D - r (mod n): rank r holds slot t and sends it along dimension k = lowest set bit of t to
// rank r + 2^k, which adds it to its own slot t - 2^k. Dimensions are processed in order k = 0, 1,
// ..., ceil(log2 n) - 1, and all slots a rank sends along one dimension are aggregated into one
// message (NCCL's aggregation; its aggFactor splits it further when the slots exceed the buffer).
// Step k therefore moves count_k = #{t in [1, n) : t mod 2^(k+1) = 2^k} blocks of S/n from every
// rank to rank + 2^k: n/2, n/4, ..., 1 blocks for a power of two, (n - 1) blocks = (n-1)/n S in all,
// the ring's volume in ceil(log2 n) steps instead of n - 1. Works for any n (the tree over [0, n)
// rooted at 0 has every parent t - lowbit(t) inside it).
// all_gather is its time reverse: dimensions K-1 .. 0, rank r sends to r - 2^k.
//
// Timing (NCCL 2.30's PAT latency, nccl_model.cpp): launch baseLat[PAT][Simple] = 8 us; a step costs
// hwLat[NET][Tree][Simple] / 3.5 = 4 us plus 2.8 us per block it handles (NCCL's nRanks x 2.8 us term,
// spread over the blocks the kernel processes one by one; (n - 1) x 2.8 us in all).
// See docs/pat.md.
#pragma once
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "topologies/topology.h"

namespace ccsim {

struct PatTiming {
  double launch_s = 8.0e-6;      // baseLat[PAT][Simple]
  double step_s = 14.0e-6 / 3.5; // hwLat[NET][Tree][Simple] / 3.5 (NCCL uses the Tree row for 1 GPU per node)
  double per_block_s = 2.8e-6;   // NCCL's per-rank term
};

// Throws InputError unless NCCL could run PAT: all_gather or reduce_scatter, one GPU per node, >= 2 nodes.
void check_pat(const Topology& topo, const std::string& collective, const std::string& where = "--algo pat");

// Steps: ceil(log2 n). Blocks of S/n moved by every rank in step k (dimension k).
int pat_steps(int nranks);
int pat_blocks(int nranks, int dimension);

// The schedule (`size_bytes` is the nccl-tests size: the gathered / the input buffer). Records are
// emitted step by step; `step` is the schedule step (reduce_scatter: dimension = step; all_gather:
// dimension = K - 1 - step); each rank's step waits for its previous step's receive and send.
Schedule pat_schedule(const Topology& topo, const std::string& collective, double size_bytes,
                      const PatTiming& timing = {});

// Closed form: launch + sum over steps of (fixed cost of the step, at least its route latency, +
// the step's bytes / the bandwidth of its busiest link direction).
double pat_time_s(const Topology& topo, const std::string& collective, double size_bytes,
                  const PatTiming& timing = {});

}  // namespace ccsim
