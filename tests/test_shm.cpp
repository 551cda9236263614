// NCCL's SHM transport between GPUs of one node without P2P (node.pcie.p2p none, or
// node.nvlink.nccl_p2p false = NCCL_P2P_DISABLE): the sender's kernel writes into a FIFO in pinned
// host memory on the receiver's socket (NCCL_SHM_LOCALITY default), the receiver's kernel reads it;
// both GPUs' PCIe links carry the data and host memory carries it twice on one budget shared by
// reads and writes. The bandwidths below are hand-computed from the links, not read from ccsim.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>

#include "algorithms/nccl_channels.h"
#include "algorithms/p2p.h"
#include "algorithms/shm_two_way.h"
#include "algorithms/tuner.h"
#include "calibrate/nccl_tests_log.h"
#include "common/error.h"
#include "real_log_helpers.h"
#include "scenarios/validate.h"
#include "scenarios/predict.h"
#include "topologies/routing.h"
#include "topologies/spec.h"
#include "topologies/topo_report.h"

namespace ccsim {
namespace {

Topology make(const std::string& preset, const std::vector<std::string>& sets) {
  nlohmann::json spec = load_topology_spec(preset);
  for (const auto& s : sets) apply_override(spec, s, "--set");
  return build_topology(spec, preset);
}

int count_memory_hops(const Topology& t, const Route& r) {
  int n = 0;
  for (const Hop& h : r) n += t.link(h.edge).kind == LinkKind::Memory ? 1 : 0;
  return n;
}

double busbw_GBps(const Topology& topo, std::uint64_t bytes, bool fluid_solver = false) {
  PredictRequest req;
  req.sweep.min_bytes = req.sweep.max_bytes = bytes;
  req.engine.fluid_solver = fluid_solver;
  const Prediction p = predict(topo, req);
  return p.rows.front().oop_busbw_GBps;
}

TEST(Shm, TheFifoIsOnTheReceiversSocket) {
  // GPU 0 (socket 0) -> GPU 4 (socket 1): the sender's writes cross the inter-socket link, the FIFO
  // is in socket 1's memory, the receiver reads it locally.
  const Topology t = make("pcie-gen4-8gpu", {"node.pcie.p2p=none"});
  EXPECT_EQ(format_route(t, route_between_gpus(t, 0, 4)),
            "n0.gpu0 -> n0.pcisw0 -> n0.cpu0 -> n0.cpu1 -> n0.mem1 -> n0.cpu1 -> n0.pcisw2 -> n0.gpu4");
  EXPECT_EQ(format_route(t, route_between_gpus(t, 4, 0)),
            "n0.gpu4 -> n0.pcisw2 -> n0.cpu1 -> n0.cpu0 -> n0.mem0 -> n0.cpu0 -> n0.pcisw0 -> n0.gpu0");
}

TEST(Shm, TwoGpusShareOneHostMemoryBudgetForBothDirections) {
  // Two GPUs under one PCIe Gen4 switch of one socket, host memory 20 GB/s. A 2-rank ring
  // all_reduce runs both directions at once: flows 0->1 and 1->0 each write into and read from the
  // socket's memory, 4 crossings of one 20 GB/s budget = 5 GB/s per flow. PCIe is not the limit:
  // the switch uplink carries 2 flows per direction of 16 GT/s x 16 x 128/130 / 8 x 0.8 = 25.2 GB/s.
  // busbw of a 2-rank all_reduce = the per-direction rate; at 1 GiB the fixed costs (< 1 ms) are
  // below 0.5% of the 215 ms the bytes take. The two-way efficiency is set to 1 to see the budget alone.
  const std::vector<std::string> pair = {"node.gpu.count=2", "node.nic.count=0", "node.pcie.p2p=none",
                                         "node.cpu.sockets=1", "node.pcie.switches_per_socket=1",
                                         "node.cpu.host_memory_GBps=20"};
  std::vector<std::string> budget_alone = pair;
  budget_alone.push_back("node.pcie.shm_two_way_efficiency=1");
  const Topology t = make("pcie-gen4-8gpu", budget_alone);
  EXPECT_EQ(count_memory_hops(t, route_between_gpus(t, 0, 1)), 2);
  EXPECT_NEAR(busbw_GBps(t, 1ull << 30), 5.0, 0.05);
  EXPECT_NEAR(busbw_GBps(t, 1ull << 30, true), 5.0, 0.05);  // sim/fluid_network.h: the same platform
  // By default each GPU of the ring both writes into and reads from host memory: its flows weigh
  // 1 / 0.65 (node.pcie.shm_two_way_efficiency) on every resource, host memory included.
  EXPECT_NEAR(busbw_GBps(make("pcie-gen4-8gpu", pair), 1ull << 30), 5.0 * 0.65, 0.05);
  // The same pair with P2P through the switch never touches host memory: 25.2 GB/s per direction.
  const Topology p2p = make("pcie-gen4-8gpu", {"node.gpu.count=2", "node.nic.count=0", "node.cpu.sockets=1",
                                               "node.pcie.switches_per_socket=1", "node.cpu.host_memory_GBps=20"});
  EXPECT_NEAR(busbw_GBps(p2p, 1ull << 30), 25.2, 0.3);
}

TEST(Shm, NcclP2pDisableOnAnNvlinkNode) {
  // NCCL_P2P_DISABLE=1 on HGX A100: NVLink stays in the hardware, NCCL's data goes through SHM.
  const Topology nvl = make("hgx-a100", {"node.gpu.count=2", "node.nic.count=0"});
  EXPECT_EQ(count_memory_hops(nvl, route_between_gpus(nvl, 0, 1)), 0);
  const Topology shm = make("hgx-a100", {"node.gpu.count=2", "node.nic.count=0", "node.nvlink.nccl_p2p=false",
                                         "node.cpu.host_memory_GBps=20"});
  const Route r = route_between_gpus(shm, 0, 1);
  EXPECT_EQ(count_memory_hops(shm, r), 2);
  for (const Hop& h : r) EXPECT_NE(shm.link(h.edge).kind, LinkKind::NvLink);
  // hgx-a100's 2 GPUs sit on different sockets (GPU i on switch i x 4 / 2): each flow's FIFO is in
  // its receiver's socket memory, which that flow alone writes and reads: 2 crossings of 20 GB/s =
  // 10 GB/s (the 128 GB/s xGMI link and the 25.2 GB/s PCIe Gen4 links are wider), times the two-way
  // efficiency 0.65 of a ring's GPUs, which both write and read host memory: 6.5 GB/s.
  EXPECT_NEAR(busbw_GBps(shm, 1ull << 30), 10.0 * 0.65, 0.1);
}

TEST(Shm, NcclP2pDisableNeedsPcieAndNoNvls) {
  nlohmann::json spec = load_topology_spec("dgx-h100");
  apply_override(spec, "node.nvlink.nccl_p2p=false", "--set");
  try {
    build_topology(spec, "dgx-h100");
    FAIL() << "NVLS with NCCL_P2P_DISABLE accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nccl_p2p"), std::string::npos) << e.what();
  }
  apply_override(spec, "node.nvlink.nvls=false", "--set");
  EXPECT_NO_THROW(build_topology(spec, "dgx-h100"));
  // SHM needs the PCIe tree to reach host memory.
  nlohmann::json bare = load_topology_spec("hgx-a100");
  for (const char* o : {"node.nic.count=0", "node.pcie=null", "node.nvlink.nccl_p2p=false"}) apply_override(bare, o, "--set");
  try {
    build_topology(bare, "hgx-a100");
    FAIL() << "SHM without PCIe accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/node/nvlink/nccl_p2p"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("describe /node/pcie"), std::string::npos) << e.what();
  }
}

TEST(Shm, DgxA100WithNcclP2pDisableIsDescribable) {
  // The log's NCCL_P2P_DISABLE=1 run on 4 GPUs of a DGX A100 (5.20 GB/s busbw from 1 to 8 GiB).
  // Described as hgx-a100 with 4 GPUs (one per PCIe Gen4 switch, two per socket) and NCCL's P2P off:
  // every ring hop is an SHM pair whose GPU links carry one flow per direction at 16 GT/s x 16 lanes
  // x 128/130 / 8 x 0.8 = 25.2 GB/s, below the 204.8 GB/s host memory of each socket (two flows
  // write and read it: 4 crossings = 51.2 GB/s each) and the 128 GB/s xGMI link. Every GPU of the
  // ring writes and reads host memory at once: 0.65 of it (node.pcie.shm_two_way_efficiency), 16.4
  // GB/s. What makes this host's SHM reach about 5 GB/s is not described; node.pcie.shm_channel_GBps
  // takes a measured rate (below).
  std::ifstream in(std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/dgx-a100-4gpu-p2p-disabled-shm-allreduce.txt");
  const auto runs = parse_nccl_tests_log(in, "log.txt");
  ASSERT_EQ(runs.size(), 1u);
  nlohmann::json spec = load_topology_spec("hgx-a100");
  for (const char* o : {"node.gpu.count=4", "node.nic.count=0", "node.nvlink.nccl_p2p=false"}) apply_override(spec, o, "test");
  ValidateOptions opts;
  const ValidatedRun run = validate_run(runs[0], "log.txt", 0, spec, "hgx-a100", opts, DebugFacts{});
  ASSERT_FALSE(run.sizes.empty());
  EXPECT_NEAR(run.sizes.back().predicted_busbw_GBps, 16.0 * 16 * 128 / 130 / 8 * 0.8 * 0.65, 0.02 * 16.4);
  EXPECT_DOUBLE_EQ(run.sizes.back().measured_busbw_GBps, 5.20);
  bool named = false;
  for (const auto& c : run.causes)
    if (c.id == "p2p-host-staged") named = c.evidence.find("node.nvlink.nccl_p2p=false") != std::string::npos;
  EXPECT_TRUE(named);
}

ValidatedRun validate_file(const std::string& name, const std::string& preset, const std::vector<std::string>& sets,
                           int ranks = 0) {
  nlohmann::json spec = load_topology_spec(preset);
  for (const auto& o : sets) apply_override(spec, o, "test");
  ValidateOptions opts;
  opts.overrides.ranks = ranks;
  return testing::validate_real_log(name, spec, preset, opts);
}

bool names_host_staging(const ValidatedRun& run) {
  for (const auto& c : run.causes)
    if (c.id == "p2p-host-staged") return true;
  return false;
}

// Two RTX 4090 (GeForce: no peer-to-peer) under one PCIe Gen4 switch, -g 2: NCCL's SHM transport.
// ccsim routes it through host memory at the links' DMA rate, 16 GT/s x 16 lanes x 128/130 / 8 x 0.8
// = 25.2 GB/s per direction. Both GPUs sit under the one switch, so both their writes into host
// memory share the switch's uplink towards the root complex (and both their reads its downlink):
// 12.6 GB/s per flow, 8.2 at the two-way efficiency 0.65 of GPUs that write and read host memory at
// once, and a 2-GPU ring's all_reduce busbw is that per-hop rate. Measured 2.24 GB/s: the known miss
// of the SHM rows of undescribed hosts without a measured node.pcie.shm_channel_GBps
// (docs/accuracy.md), named as host staging by validate.
TEST(Shm, Rtx4090PairIsTheKnownShmMiss) {
  const ValidatedRun run = validate_file("rtx4090-x2-pcie-allreduce-g2.txt", "pcie-gen4-8gpu",
                                         {"node.gpu.count=2", "node.cpu.sockets=1", "node.pcie.switches_per_socket=1",
                                          "node.nic.count=0", "node.pcie.p2p=none"});
  ASSERT_FALSE(run.sizes.empty());
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.size_bytes, 2147483648u);
  EXPECT_NEAR(last.predicted_busbw_GBps, 16.0 * 16 * 128 / 130 / 8 * 0.8 / 2 * 0.65, 0.02 * 8.2);
  EXPECT_DOUBLE_EQ(last.measured_busbw_GBps, 2.24);
  EXPECT_GT(run.bandwidth.median_error, 2.5);  // +268%
  EXPECT_TRUE(names_host_staging(run));
}

// Four A40 of an 8-GPU two-socket server (GPUs 0, 1 on one socket, 6, 7 on the other) with
// NCCL_P2P_DISABLE=1: every ring hop is SHM, two of them across the sockets. The log has no device
// list, so its 4 ranks are given. ccsim predicts the PCIe link's 25.2 GB/s busbw (a 4-GPU ring's
// all_reduce busbw is the per-direction rate of its slowest hop, here a GPU link; the 3 UPI links
// and each socket's 204.8 GB/s of memory are far from binding) times the two-way efficiency 0.65;
// measured 1.35-1.44 GB/s, the slowest SHM row (across the sockets the GPUs' host-memory accesses
// go to the remote socket).
TEST(Shm, A40FourAcrossSocketsIsTheKnownShmMiss) {
  const ValidatedRun run = validate_file("a40x4-nvlink-pairs-sys-p2p-disabled-allreduce.txt", "pcie-gen4-8gpu",
                                         {"node.gpu.count=4", "node.nic.count=0", "node.pcie.p2p=none"}, 4);
  ASSERT_EQ(run.sizes.size(), 4u);
  EXPECT_EQ(run.log.ranks, 4);
  EXPECT_NEAR(run.sizes.back().predicted_busbw_GBps, 16.0 * 16 * 128 / 130 / 8 * 0.8 * 0.65, 0.02 * 16.4);
  EXPECT_DOUBLE_EQ(run.sizes.front().measured_busbw_GBps, 1.44);
  EXPECT_GT(run.bandwidth.median_error, 9.0);  // +1062%
  EXPECT_TRUE(names_host_staging(run));
}

// node.pcie.shm_channel_GBps: one NCCL channel of the SHM transport moves at most this many bytes per
// second on the wire (its thread block's loads from pinned host memory). The pair above has 2 ring
// channels (NCCL's PCIe-only search: 1 ring, duplicated), so a 2-rank all_reduce's busbw, the
// per-direction rate of each hop, is 2 x 1.5 = 3.0 GB/s, below the links' 12.6 GB/s per flow. With
// LL the wire carries 8 bytes per 4 of data: 1.5 GB/s.
TEST(Shm, TheChannelRateCapsEachShmConnection) {
  const std::vector<std::string> pair = {"node.gpu.count=2", "node.nic.count=0", "node.pcie.p2p=none",
                                         "node.cpu.sockets=1", "node.pcie.switches_per_socket=1"};
  std::vector<std::string> capped = pair;
  capped.push_back("node.pcie.shm_channel_GBps=1.5");
  const Topology t = make("pcie-gen4-8gpu", capped);
  EXPECT_DOUBLE_EQ(t.shm_channel_Bps, 1.5e9);
  EXPECT_NE(format_topology_report(t).find("P2P none (NCCL's SHM transport, 1.50 GB/s per channel)"), std::string::npos);
  EXPECT_TRUE(nccl_shm_pair(t, 0, 1));
  EXPECT_FALSE(nccl_shm_pair(t, 1, 1));
  EXPECT_NEAR(busbw_GBps(t, 1ull << 30), 3.0, 0.03);
  EXPECT_NEAR(busbw_GBps(t, 1ull << 30, true), 3.0, 0.03);
  PredictRequest ll;
  ll.sweep.min_bytes = ll.sweep.max_bytes = 64ull << 20;
  ll.filter = parse_algo_filter("Ring", "LL", "test");
  EXPECT_NEAR(predict(t, ll).rows.front().oop_busbw_GBps, 1.5, 0.02);
  // Where NCCL does not use SHM the key changes nothing: P2P through the PCIe switch, and NVLink.
  std::vector<std::string> p2p = {"node.gpu.count=2", "node.nic.count=0", "node.cpu.sockets=1",
                                  "node.pcie.switches_per_socket=1", "node.pcie.shm_channel_GBps=1.5"};
  const Topology sw = make("pcie-gen4-8gpu", p2p);
  EXPECT_FALSE(nccl_shm_pair(sw, 0, 1));
  EXPECT_NEAR(busbw_GBps(sw, 1ull << 30), 25.2, 0.3);
  const Topology nvl = make("hgx-a100", {"node.gpu.count=2", "node.nic.count=0", "node.pcie.shm_channel_GBps=1.5"});
  const Topology nvl_plain = make("hgx-a100", {"node.gpu.count=2", "node.nic.count=0"});
  EXPECT_FALSE(nccl_shm_pair(nvl, 0, 1));
  EXPECT_DOUBLE_EQ(busbw_GBps(nvl, 1ull << 30), busbw_GBps(nvl_plain, 1ull << 30));
}

TEST(Shm, TheChannelRateMustBePositive) {
  for (const char* bad : {"node.pcie.shm_channel_GBps=0", "node.pcie.shm_channel_GBps=-1"}) {
    try {
      make("pcie-gen4-8gpu", {"node.pcie.p2p=none", bad});
      FAIL() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("/node/pcie/shm_channel_GBps"), std::string::npos) << e.what();
    }
  }
}

// A calibration from another run on the same host: the 2-GPU log's plateau, 2.24 GB/s busbw over
// its 2 channels, is 1.12 GB/s per channel, and validate says so. The 4-GPU log of the same machine
// (the same page, the 2-GPU run's bus ids 0x1a/0x1b among its 0x1a/0x1b/0x3d/0x3e), predicted with
// it, measures 2.57-2.59 GB/s on its plateau against 2.24 predicted: 13% faster than its sibling run,
// short of the 10% target but not the +384% of the links' rate. Its latency side (Ring/LL, at the
// same cap with LL's two wire bytes per data byte) is within 20% by median.
TEST(Shm, OneRunsChannelRatePredictsAnotherOnTheSameHost) {
  const ValidatedRun two = validate_file("rtx4090-x2-pcie-allreduce-g2.txt", "pcie-gen4-8gpu",
                                         {"node.gpu.count=2", "node.cpu.sockets=1", "node.pcie.switches_per_socket=1",
                                          "node.nic.count=0", "node.pcie.p2p=none"});
  bool suggested = false;
  for (const auto& c : two.causes)
    if (c.id == "p2p-host-staged") suggested = c.next.find("--set node.pcie.shm_channel_GBps=1.12 ") != std::string::npos;
  EXPECT_TRUE(suggested);
  const ValidatedRun four = validate_file("rtx4090-x4-pcie-allreduce-g4.txt", "pcie-gen4-8gpu",
                                          {"node.gpu.count=4", "node.cpu.sockets=1", "node.pcie.switches_per_socket=2",
                                           "node.nic.count=0", "node.pcie.p2p=none", "node.pcie.shm_channel_GBps=1.12"});
  ASSERT_FALSE(four.sizes.empty());
  EXPECT_NEAR(four.sizes.back().predicted_busbw_GBps, 2 * 1.12, 0.01);
  EXPECT_NEAR(four.bandwidth.median_error, 2.24 / 2.58 - 1, 0.02);  // measured time / predicted - 1
  EXPECT_LT(std::fabs(four.latency.median_error), 0.20);
}

// The same pair of 2080 Ti (one PCIe Gen3 switch, no P2P: SHM) ran five collectives (the blog post of
// the all_reduce log). At the links' rates the SHM route crosses the switch's uplink twice (the
// sender's writes up to host memory, the receiver's reads down), 8 GT/s x 16 x 128/130 / 8 x 0.8 =
// 12.6 GB/s each way. One-way collectives (broadcast, reduce: the root only writes, the other GPU
// only reads) have that uplink to themselves and measure 11.1 GB/s busbw: within 14% of the links'
// 12.6. Two-way ones (every GPU sends and receives) share it, 6.3 GB/s each, and measure less still:
// all_reduce 4.0, all_gather 3.8, alltoall 4.6 (+57%, +88% and +40% at the links' rates), which the
// two-way efficiency 0.65 (node.pcie.shm_two_way_efficiency, from ccsim's probe of another host)
// takes to 4.1 GB/s: +2%, +26% (all_gather's approach to its plateau is slow) and -4%. So on this
// host the shortfall comes with traffic both ways, not with a channel: the all_reduce run's
// per-channel rate (2.0 GB/s over 2 channels) puts broadcast at 4.0 GB/s, 64% too slow.
TEST(Shm, OneWayCollectivesRunAtTheLinksTwoWayOnesDoNot) {
  const std::vector<std::string> pair = {"node.gpu.count=2", "node.pcie.generation=3", "node.cpu.sockets=1",
                                         "node.pcie.switches_per_socket=1", "node.nic.count=0", "node.pcie.p2p=none"};
  const double gen3 = 8.0 * 16 * 128 / 130 / 8 * 0.8;  // 12.6 GB/s
  for (const char* one_way : {"rtx2080ti-x2-pcie-noP2P-broadcast.txt", "rtx2080ti-x2-pcie-noP2P-reduce.txt"}) {
    const ValidatedRun run = validate_file(one_way, "pcie-gen4-8gpu", pair);
    ASSERT_FALSE(run.sizes.empty());
    EXPECT_EQ(run.log.ranks, 2);
    EXPECT_NEAR(run.sizes.back().predicted_busbw_GBps, gen3, 0.01 * gen3) << one_way;
    EXPECT_NEAR(run.sizes.back().measured_busbw_GBps, 11.1, 0.05) << one_way;
    EXPECT_GT(run.bandwidth.median_error, 0.10) << one_way;  // +14%
    EXPECT_LT(run.bandwidth.median_error, 0.20) << one_way;
  }
  // Measured plateau busbw (1 GiB) and whether the side's median meets issue 11's 10%: all_gather's
  // approach to its plateau is slow (its median is +26% while its 1 GiB size is +8%).
  const std::map<std::string, std::pair<double, bool>> two_way = {
      {"rtx2080ti-x2-pcie-noP2P-allreduce.txt", {4.00, true}},
      {"rtx2080ti-x2-pcie-noP2P-allgather.txt", {3.79, false}},
      {"rtx2080ti-x2-pcie-noP2P-alltoall.txt", {4.61, true}}};
  for (const auto& [log, measured_and_met] : two_way) {
    const ValidatedRun run = validate_file(log, "pcie-gen4-8gpu", pair);
    ASSERT_FALSE(run.sizes.empty());
    const ValidatedSize& last = run.sizes.back();
    EXPECT_NEAR(last.predicted_busbw_GBps, gen3 / 2 * 0.65, 0.01 * gen3) << log;
    EXPECT_NEAR(last.measured_busbw_GBps, measured_and_met.first, 0.01) << log;
    // measured time / predicted time - 1 = predicted busbw / measured busbw - 1
    EXPECT_NEAR(last.error, gen3 / 2 * 0.65 / measured_and_met.first - 1, 0.01) << log;
    EXPECT_EQ(std::fabs(run.bandwidth.median_error) < 0.10, measured_and_met.second)
        << log << " " << run.bandwidth.median_error;
  }
  // At the links' rates alone (efficiency 1) the two-way rows are the misses named above.
  std::vector<std::string> links_alone = pair;
  links_alone.push_back("node.pcie.shm_two_way_efficiency=1");
  const ValidatedRun ar_links = validate_file("rtx2080ti-x2-pcie-noP2P-allreduce.txt", "pcie-gen4-8gpu", links_alone);
  EXPECT_NEAR(ar_links.sizes.back().error, gen3 / 2 / 4.00 - 1, 0.01);  // +58%
  EXPECT_GT(ar_links.bandwidth.median_error, 0.50);
  std::vector<std::string> capped = pair;
  capped.push_back("node.pcie.shm_channel_GBps=2.0");
  const ValidatedRun bcast = validate_file("rtx2080ti-x2-pcie-noP2P-broadcast.txt", "pcie-gen4-8gpu", capped);
  EXPECT_NEAR(bcast.sizes.back().predicted_busbw_GBps, 2 * 2.0, 0.01);
  EXPECT_NEAR(bcast.bandwidth.median_error, 4.0 / 11.08 - 1, 0.01);  // -64%
}

// Eight RTX 4090 (stock driver: no P2P, SHM) on two AMD EPYC 7542 without PCIe switches, every GPU on
// its own Gen4 x16 root port, -g 8. An 8-GPU ring's busbw is the per-direction rate of its slowest
// hop; each hop goes up one GPU's link into host memory and down the next one's: 16 GT/s x 16 x
// 128/130 / 8 x 0.8 = 25.2 GB/s, and every GPU writes and reads host memory at once: 0.65 of it
// (node.pcie.shm_two_way_efficiency), 16.4 GB/s, 16.3 at 128 MB with the ring's steps. Measured
// 14.45-15.04 GB/s busbw (0.59 of the links): bandwidth side +8% (+59% at the links' rates alone).
// The 4090 rows above, on an undescribed host, run at a fifth of this.
TEST(Shm, EightRtx4090OnEpycRunShmAtTheTwoWayRate) {
  const ValidatedRun run = validate_file("rtx4090-x8-epyc-shm-allreduce-g8.txt", "pcie-gen4-8gpu",
                                         {"node.nic.count=0", "node.pcie.p2p=none", "node.pcie.switches_per_socket=0",
                                          "node.cpu.vendor=amd"});
  ASSERT_FALSE(run.sizes.empty());
  EXPECT_EQ(run.log.ranks, 8);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.size_bytes, 134217728u);
  EXPECT_NEAR(last.predicted_busbw_GBps, 16.0 * 16 * 128 / 130 / 8 * 0.8 * 0.65, 0.02 * 16.4);
  EXPECT_DOUBLE_EQ(last.measured_busbw_GBps, 14.45);
  EXPECT_GT(run.bandwidth.median_error, 0.0);  // +8%
  EXPECT_LT(run.bandwidth.median_error, 0.10);
  EXPECT_FALSE(names_host_staging(run));  // the bandwidth side is within validate's tolerance
}

// The two-way weight (algorithms/shm_two_way.h) per record: a GPU that both sends and receives SHM
// traffic weighs 1 / 0.65; a one-way record (0 -> 1 alone), and any record once a per-channel SHM rate
// is given, weighs 1. The engine and both closed forms of an alltoall apply it alike: two GPUs under
// one Gen4 switch, 1 GiB, each sending half to the other through host memory, both flows over the
// switch's uplink (12.6 GB/s each way) at 0.65: busbw 8.19 GB/s.
TEST(Shm, TwoWayWeightIsOneRuleForTheEngineAndTheClosedForms) {
  const std::vector<std::string> pair = {"node.gpu.count=2", "node.nic.count=0", "node.pcie.p2p=none",
                                         "node.cpu.sockets=1", "node.pcie.switches_per_socket=1"};
  const Topology t = make("pcie-gen4-8gpu", pair);
  const NcclTopoSummary sum = summarize_for_nccl(t);
  const P2pConfig cfg = nccl_p2p_config(t, sum);
  const double S = 1ull << 30;
  const Schedule a2a = alltoall_schedule(t, cfg, S);
  for (double w : shm_two_way_weights(t, a2a)) EXPECT_DOUBLE_EQ(w, 1 / 0.65);
  Schedule one_way;
  one_way.nranks = 2;
  Transfer x;
  x.src = 0;
  x.dst = 1;
  x.bytes = 1e6;
  one_way.add(x, {});
  EXPECT_EQ(shm_two_way_weights(t, one_way), std::vector<double>{1.0});
  std::vector<std::string> measured = pair;
  measured.push_back("node.pcie.shm_channel_GBps=2");
  for (double w : shm_two_way_weights(make("pcie-gen4-8gpu", measured), a2a)) EXPECT_DOUBLE_EQ(w, 1.0);
  const double schedule_form = p2p_closed_form_time_s(t, a2a);
  EXPECT_NEAR(alltoall_closed_form_time_s(t, cfg, S), schedule_form, 1e-12 * schedule_form);
  PredictRequest r;
  r.collective = "alltoall";
  r.sweep.min_bytes = r.sweep.max_bytes = static_cast<std::uint64_t>(S);
  const double busbw = predict(t, r).rows.front().oop_busbw_GBps;
  const double gen4 = 16.0 * 16 * 128 / 130 / 8 * 0.8;
  EXPECT_NEAR(busbw, gen4 / 2 * 0.65, 0.01 * gen4);
  // busbw = (n-1)/n x S / t: the closed form's time gives the same rate.
  EXPECT_NEAR(S / 2 / schedule_form / 1e9, busbw, 0.01 * busbw);
}

}  // namespace
}  // namespace ccsim

namespace ccsim {
namespace {

// A step of NCCL's SHM transport waits for its flag through pinned host memory: ccsim-probe-cuda's
// host_flag handoff, 1.38-1.57 us one way on an H200 host (node.pcie.shm_step_us, default 1.5), above
// NCCL's PCIe LL step of 1.0 us (its flag in GPU memory). 2 RTX 2080 Ti without P2P, all_reduce of
// 8 B, Ring/LL, one process per GPU: 6.6 + 2 steps x 1.5 = 9.6 us of device time, and nccl-tests'
// first launch over its 20 iterations (4.2 / 20). With the step at 0 NCCL's own 1.0 us remains: 8.6.
// The P2P pair of the same host keeps NCCL's PCIe step.
TEST(Shm, AStepWaitsForItsFlagThroughHostMemory) {
  const std::vector<std::string> pair = {"node.gpu.count=2", "node.pcie.generation=3", "node.cpu.sockets=1",
                                         "node.pcie.switches_per_socket=1", "node.nic.count=0"};
  auto time_us = [&](std::vector<std::string> sets) {
    sets.insert(sets.end(), pair.begin(), pair.end());
    PredictRequest req;
    req.sweep.min_bytes = req.sweep.max_bytes = 8;
    req.filter = parse_algo_filter("Ring", "LL", "test");
    return predict(make("pcie-gen4-8gpu", sets), req).rows.front().oop_time_us;
  };
  const double first_launch = 4.2 / 20;
  EXPECT_NEAR(time_us({"node.pcie.p2p=none"}), 6.6 + 2 * 1.5 + first_launch, 0.02);
  EXPECT_NEAR(time_us({"node.pcie.p2p=none", "node.pcie.shm_step_us=0"}), 6.6 + 2 * 1.0 + first_launch, 0.02);
  EXPECT_NEAR(time_us({"node.pcie.p2p=none", "node.pcie.shm_step_us=3"}), 6.6 + 2 * 3.0 + first_launch, 0.02);
  EXPECT_NEAR(time_us({}), 6.6 + 2 * 1.0 + first_launch, 0.02);  // P2P under the switch
  // The 2080 Ti pair's log (-g 2: 8.4 us of launches, now below the device time) measures 11.6-12.9 us
  // at 8 B-1 KiB; its latency side moved from +27% to +15%.
  const ValidatedRun run = testing::validate_real_log(
      "rtx2080ti-x2-pcie-noP2P-allreduce.txt",
      [&] {
        nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
        for (const auto& s : pair) apply_override(spec, s, "--set");
        apply_override(spec, "node.pcie.p2p=none", "--set");
        return spec;
      }(),
      "pcie-gen4-8gpu");
  EXPECT_LT(std::fabs(run.latency.median_error), 0.20) << run.latency.median_error;
}

}  // namespace
}  // namespace ccsim
