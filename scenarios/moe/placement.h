// Where the experts live (issue 9). Contiguous: rank r hosts logical experts [r*E/EP, (r+1)*E/EP).
// EPLB (DeepSeek's eplb.py, github.com/deepseek-ai/eplb): R redundant slots; replicate the expert
// with the highest load per replica until E+R slots are filled, then pack the physical experts
// onto GPUs with balanced packing (equal slots per GPU, heaviest first onto the lightest GPU).
// Hierarchical (prefill; eplb.py's rebalance_experts_hierarchical): pack expert groups to nodes,
// replicate within each node, pack within the node. Global (decode): the same with one group and
// one node. A token of a replicated expert goes to one replica chosen by choose_replica.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/moe/config.h"

namespace ccsim::moe {

enum class PlacementKind { Contiguous, EplbHierarchical, EplbGlobal };

// What EPLB balances: the routing's expected per-expert load (the limit of a long history; the
// default for generated routings) or the measured counts of the routing itself (an oracle fit;
// the only choice for traces).
enum class EplbFit { Expected, Measured };

struct PlacementSpec {
  PlacementKind kind = PlacementKind::Contiguous;
  int redundant = 0;           // R extra physical slots (EPLB only)
  EplbFit fit = EplbFit::Expected;
};

// Parses "contiguous", "eplb:R" (hierarchical), "eplb-global:R". Errors name `where`.
PlacementSpec parse_placement_spec(const std::string& text, const std::string& where = "--placement");
std::string placement_spec_name(const PlacementSpec& spec);

struct Placement {
  int ep = 0;
  int gpus_per_node = 0;
  int slots_per_rank = 0;                  // (E + R) / EP
  std::vector<std::int32_t> slot_expert;   // physical slot -> logical expert; slot s is on rank s / slots_per_rank
  // Replicas of logical expert e: replica_ranks[replica_offsets[e] .. replica_offsets[e+1]), in
  // ascending rank order (a rank hosting two replicas of e appears twice).
  std::vector<std::int32_t> replica_offsets;
  std::vector<std::int32_t> replica_ranks;

  int replicas(int expert) const { return replica_offsets[expert + 1] - replica_offsets[expert]; }
  // The rank that serves (token, expert) for a token owned by `src`. One replica: its rank.
  // Several: the replica on src itself if there is one (no transfer; SGLang's static EPLB dispatch
  // also prefers a replica on the same GPU), else round-robin over all replicas by the token's
  // global index, which splits the expert's tokens evenly as EPLB assumes. (Preferring same-node
  // replicas would save RDMA but unbalances replicas: at EP32 ratio:2.5 with eplb-global:32 it
  // gave 1.24x hottest/mean instead of 1.01x.)
  // Inline: called once per (token, expert) pair of every traffic computation.
  int choose_replica(int expert, int src, std::int64_t token) const {
    const int begin = replica_offsets[expert], end = replica_offsets[expert + 1];
    if (end - begin == 1) return replica_ranks[begin];
    for (int i = begin; i < end; ++i)
      if (replica_ranks[i] == src) return src;
    return replica_ranks[begin + static_cast<int>(token % (end - begin))];
  }
};

Placement contiguous_placement(const MoeConfig& config);

// EPLB over per-expert `load` (size E). Throws InputError (where) if (E+R) is not a multiple of EP,
// R < 0, or (hierarchical) the node count does not divide the expert groups.
Placement eplb_placement(const MoeConfig& config, const std::vector<double>& load,
                         const PlacementSpec& spec, const std::string& where = "--placement");

// eplb.py's building blocks, exposed for tests.
// balanced_packing: items (weights) into `packs` packs of equal item count; heaviest item first
// (ties: lower index first) onto the lightest pack that still has room (ties: lower pack index).
// Returns every item's pack and its position in the pack (order of arrival); with one item per
// pack, item i goes to pack i (as eplb.py).
struct Packing {
  std::vector<int> pack;
  std::vector<int> rank_in_pack;
};
Packing balanced_packing(const std::vector<double>& weight, int packs);
// replicate_experts: to `slots` >= weight.size() physical experts; each extra slot replicates the
// expert with the highest weight / replicas (ties: lower index). Returns slot -> logical expert
// (the first weight.size() slots are the experts themselves).
std::vector<int> replicate_experts(const std::vector<double>& weight, int slots);

}  // namespace ccsim::moe
