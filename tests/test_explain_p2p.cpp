// `ccsim explain --collective sendrecv|alltoall`: NCCL's P2P decisions, each checked against NCCL
// 2.30's rules worked by hand (src/graph/paths.cc ncclTopoComputeP2pChannels, src/enqueue.cc
// addP2pToPlan, src/init.cc p2pChunkSize), and the report's closed form against predict's.
#include <gtest/gtest.h>

#include "algorithms/explain_p2p.h"
#include "algorithms/nccl_channels.h"
#include "cli_runner.h"
#include "scenarios/predict.h"
#include "test_helpers.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

Topology make(const std::string& preset, const std::vector<std::string>& sets, int nodes = 1) {
  return testing::preset(preset, nodes, sets);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Two DGX H100 nodes, alltoall at 1 MiB: 16 coll channels (connect.cc doubles only below 16; NCCL
// 2.20's 2-node p5 debug log prints "16 coll channels, ... 16 p2p channels, 2 p2p channels per peer")
// -> p2pnChannels pow2Up(16) = 16; per peer min(16, NVLink 2 x 18 links, network ceil(48 GB/s NIC /
// 14) = 4 (NCCL 2.29+; the 2.20 log's rule gave 2)) = 4. A message is 1 MiB / 16 ranks = 64 KiB:
// nChannelsMin 1 (4 x 16 ranks and 2 x 16 are above 16, halved twice), channels min(1, ceil(64 KiB /
// (128 KiB / 2))) = 1; LL only up to 1 x 16 KiB, so Simple; across nodes a Simple
// message below one 128 KiB chunk takes chunk / 4 = 32 KiB, 2 chunks; in the node 128 KiB, 1 chunk.
// Rank 0's peers: its 7 node mates over NVLink, rank 8 through its own NIC, ranks 9-15 by PXN.
TEST(ExplainP2p, AlltoallOnTwoDgxH100Nodes) {
  const Topology topo = make("dgx-h100", {}, 2);
  const std::string r = explain_p2p_report(topo, summarize_for_nccl(topo), "alltoall", 1 << 20);
  EXPECT_TRUE(has(r, "p2pnChannels 16 (pow2Up of the 16 coll channels), 4 per peer")) << r;
  EXPECT_TRUE(has(r, "chunk 128 KiB (NCCL_P2P_NET_CHUNKSIZE); PXN on")) << r;
  EXPECT_TRUE(has(r, "P2P over NVLink: 7 peer(s), e.g. rank 1")) << r;
  EXPECT_TRUE(has(r, "GPU memory to NIC directly): 1 peer(s), e.g. rank 8")) << r;
  EXPECT_TRUE(has(r, "PXN: the rail's GPU posts it): 7 peer(s), e.g. rank 9")) << r;
  EXPECT_TRUE(has(r, "to a peer in the node: 64 KiB per message, 1 channel(s), Simple")) << r;
  EXPECT_TRUE(has(r, "128 KiB of data per chunk, 1 chunk(s)")) << r;
  EXPECT_TRUE(has(r, "to a peer across nodes: 64 KiB per message, 1 channel(s), Simple")) << r;
  EXPECT_TRUE(has(r, "32 KiB of data per chunk, 2 chunk(s)")) << r;
  // 15 peers, at most 16 / 1 x 8 = 128 in flight: one wave.
  EXPECT_TRUE(has(r, "15 peers in NCCL's round order (node-major), 1 wave(s)")) << r;
}

// One DGX H100, sendrecv at 8 KiB: p2pnChannels pow2Up(24) = 32, per peer min(24, 2 x 18) -> pow2Up
// 32; nChannelsMin 32 halved while x 8 ranks > 32: 4; channels min(4, ceil(8 KiB / (512 KiB / 8)))
// = 1; 8 KiB <= 16 KiB: LL.
TEST(ExplainP2p, SendrecvOnOneNodeIsLLBelowTheThreshold) {
  const Topology topo = make("dgx-h100", {});
  const std::string r = explain_p2p_report(topo, summarize_for_nccl(topo), "sendrecv", 8192);
  EXPECT_TRUE(has(r, "p2pnChannels 32 (pow2Up of the 24 coll channels), 32 per peer")) << r;
  EXPECT_TRUE(has(r, "chunk 512 KiB (NCCL_P2P_NVL_CHUNKSIZE); PXN off")) << r;
  EXPECT_TRUE(has(r, "it sends to rank 1")) << r;
  EXPECT_TRUE(has(r, "8 KiB per message, 1 channel(s), LL")) << r;
  EXPECT_FALSE(has(r, "across nodes")) << r;
}

// Without P2P the peer is SHM and the closed form holds the SHM channel rate: 2 GPUs, 1.5 GB/s per
// channel; at 64 MiB NCCL splits the message over 2 channels (a part above 32 x 128 KiB doubles
// them), so 64 MiB / (2 x 1.5 GB/s) = 22.37 ms, and the engine agrees.
TEST(ExplainP2p, ShmPeerAndItsChannelRate) {
  const Topology topo = make("pcie-gen4-8gpu", {"node.gpu.count=2", "node.cpu.sockets=1", "node.pcie.switches_per_socket=1",
                                                "node.nic.count=0", "node.pcie.p2p=none", "node.pcie.shm_channel_GBps=1.5"});
  const std::string r = explain_p2p_report(topo, summarize_for_nccl(topo), "sendrecv", 64ull << 20);
  EXPECT_TRUE(has(r, "SHM (a FIFO in pinned host memory): 1 peer(s), e.g. rank 1")) << r;
  EXPECT_TRUE(has(r, "64 MiB per message, 2 channel(s), Simple")) << r;
  const double expect_us = 64.0 * 1024 * 1024 / (2 * 1.5e9) * 1e6;
  PredictRequest req;
  req.collective = "sendrecv";
  req.sweep.min_bytes = req.sweep.max_bytes = 64ull << 20;
  for (PredictModel m : {PredictModel::ClosedForm, PredictModel::Engine}) {
    req.model = m;
    EXPECT_NEAR(predict(topo, req).rows.front().oop_time_us, expect_us, 0.005 * expect_us) << static_cast<int>(m);
  }
}

TEST(ExplainP2p, CliRefusesAnAlgorithmForP2p) {
  const auto ok = testing::run_ccsim("explain --collective alltoall --nodes 2 -b 1M");
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(has(ok.out, "NCCL point-to-point model (alltoall")) << ok.out;
  const auto bad = testing::run_ccsim("explain --collective sendrecv --algo Ring -b 1M");
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(has(bad.err, "--algo")) << bad.err;
  EXPECT_TRUE(has(bad.err, "no algorithm")) << bad.err;
}

}  // namespace
}  // namespace ccsim
