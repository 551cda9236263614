// AWS's Elastic Fabric Adapter (node.nic.transport efa) and the net plugin's reported latency
// (node.nic.plugin_latency_us). Expected numbers come from aws-ofi-nccl's own figures (20 us per
// network step in its cost model of EFA, 75 us reported to NCCL on p4d/p5: topologies/transports.cpp)
// and from NCCL 2.30's tuner formula by hand (tuning.cc: Tree latency = baseLat + 2 x ((ppn - 1) x
// intraLat + log2(nodes) x interLat), interLat = hwLat[NET] + latencyInter, + latencyInter again on
// Simple for the flush).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "algorithms/nccl_channels.h"
#include "algorithms/nccl_model.h"
#include "algorithms/tuner.h"
#include "cli_runner.h"
#include "real_log_helpers.h"
#include "test_helpers.h"
#include "topologies/nccl_env.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

const AlgoProtoCost& cost(const std::vector<AlgoProtoCost>& t, Algo a, Proto p) { return t[cost_index(a, p)]; }

Topology with_nic(const std::string& preset, int nodes, const std::string& set = "") {
  nlohmann::json spec = load_topology_spec(preset);
  spec["nodes"] = nodes;
  if (!set.empty()) apply_override(spec, set, "--set");
  return build_topology(spec, preset);
}

TEST(Efa, P5PresetIsEfaWithThePluginsFigures) {
  const Topology t = testing::preset("aws-p5", 2);
  EXPECT_EQ(t.network.transport, Transport::Efa);
  EXPECT_STREQ(to_string(t.network.transport), "efa");
  EXPECT_TRUE(t.network.gpudirect_rdma);
  EXPECT_DOUBLE_EQ(t.spec["node"]["nic"]["latency_us"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(t.network.plugin_latency_us, 75.0);
  EXPECT_DOUBLE_EQ(t.spec["node"]["nic"]["plugin_latency_us"].get<double>(), 75.0);
  // InfiniBand's plugin (NCCL's own net_ib) reports none.
  EXPECT_DOUBLE_EQ(testing::preset("dgx-h100", 2).network.plugin_latency_us, 0.0);
  // p5en and later: the plugin reports 35 us; a user says so.
  EXPECT_DOUBLE_EQ(with_nic("aws-p5", 2, "node.nic.plugin_latency_us=35").network.plugin_latency_us, 35.0);
}

TEST(Efa, TunerAddsThePluginLatencyToEveryNetworkStep) {
  // dgx-h100 on 2 nodes, all_reduce of 8 B. InfiniBand: Tree/LL = 6.8 + 2 x (7 x 0.6 + 1 x 5.0) = 25.2.
  const auto ib = nccl_costs(summarize_for_nccl(testing::preset("dgx-h100", 2)), Func::AllReduce, 8);
  EXPECT_NEAR(cost(ib, Algo::Tree, Proto::LL).latency_us, 25.2, 1e-9);
  // The same machine on EFA: interLat 5.0 + 75 = 80: 6.8 + 2 x (4.2 + 80) = 175.2.
  const auto efa = nccl_costs(summarize_for_nccl(with_nic("dgx-h100", 2, "node.nic.transport=efa")), Func::AllReduce, 8);
  EXPECT_NEAR(cost(efa, Algo::Tree, Proto::LL).latency_us, 175.2, 1e-9);
  // Simple adds the latency once more per network step (the flush): 2 x 75 more per crossing.
  EXPECT_NEAR(cost(efa, Algo::Tree, Proto::Simple).latency_us - cost(ib, Algo::Tree, Proto::Simple).latency_us,
              2 * 150.0, 1e-9);
  // One node has no network step: nothing changes.
  const auto one_ib = nccl_costs(summarize_for_nccl(testing::preset("dgx-h100", 1)), Func::AllReduce, 8);
  const auto one_efa = nccl_costs(summarize_for_nccl(with_nic("dgx-h100", 1, "node.nic.transport=efa")), Func::AllReduce, 8);
  EXPECT_DOUBLE_EQ(cost(one_efa, Algo::Ring, Proto::LL).latency_us, cost(one_ib, Algo::Ring, Proto::LL).latency_us);
  // ccsim explain says where the extra latency comes from.
  const auto r = testing::run_ccsim("explain --topology aws-p5 --nodes 2 -b 8");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("NET latency reported by the net plugin: 75 us per network step"), std::string::npos) << r.out;
}

// 2 x p5.48xlarge, all_reduce, 8 B (aws-samples' log, tests/data/nccl-tests). AWS's own cost model of
// it (aws-ofi-nccl's tuner, Tree: base + 2 x ((ppn - 1) x NVLink step + log2(nodes) x EFA step)) is
// 6.8 + 2 x (7 x 0.6 + 1 x 20) = 55.2 us; ccsim's engine replays the tree on the preset's links with
// EFA's 20 us per network hop and lands within 5% of it. The measurement is 69.1 us: both models
// are optimistic there, ccsim by 18% (it was 64%, with RoCE's 3 us standing in for EFA).
TEST(Efa, P5SmallAllReduceIsAwsOwnModelOfIt) {
  const ValidatedRun run = testing::validate_real_log("aws-p5-2node-efa-allreduce.txt", load_topology_spec("aws-p5"), "aws-p5");
  const ValidatedSize& first = run.sizes.front();
  EXPECT_EQ(first.size_bytes, 8u);
  EXPECT_EQ(first.nccl_algorithm, "Tree");
  EXPECT_EQ(first.nccl_protocol, "LL");
  EXPECT_NEAR(first.predicted_time_us, 55.2, 0.05 * 55.2);
  EXPECT_NEAR(first.measured_time_us, 69.12, 1e-9);
  EXPECT_LT(first.error, 0.25) << first.error;
}

// 2 x p4d.24xlarge (NCCL 2.8.3, 2021) on EFA: the plateau is far below 4 EFA devices' worth, and
// validate's advice speaks EFA (libfabric's tools and aws-ofi-nccl's lines), not InfiniBand's ibstat.
TEST(Efa, ValidateAdvisesEfaToolsOnAP4dLog) {
  nlohmann::json spec = load_topology_spec("hgx-a100");
  for (const char* s : {"node.nic.count=4", "node.nic.Gbps=100", "node.nic.transport=efa"}) apply_override(spec, s, "--set");
  const ValidatedRun run = testing::validate_real_log("aws-p4d-2node-efa-allreduce-nccl2.8.3.txt", spec, "hgx-a100");
  bool nic = false, gdr = false;
  for (const LikelyCause& c : run.causes) {
    if (c.id == "nic-missing-or-slow") {
      nic = true;
      EXPECT_NE(c.next.find("fi_info -p efa"), std::string::npos) << c.next;
      EXPECT_EQ(c.next.find("ibstat"), std::string::npos) << c.next;
    }
    if (c.id == "gdr-off") {
      gdr = true;
      EXPECT_NE(c.next.find("FI_EFA_USE_DEVICE_RDMA=1"), std::string::npos) << c.next;
    }
  }
  EXPECT_TRUE(nic);
  EXPECT_TRUE(gdr);
}

// 2 x p4d.24xlarge with a current NCCL (2.23.4) and aws-ofi-nccl 1.13.2 (AWS's DLAMI guide). p4d runs
// the plugin's SENDRECV protocol, whose small messages cost what the plugin reports as p4d's internode
// latency, 75 us (src/platform-aws.cpp), not its p5 tuner's 20: Tree/LL over 2 nodes crosses the network
// twice, so its 8 B time is the 20 us prediction + 2 x 55 us (167.6 us), measured 180.3 here and 167.5
// in the 2021 log (NCCL 2.8.3). With that the run meets both of issue 11's targets; the plateau is 4 x
// 100 Gb/s: 76.2 GB/s busbw measured at 1 GiB, 81.1 predicted (Tree/Simple).
TEST(Efa, P4dStepsTakeThePluginsReportedLatency) {
  const auto described = [](const char* latency_us) {
    nlohmann::json spec = load_topology_spec("hgx-a100");
    for (const std::string s : {"node.nic.count=4", "node.nic.Gbps=100", "node.nic.transport=efa"}) apply_override(spec, s, "--set");
    apply_override(spec, std::string("node.nic.latency_us=") + latency_us, "--set");
    return spec;
  };
  const char* log = "aws-p4d-2node-efa-allreduce-ofi1.13.2-nccl2.23.4.txt";
  const ValidatedRun p4d = testing::validate_real_log(log, described("75"), "hgx-a100");
  const ValidatedRun p5_model = testing::validate_real_log(log, described("20"), "hgx-a100");
  const ValidatedSize& first = p4d.sizes.front();
  EXPECT_EQ(first.size_bytes, 8u);
  EXPECT_EQ(first.nccl_algorithm + "/" + first.nccl_protocol, "Tree/LL");
  EXPECT_NEAR(first.predicted_time_us - p5_model.sizes.front().predicted_time_us, 2 * (75.0 - 20.0), 0.01);
  EXPECT_NEAR(first.measured_time_us, 180.3, 1e-9);
  EXPECT_LT(std::fabs(p4d.latency.median_error), 0.20) << p4d.latency.median_error;
  EXPECT_LT(std::fabs(p4d.bandwidth.median_error), 0.10) << p4d.bandwidth.median_error;
  EXPECT_GT(p5_model.latency.median_error, 1.0) << p5_model.latency.median_error;  // +212% at 20 us
  // The 2021 log's floor: 167.5 us measured.
  const ValidatedRun old = testing::validate_real_log("aws-p4d-2node-efa-allreduce-nccl2.8.3.txt", described("75"), "hgx-a100");
  EXPECT_NEAR(old.sizes.front().predicted_time_us, 167.5, 0.02 * 167.5);
}

// 2 x g7e.8xlarge (one RTX PRO 6000 Blackwell PCIe card and one 100 Gb/s EFA device per node;
// aws-ofi-nccl 1.18.0, NCCL 2.29.2), all_reduce 8 B-1 GiB. The plugin printed what the description
// takes: GPUDirect RDMA off (host staging), NCCL_PROTO=simple forced, NCCL_BUFFSIZE 8 MiB, a 35 us
// network latency reported to NCCL's tuner, 2 coll channels. Two ranks' ring all_reduce moves S each
// way over the one NIC: busbw = algbw = 12.5 GB/s x EFA's 0.95 = 11.875 GB/s, measured 12.37 at 1 GiB.
// The floor is a Ring/Simple launch (8.4 us) and two network steps of EFA's 20 us (aws-ofi-nccl's cost
// model), 48.4 us before the copies through host memory; measured 45.2-48.1 us. Both sides meet issue
// 11's targets from the description alone; 512 KiB-4 MiB take twice the prediction (4 MiB as long as
// 8 MiB in the log), which the plugin's SENDRECV protocol does and the model does not (docs/accuracy.md).
TEST(Efa, G7eBlackwellPcieCardsOverOneEfaWithoutGdr) {
  nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
  for (const char* s : {"node.gpu.count=1", "node.gpu.arch=sm120", "node.pcie.generation=5", "node.nic.count=1", "node.nic.Gbps=100",
                        "node.nic.transport=efa", "node.nic.gpudirect_rdma=false", "node.nic.plugin_latency_us=35"})
    apply_override(spec, s, "--set");
  for (const char* e : {"NCCL_BUFFSIZE=8388608", "NCCL_P2P_NET_CHUNKSIZE=524288"}) apply_nccl_env(spec, e, "--env", "test");
  ValidateOptions opts;
  opts.filter = parse_algo_filter("", "Simple", "test");
  const ValidatedRun run =
      testing::validate_real_log("aws-g7e-rtxpro6000bw-2node-1gpu-efa-allreduce-nccl2.29.2.txt", spec, "pcie-gen4-8gpu", opts);
  EXPECT_EQ(run.log.ranks, 2);
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.nccl_protocol, "Simple");
  EXPECT_NEAR(last.measured_busbw_GBps, 12.37, 0.01);
  EXPECT_NEAR(last.predicted_busbw_GBps, 12.5 * 0.95, 0.01 * 12.5 * 0.95);
  const ValidatedSize& first = run.sizes.front();
  EXPECT_GT(first.predicted_time_us, 8.4 + 2 * 20.0);
  EXPECT_LT(first.predicted_time_us, 1.10 * (8.4 + 2 * 20.0));
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
  EXPECT_LT(std::fabs(run.latency.median_error), 0.20) << run.latency.median_error;
  EXPECT_GT(testing::size_at(run, 4194304).error, 0.5);  // the plugin's mid sizes: a known miss
}

TEST(Efa, BadPluginLatencyIsOneLineExitTwo) {
  const auto r = testing::run_ccsim("predict --topology aws-p5 --nodes 2 -b 1M -e 1M --set node.nic.plugin_latency_us=-1");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("/node/nic/plugin_latency_us"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

}  // namespace
}  // namespace ccsim
