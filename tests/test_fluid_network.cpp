// sim/fluid_network.h against max-min allocations worked out by hand, and the engine's fluid
// replay against its SimGrid replay on schedules with sharing, dependencies, pipelining, delays and
// caps (the same model: every transfer's start and end to 1e-9).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "algorithms/collnet.h"
#include "algorithms/nvls.h"
#include "algorithms/ring.h"
#include "algorithms/tree.h"
#include "sim/engine.h"
#include "sim/fluid_network.h"
#include "scenarios/replay.h"
#include "test_helpers.h"
#include "topologies/routing.h"

namespace ccsim {
namespace {

// Runs the network to its end; the completion date of every tag.
std::map<std::uint32_t, double> run_to_end(FluidNetwork& net) {
  std::map<std::uint32_t, double> end;
  std::vector<std::uint32_t> done;
  for (double t = net.next_event(); t != FluidNetwork::kNever; t = net.next_event()) {
    done.clear();
    net.advance_to(t, done);
    for (std::uint32_t tag : done) end[tag] = t;
  }
  return end;
}

TEST(FluidNetwork, TwoFlowsShareALinkEquallyThenTheSurvivorTakesItAll) {
  FluidNetwork net;
  const int link = net.add_constraint(10);  // B/s
  net.start({link}, 10, 0, 0, 1);
  net.start({link}, 20, 0, 0, 2);
  const auto end = run_to_end(net);
  EXPECT_DOUBLE_EQ(end.at(1), 2.0);  // 10 B at 5 B/s
  EXPECT_DOUBLE_EQ(end.at(2), 3.0);  // 10 B at 5 B/s, then 10 B at 10 B/s
}

// Link A (10 B/s) carries f1 and f2; link B (4 B/s) carries f2 and f3. Progressive filling: B
// saturates first at 2 B/s each (f2, f3), then A gives f1 the remaining 8 B/s.
TEST(FluidNetwork, ProgressiveFillingAndItsReSolveAfterALowLevelCompletion) {
  FluidNetwork net;
  const int a = net.add_constraint(10), b = net.add_constraint(4);
  net.start({a}, 80, 0, 0, 1);
  net.start({a, b}, 8, 0, 0, 2);
  net.start({b}, 2, 0, 0, 3);
  const auto end = run_to_end(net);
  // f3: 2 B at 2 B/s -> t = 1. Then B holds f2 alone (4 B/s, below A's fair 5), f1 gets 6.
  EXPECT_DOUBLE_EQ(end.at(3), 1.0);
  // f2: 6 B left at 4 B/s -> t = 2.5.
  EXPECT_DOUBLE_EQ(end.at(2), 2.5);
  // f1: 80 - 8 (t<1) - 9 (6 B/s for 1.5 s) = 63 B at 10 B/s -> t = 8.8.
  EXPECT_NEAR(end.at(1), 8.8, 1e-12);
}

TEST(FluidNetwork, AHighLevelCompletionLeavesTheLowerLevelsAsTheyWere) {
  FluidNetwork net;
  const int a = net.add_constraint(10), b = net.add_constraint(4);
  net.start({a}, 8, 0, 0, 1);     // 8 B/s -> t = 1 (the last saturation: only it is re-solved)
  net.start({a, b}, 8, 0, 0, 2);  // 2 B/s
  net.start({b}, 6, 0, 0, 3);     // 2 B/s -> t = 3
  const auto end = run_to_end(net);
  EXPECT_DOUBLE_EQ(end.at(1), 1.0);
  EXPECT_DOUBLE_EQ(end.at(3), 3.0);
  // f2: 8 - 6 = 2 B left at t = 3, alone on B at 4 B/s -> t = 3.5.
  EXPECT_DOUBLE_EQ(end.at(2), 3.5);
}

TEST(FluidNetwork, LatencyComesBeforeTheBandwidthPhase) {
  FluidNetwork net;
  const int link = net.add_constraint(10);
  net.start({link}, 10, 1.0, 0, 1);  // waits 1 s, then finds the link free
  net.start({link}, 10, 0.0, 0, 2);  // alone for its whole transfer
  const auto end = run_to_end(net);
  EXPECT_DOUBLE_EQ(end.at(2), 1.0);
  EXPECT_DOUBLE_EQ(end.at(1), 2.0);
}

TEST(FluidNetwork, ABoundFreezesItsFlowAndTheRestGoesToTheOthers) {
  FluidNetwork net;
  const int link = net.add_constraint(10);
  net.start({link}, 4, 0, 2.0, 1);  // at most 2 B/s -> t = 2
  net.start({link}, 16, 0, 0, 2);   // 8 B/s -> t = 2
  net.start({}, 5, 0.5, 0, 3);      // no constraint: done when its latency ends
  const auto end = run_to_end(net);
  EXPECT_DOUBLE_EQ(end.at(1), 2.0);
  EXPECT_DOUBLE_EQ(end.at(2), 2.0);
  EXPECT_DOUBLE_EQ(end.at(3), 0.5);
}

// Flows frozen by one saturation complete together when their bytes are equal (the solver keeps
// one earliest completion per saturation, so all of them must be found), and a flow started
// afterwards reuses a finished flow's slot. Link A (30 B/s): f1, f2, f3 at 10 B/s each, 10 B ->
// all at t = 1. Link B (4 B/s) with f4 alone: 8 B -> t = 2. f5 on A from t = 1: 15 B at 30 B/s
// -> t = 1.5.
TEST(FluidNetwork, EqualFlowsOfOneSaturationEndTogetherAndTheirSlotsAreReused) {
  FluidNetwork net;
  const int a = net.add_constraint(30), b = net.add_constraint(4);
  for (std::uint32_t tag = 1; tag <= 3; ++tag) net.start({a}, 10, 0, 0, tag);
  net.start({b}, 8, 0, 0, 4);
  std::vector<std::uint32_t> done;
  double t = net.next_event();
  EXPECT_DOUBLE_EQ(t, 1.0);
  net.advance_to(t, done);
  EXPECT_EQ(done, (std::vector<std::uint32_t>{1, 2, 3}));
  net.start({a}, 15, 0, 0, 5);
  done.clear();
  t = net.next_event();
  EXPECT_DOUBLE_EQ(t, 1.5);
  net.advance_to(t, done);
  EXPECT_EQ(done, (std::vector<std::uint32_t>{5}));
  done.clear();
  t = net.next_event();
  EXPECT_DOUBLE_EQ(t, 2.0);
  net.advance_to(t, done);
  EXPECT_EQ(done, (std::vector<std::uint32_t>{4}));
  EXPECT_EQ(net.next_event(), FluidNetwork::kNever);
}

void expect_same_replay(const Topology& topo, const Schedule& s) {
  EngineOptions o;
  o.exploit_symmetry = false;
  o.merge_identical = false;
  o.record_transfers = true;
  const SimResult sg = simulate_one(topo, s, o);
  o.fluid_solver = true;
  const SimResult fl = simulate_one(topo, s, o);
  ASSERT_EQ(sg.transfer_end_s.size(), fl.transfer_end_s.size());
  EXPECT_NEAR(fl.time_s, sg.time_s, 1e-9 * sg.time_s);
  for (std::size_t i = 0; i < sg.transfer_end_s.size(); ++i) {
    EXPECT_NEAR(fl.transfer_start_s[i], sg.transfer_start_s[i], 1e-9 * sg.time_s) << "record " << i;
    EXPECT_NEAR(fl.transfer_end_s[i], sg.transfer_end_s[i], 1e-9 * sg.time_s) << "record " << i;
  }
  ASSERT_EQ(sg.links.size(), fl.links.size());
  for (std::size_t i = 0; i < sg.links.size(); ++i) {
    EXPECT_EQ(fl.links[i].from, sg.links[i].from);
    EXPECT_NEAR(fl.links[i].busy_s, sg.links[i].busy_s, 1e-9 * sg.time_s);
  }
}

TEST(FluidReplay, RandomSharedFlowsWithDependenciesMatchSimGrid) {
  // 2 dgx-h100 nodes: NVLink, PCIe, NICs and the fabric shared by 300 transfers of random sizes
  // between random GPUs, a third of them waiting for an earlier one, some after a fixed delay, on
  // connections that reuse lanes (so pipeline slots hold some of them).
  const Topology topo = testing::preset("dgx-h100", 2);
  std::mt19937_64 rng(7);
  Schedule s;
  s.nranks = topo.num_gpus();
  for (int i = 0; i < 300; ++i) {
    Transfer t;
    t.src = static_cast<int>(rng() % 16);
    t.dst = static_cast<int>((t.src + 1 + rng() % 15) % 16);
    t.bytes = 1e3 + static_cast<double>(rng() % 1000000) * 8;
    t.lane = static_cast<int>(rng() % 2);
    t.delay_s = rng() % 3 == 0 ? 2e-6 * static_cast<double>(rng() % 5) : 0.0;
    std::vector<std::uint32_t> deps;
    if (i > 0 && rng() % 3 == 0) deps.push_back(static_cast<std::uint32_t>(rng() % static_cast<unsigned>(i)));
    s.add(t, deps);
  }
  expect_same_replay(topo, s);
  s.transfer_rate_cap_Bps = 20e9;  // every flow at most 20 GB/s: the FATPIPE link and the rate bound
  expect_same_replay(topo, s);
}

TEST(FluidReplay, RingAllReduceMatchesSimGrid) {
  // A collective's schedule: lanes deeper than the pipeline, per-step delays, channel caps.
  const Topology topo = testing::preset("dgx-h100", 2);
  const Schedule s = ring_schedule(topo, plan_rings(topo, 4), "all_reduce", 64e6, {});
  expect_same_replay(topo, s);
}


// The FIFO pipelines go to the fluid solver above kFluidPipelineAboveGpus (scenarios/replay.h):
// the two solvers agree on them record by record where both run. Tree/Simple with NCCL's per-channel
// cap on every hop across nodes (a connection link shared by its chunks), Tree/LL with the cap where
// the data enters, NVLSTree with its switch endpoints and reduction link, CollNetDirect with the
// leaf's SHARP units; 2 nodes, so that every start and end can be compared.
TEST(FluidReplay, TreeNvlsTreeAndCollNetPipelinesMatchSimGrid) {
  const Topology topo = testing::preset("dgx-h100", 2);
  const TreePlan plan = plan_trees(topo, 16);
  for (Proto p : {Proto::Simple, Proto::LL}) {
    TreeScheduleOptions o = tree_options(p);
    o.channel_rate_cap_Bps = 10e9;
    SCOPED_TRACE(to_string(p));
    expect_same_replay(topo, tree_schedule(topo, plan, "all_reduce", 16e6, o));
  }
  NvlsOptions nvls;
  nvls.channel_rate_cap_Bps = 12e9;
  expect_same_replay(topo, nvls_tree_schedule(topo, "all_reduce", 16e6, nvls));
  nlohmann::json spec = load_topology_spec("dgx-h100");
  set_node_count(spec, 2);
  spec["fabric"]["sharp"] = true;
  const Topology sharp = build_topology(spec, "test");
  expect_same_replay(sharp, collnet_direct_schedule(sharp, "all_reduce", 16e6, Proto::Simple));
}

TEST(FluidReplay, PredictReplaysThePipelinesOnTheFluidSolverOnlyAboveItsThreshold) {
  // 64 dgx-h100 nodes (512 GPUs) stay on SimGrid, 65 go to the fluid solver; rings never do.
  for (int nodes : {64, 65}) {
    const Topology topo = testing::preset("dgx-h100", nodes);
    ReplayContext ctx;
    ctx.topo = &topo;
    ctx.collective = "all_reduce";
    EXPECT_EQ(replay_recipe(ctx, Algo::Tree, Proto::Simple).fluid_solver, nodes == 65);
    EXPECT_EQ(replay_recipe(ctx, Algo::NVLSTree, Proto::Simple).fluid_solver, nodes == 65);
    EXPECT_FALSE(replay_recipe(ctx, Algo::Ring, Proto::Simple).fluid_solver);
  }
  // Whatever the GPU count, NVLink domains larger than a server's (kFluidPipelineAboveDomainGpus):
  // two GB200 NVL72 racks (144 GPUs) go to the fluid solver, two domains of 4 trays (16 GPUs) do not.
  for (int trays : {4, 18}) {
    nlohmann::json spec = load_topology_spec("gb200-nvl72");
    spec["node"]["nvlink"]["domain_size"] = trays;
    set_node_count(spec, 2 * trays);
    const Topology topo = build_topology(spec, "test");
    ReplayContext ctx;
    ctx.topo = &topo;
    ctx.collective = "all_reduce";
    EXPECT_EQ(replay_recipe(ctx, Algo::NVLSTree, Proto::Simple).fluid_solver, trays == 18) << trays;
  }
}

// The two solvers agree on NVLSTree across two NVLink domains of 5 GB200 trays (20 GPUs each).
TEST(FluidReplay, NvlsTreeAcrossNvlinkDomainsMatchesSimGrid) {
  nlohmann::json spec = load_topology_spec("gb200-nvl72");
  spec["node"]["nvlink"]["domain_size"] = 5;
  set_node_count(spec, 10);
  const Topology topo = build_topology(spec, "test");
  NvlsOptions nvls;
  nvls.channel_rate_cap_Bps = 12e9;
  expect_same_replay(topo, nvls_tree_schedule(topo, "all_reduce", 8e6, nvls));
}

TEST(FluidReplay, FlowsWithDifferentLatenciesShareALinkEquallyInBothSolvers) {
  // Node 0 sends 100 MB to node 1 (same leaf) and 100 MB to node 3 (another leaf, through a spine)
  // at once: its NIC (400 Gb/s = 50 GB/s) is the only shared link, so max-min gives each 25 GB/s,
  // whatever its route latency. (SimGrid's CM02 weights a flow's share by 1 / its route latency;
  // the engine gives SimGrid latency-free comms and waits the latency itself, docs/engine.md.)
  const Topology topo = build_topology(testing::single_gpu_nodes_spec(4, 2, 1.0), "test");
  const double near = route_latency_s(topo, route_between_gpus(topo, 0, 1));
  const double far = route_latency_s(topo, route_between_gpus(topo, 0, 3));
  ASSERT_GT(far, 1.3 * near);  // the test means something only if the latencies differ (2.1 vs 3.1 us)
  Schedule s;
  s.nranks = 4;
  Transfer t;
  t.src = 0, t.dst = 1, t.bytes = 100e6;
  s.add(t, {});
  t.dst = 3;
  s.add(t, {});
  EngineOptions o;
  o.exploit_symmetry = false;
  o.merge_identical = false;
  o.record_transfers = true;
  for (bool fluid : {false, true}) {
    o.fluid_solver = fluid;
    const SimResult r = simulate_one(topo, s, o);
    // The near flow runs alone at 50 GB/s for (far - near), then both at 25 GB/s; the near one ends
    // at near + (100 MB - 50 GB/s x (far - near)) / 25 GB/s + ... : to within the latency gap, both
    // end at 100 MB / 25 GB/s = 4 ms.
    EXPECT_NEAR(r.transfer_end_s[0], 4e-3, 2 * (far - near) + 1e-9) << (fluid ? "fluid" : "simgrid");
    EXPECT_NEAR(r.transfer_end_s[1], 4e-3 + far, 2 * (far - near) + 1e-9) << (fluid ? "fluid" : "simgrid");
  }
}

}  // namespace
}  // namespace ccsim
