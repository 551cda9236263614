// The levers behind ccsim's scale (docs/performance.md, "Scale"), each against the result without it:
// the closed form's flat link accumulator against LinkLoad's map.
#include <gtest/gtest.h>

#include <limits>

#include "algorithms/closed_form.h"
#include "algorithms/nccl_model.h"
#include "algorithms/ring.h"
#include "test_helpers.h"
#include "topologies/routing.h"

namespace ccsim {
namespace {

using testing::preset;
using testing::single_gpu_nodes_spec;

// ring_alpha_beta as it was before the flat accumulator: hop counts in LinkLoad's std::map, the first
// narrowest link direction in key order.
AlphaBeta alpha_beta_with_link_load(const Topology& topo, const RingPlan& plan, const StepTiming& timing,
                                    double wire_factor) {
  AlphaBeta ab;
  ab.launch_s = timing.launch_s;
  const int gpn = topo.gpus_per_node();
  const int families = static_cast<int>(plan.families.size());
  LinkLoad load(topo);
  double latency_sum = 0;
  std::size_t hop_count = 0;
  for (const auto& fam : plan.families) {
    const int n = static_cast<int>(fam.order.size());
    for (int p = 0; p < n; ++p) {
      const int src = fam.order[p], dst = fam.order[(p + 1) % n];
      const int rail = src / gpn != dst / gpn ? fam.rail : -1;
      const Route route = route_between_gpus(topo, src, dst, rail);
      latency_sum += std::max(step_latency_s(topo, timing, src, dst, rail), route_latency_s(topo, route));
      ++hop_count;
      for (const Hop& h : route) load.add(h, 1.0);
    }
  }
  ab.alpha_s = hop_count ? latency_sum / hop_count : 0.0;
  ab.beta_Bps = std::numeric_limits<double>::infinity();
  for (const auto& [key, e] : load.entries()) {
    const double beta = e.bandwidth_Bps * families / e.bytes / wire_factor;
    if (beta < ab.beta_Bps) {
      ab.beta_Bps = beta;
      ab.bottleneck = describe_link_direction(topo, e.edge, key.dir);
    }
  }
  return ab;
}

void expect_same_alpha_beta(const Topology& topo, int channels, Proto proto) {
  const RingPlan plan = plan_rings(topo, channels);
  const RingProtocol p = ring_protocol(proto);
  const AlphaBeta a = ring_alpha_beta(topo, plan, p.timing, p.wire_factor);
  const AlphaBeta b = alpha_beta_with_link_load(topo, plan, p.timing, p.wire_factor);
  EXPECT_EQ(a.launch_s, b.launch_s);
  EXPECT_EQ(a.alpha_s, b.alpha_s);
  EXPECT_EQ(a.beta_Bps, b.beta_Bps);
  EXPECT_EQ(a.bottleneck, b.bottleneck);
}

TEST(Scale, ClosedFormFlatAccumulatorEqualsLinkLoad) {
  // Ties everywhere (every NIC equally loaded), several leaf groups, PCIe-only nodes, one node.
  expect_same_alpha_beta(preset("dgx-h100", 1), 16, Proto::Simple);
  expect_same_alpha_beta(preset("dgx-h100", 4), 16, Proto::LL);
  expect_same_alpha_beta(preset("dgx-h100", 64), 16, Proto::Simple);
  expect_same_alpha_beta(preset("hgx-a100", 8), 8, Proto::LL128);
  expect_same_alpha_beta(build_topology(single_gpu_nodes_spec(16, 4, 2.0), "test"), 2, Proto::Simple);
}

}  // namespace
}  // namespace ccsim
