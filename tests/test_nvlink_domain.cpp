// NVLink domains of several hosts (node.nvlink.domain_size; GB200 NVL72: 18 trays of 4 GPUs on one
// NVLink switch fabric): routing inside a domain over NVLink across trays and between domains over
// the NICs, NCCL's MNNVL view (the domain is NCCL's node), and the ring's alpha-beta cost derived by
// hand from the gb200-nvl72 preset's link rates:
//   NVLink per GPU: 18 links x 50 GB/s x 40.1/50 (NVLink5 default efficiency) = 721.8 GB/s
//   NIC: 400 Gb/s x 0.97 (IB) = 48.5 GB/s;  NIC PCIe Gen5 x16 x 0.8 = 50.4 GB/s
//   per-step costs (NCCL 2.30 Ring/Simple): launch 8.4 us, NVLink step 3.4 us, network step 14 us.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "algorithms/closed_form.h"
#include "algorithms/nccl_channels.h"
#include "algorithms/ring.h"
#include "cli_runner.h"
#include "common/error.h"
#include "scenarios/log_gpu_preset.h"
#include "scenarios/validate.h"
#include "scenarios/validate_log.h"
#include "sim/engine.h"
#include "real_log_helpers.h"
#include "test_helpers.h"
#include "topologies/nccl_env.h"
#include "topologies/nic_affinity.h"
#include "topologies/nvlink_domain.h"
#include "topologies/routing.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

constexpr double kNvlPerGpu = 18 * 50e9 * (40.1 / 50.0);  // 721.8 GB/s
constexpr double kNic = 400e9 / 8 * 0.97;                 // 48.5 GB/s

Topology gb200(int trays, const std::vector<std::string>& sets = {}) {
  nlohmann::json spec = load_topology_spec("gb200-nvl72");
  for (const auto& s : sets) apply_override(spec, s, "test");
  set_node_count(spec, trays);
  return build_topology(spec, "gb200-nvl72");
}

bool crosses_network(const Topology& t, const Route& r) {
  for (const Hop& h : r)
    if (t.link(h.edge).kind == LinkKind::Network) return true;
  return false;
}

TEST(NvlinkDomain, PresetIsARackOfEighteenTrays) {
  const Topology one = gb200(18), two = gb200(36);
  EXPECT_EQ(one.num_nodes(), 1);  // one NVLink domain
  EXPECT_EQ(one.gpus_per_node(), 72);
  EXPECT_EQ(one.nics_per_node(), 72);
  EXPECT_EQ(hosts_per_node(one), 18);
  EXPECT_EQ(gpus_per_host(one), 4);
  EXPECT_EQ(two.num_nodes(), 2);
  EXPECT_EQ(num_hosts(two), 36);
  EXPECT_EQ(two.num_gpus(), 144);
  EXPECT_EQ(one.gpu_arch, "sm100");
  EXPECT_TRUE(one.nvls_capable);
  // One NVSwitch vertex for the rack; every GPU's link to it carries 721.8 GB/s per direction.
  VertexId nvsw;
  ASSERT_TRUE(one.find_vertex(VertexKind::NvSwitch, 0, 0, -1, &nvsw));
  for (int g : {0, 5, 71}) EXPECT_DOUBLE_EQ(one.link(one.edge_between(one.gpu(g), nvsw)).bandwidth_Bps, kNvlPerGpu);
  EXPECT_DOUBLE_EQ(one.network.nic_bandwidth_Bps, 50e9);
  // Hosts share nothing but NVLink: 36 Grace sockets, inter-socket links only inside a tray.
  int sockets = 0, inter = 0;
  for (auto [it, end] = boost::vertices(one.graph()); it != end; ++it)
    if (one.vertex(*it).kind == VertexKind::Cpu) ++sockets;
  for (auto [it, end] = boost::edges(one.graph()); it != end; ++it)
    if (one.link(*it).kind == LinkKind::InterSocket) ++inter;
  EXPECT_EQ(sockets, 36);
  EXPECT_EQ(inter, 18);
}

TEST(NvlinkDomain, CrossTrayOverNvlinkCrossDomainOverANic) {
  const Topology t = gb200(36);
  // Rank 0 (tray 0) -> rank 4 (tray 1, same rack): NVLink, no NIC.
  EXPECT_EQ(format_route(t, route_between_gpus(t, 0, 4, -1)), "n0.gpu0 -> n0.nvswitch -> n0.gpu4");
  EXPECT_EQ(path_class(t, t.gpu(0), t.gpu(71)), PathClass::Nvl);
  // Rank 0 -> rank 72 (rack 1): out through the tray's own NIC on its Grace root port, leaf -> spine
  // -> leaf (each rack is its own leaf group: 32 nodes per leaf / 18 per domain = 1 domain).
  EXPECT_EQ(format_route(t, route_between_gpus(t, 0, 72, -1)),
            "n0.gpu0 -> n0.cpu0 -> n0.nic0 -> leaf.g0.r0 -> spine -> leaf.g1.r0 -> n1.nic0 -> n1.cpu0 -> n1.gpu0");
  // A rail of another tray: NVLink to the GPU that drives that NIC (PXN), then its PCIe.
  EXPECT_EQ(format_route(t, route_between_gpus(t, 1, 78, 6)),
            "n0.gpu1 -> n0.nvswitch -> n0.gpu6 -> n0.cpu3 -> n0.nic6 -> leaf.g0.r6 -> spine -> leaf.g1.r6 -> n1.nic6 -> "
            "n1.cpu3 -> n1.gpu6");
  // A destination on another tray than the rail's NIC: in through the NIC's GPU, then NVLink.
  EXPECT_EQ(format_route(t, route_between_gpus(t, 0, 77, -1)),
            "n0.gpu0 -> n0.cpu0 -> n0.nic0 -> leaf.g0.r0 -> spine -> leaf.g1.r0 -> n1.nic0 -> n1.cpu0 -> n1.gpu0 -> "
            "n1.nvswitch -> n1.gpu5");
  // NIC affinity: GPU i of a tray drives NIC i of the tray (2 GPUs and 2 NICs per Grace socket, both
  // PHB: DIVUP(2, 2) = 1 each); another tray's NIC is as far as another node's.
  for (int g = 0; g < 72; ++g) EXPECT_EQ(nics_of_gpu(t, g), std::vector<int>{g}) << g;
  EXPECT_EQ(path_class(t, t.gpu(0), t.nic(0, 0)), PathClass::Phb);
  EXPECT_EQ(path_class(t, t.gpu(0), t.nic(0, 4)), PathClass::Net);
}

TEST(NvlinkDomain, NcclSeesTheDomainAsItsNode) {
  // MNNVL: NCCL fuses the clique's topology (ncclTopoGetSystem), so nRanks per node = 72; NVLS
  // channels on sm100: 24 when the clique is the whole communicator, 32 otherwise (nvls.cc).
  const NcclTopoSummary one = summarize_for_nccl(gb200(18));
  EXPECT_EQ(one.nnodes, 1);
  EXPECT_EQ(one.ppn, 72);
  EXPECT_TRUE(one.nvls);
  EXPECT_EQ(one.nvls_channels, 24);
  const NcclTopoSummary two = summarize_for_nccl(gb200(36));
  EXPECT_EQ(two.nnodes, 2);
  EXPECT_EQ(two.ppn, 72);
  EXPECT_EQ(two.nvls_channels, 32);
}

TEST(NvlinkDomain, OneRackRingAllReduceIsNvlinkOnly) {
  const Topology t = gb200(18);
  const RingPlan plan = plan_rings(t, 16);
  ASSERT_EQ(plan.families.size(), 1u);
  const auto& order = plan.families[0].order;
  ASSERT_EQ(order.size(), 72u);
  for (std::size_t p = 0; p < order.size(); ++p) {
    const Route r = route_between_gpus(t, order[p], order[(p + 1) % order.size()], plan.families[0].rail);
    EXPECT_FALSE(crosses_network(t, r)) << format_route(t, r);
    for (const Hop& h : r) EXPECT_EQ(t.link(h.edge).kind, LinkKind::NvLink) << format_route(t, r);
  }
  // Every hop GPU -> NVSwitch -> GPU: beta = one GPU's NVLink, alpha = NCCL's NVLink step (3.4 us >
  // the route's 0.5 us). T(1 GiB) = 8.4 us + 142 x 3.4 us + 142/72 x 2^30 / 721.8 GB/s.
  const StepTiming timing = ring_protocol(Proto::Simple).timing;
  const AlphaBeta ab = ring_alpha_beta(t, plan, timing);
  EXPECT_NEAR(ab.beta_Bps, kNvlPerGpu, 1e3) << ab.bottleneck;
  EXPECT_NEAR(ab.alpha_s, 3.4e-6, 1e-12);
  const double size = 1073741824.0;
  const double hand = 8.4e-6 + 142 * 3.4e-6 + 142.0 / 72.0 * size / kNvlPerGpu;
  EXPECT_NEAR(ring_closed_form_time_s("all_reduce", 72, size, ab), hand, 1e-9);
  RingScheduleOptions opts;
  opts.timing = timing;
  EngineOptions eo;
  eo.pipeline_depth = ring_protocol(Proto::Simple).pipeline_depth;
  const double engine_s = simulate_one(t, ring_schedule(t, plan, "all_reduce", size, opts), eo).time_s;
  EXPECT_NEAR(engine_s, hand, 0.03 * hand);
}

TEST(NvlinkDomain, TwoRacksJoinedByTheNetwork) {
  // 72 ring families, one per rail; family r crosses between racks once each way on NIC r. Per
  // family every GPU's NVLink carries one hop each way, so beta over NVLink is 721.8 GB/s; NIC r
  // carries 1 of 72 families: 72 x 48.5 = 3492 GB/s. NVLink sets beta. Each family has 142 NVLink
  // hops (3.4 us) and 2 network hops (14 us > their 3.85 us of links).
  const Topology t = gb200(36);
  const RingPlan plan = plan_rings(t, 144);
  ASSERT_EQ(plan.families.size(), 72u);
  int net_hops = 0;
  for (std::size_t p = 0; p < 144; ++p) {
    const auto& o = plan.families[5].order;
    if (crosses_network(t, route_between_gpus(t, o[p], o[(p + 1) % 144], plan.families[5].rail))) ++net_hops;
  }
  EXPECT_EQ(net_hops, 2);
  const StepTiming timing = ring_protocol(Proto::Simple).timing;
  const AlphaBeta ab = ring_alpha_beta(t, plan, timing);
  EXPECT_NEAR(ab.beta_Bps, kNvlPerGpu, 1e3) << ab.bottleneck;
  EXPECT_NEAR(ab.alpha_s, (142 * 3.4e-6 + 2 * 14e-6) / 144, 1e-12);
  // With 50 Gb/s NICs (6.0625 GB/s) the network sets beta: 72 x 6.0625 = 436.5 GB/s.
  const Topology slow = gb200(36, {"node.nic.Gbps=50"});
  const AlphaBeta ab_slow = ring_alpha_beta(slow, plan_rings(slow, 144), timing);
  EXPECT_NEAR(ab_slow.beta_Bps, 72 * 50e9 / 8 * 0.97, 1e3) << ab_slow.bottleneck;
  EXPECT_NE(ab_slow.bottleneck.find("nic"), std::string::npos) << ab_slow.bottleneck;
}

TEST(NvlinkDomain, EngineMatchesTheClosedFormAcrossSmallDomains) {
  // Domains of 2 trays (8 GPUs, 8 NICs), 2 domains in one leaf group: 8 families, NIC r carries 1
  // of 8: beta = 8 x 48.5 = 388 GB/s (NVLink 721.8, the NICs' Gen5 x16 root ports 8 x 50.4).
  const Topology t = gb200(4, {"node.nvlink.domain_size=2"});
  ASSERT_EQ(t.num_nodes(), 2);
  const RingPlan plan = plan_rings(t, 16);
  ASSERT_EQ(plan.families.size(), 8u);
  const StepTiming timing = ring_protocol(Proto::Simple).timing;
  const AlphaBeta ab = ring_alpha_beta(t, plan, timing);
  EXPECT_NEAR(ab.beta_Bps, 8 * kNic, 1e3) << ab.bottleneck;
  const double size = 1073741824.0;
  const double expected = ring_closed_form_time_s("all_reduce", 16, size, ab);
  RingScheduleOptions opts;
  opts.timing = timing;
  EngineOptions eo;
  eo.pipeline_depth = ring_protocol(Proto::Simple).pipeline_depth;
  const double engine_s = simulate_one(t, ring_schedule(t, plan, "all_reduce", size, opts), eo).time_s;
  EXPECT_NEAR(engine_s, expected, 0.03 * expected);
}

TEST(NvlinkDomain, DomainSizeMustDivideTheNodes) {
  try {
    gb200(20);
    FAIL() << "20 trays in racks of 18 were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/node/nvlink/domain_size"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gb200(2, {"node.nvlink.nvswitch=false", "node.gpu.count=2", "node.nic.count=2", "node.nvlink.nvls=false",
                         "node.nvlink.domain_size=2"}),
               InputError);
  EXPECT_THROW(gb200(145, {"node.nvlink.domain_size=145"}), InputError);  // 580 GPUs > 576
  const testing::CliResult r = testing::run_ccsim("topo --topology gb200-nvl72 --nodes 20");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/node/nvlink/domain_size"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(NvlinkDomain, OneHostPerDomainIsTodaysNode) {
  // domain_size 1 (the default) builds exactly what a spec without the key builds.
  nlohmann::json a = load_topology_spec("dgx-b200"), b = a;
  apply_override(b, "node.nvlink.domain_size=1", "test");
  set_node_count(a, 2);
  set_node_count(b, 2);
  const Topology ta = build_topology(a, "x"), tb = build_topology(b, "x");
  EXPECT_EQ(ta.num_vertices(), tb.num_vertices());
  EXPECT_EQ(ta.num_edges(), tb.num_edges());
  EXPECT_EQ(format_route(ta, route_between_gpus(ta, 3, 12, -1)), format_route(tb, route_between_gpus(tb, 3, 12, -1)));
  EXPECT_EQ(hosts_per_node(ta), 1);
}

// The real GB200 logs (tests/data/nccl-tests, provenance on top of each), described by the preset
// and the facts their sources state: ranks and trays (the excerpts print only the last device line),
// for OCI 8 RoCE NICs per tray, two racks of 16 trays and NCCL_NVLS_ENABLE=0. Each test guards what
// the model achieves today (docs/accuracy.md gives the reason for every miss).
ValidatedRun validate_gb200(const std::string& log, int ranks, const std::vector<std::string>& sets, PredictModel model) {
  nlohmann::json spec = load_topology_spec("gb200-nvl72");
  for (const auto& s : sets) apply_override(spec, s, "test");
  set_node_count(spec, ranks / 4);
  ValidateOptions opts;
  opts.model = model;
  opts.nodes_given = true;
  opts.overrides.ranks = ranks;
  return testing::validate_real_log(log, spec, "gb200-nvl72", opts);
}

TEST(NvlinkDomainLogs, CoreWeaveOneRackNvlsIsOptimistic) {
  // 72 GPUs, NVLS over the rack (NCCL's tuner and ours agree). The engine's NVLS reaches NVLink x
  // nvlsEfficiency (721.8 x 0.74 = 534 GB/s algBw, 1052 busBw); the log's plateau is 835-847 busBw.
  // Bandwidth side median +30% with the NVLS kernel's pipeline fill over NCCL's 32 heads (+36% without;
  // closed form, NCCL's own model 917 busBw: +20%). Issue 11's 10% is not met.
  const ValidatedRun run = validate_gb200("coreweave-gb200-nvl72-1rack-72gpu-allreduce.txt", 72, {}, PredictModel::Engine);
  EXPECT_EQ(run.prediction.facts.nodes, 1);
  EXPECT_EQ(run.prediction.facts.gpus_per_node, 72);
  EXPECT_GT(run.bandwidth.median_error, 0.0);
  EXPECT_LT(run.bandwidth.median_error, 0.34) << run.bandwidth.median_error;
}

TEST(NvlinkDomainLogs, CoreWeaveTwoRacksClosedForm) {
  // 2 NVLink domains joined by InfiniBand: NVLSTree. The closed form (NCCL 2.30's model of the tuner's
  // choice): bandwidth median +28%. The engine replays it in seconds on the fluid solver, but with the
  // one-rack NVLS of the test above inside each rack: +43% (docs/accuracy.md).
  const ValidatedRun run =
      validate_gb200("coreweave-gb200-nvl72-2rack-144gpu-allreduce.txt", 144, {}, PredictModel::ClosedForm);
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  EXPECT_GT(run.bandwidth.median_error, 0.0);
  EXPECT_LT(run.bandwidth.median_error, 0.32) << run.bandwidth.median_error;
}

TEST(NvlinkDomainLogs, CoreWeaveTwentyRacksFarSlowerThanModelled) {
  // 1440 GPUs, 20 domains (3 minutes a size on the engine, too long for this suite); the closed form predicts 913 busBw at
  // 16 GiB against 406 measured (+125%): what limits NCCL at 20 racks is not modelled.
  const ValidatedRun run =
      validate_gb200("coreweave-gb200-nvl72-20rack-1440gpu-allreduce.txt", 1440, {}, PredictModel::ClosedForm);
  EXPECT_EQ(run.prediction.facts.nodes, 20);
  EXPECT_GT(run.bandwidth.median_error, 1.0);
  EXPECT_LT(run.bandwidth.median_error, 1.6) << run.bandwidth.median_error;
}

TEST(NvlinkDomainLogs, OciTwoRacksRingWithinTenPercent) {
  // 32 trays in 2 racks (16 each), 8 RoCE NICs per tray, NVLS disabled: Tree then Ring over 64-GPU
  // NVLink domains. Bandwidth side median +4% (the ring is NVLink-bound: 721.8 GB/s per GPU); the
  // latency side is +98% (a 183 us floor against 92 us: RoCE and MNNVL per-step costs not modelled).
  const ValidatedRun run = validate_gb200(
      "oci-gb200-32node-128gpu-2rack-allreduce-nccl2.29.2.txt", 128,
      {"node.nvlink.domain_size=16", "node.nic.count=8", "node.nic.Gbps=200", "node.nic.transport=roce", "node.nvlink.nvls=false"},
      PredictModel::ClosedForm);
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  EXPECT_EQ(run.prediction.facts.gpus_per_node, 64);
  // The excerpt lists one device line (rank 127) for 128 ranks: one GPU per process, as the command
  // ran (-g 1), not one process launching 128 kernels (128 x 4.2 us = 538 us a call).
  EXPECT_EQ(run.log.gpus_per_process, 1);
  EXPECT_EQ(run.log.processes, 128);
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
  EXPECT_GT(run.latency.median_error, 0.5);
}

// OCI's GB300 trays as their quick start states them: 8 x 400 Gb/s RoCE per tray, and the trays
// the run used as one NVLink domain.
std::vector<std::string> oci_gb300_sets(int trays) {
  return {"node.nic.count=8", "node.nic.Gbps=400", "node.nic.transport=roce",
          "node.nvlink.domain_size=" + std::to_string(trays)};
}

// OCI's GB300 NVL72 (NCCL 2.28.7, one process per GPU, 8 x 400 Gb/s RoCE per tray of 4 GPUs,
// NCCL_BUFFSIZE 16 MiB), described as gb200-nvl72 (the same NVLink5, 18 x 50 GB/s per GPU) with NVLink
// domains of the trays each run used. One tray: Ring at the GPUs' NVLink bound (721.2 predicted,
// 685.2 measured at 16 GiB: +5%), as Azure's GB200 tray (docs/accuracy.md). Two trays: NVLS, plateau
// 827.9 predicted, 841.6 measured (-1.6% at 16 GiB), bandwidth side +10%. Sixteen trays (64 GPUs): the
// engine's NVLS grows with the GPU count as S(1 + 1/n) per link says (1022.6 at 16 GiB) while the
// measurement, still rising at 16 GiB, is at 930.5 (+10%) and its approach slower (1 GiB +26%): the
// NVLS-at-scale miss of CoreWeave's 72-GPU rack.
TEST(NvlinkDomainLogs, OciGb300OneTwoAndSixteenTrays) {
  const ValidatedRun one = validate_gb200("oci-gb300-1tray-4gpu-allreduce-nccl2.28.7.txt", 4, oci_gb300_sets(1), PredictModel::Engine);
  EXPECT_EQ(one.sizes.back().nccl_algorithm, "Ring");
  // The ring's bound: 18 NVLink5 links at NCCL's 40.1 GB/s each (ncclTopoNVLinkBw, SM100).
  const double ring_bound_GBps = 18 * 40.1;
  EXPECT_NEAR(one.sizes.back().predicted_busbw_GBps, ring_bound_GBps, 0.01 * ring_bound_GBps);
  EXPECT_NEAR(one.sizes.back().measured_busbw_GBps, 685.19, 0.01);
  EXPECT_NEAR(one.sizes.back().error, ring_bound_GBps / 685.19 - 1, 0.01) << one.sizes.back().error;
  EXPECT_LT(std::fabs(one.bandwidth.median_error), 0.12) << one.bandwidth.median_error;
  const ValidatedRun two = validate_gb200("oci-gb300-2tray-8gpu-allreduce-nccl2.28.7.txt", 8, oci_gb300_sets(2), PredictModel::Engine);
  EXPECT_EQ(two.prediction.facts.gpus_per_node, 8);
  EXPECT_EQ(two.sizes.back().nccl_algorithm, "NVLS");
  EXPECT_LT(std::fabs(two.sizes.back().error), 0.03) << two.sizes.back().error;
  EXPECT_LT(std::fabs(two.bandwidth.median_error), 0.11) << two.bandwidth.median_error;
  const ValidatedRun sixteen =
      validate_gb200("oci-gb300-16tray-64gpu-allreduce-nccl2.28.7.txt", 64, oci_gb300_sets(16), PredictModel::Engine);
  EXPECT_EQ(sixteen.sizes.back().nccl_algorithm, "NVLS");
  EXPECT_GT(sixteen.sizes.back().predicted_busbw_GBps, sixteen.sizes.back().measured_busbw_GBps);
  EXPECT_GT(sixteen.bandwidth.median_error, 0.10);  // a known miss
  EXPECT_LT(sixteen.bandwidth.median_error, 0.25) << sixteen.bandwidth.median_error;
}

// The same OCI GB300 trays' all-to-all (NCCL's P2P, one NVLink domain per rack) and the 2-rack runs.
// Inside a rack the plateau is NVLink's: every GPU sends (n-1)/n of its buffer over its 18 NVLink5 links
// at NCCL's 40.1 GB/s each, so the predicted busbw at 16 GiB is that bound; the logs reach 0.95 (2 trays)
// and 0.92 (16 trays) of it. Below 256 MiB the 16-tray run is 1.5-3.4x slower than predicted: its
// 512 KiB messages are one P2P step each, whose write and copy-out do not overlap (ccsim runs the two
// rounds of each of the 32 CTAs one after the other, as NCCL does, but not the single step's copy-out;
// docs/accuracy.md "OCI's GB300 all-to-all, and its two racks").
TEST(NvlinkDomainLogs, OciGb300AllToAllInsideARackIsNvlinkBound) {
  const double nvlink_bound_GBps = 18 * 40.1;
  const ValidatedRun two = validate_gb200("oci-gb300-2tray-8gpu-alltoall-nccl2.28.7.txt", 8, oci_gb300_sets(2), PredictModel::Engine);
  EXPECT_EQ(two.prediction.facts.gpus_per_node, 8);
  EXPECT_EQ(two.sizes.back().nccl_algorithm, "P2P");
  EXPECT_NEAR(two.sizes.back().predicted_busbw_GBps, nvlink_bound_GBps, 0.01 * nvlink_bound_GBps);
  EXPECT_NEAR(two.sizes.back().measured_busbw_GBps, 685.06, 0.01);
  EXPECT_LT(std::fabs(two.bandwidth.median_error), 0.10) << two.bandwidth.median_error;
  const ValidatedRun sixteen =
      validate_gb200("oci-gb300-16tray-64gpu-alltoall-nccl2.28.7.txt", 64, oci_gb300_sets(16), PredictModel::Engine);
  EXPECT_EQ(sixteen.prediction.facts.gpus_per_node, 64);
  EXPECT_NEAR(sixteen.sizes.back().predicted_busbw_GBps, nvlink_bound_GBps, 0.01 * nvlink_bound_GBps);
  EXPECT_NEAR(sixteen.sizes.back().error, nvlink_bound_GBps / 666.92 - 1, 0.01) << sixteen.sizes.back().error;
  EXPECT_GT(sixteen.latency.median_error, 1.0);  // a known miss: the single-step messages
  // 512 KiB per peer (32 MiB) takes longer than 1 MiB per peer (64 MiB) in the log, not in the model.
  const ValidatedSize& m32 = testing::size_at(sixteen, 32ull << 20);
  const ValidatedSize& m64 = testing::size_at(sixteen, 64ull << 20);
  EXPECT_GT(m32.measured_time_us, m64.measured_time_us);
  EXPECT_LT(m32.predicted_time_us, m64.predicted_time_us);
}

// 32 trays over two racks (16 per rack, RoCE between them). The all-to-all sends half of each GPU's
// buffer to the other rack; the prediction (the P2P schedule's closed form) moves it through one of
// the GPU's two 400 Gb/s NICs at RoCE's 0.95 (47.5 GB/s: busbw 47.5 x 2 x 127/128), a little below
// since NCCL 2.29's 8 channels per network peer (two NICs of 50 GB/s over 14 each) leave 32 p2p
// channels room for 32 peers at a time: the 63 peers in the rack take waves of their own before the
// 64 across racks. The log holds half of the NIC's rate from 128 MiB on.
// The all_reduce of the same racks has a floor near 490 us from 1 to 16 MiB (one rack: 30-33 us);
// neither is explained by the description (docs/accuracy.md).
TEST(NvlinkDomainLogs, OciGb300TwoRacksRunAtHalfThePrediction) {
  const std::vector<std::string> sets = oci_gb300_sets(16);
  const ValidatedRun a2a = validate_gb200("oci-gb300-32tray-128gpu-2rack-alltoall-nccl2.28.7.txt", 128, sets, PredictModel::ClosedForm);
  EXPECT_EQ(a2a.prediction.facts.nodes, 2);
  const double one_nic_busbw_GBps = 400 / 8.0 * 0.95 * 2 * 127 / 128;
  EXPECT_LT(a2a.sizes.back().predicted_busbw_GBps, one_nic_busbw_GBps);
  EXPECT_GT(a2a.sizes.back().predicted_busbw_GBps, 0.9 * one_nic_busbw_GBps);
  EXPECT_NEAR(a2a.sizes.back().measured_busbw_GBps, 47.67, 0.01);
  EXPECT_GT(a2a.bandwidth.median_error, 0.8);
  EXPECT_LT(a2a.bandwidth.median_error, 1.2) << a2a.bandwidth.median_error;
  const ValidatedRun ar = validate_gb200("oci-gb300-32tray-128gpu-2rack-allreduce-nccl2.28.7.txt", 128, sets, PredictModel::ClosedForm);
  EXPECT_EQ(ar.sizes.back().nccl_algorithm, "NVLSTree");
  for (const ValidatedSize& z : ar.sizes)
    if (z.size_bytes >= (1ull << 20) && z.size_bytes <= (16ull << 20)) {
      EXPECT_GT(z.measured_time_us, 480);
      EXPECT_LT(z.measured_time_us, 512);
    }
  EXPECT_GT(ar.latency.median_error, 3.0);
}

// Four Oracle OKE GB300 trays in one NVLink domain (IMEX channels, NCCL_MNNVL_ENABLE=1), NCCL 2.29.3,
// with the job script's NCCL_NVLS_ENABLE=0 and NCCL_MIN_CTAS=16: a Ring over the 16 GPUs' NVLink5,
// which validate takes from the device lines alone (4 x GB300 per tray on 4 trays: gb200-nvl72 with
// a domain of 4 trays). The ring's bound is the GPUs' 18 x 40.1 GB/s (NCCL's NVLink5 rate); the log
// reaches 701.3 at 8 GiB (0.97 of it): bandwidth side within 3%. The tray's NICs carry nothing here.
TEST(NvlinkDomainLogs, OkeGb300FourTraysRingOverMultiNodeNvlink) {
  const std::string name = "oke-gb300-4tray-16gpu-mnnvl-allreduce-nccl2.29.3.txt";
  const LogHardware guess = testing::hardware_of_real_log(name);
  EXPECT_EQ(guess.preset, "gb200-nvl72");
  EXPECT_EQ(guess.sets, std::vector<std::string>{"node.nvlink.domain_size=4"});

  nlohmann::json spec = load_topology_spec(guess.preset);
  for (const auto& s : guess.sets) apply_override(spec, s, "test");
  for (const char* e : {"NCCL_NVLS_ENABLE=0", "NCCL_MIN_CTAS=16"}) apply_nccl_env(spec, e, "--env", "test");
  const ValidatedRun run = testing::validate_real_log(name, spec, guess.preset);
  EXPECT_EQ(run.prediction.facts.nodes, 1);
  EXPECT_EQ(run.prediction.facts.gpus_per_node, 16);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "Ring");
  const double ring_bound_GBps = 18 * 40.1;
  EXPECT_LT(last.predicted_busbw_GBps, ring_bound_GBps);
  EXPECT_GT(last.predicted_busbw_GBps, 0.98 * ring_bound_GBps);
  EXPECT_NEAR(last.measured_busbw_GBps, 701.33, 0.01);
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.05) << run.bandwidth.median_error;
}

}  // namespace
}  // namespace ccsim

