#include "algorithms/closed_form.h"

#include <algorithm>
#include <limits>

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
  // link counts both directions together.
  LinkLoad load(topo);
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
      for (const Hop& h : route) load.add(h, 1.0);
    }
  }
  ab.alpha_s = hop_count ? latency_sum / hop_count : 0.0;
  ab.beta_Bps = std::numeric_limits<double>::infinity();
  for (const auto& [key, e] : load.entries()) {
    const double beta = e.bandwidth_Bps * families / e.bytes / wire_factor;  // e.bytes: the hop count
    if (beta < ab.beta_Bps) {
      ab.beta_Bps = beta;
      ab.bottleneck = describe_link_direction(topo, e.edge, key.dir);
    }
  }
  return ab;
}

double knee_bytes(int nranks, const AlphaBeta& ab) { return nranks * ab.alpha_s * ab.beta_Bps; }

}  // namespace ccsim
