#include "algorithms/closed_form.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

#include "common/flat_hash.h"
#include "topologies/routing.h"

namespace ccsim {

double ring_closed_form_time_s(const std::string& collective, int nranks, double size_bytes, const AlphaBeta& ab) {
  if (nranks < 2) return 0.0;
  const double steps = ring_steps(collective, nranks);
  return ab.launch_s + steps * ab.alpha_s + steps / nranks * size_bytes / ab.beta_Bps;
}

AlphaBeta ring_alpha_beta(const Topology& topo, const RingPlan& plan, const StepTiming& timing, double wire_factor) {
  AlphaBeta ab;
  ab.launch_s = timing.launch_s;
  const int gpn = topo.gpus_per_node();
  const int families = static_cast<int>(plan.families.size());
  // Link direction -> number of family hops crossing it per step (each hop adds 1). A shared-duplex
  // link counts both directions together. A flat hash over the packed link direction, not LinkLoad's
  // std::map: at 32768 GPUs the ring has 262k hops over ~1.3M link crossings, and the map's
  // allocations and pointer chases were the closed form's largest cost (docs/performance.md).
  struct Load {
    LinkDirectionKey key;
    EdgeId edge;
    double bandwidth_Bps = 0;
    double hops = 0;
  };
  std::vector<Load> loads;
  FlatKeyMap index(static_cast<std::size_t>(topo.num_gpus()) * 8);
  const auto add = [&](const Hop& h) {
    const LinkDirectionKey k = link_direction_key(topo, h);
    // 30 bits per vertex id and 2 for the direction (checked below the loop's start).
    const std::uint64_t packed = (static_cast<std::uint64_t>(k.low) << 32) | (static_cast<std::uint64_t>(k.high) << 2) |
                                 static_cast<std::uint64_t>(k.dir);
    std::uint32_t i = static_cast<std::uint32_t>(loads.size());
    if (index.insert(packed, i))
      loads.push_back({k, h.edge, topo.link(h.edge).bandwidth_Bps, 0.0});
    else
      index.find(packed, &i);
    loads[i].hops += 1.0;
  };
  if (boost::num_vertices(topo.graph()) >= (std::size_t{1} << 30))
    throw std::invalid_argument("ring_alpha_beta: more than 2^30 topology vertices");
  double latency_sum = 0;
  std::size_t hop_count = 0;
  for (const auto& fam : plan.families) {
    const int n = static_cast<int>(fam.order.size());
    for (int p = 0; p < n; ++p) {
      const int src = fam.order[p], dst = fam.order[(p + 1) % n];
      const bool inter = src / gpn != dst / gpn;
      const int rail = inter ? fam.rail : -1;
      const Route route = route_between_gpus(topo, src, dst, rail);
      latency_sum += std::max(step_latency_s(topo, timing, src, dst, rail), route_latency_s(topo, route));
      ++hop_count;
      for (const Hop& h : route) add(h);
    }
  }
  ab.alpha_s = hop_count ? latency_sum / hop_count : 0.0;
  ab.beta_Bps = std::numeric_limits<double>::infinity();
  // The narrowest link direction; among equal ones the first in LinkDirectionKey order (the order
  // LinkLoad's map iterated in, so the reported bottleneck does not depend on the hash).
  const Load* best = nullptr;
  for (const Load& e : loads) {
    const double beta = e.bandwidth_Bps * families / e.hops / wire_factor;
    if (beta < ab.beta_Bps || (best && beta == ab.beta_Bps && e.key < best->key)) {
      ab.beta_Bps = beta;
      best = &e;
    }
  }
  if (best) ab.bottleneck = describe_link_direction(topo, best->edge, best->key.dir);
  return ab;
}

double knee_bytes(int nranks, const AlphaBeta& ab) { return nranks * ab.alpha_s * ab.beta_Bps; }

}  // namespace ccsim
