// Grace superchips (GH200, GB200): the GPU reaches its NIC over NVLink-C2C and its Grace's PCIe, the
// path NCCL names P2C (node.gpu.c2c), and the gh200-quad preset checked against real Alps logs
// (tests/data/nccl-tests/gh200*.txt, provenance on top of each; docs/accuracy.md "GH200 nodes").
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "algorithms/nccl_channels.h"
#include "algorithms/nccl_model.h"
#include "common/error.h"
#include "published_rows.h"
#include "real_log_helpers.h"
#include "test_helpers.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

NcclTopoSummary summary(const std::string& preset, int nodes, const std::vector<std::string>& sets = {}) {
  return summarize_for_nccl(testing::preset(preset, nodes, sets));
}

// NCCL's path types (src/graph/topo.h) order PXB < P2C < PXN < PHB, and from 2.27 its tuner enables
// LL128 on sm90+ up to PXN (tuning.cc, NCCL_LL128_C2C=1). A superchip's GPU reaches the NIC on its own
// Grace through P2C, so LL128 stays enabled across nodes; described as a PCIe GPU behind the CPU the
// same route is PHB and LL128 is off, as in NCCL before 2.27 (no P2C type yet).
TEST(Gh200, SuperchipNicPathIsP2cAndKeepsLl128) {
  const NcclTopoSummary quad = summary("gh200-quad", 2);
  EXPECT_EQ(quad.ring.typeInter, NcclPath::P2c);
  EXPECT_EQ(ll128_disabled_reason(quad, quad.ring), "");
  const NcclTopoSummary pcie = summary("gh200-quad", 2, {"node.gpu.c2c=false"});
  EXPECT_EQ(pcie.ring.typeInter, NcclPath::Phb);
  EXPECT_NE(ll128_disabled_reason(pcie, pcie.ring).find("PHB is beyond PXN"), std::string::npos);
  // A GB200 tray (two GPUs per Grace, one NIC each) likewise, across two one-tray domains.
  const NcclTopoSummary tray = summary("gb200-nvl72", 2, {"node.nvlink.domain_size=1"});
  EXPECT_EQ(tray.ring.typeInter, NcclPath::P2c);
  EXPECT_EQ(ll128_disabled_reason(tray, tray.ring), "");
}

// The rule is the tuner's of 2.27 on: with NCCL 2.26's constants (--nccl-version 2.26) the same P2C graph
// keeps LL128 off across nodes, as NCCL 2.26.6 did on GH200 (NVIDIA/nccl#2001), and the tuner picks
// among LL and Simple.
TEST(Gh200, Ll128OverP2cFromNccl227) {
  NcclTopoSummary quad = summary("gh200-quad", 2);
  quad.nccl_version = parse_nccl_version("2.26.6", "--nccl-version");
  EXPECT_NE(ll128_disabled_reason(quad, quad.ring).find("from 2.27 only"), std::string::npos);
  quad.nccl_version = parse_nccl_version("2.27.3", "--nccl-version");
  EXPECT_EQ(ll128_disabled_reason(quad, quad.ring), "");
}

// Four GPUs, every pair joined by 6 NVLink4 links (150 GB/s per direction, JSC): NCCL's ring search over
// the joined pairs; no NVSwitch, so no NVLS. One GPU of such a node needs no NVLink at all; three
// without their pairs are refused.
TEST(Gh200, QuadNodeIsFourJoinedSuperchips) {
  const Topology t = testing::preset("gh200-quad", 1);
  EXPECT_EQ(t.gpus_per_node(), 4);
  EXPECT_FALSE(t.has_nvswitch);
  EXPECT_FALSE(summary("gh200-quad", 1).nvls);
  EXPECT_EQ(testing::preset("gh200-quad", 2, {"node.gpu.count=1", "node.nvlink.peers=null", "node.nic.count=1"}).num_gpus(), 2);
  EXPECT_THROW(testing::preset("gh200-quad", 1, {"node.gpu.count=3", "node.nvlink.peers=null"}), InputError);
}

ValidatedRun validate_gh200(const std::string& name, const std::vector<std::string>& sets) {
  nlohmann::json spec = load_topology_spec("gh200-quad");
  for (const std::string& s : sets) apply_override(spec, s, "--set");
  return testing::validate_real_log(name, spec, "gh200-quad");
}

// CSCS Alps, 2 nodes x 4 GH200 on Slingshot-11 (4 x 200 Gb/s per node), NCCL of CUDA 12.8 (before 2.27:
// GPU-NIC path PHB), described as the preset with `c2c=false` and RoCE's framing (ccsim has no Slingshot
// transport). Two runs of the same machine type, two containers. At 128 MiB the measured busbw is above
// what any ring over the node's NICs reaches, 4 x 200 Gb/s x 0.95 = 95 GB/s busbw, so NCCL ran a tree
// (each byte crosses the network once per direction), as ccsim's tuner picks. Both bandwidth sides meet
// issue 11's 10%; the latency sides do not: 4 KiB-4 MiB take 1.5-3x the prediction, the plugin's
// per-message cost through libfabric's cxi provider, which no published figure gives.
TEST(Gh200, AlpsTwoNodesBandwidthSideWithinTenPercent) {
  const double ring_bound_busbw = 4 * 200 / 8.0 * 0.95;
  for (const char* name : {"gh200x8-2node-alps-slingshot-allreduce.txt", "gh200x8-2node-santis-slingshot-allreduce.txt"}) {
    const ValidatedRun run = validate_gh200(name, {"node.gpu.c2c=false", "node.nic.transport=roce"});
    EXPECT_EQ(run.prediction.facts.nodes, 2) << name;
    const ValidatedSize& last = run.sizes.back();
    EXPECT_EQ(last.size_bytes, 134217728u) << name;
    EXPECT_GT(last.measured_busbw_GBps, 1.25 * ring_bound_busbw) << name;
    EXPECT_EQ(last.nccl_algorithm, "Tree") << name;
    EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << name << " " << run.bandwidth.median_error;
    EXPECT_GT(run.latency.median_error, 0.20) << name << " " << run.latency.median_error;
  }
}

// One GH200 on each of two Alps nodes, NCCL 2.30.7 (P2C: the preset as it is), 2 ranks: busbw is the
// one NIC's rate. 200 Gb/s x 0.95 = 23.75 GB/s against 22.86 measured at 128 MiB (within 4%), while
// 1-8 MiB take 1.4-5x the prediction (the same per-message cost as above; 1 MiB: 340 us).
TEST(Gh200, OneSuperchipPerNodeReachesTheNicRate) {
  const ValidatedRun run = validate_gh200("gh200x2-2node-1gpu-alps-slingshot-allreduce-nccl2.30.7.txt",
                                          {"node.gpu.count=1", "node.nvlink.peers=null", "node.nic.count=1", "node.nic.transport=roce"});
  const ValidatedSize& last = run.sizes.back();
  EXPECT_NEAR(last.measured_busbw_GBps, 22.86, 0.01);
  EXPECT_NEAR(last.predicted_busbw_GBps, 200 / 8.0 * 0.95, 0.05 * 23.75);
  EXPECT_LT(std::fabs(last.error), 0.05) << last.error;
  EXPECT_GT(run.sizes.front().error, 1.0) << run.sizes.front().error;
}

// NVIDIA/nccl#1579 (tests/data/published/nccl-issue-1579-gh200-2node-4nic-busbw.txt): two hosts of one GH200
// with four 200 Gb/s ports each, NCCL 2.24.3, 2 GiB with GPUDirect RDMA. all_reduce and all_gather of 2 ranks
// move every byte over the four NICs once per direction: busbw = 4 x 200 Gb/s x 0.97 (InfiniBand's
// efficiency) = 97 GB/s, against 96.07 and 94.48 measured. (Without GPUDirect RDMA the post measures 79.72
// and 82.23; ccsim's staged path does not bind on Grace's host memory: not modelled, docs/accuracy.md.)
TEST(Gh200, OneSuperchipWithFourNicsAsPublished) {
  std::map<std::string, double> gdr;  // collective -> busbw with GPUDirect RDMA (the third column)
  for (const auto& row : testing::read_published_rows("nccl-issue-1579-gh200-2node-4nic-busbw.txt"))
    if (row.size() == 3) gdr[row[0]] = std::stod(row[2]);
  ASSERT_EQ(gdr.size(), 3u);
  for (const std::string coll : {"all_reduce", "all_gather"}) {
    const auto r = testing::run_ccsim(coll + "_perf --topology gh200-quad --nodes 2 --set node.gpu.count=1 --set node.nvlink.peers=null "
                                      "--set node.nic.count=4 -b 2G -e 2G --format json");
    ASSERT_EQ(r.code, 0) << r.err;
    const double predicted = nlohmann::json::parse(r.out)["rows"][0]["oop_busbw_GBps"].get<double>();
    EXPECT_NEAR(predicted, 4 * 200 / 8.0 * 0.97, 0.01 * 97) << coll;
    EXPECT_LT(std::fabs(gdr.at(coll) / predicted - 1), 0.03) << coll << " measured " << gdr.at(coll);
  }
}

}  // namespace
}  // namespace ccsim
