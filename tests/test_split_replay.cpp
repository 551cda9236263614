// sim/split.h: independent groups and barrier-separated operations in separate simulations give the
// one-simulation replay's results.
#include <gtest/gtest.h>

#include <cmath>

#include "scenarios/moe/layer_report.h"
#include "sim/split.h"
#include "test_helpers.h"
#include "topologies/routing.h"
#include "workloads/workload.h"

namespace ccsim {
namespace {

void expect_close(double a, double b) { EXPECT_NEAR(a, b, 1e-9 * std::max(std::abs(a), std::abs(b)) + 1e-15); }

moe::LayerReport layer(const Topology& topo, moe::Transport transport, bool split) {
  moe::LayerRequest q;
  q.config.ep = topo.num_gpus();
  q.config.gpus_per_node = topo.gpus_per_node();
  q.config.tokens_per_rank = 512;
  q.config.node_limit = 4;
  q.routing = moe::parse_routing_spec("ratio:2.5");
  q.transports = {transport};
  q.expert_compute_us = 30;
  // Unsplit: one SimGrid simulation, the reference. Split: the layer's default (split, fluid solver).
  q.engine.split_independent = split;
  q.engine.fluid_solver = split;
  return moe::run_layer(topo, q);
}

void expect_same_phase(const moe::PhaseReport& a, const moe::PhaseReport& b) {
  expect_close(a.time_us, b.time_us);
  expect_close(a.mean_rank_time_us, b.mean_rank_time_us);
  EXPECT_EQ(a.busiest_link, b.busiest_link);
  expect_close(a.busiest_link_utilization, b.busiest_link_utilization);
  EXPECT_EQ(a.slowest_rank, b.slowest_rank);
  EXPECT_EQ(a.bottleneck, b.bottleneck);
}

TEST(SplitReplay, MoeLayerEqualsOneSimulation) {
  // EP32 (4 dgx-h100 nodes): the speed levers (split groups, each on the fluid solver) against one
  // SimGrid simulation of the whole layer, for each transport whose
  // groups differ (deepep-normal: rails and nodes; deepep-ll: per-GPU issue resources tie a GPU's
  // NVLink and RDMA flows; nccl: a schedule with dependencies between transfers).
  const Topology topo = testing::preset("dgx-h100", 4);
  for (moe::Transport t : {moe::Transport::DeepepNormal, moe::Transport::DeepepLowLatency, moe::Transport::Nccl}) {
    SCOPED_TRACE(moe::transport_name(t));
    const moe::LayerReport whole = layer(topo, t, false);
    const moe::LayerReport split = layer(topo, t, true);
    const SplitStats st = last_split_stats();
    EXPECT_EQ(st.segments, 2u);  // dispatch, then combine after the barrier
    if (t == moe::Transport::DeepepNormal) {
      // 8 rails + 4 nodes' NVLink per phase.
      EXPECT_EQ(st.simulations, 24u);
    }
    expect_same_phase(whole.transports[0].dispatch, split.transports[0].dispatch);
    expect_same_phase(whole.transports[0].combine, split.transports[0].combine);
    expect_close(whole.transports[0].layer_time_us, split.transports[0].layer_time_us);
  }
}

TEST(SplitReplay, IndependentFlowsKeepTheirOwnTimes) {
  // Two NVLink transfers on different nodes, then (after a barrier and a 5 us gap) one on the first
  // node: three simulations, each transfer at latency + bytes / NVLink rate on an idle path.
  const Topology topo = testing::preset("dgx-h100", 2);
  // The GPU -> NVSwitch -> GPU path: its latency and its slowest link's rate (NVLink4 x18 per direction
  // at the preset's efficiency), which one flow alone gets.
  const Route path = route_between_gpus(topo, 0, 1, -1);
  const double bw = route_bandwidth_Bps(topo, path), lat = route_latency_s(topo, path);
  EXPECT_NEAR(lat, 0.5e-6, 1e-15);  // 2 x 0.25 us
  Schedule a;
  a.nranks = topo.num_gpus();
  Transfer t;
  t.src = 0, t.dst = 1, t.bytes = 45e6;
  a.add(t, {});
  t.src = 8, t.dst = 9, t.bytes = 90e6;
  a.add(t, {});
  Schedule b;
  b.nranks = topo.num_gpus();
  t.src = 1, t.dst = 0, t.bytes = 45e6;
  b.add(t, {});
  std::vector<WorkloadOp> ops(2);
  ops[0] = {"a", a};
  ops[1] = {"b", b, WorkloadOp::Start::AfterBarrier, 0, 5e-6};
  EngineOptions o;
  o.split_independent = true;
  const WorkloadResult w = simulate_workload(topo, ops, o);
  EXPECT_EQ(last_split_stats().simulations, 3u);
  EXPECT_EQ(last_split_stats().segments, 2u);
  const double first = lat + 45e6 / bw, second = lat + 90e6 / bw;
  EXPECT_NEAR(w.ops[0].finish_s, second, 1e-12);
  EXPECT_NEAR(w.ops[1].start_s, second + 5e-6, 1e-12);
  EXPECT_NEAR(w.ops[1].finish_s, second + 5e-6 + first, 1e-12);
  o.split_independent = false;
  const WorkloadResult one = simulate_workload(topo, ops, o);
  EXPECT_NEAR(one.ops[1].finish_s, w.ops[1].finish_s, 1e-15);
  ASSERT_EQ(one.sim.links.size(), w.sim.links.size());
  for (std::size_t i = 0; i < w.sim.links.size(); ++i) {
    EXPECT_EQ(one.sim.links[i].from, w.sim.links[i].from);
    expect_close(one.sim.links[i].bytes, w.sim.links[i].bytes);
    expect_close(one.sim.links[i].busy_s, w.sim.links[i].busy_s);
  }
}

}  // namespace
}  // namespace ccsim
