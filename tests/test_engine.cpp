// The engine against hand-derived numbers: closed-form ring times on uncongested topologies,
// link sharing, oversubscription, and the speed levers (merging, symmetry) leaving results unchanged.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/closed_form.h"
#include "algorithms/ring.h"
#include "sim/engine.h"
#include "test_helpers.h"
#include "topologies/routing.h"

namespace ccsim {
namespace {

using testing::preset;
using testing::single_gpu_nodes_spec;

// Hand-derived parameters of single_gpu_nodes_spec: the NIC (400 Gb/s = 50 GB/s) is narrower than
// PCIe Gen5 x16 (63 GB/s); every ring step costs NCCL's NET Ring/Simple latency of 14 us (the
// physical route latency is below it); the operation pays the 8.4 us launch once.
constexpr double kNicBps = 400e9 / 8;
constexpr double kStepS = 14e-6;
constexpr double kLaunchS = 8.4e-6;

double hand_ring_time(const std::string& collective, int n, double bytes, double beta) {
  const double steps = collective == "all_reduce" ? 2.0 * (n - 1) : n - 1.0;
  return kLaunchS + steps * kStepS + steps / n * bytes / beta;
}

TEST(Engine, RingMatchesClosedFormOnUniformClusters) {
  const std::vector<double> sizes = {8, 1024, 65536, 1 << 20, 16 << 20, 256.0 * (1 << 20), 8.0 * (1ull << 30)};
  for (int n : {2, 8, 64, 256}) {
    const Topology topo = build_topology(single_gpu_nodes_spec(n, 512, 1.0), "test");
    const RingPlan plan = plan_rings(topo, 2);
    for (const std::string coll : {"all_reduce", "all_gather", "reduce_scatter"}) {
      const Schedule s = ring_schedule(topo, plan, coll, sizes.back(), {});
      const auto results = simulate_sweep(topo, s, sizes, {});
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const double expected = hand_ring_time(coll, n, sizes[i], kNicBps);
        EXPECT_NEAR(results[i].time_s, expected, 0.01 * expected) << coll << " n=" << n << " size=" << sizes[i];
      }
    }
  }
}

TEST(Engine, ClosedFormModelUsesTheHandDerivedAlphaAndBeta) {
  const Topology topo = build_topology(single_gpu_nodes_spec(8, 512, 1.0), "test");
  const AlphaBeta ab = ring_alpha_beta(topo, plan_rings(topo, 2), StepTiming{});
  EXPECT_DOUBLE_EQ(ab.alpha_s, kStepS);
  EXPECT_DOUBLE_EQ(ab.beta_Bps, kNicBps);
  EXPECT_NEAR(ring_closed_form_time_s("all_reduce", 8, 1e9, ab), hand_ring_time("all_reduce", 8, 1e9, kNicBps), 1e-12);
  // Knee S* = n alpha beta = 8 * 14 us * 50 GB/s = 5.6 MB.
  EXPECT_NEAR(knee_bytes(8, ab), 5.6e6, 1.0);
}

TEST(Engine, SingleTransferTakesLatencyPlusBytesOverBandwidth) {
  const Topology topo = build_topology(single_gpu_nodes_spec(2, 512, 1.0), "test");
  Schedule s;
  s.nranks = 2;
  s.size_bytes = 1e8;
  Transfer t;
  t.src = 0;
  t.dst = 1;
  t.bytes = 1e8;
  s.add(t, {});
  const Route route = route_between_gpus(topo, 0, 1);
  const double expected = route_latency_s(topo, route) + 1e8 / kNicBps;
  EXPECT_NEAR(simulate_one(topo, s, {}).time_s, expected, 1e-9 * expected);
}

TEST(Engine, DependenciesAndDelaysChain) {
  const Topology topo = build_topology(single_gpu_nodes_spec(2, 512, 1.0), "test");
  const double lat = route_latency_s(topo, route_between_gpus(topo, 0, 1));
  Schedule s;
  s.nranks = 2;
  s.size_bytes = 2e6;
  Transfer a;
  a.src = 0;
  a.dst = 1;
  a.bytes = 1e6;
  a.delay_s = 5e-6;
  const auto first = s.add(a, {});
  Transfer b = a;
  b.src = 1;
  b.dst = 0;
  b.step = 1;
  b.delay_s = 7e-6;
  s.add(b, {first});
  const double expected = 5e-6 + lat + 1e6 / kNicBps + 7e-6 + lat + 1e6 / kNicBps;
  EXPECT_NEAR(simulate_one(topo, s, {}).time_s, expected, 1e-9 * expected);
}

// Starts after a transfer's own delay (beyond its route's) wait in the engine's agenda: X's start
// at 60 us is pending before the run; A's completion then adds two earlier ones (the marker M at
// A + 5 us and B at A + 10 us), which must end the run towards 60 us early. Every start and end
// is the hand-derived one (route latency + bytes / NIC), and M's successor C starts at M's end.
TEST(Engine, DelayedStartsAddedDuringTheRunFireAtTheirOwnTime) {
  const Topology topo = build_topology(single_gpu_nodes_spec(2, 512, 1.0), "test");
  const double lat = route_latency_s(topo, route_between_gpus(topo, 0, 1));
  ASSERT_NEAR(lat, route_latency_s(topo, route_between_gpus(topo, 1, 0)), 1e-15);
  const double bytes = 5e5, move = lat + bytes / kNicBps;  // 10 us on the NIC
  Schedule s;
  s.nranks = 2;
  s.size_bytes = bytes;
  Transfer fwd;
  fwd.src = 0;
  fwd.dst = 1;
  fwd.bytes = bytes;
  Transfer back = fwd;
  back.src = 1;
  back.dst = 0;
  const auto a = s.add(fwd, {});    // A: 0 -> 1 at 0
  s.add(back, {});                  // X0: 1 -> 0 at 0 (its route's delay is 0)
  Transfer b = fwd;
  b.step = 1;
  b.delay_s = 10e-6;
  s.add(b, {a});                    // B: 0 -> 1, 10 us after A
  Transfer m;
  m.src = m.dst = 0;
  m.step = 1;
  m.delay_s = 5e-6;
  const auto mk = s.add(m, {a});    // M: marker, 5 us after A
  Transfer c = back;
  c.step = 1;
  s.add(c, {mk});                   // C: 1 -> 0 when M ends
  Transfer x = back;
  x.step = 2;
  x.delay_s = 60e-6;
  s.add(x, {});                     // X: 1 -> 0 at 60 us
  EngineOptions o;
  o.record_transfers = true;
  const SimResult r = simulate_one(topo, s, o);
  const std::vector<double> start = {0, 0, move + 10e-6, move + 5e-6, move + 5e-6, 60e-6};
  const std::vector<double> end = {move, move, 2 * move + 10e-6, move + 5e-6, 2 * move + 5e-6, 60e-6 + move};
  ASSERT_EQ(r.transfer_start_s.size(), start.size());
  for (std::size_t i = 0; i < start.size(); ++i) {
    EXPECT_NEAR(r.transfer_start_s[i], start[i], 1e-12) << "transfer " << i;
    EXPECT_NEAR(r.transfer_end_s[i], end[i], 1e-12) << "transfer " << i;
  }
  EXPECT_NEAR(r.time_s, 60e-6 + move, 1e-12);
  ASSERT_LT(2 * move + 10e-6, 60e-6);  // the hand derivation assumes no overlap on the NICs
}

TEST(Engine, TwoRingsOverOneSharedLinkEachGetHalf) {
  // Two single-GPU nodes, one NIC each: force two ring families onto the same rail, so both cross
  // the same NIC link in the same direction at every step.
  const Topology topo = build_topology(single_gpu_nodes_spec(2, 512, 1.0), "test");
  RingPlan shared;
  shared.families = {RingFamily{{0, 1}, 0, 1}, RingFamily{{0, 1}, 0, 1}};
  const double size = 1e9;
  EngineOptions opts;
  opts.record_transfers = true;
  opts.merge_identical = false;  // keep the two rings as two flows
  const Schedule s = ring_schedule(topo, shared, "all_gather", size, {});
  const SimResult r = simulate_one(topo, s, opts);
  // all_gather on 2 ranks: one step; each family moves S/(2*2) = 250 MB over the shared 50 GB/s
  // link, so each flow sees 25 GB/s.
  // The only step is the first one, so each transfer pays the launch, the per-step latency (route
  // latency plus NCCL's software part, 14 us together) and 250 MB at 25 GB/s.
  ASSERT_EQ(s.transfers.size(), 4u);
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const double duration = r.transfer_end_s[i] - r.transfer_start_s[i];
    EXPECT_NEAR(duration, kLaunchS + kStepS + 250e6 / (kNicBps / 2), 1e-9) << i;
  }
  // The busiest link direction carried both families' bytes: 2 x 250 MB.
  ASSERT_FALSE(r.links.empty());
  EXPECT_NEAR(r.links.front().bytes, 500e6, 1.0);
}

TEST(Engine, OversubscribedFabricLowersRingBusbwByTheBottleneck) {
  // One node per leaf: every ring hop goes leaf -> spine -> leaf. A leaf's uplink carries
  // nodes_per_leaf x 50 GB/s / oversubscription = 25 GB/s at 2:1, below the 50 GB/s NIC.
  const int n = 4;
  const double size = 1e9;
  double simulated[2] = {0, 0};
  for (double over : {1.0, 2.0}) {
    const Topology topo = build_topology(single_gpu_nodes_spec(n, 1, over), "test");
    const Schedule s = ring_schedule(topo, plan_rings(topo, 1), "all_reduce", size, {});
    const double beta = over == 1.0 ? kNicBps : kNicBps / 2;
    const double expected = hand_ring_time("all_reduce", n, size, beta);
    const SimResult r = simulate_one(topo, s, {});
    simulated[over == 1.0 ? 0 : 1] = r.time_s;
    EXPECT_NEAR(r.time_s, expected, 0.01 * expected) << "oversubscription " << over;
    if (over == 2.0) {
      // The bottleneck reported is a leaf uplink or spine downlink (25 GB/s).
      EXPECT_NEAR(r.links.front().bandwidth_Bps, kNicBps / 2, 1.0);
    }
  }
  // The busbw ratio the 2:1 spine costs at 1 GB, from the simulated times against the hand-derived
  // ratio: (launch + 6 steps + 1.5 S/beta) / (launch + 6 steps + 1.5 S/(beta/2)).
  EXPECT_NEAR(simulated[0] / simulated[1],
              (kLaunchS + 6 * kStepS + 1.5 * size / kNicBps) / (kLaunchS + 6 * kStepS + 3.0 * size / kNicBps), 0.01);
}

void expect_same_results(const SimResult& a, const SimResult& b) {
  EXPECT_NEAR(a.time_s, b.time_s, 1e-9 * a.time_s);
  ASSERT_EQ(a.rank_finish_s.size(), b.rank_finish_s.size());
  for (std::size_t i = 0; i < a.rank_finish_s.size(); ++i)
    EXPECT_NEAR(a.rank_finish_s[i], b.rank_finish_s[i], 1e-9 * a.time_s) << "rank " << i;
  ASSERT_EQ(a.links.size(), b.links.size());
  double bytes_a = 0, bytes_b = 0;
  for (const auto& l : a.links) bytes_a += l.bytes;
  for (const auto& l : b.links) bytes_b += l.bytes;
  EXPECT_NEAR(bytes_a, bytes_b, 1e-6 * bytes_a);
}

void expect_merge_unchanged(const Topology& topo, int channels, double size, int expected_bundle) {
  const RingPlan plan = plan_rings(topo, channels);
  RingScheduleOptions expanded;
  expanded.expand_channels_and_chunks = true;
  const Schedule big = ring_schedule(topo, plan, "all_reduce", size, expanded);
  const Schedule compact = ring_schedule(topo, plan, "all_reduce", size, {});
  ASSERT_EQ(big.transfers.size(), compact.transfers.size() * expected_bundle);
  EngineOptions no_merge;
  no_merge.merge_identical = false;
  no_merge.exploit_symmetry = false;
  EngineOptions merge = no_merge;
  merge.merge_identical = true;
  const SimResult unmerged = simulate_one(topo, big, no_merge);
  const SimResult merged = simulate_one(topo, big, merge);
  EXPECT_EQ(unmerged.flows_simulated, big.transfers.size());
  EXPECT_EQ(merged.flows_simulated, compact.transfers.size());
  EXPECT_EQ(merged.merge_bundle, expected_bundle);
  expect_same_results(unmerged, merged);
  expect_same_results(merged, simulate_one(topo, compact, no_merge));
}

TEST(Engine, MergingChannelsAndChunksLeavesResultsUnchanged) {
  // One dgx-h100 node, 4 channels, 1 GiB: 128 MiB per step, 32 MiB per channel = 16 chunks of 2 MiB,
  // so every compact record stands for 4 x 16 = 64 flows.
  expect_merge_unchanged(preset("dgx-h100", 1), 4, 1ull << 30, 64);
  // Four single-GPU nodes over the fabric, 2 channels, 64 MiB: 16 MiB per step, 8 MiB per channel =
  // 4 chunks: bundles of 8.
  expect_merge_unchanged(build_topology(single_gpu_nodes_spec(4, 512, 1.0), "test"), 2, 64.0 * (1 << 20), 8);
}

TEST(Engine, SymmetryLeavesResultsUnchanged) {
  // 8 nodes in two leaf groups of 4: rotation by 4 nodes (order 2) and, since every GPU has its own
  // NIC and PCIe switch, rotation of the rails (order 8): 16 images per simulated transfer.
  nlohmann::json spec = load_topology_spec("dgx-h100");
  set_node_count(spec, 8);
  apply_override(spec, "fabric.nodes_per_leaf=4", "test");
  const Topology topo = build_topology(spec, "test");
  const Schedule s = ring_schedule(topo, plan_rings(topo, 16), "all_reduce", 256.0 * (1 << 20), {});
  EngineOptions full;
  full.exploit_symmetry = false;
  const SimResult a = simulate_one(topo, s, full);
  const SimResult b = simulate_one(topo, s, {});
  EXPECT_EQ(a.symmetry_order, 1);
  EXPECT_EQ(b.symmetry_order, 16);
  EXPECT_EQ(b.flows_simulated * 16, a.flows_simulated);
  expect_same_results(a, b);
  // Link by link: the same directions carried the same bytes.
  std::map<std::pair<std::string, std::string>, double> bytes_a;
  for (const auto& l : a.links) bytes_a[{l.from, l.to}] = l.bytes;
  for (const auto& l : b.links) {
    const double expected = bytes_a[std::make_pair(l.from, l.to)];
    EXPECT_NEAR(expected, l.bytes, 1e-6 * l.bytes) << l.from << "->" << l.to;
  }
}

TEST(Engine, SweepEqualsIndividualRuns) {
  const Topology topo = preset("dgx-h100", 1);
  const RingPlan plan = plan_rings(topo, 2);
  const Schedule ref = ring_schedule(topo, plan, "all_reduce", 1 << 30, {});
  const auto sweep = simulate_sweep(topo, ref, {1 << 20, 1 << 30}, {});
  const SimResult one = simulate_one(topo, ring_schedule(topo, plan, "all_reduce", 1 << 20, {}), {});
  EXPECT_NEAR(sweep[0].time_s, one.time_s, 1e-12);
}

}  // namespace
}  // namespace ccsim
