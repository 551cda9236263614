#include "scenarios/moe/placement.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "common/error.h"
#include "common/text.h"

namespace ccsim::moe {
namespace {

// Fills replica_offsets / replica_ranks from slot_expert (slots in ascending order, so each
// expert's replica ranks come out ascending).
void index_replicas(Placement& p, int experts) {
  p.replica_offsets.assign(experts + 1, 0);
  for (std::int32_t e : p.slot_expert) ++p.replica_offsets[e + 1];
  for (int e = 0; e < experts; ++e) p.replica_offsets[e + 1] += p.replica_offsets[e];
  p.replica_ranks.resize(p.slot_expert.size());
  std::vector<std::int32_t> next(p.replica_offsets.begin(), p.replica_offsets.end() - 1);
  for (std::size_t s = 0; s < p.slot_expert.size(); ++s)
    p.replica_ranks[next[p.slot_expert[s]]++] = static_cast<std::int32_t>(s / p.slots_per_rank);
}

// eplb.py's rebalance_experts_hierarchical for one layer: `groups` expert groups packed onto
// `nodes` nodes, replication within each node to slots/nodes physical experts, then balanced
// packing of each node's physical experts onto its GPUs. Returns physical slot -> logical expert.
std::vector<std::int32_t> rebalance(const std::vector<double>& load, int slots, int groups, int nodes, int gpus) {
  const int experts = static_cast<int>(load.size());
  const int group_size = experts / groups, groups_per_node = groups / nodes;
  const int experts_per_node = experts / nodes, slots_per_node = slots / nodes;
  const int gpus_per_node = gpus / nodes, slots_per_gpu = slots / gpus;

  // Step 1: groups to nodes. mlog (node-major logical order) -> logical expert.
  std::vector<double> group_load(groups, 0.0);
  for (int e = 0; e < experts; ++e) group_load[e / group_size] += load[e];
  const Packing group_pack = balanced_packing(group_load, nodes);
  std::vector<int> mlog_to_log(experts);
  for (int g = 0; g < groups; ++g) {
    const int base = (group_pack.pack[g] * groups_per_node + group_pack.rank_in_pack[g]) * group_size;
    for (int i = 0; i < group_size; ++i) mlog_to_log[base + i] = g * group_size + i;
  }

  std::vector<std::int32_t> slot_expert(slots);
  for (int node = 0; node < nodes; ++node) {
    // Step 2: replicate within the node.
    std::vector<double> node_load(experts_per_node);
    for (int i = 0; i < experts_per_node; ++i) node_load[i] = load[mlog_to_log[node * experts_per_node + i]];
    const std::vector<int> phy_to_mlog = replicate_experts(node_load, slots_per_node);
    std::vector<int> count(experts_per_node, 0);
    for (int m : phy_to_mlog) ++count[m];
    // Step 3: the node's physical experts (load shared equally by replicas) onto its GPUs.
    std::vector<double> phy_load(slots_per_node);
    for (int p = 0; p < slots_per_node; ++p) phy_load[p] = node_load[phy_to_mlog[p]] / count[phy_to_mlog[p]];
    const Packing gpu_pack = balanced_packing(phy_load, gpus_per_node);
    for (int p = 0; p < slots_per_node; ++p) {
      const int slot = node * slots_per_node + gpu_pack.pack[p] * slots_per_gpu + gpu_pack.rank_in_pack[p];
      slot_expert[slot] = mlog_to_log[node * experts_per_node + phy_to_mlog[p]];
    }
  }
  return slot_expert;
}

}  // namespace

PlacementSpec parse_placement_spec(const std::string& text, const std::string& where) {
  PlacementSpec spec;
  if (text == "contiguous") return spec;
  const auto colon = text.find(':');
  const std::string head = text.substr(0, colon);
  if ((head == "eplb" || head == "eplb-global") && colon != std::string::npos) {
    const std::string num = text.substr(colon + 1);
    char* end = nullptr;
    const long r = std::strtol(num.c_str(), &end, 10);
    if (num.empty() || end != num.c_str() + num.size() || r < 0 || r > 1'000'000)
      throw InputError(where, "'" + cut_for_message(text) + "': redundant experts must be a whole number >= 0");
    spec.kind = head == "eplb" ? PlacementKind::EplbHierarchical : PlacementKind::EplbGlobal;
    spec.redundant = static_cast<int>(r);
    return spec;
  }
  throw InputError(where, "unknown placement '" + cut_for_message(text) + "' (contiguous, eplb:R, eplb-global:R)");
}

std::string placement_spec_name(const PlacementSpec& spec) {
  switch (spec.kind) {
    case PlacementKind::Contiguous: return "contiguous";
    case PlacementKind::EplbHierarchical: return "eplb:" + std::to_string(spec.redundant);
    case PlacementKind::EplbGlobal: return "eplb-global:" + std::to_string(spec.redundant);
  }
  return "";
}

Placement contiguous_placement(const MoeConfig& config) {
  if (config.experts % config.ep != 0)
    throw InputError("--experts", "contiguous placement needs EP (" + std::to_string(config.ep) +
                                      ") to divide the experts (" + std::to_string(config.experts) + ")");
  Placement p;
  p.ep = config.ep;
  p.gpus_per_node = config.gpus_per_node;
  p.slots_per_rank = config.experts / config.ep;
  p.slot_expert.resize(config.experts);
  std::iota(p.slot_expert.begin(), p.slot_expert.end(), 0);
  index_replicas(p, config.experts);
  return p;
}

Packing balanced_packing(const std::vector<double>& weight, int packs) {
  const int n = static_cast<int>(weight.size());
  const int per_pack = n / packs;
  Packing out;
  out.pack.assign(n, 0);
  out.rank_in_pack.assign(n, 0);
  if (per_pack == 1) {
    std::iota(out.pack.begin(), out.pack.end(), 0);
    return out;
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return weight[a] > weight[b]; });
  std::vector<double> pack_weight(packs, 0.0);
  std::vector<int> pack_items(packs, 0);
  for (int item : order) {
    int best = -1;
    for (int p = 0; p < packs; ++p)
      if (pack_items[p] < per_pack && (best < 0 || pack_weight[p] < pack_weight[best])) best = p;
    out.pack[item] = best;
    out.rank_in_pack[item] = pack_items[best]++;
    pack_weight[best] += weight[item];
  }
  return out;
}

std::vector<int> replicate_experts(const std::vector<double>& weight, int slots) {
  const int n = static_cast<int>(weight.size());
  std::vector<int> phy(slots);
  std::iota(phy.begin(), phy.begin() + n, 0);
  std::vector<int> count(n, 1);
  for (int s = n; s < slots; ++s) {
    int best = 0;
    for (int e = 1; e < n; ++e)
      if (weight[e] / count[e] > weight[best] / count[best]) best = e;
    phy[s] = best;
    ++count[best];
  }
  return phy;
}

Placement eplb_placement(const MoeConfig& config, const std::vector<double>& load, const PlacementSpec& spec,
                         const std::string& where) {
  const int experts = config.experts, ep = config.ep;
  if (spec.redundant < 0) throw InputError(where, "redundant experts must be >= 0");
  const int slots = experts + spec.redundant;
  if (slots % ep != 0)
    throw InputError(where, "experts + redundant (" + std::to_string(experts) + " + " + std::to_string(spec.redundant) +
                                ") must be a multiple of EP (" + std::to_string(ep) + ")");
  Placement p;
  p.ep = ep;
  p.gpus_per_node = config.gpus_per_node;
  p.slots_per_rank = slots / ep;
  const bool hierarchical = spec.kind == PlacementKind::EplbHierarchical;
  // Hierarchical: the node groups of node-limited routing (E/N experts each), one per node, so a
  // token's node limit survives placement. Global: one group, one "node" of all EP GPUs.
  const int nodes = hierarchical ? config.nodes() : 1;
  const std::vector<std::int32_t> slot_expert = rebalance(load, slots, nodes, nodes, ep);
  p.slot_expert = slot_expert;
  index_replicas(p, experts);
  return p;
}

}  // namespace ccsim::moe
