// GPU-direct TCP (node.nic.transport tcpx / tcpxo: Google's GPUDirect-TCPX on A3 High and
// GPUDirect-TCPXO on A3 Mega) and the gcp-a3-high / gcp-a3-mega presets. Every expected number is
// derived by hand from the preset's link rates and latencies (docs/topology.md "Transports"):
// a 200 Gb/s NIC at devmem TCP's measured 96.6% carries 25 GB/s x 0.966 = 24.15 GB/s, one way NIC to
// NIC takes 25 us, a PCIe link 0.15 us, and NCCL 2.30's Ring/Simple step costs are 3.4 us on NVLink,
// 14 us on the network and 8.4 us per launch (algorithms/step_timing.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "algorithms/closed_form.h"
#include "algorithms/ring.h"
#include "cli_runner.h"
#include "common/error.h"
#include "scenarios/validate.h"
#include "sim/engine.h"
#include "real_log_helpers.h"
#include "test_helpers.h"
#include "topologies/nic_affinity.h"
#include "topologies/routing.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

constexpr double kTcpxNicBps = 200e9 / 8 * 0.966;  // 24.15 GB/s per NIC and direction

std::string error_of(nlohmann::json spec) {
  try {
    build_topology(spec, "f.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

double nic_link_Bps(const Topology& t, int nic) {
  VertexId leaf;
  EXPECT_TRUE(t.find_vertex(VertexKind::LeafSwitch, -1, nic, 0, &leaf));
  return t.link(t.edge_between(t.nic(0, nic), leaf)).bandwidth_Bps;
}

TEST(GpuDirectTcp, A3HighPresetDescribesFourTcpxNicsForEightGpus) {
  const Topology t = testing::preset("gcp-a3-high", 2);
  EXPECT_EQ(t.network.transport, Transport::GpuDirectTcpx);
  EXPECT_STREQ(to_string(t.network.transport), "tcpx");
  EXPECT_TRUE(t.network.gpudirect_rdma);
  EXPECT_EQ(t.nics_per_node(), 4);
  EXPECT_DOUBLE_EQ(t.network.nic_bandwidth_Bps, 25e9);
  EXPECT_NEAR(nic_link_Bps(t, 0), kTcpxNicBps, 1);
  EXPECT_DOUBLE_EQ(t.spec["node"]["nic"]["latency_us"].get<double>(), 25.0);
  // 4 PCIe switches of 2 GPUs and 1 NIC: both GPUs of a switch drive its NIC (NCCL_NET_GDR_LEVEL=PIX
  // holds for all 8), and a NIC's rings cross at the first of them.
  for (int g = 0; g < 8; ++g) EXPECT_EQ(nics_of_gpu(t, g), std::vector<int>{g / 2}) << g;
  for (int r = 0; r < 4; ++r) EXPECT_EQ(first_gpu_on_rail(t, r), 2 * r) << r;
  // GPU 3 to its node-1 peer: under its own switch to NIC 1, no host memory on the way (GPU-direct).
  EXPECT_EQ(format_route(t, route_between_gpus(t, 3, 11, 1)),
            "n0.gpu3 -> n0.pcisw1 -> n0.nic1 -> leaf.g0.r1 -> n1.nic1 -> n1.pcisw1 -> n1.gpu3");
}

TEST(GpuDirectTcp, A3MegaPresetDescribesOneTcpxoNicPerGpu) {
  const Topology t = testing::preset("gcp-a3-mega", 2);
  EXPECT_EQ(t.network.transport, Transport::GpuDirectTcpxo);
  EXPECT_STREQ(to_string(t.network.transport), "tcpxo");
  EXPECT_TRUE(t.network.gpudirect_rdma);
  EXPECT_EQ(t.nics_per_node(), 8);
  EXPECT_NEAR(nic_link_Bps(t, 7), kTcpxNicBps, 1);
  for (int g = 0; g < 8; ++g) EXPECT_EQ(nics_of_gpu(t, g), std::vector<int>{g}) << g;
  // GPUs 4 and 5 and NICs 4 and 5 share the third PCIe switch (two GPUs and two NICs per switch, as the
  // PCI buses of A3 Mega's GPUs and NICs say): GPU 5 drives NIC 5 through it.
  const std::string route = format_route(t, route_between_gpus(t, 5, 13, 5));
  EXPECT_EQ(route, "n0.gpu5 -> n0.pcisw2 -> n0.nic5 -> leaf.g0.r5 -> n1.nic5 -> n1.pcisw2 -> n1.gpu5");
  EXPECT_EQ(route.find("mem"), std::string::npos);
}

TEST(GpuDirectTcp, TopoSaysGpuDirectTcpNotRdma) {
  const auto r = testing::run_ccsim("topo gcp-a3-high --nodes 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("4 per node x 200 Gb/s (25.0 GB/s), transport tcpx, GPU-direct TCP (no host staging)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("200Gb/s TCPX"), std::string::npos) << r.out;
}

TEST(GpuDirectTcp, TransportAndGpudirectMustAgree) {
  // A GPU-direct TCP that stages through host memory is tcp; a host-staged tcp that is GPU-direct
  // is tcpx/tcpxo. Each contradiction is one line naming the file and the key.
  for (const char* preset : {"gcp-a3-high", "gcp-a3-mega"}) {
    nlohmann::json spec = load_topology_spec(preset);
    spec["node"]["nic"]["gpudirect_rdma"] = false;
    const std::string m = error_of(spec);
    EXPECT_EQ(m.rfind("f.json: /node/nic/gpudirect_rdma: false does not fit transport tcpx", 0), 0u) << m;
    EXPECT_NE(m.find("use transport tcp"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  nlohmann::json tcp = load_topology_spec("dgx-h100");
  tcp["node"]["nic"]["transport"] = "tcp";
  tcp["node"]["nic"]["gpudirect_rdma"] = true;
  const std::string m = error_of(tcp);
  EXPECT_EQ(m.rfind("f.json: /node/nic/gpudirect_rdma: true does not fit transport tcp: ", 0), 0u) << m;
  EXPECT_NE(m.find("use transport tcpx or tcpxo"), std::string::npos) << m;
  nlohmann::json typo = load_topology_spec("gcp-a3-high");
  typo["node"]["nic"]["transport"] = "tcpz";
  EXPECT_NE(error_of(typo).find("/node/nic/transport: must be one of ib, roce, tcp, tcpx, tcpxo"), std::string::npos);
}

TEST(GpuDirectTcp, BadCombinationOnTheCommandLineIsExitTwoWithOneLine) {
  const auto r = testing::run_ccsim("predict --topology gcp-a3-mega --nodes 2 -b 1M -e 1M --set node.nic.gpudirect_rdma=false");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_NE(r.err.find("gcp-a3-mega: /node/nic/gpudirect_rdma: false does not fit transport tcpxo"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("tcpxo"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // one line
  // Switching the transport to host-staged tcp is the valid way to say "no GPU-direct".
  const auto ok = testing::run_ccsim(
      "predict --topology gcp-a3-mega --nodes 2 -b 1M -e 1M --set node.nic.transport=tcp --set node.nic.gpudirect_rdma=false");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

// Ring/Simple (what Google's TCPX configuration forces, NCCL_ALGO=Ring NCCL_PROTO=Simple) on 2 nodes:
// 16 hops per ring, 2 of them across the network. A ring family enters a node at its NIC's GPU and
// leaves it from its last GPU, which reaches that NIC over NVLink (PXN: GPU -> NVSwitch -> GPU, 2 x
// 0.25 us), so a network hop's route latency is 0.5 + PCIe 2 x 0.15 + NIC-leaf 12.5 + leaf-NIC 12.5 +
// PCIe 2 x 0.15 = 26.1 us, above NCCL's 14 us step; an NVLink hop costs NCCL's 3.4 us (its route,
// 0.5 us, is below): alpha = (14 x 3.4 + 2 x 26.1) / 16.
constexpr double kAlphaTwoNodes = (14 * 3.4e-6 + 2 * 26.1e-6) / 16;

AlphaBeta simple_ring(const Topology& t, int channels) {
  return ring_alpha_beta(t, plan_rings(t, channels), ring_protocol(Proto::Simple).timing);
}

double engine_time_s(const Topology& t, int channels, const std::string& collective, double size) {
  RingScheduleOptions opts;
  opts.timing = ring_protocol(Proto::Simple).timing;
  EngineOptions eo;
  eo.pipeline_depth = ring_protocol(Proto::Simple).pipeline_depth;
  return simulate_one(t, ring_schedule(t, plan_rings(t, channels), collective, size, opts), eo).time_s;
}

TEST(GpuDirectTcp, A3MegaAllGatherIsTheClosedFormOfEightTcpxoNics) {
  const Topology t = testing::preset("gcp-a3-mega", 2);
  const AlphaBeta ab = simple_ring(t, 16);
  // 8 ring families, one per NIC, each NIC carrying its family's bytes: beta = 8 x 24.15 GB/s.
  EXPECT_NEAR(ab.beta_Bps, 8 * kTcpxNicBps, 1e3);
  EXPECT_NE(ab.bottleneck.find("TCPXO"), std::string::npos) << ab.bottleneck;
  EXPECT_NEAR(ab.alpha_s, kAlphaTwoNodes, 1e-12);
  EXPECT_NEAR(ab.launch_s, 8.4e-6, 1e-12);
  // all_gather of 1 GiB: T = launch + 15 alpha + 15/16 S / beta = 8.4 + 93.6 + 5210.3 us = 5.312 ms
  // (busbw 15/16 S / T = 189.5 GB/s); the engine replays the same ring within 3%.
  const double size = 1073741824.0;
  const double expected = 8.4e-6 + 15 * kAlphaTwoNodes + 15.0 / 16.0 * size / (8 * kTcpxNicBps);
  EXPECT_NEAR(ring_closed_form_time_s("all_gather", 16, size, ab), expected, 1e-9);
  EXPECT_NEAR(engine_time_s(t, 16, "all_gather", size), expected, 0.03 * expected);
}

TEST(GpuDirectTcp, A3HighAllReduceIsTheClosedFormOfFourTcpxNics) {
  const Topology t = testing::preset("gcp-a3-high", 2);
  const AlphaBeta ab = simple_ring(t, 8);
  // 4 ring families, one per NIC (two GPUs share each): beta = 4 x 24.15 = 96.6 GB/s.
  EXPECT_NEAR(ab.beta_Bps, 4 * kTcpxNicBps, 1e3);
  EXPECT_NE(ab.bottleneck.find("TCPX"), std::string::npos) << ab.bottleneck;
  EXPECT_NEAR(ab.alpha_s, kAlphaTwoNodes, 1e-12);
  // all_reduce of 1 GiB: T = launch + 30 alpha + 30/16 S / beta = 8.4 + 187.1 + 20841 us = 21.04 ms,
  // busbw = 30/16 S / T = 95.7 GB/s.
  const double size = 1073741824.0;
  const double expected = 8.4e-6 + 30 * kAlphaTwoNodes + 30.0 / 16.0 * size / (4 * kTcpxNicBps);
  EXPECT_NEAR(ring_closed_form_time_s("all_reduce", 16, size, ab), expected, 1e-9);
  EXPECT_NEAR(engine_time_s(t, 8, "all_reduce", size), expected, 0.03 * expected);
  // The same node with host-staged sockets (transport tcp) is 0.6 / 0.966 as fast on the network.
  nlohmann::json spec = load_topology_spec("gcp-a3-high");
  spec["node"]["nic"]["transport"] = "tcp";
  set_node_count(spec, 2);
  const Topology tcp = build_topology(spec, "tcp");
  EXPECT_FALSE(tcp.network.gpudirect_rdma);
  EXPECT_LT(simple_ring(tcp, 8).beta_Bps, 0.63 * ab.beta_Bps);
}

// --- the real GCP logs (tests/data/nccl-tests, provenance in each file), from the presets alone ---

ValidatedRun validate_log(const std::string& name, const std::string& preset, const std::string& algo = "",
                          const std::string& proto = "") {
  ValidateOptions opts;
  if (!algo.empty() || !proto.empty()) opts.filter = parse_algo_filter(algo, proto, "test");
  return testing::validate_real_log(name, load_topology_spec(preset), preset, opts);
}

// 2 x a3-highgpu-8g, all_gather 8 MiB..8 GiB, dstack's TCPX setup with NCCL_ALGO=Ring NCCL_PROTO=Simple
// (its README). The prediction's plateau is the hand-computed ring bound of 4 TCPX NICs, 4 x 24.15 =
// 96.6 GB/s busbw (within 2%: the ring's NVLink hops at one thread block's copy per channel leave the
// NICs idle 1% of a step's chain, docs/accuracy.md "A ring channel across nodes"); the log runs at 50
// GB/s, half of it, from 128 MiB up. Known miss (docs/accuracy.md: bandwidth side +92%, was +20% when
// host-staged tcp at 0.6 stood in): the same machine's GKE all_reduce below reaches 89.5 GB/s through
// the same ring bound, so no NIC rate explains both.
TEST(GpuDirectTcpAccuracy, A3HighTcpxAllGatherPlateauIsTheRingBound) {
  const ValidatedRun run = validate_log("gcp-a3high-2node-tcpx-allgather-dstack.txt", "gcp-a3-high", "Ring", "Simple");
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "Ring");
  EXPECT_LE(last.predicted_busbw_GBps, 96.6 * 1.001);
  EXPECT_GT(last.predicted_busbw_GBps, 0.98 * 96.6);
  EXPECT_NEAR(last.measured_busbw_GBps, 50.17, 0.01);
  EXPECT_LT(run.bandwidth.median_error, 1.0) << run.bandwidth.median_error;  // +93% today
}

// 2 x a3-highgpu-8g (GKE), all_reduce 1 MiB..8 GiB. The chart that printed it sets NCCL_ALGO=Ring,
// NCCL_PROTO=Simple (ai-infra-cluster-provisioning sample_workloads/nccltest/gke/values.yaml). The
// plateau is the ring bound of 4 TCPX NICs, 96.6 GB/s; measured 89.5 at 8 GiB (+8%). The bandwidth
// side's median is +12.5% (was +32% host-staged): above issue 11's 10%, the approach to the plateau
// at 128-512 MiB is slower than modelled (TCPX's per-step costs, docs/accuracy.md).
TEST(GpuDirectTcpAccuracy, A3HighTcpxAllReduceBandwidthSide) {
  const ValidatedRun run = validate_log("gcp-a3high-2node-tcpx-allreduce-gke.txt", "gcp-a3-high", "Ring", "Simple");
  const ValidatedSize& last = run.sizes.back();
  EXPECT_NEAR(last.predicted_busbw_GBps, 96.6, 0.01 * 96.6);
  EXPECT_LT(std::fabs(last.error), 0.10) << last.error;
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.15) << run.bandwidth.median_error;
}

// 2 x a3-megagpu-8g, all_gather 8 MiB..8 GiB, dstack's TCPXO setup (nccl-env-profile-ll128.sh:
// NCCL_ALGO=Ring,Tree, NCCL_PROTO=Simple,LL128). Ring bound of 8 TCPXO NICs: 8 x 24.15 = 193.2 GB/s;
// the replay keeps the NICs 97% busy (186.8: its NVLink hops run one thread block's copy per channel,
// under the NICs' pace but with less slack in a step's chain), measured 188.5 at 8 GiB. Bandwidth side
// median +6% (was -30% host-staged): within 10%.
TEST(GpuDirectTcpAccuracy, A3MegaTcpxoAllGatherBandwidthSideWithinTenPercent) {
  const ValidatedRun run =
      validate_log("gcp-a3mega-2node-tcpxo-allgather-dstack.txt", "gcp-a3-mega", "Ring,Tree", "Simple,LL128");
  const ValidatedSize& last = run.sizes.back();
  EXPECT_LE(last.predicted_busbw_GBps, 193.2 * 1.001);
  EXPECT_GT(last.predicted_busbw_GBps, 0.95 * 193.2);
  EXPECT_LT(std::fabs(last.error), 0.05) << last.error;
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
}

// 2 x a3-megagpu-8g, all_reduce 8 B..8 GiB, the preset alone (the log's NCCL settings, ${HOST_VARS},
// are not shown). The tree graph's bwIntra is raised to 2 x bwInter (48 over 24 GB/s: NCCL's search
// pass 2 for trees), so NCCL 2.30's model picks Tree/Simple above 512 MiB. Its kernel ceiling binds:
// perChMaxTreeBw (Hopper, 2 nodes) 41.4 GB/s x 8 graph channels = 331.2 GB/s of NCCL busBw, algbw
// 331.2 / 2 = 165.6, nccl-tests busbw 165.6 x 2 (n-1)/n = 310.5 GB/s. Measured 338.8 at 8 GiB (-9%:
// the run outran NCCL's own ceiling, or ran NVLSTree, whose bound is 362.25). The bandwidth side's
// median is +9%; the approach (32..256 MiB, NVLSTree) is 1.6-3x slower than modelled.
TEST(GpuDirectTcpAccuracy, A3MegaTcpxoAllReducePlateau) {
  const ValidatedRun run = validate_log("gcp-a3mega-2node-allreduce-8B-8G.txt", "gcp-a3-mega");
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "Tree");
  EXPECT_NEAR(last.predicted_busbw_GBps, 2 * 15.0 / 16.0 * (8 * 41.4 / 2), 0.01 * 310.5);
  EXPECT_LT(std::fabs(last.error), 0.10) << last.error;
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;  // +9.2% today
  EXPECT_LT(run.latency.median_error, 1.10) << run.latency.median_error;                 // +100% today
}

}  // namespace
}  // namespace ccsim
