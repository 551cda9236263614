// ccsim's estimate of NCCL's channel counts (summarize_for_nccl: the topology search, connect.cc's
// doublings; nccl_p2p_config: ncclTopoComputeP2pChannels) against what real NCCL_DEBUG=INFO logs print
// ("N coll channels, ... N p2p channels, N p2p channels per peer"), each described as the accuracy
// table describes its log (docs/accuracy.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "algorithms/nccl_channels.h"
#include "algorithms/p2p.h"
#include "algorithms/tuner.h"
#include "calibrate/nccl_debug_log.h"
#include "cli_runner.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

NcclDebugInfo debug_log(const std::string& name) {
  return parse_nccl_debug_file(std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/" + name);
}

// Two p5.48xlarge nodes, NCCL 2.20.3 with aws-ofi-nccl: "16 coll channels, 0 collnet channels, 16 nvls
// channels, 16 p2p channels, 2 p2p channels per peer". ccsim: 8 ring channels x 2, not doubled again
// at 16 (connect.cc); p2p pow2Up(16) = 16; per peer with the log's NCCL, min(NVLink 36, network 2) = 2;
// NVLS 16 (sm90). NCCL 2.29+ sizes the network peers' channels by the NIC (48 GB/s / 14): 4.
TEST(DebugLogChannels, TwoP5Nodes) {
  const NcclDebugInfo log = debug_log("nccl_debug_2.txt");
  const Topology topo = testing::preset("aws-p5", 2);
  NcclTopoSummary s = summarize_for_nccl(topo);
  EXPECT_EQ(nccl_p2p_config(topo, s).channels_per_peer, 4);
  s.nccl_version = parse_nccl_version("2.20.3", "test");
  const P2pConfig p2p = nccl_p2p_config(topo, s);
  EXPECT_EQ(s.coll_channels, log.coll_channels);
  EXPECT_EQ(s.nvls_channels, log.nvls_channels);
  EXPECT_EQ(p2p.p2p_channels, log.p2p_channels);
  EXPECT_EQ(p2p.channels_per_peer, log.p2p_channels_per_peer);
}

// Two p4d.24xlarge nodes (4 x 100 Gb/s EFA for 8 A100), NCCL 2.8.3: "8 coll channels". ccsim: the
// ring graph's 4 channels (one per NIC at 12 GB/s) x 2, no sm90 doubling on A100. (The log's "1 p2p
// channels per peer" is NCCL 2.8's rule; NCCL 2.30's gives 2.)
TEST(DebugLogChannels, TwoP4dNodes) {
  const NcclDebugInfo log = debug_log("aws-p4d-2node-efa-allreduce-nccl2.8.3.txt");
  const Topology topo = testing::preset(
      "hgx-a100", 2, {"node.nic.count=4", "node.nic.Gbps=100", "node.nic.transport=efa"});
  EXPECT_EQ(log.coll_channels, 8);
  EXPECT_EQ(summarize_for_nccl(topo).coll_channels, log.coll_channels);
}

// One node of 8 H200, NCCL 2.30.4 with NCCL_DEBUG_SUBSYS=COLL,TUNING (a thesis' probe, C-TC/
// multi-gpu-programming-models): NCCL's choice and the channels it ran for 24 all_reduce sizes, 4 B to
// 32 MiB, and its tuning table. ccsim's tuner on dgx-h200 must print the same: Ring/LL to 1 MiB on the
// channels enqueue.cc keeps (1 up to 32 KiB, then 2, 4, 8, 16 and all 24 at 1 MiB: 8 B per thread x 8
// ranks x 512 threads per channel), NVLS/Simple on its 16 channels from 2 MiB; and every entry of the
// AllReduce row that NCCL enables, to the table's 0.1.
// Every choice a debug log prints against ccsim's tuner on `s`: algorithm, protocol and the channels.
void expect_nccls_choices(const NcclDebugInfo& log, const NcclTopoSummary& s, std::size_t count) {
  ASSERT_EQ(log.choices.size(), count);
  for (const auto& c : log.choices) {
    const TunerChoice t = choose(s, Func::AllReduce, c.bytes);
    EXPECT_EQ(std::string(to_string(t.algo)) + "/" + to_string(t.proto), c.algorithm + "/" + c.protocol) << c.bytes;
    int channels = 0, threads = 0;
    nccl_channels_threads(s, t.algo, t.proto, c.bytes, &channels, &threads);
    EXPECT_EQ(channels, c.channels) << c.bytes;
  }
}

TEST(DebugLogChannels, OneH200NodeTunerChoicesChannelsAndTable) {
  const NcclDebugInfo log = debug_log("h200x8-1node-tuner-debug-nccl2.30.4.txt");
  const NcclTopoSummary s = summarize_for_nccl(testing::preset("dgx-h200", 1));
  expect_nccls_choices(log, s, 24);
  const auto rows = nccl_costs(s, Func::AllReduce, 1 << 20);
  int compared = 0;
  for (const auto& e : log.tuning) {
    if (e.collective != "AllReduce" || e.bandwidth_GBps <= 0) continue;
    const auto row = std::find_if(rows.begin(), rows.end(), [&e](const AlgoProtoCost& r) {
      return to_string(r.algo) == e.algorithm && to_string(r.proto) == e.protocol;
    });
    ASSERT_NE(row, rows.end()) << e.algorithm << "/" << e.protocol;
    const AlgoProtoCost& r = *row;
    EXPECT_NEAR(r.latency_us, e.latency_us, 0.051) << e.algorithm << "/" << e.protocol;
    EXPECT_NEAR(r.bw_GBps, e.bandwidth_GBps, 0.051) << e.algorithm << "/" << e.protocol;
    ++compared;
  }
  EXPECT_EQ(compared, 7);  // Tree and Ring x 3 protocols, NVLS/Simple
}

// The same cluster's probe with NCCL_NVLS_ENABLE=0 (another node): Ring/LL on 1 and 24 channels to 1
// MiB, Ring/LL128 on 24 at 32 MiB. And 6 and 4 GPUs of an H100 node, NCCL 2.29.2 (waynehacking8/
// nccl-collectives-bench), 256 MiB to 8 GiB: NVLS on its 16 channels with 6 GPUs, Ring/Simple on 24 with 4.
// NCCL's model: the ring's algBw 12 ch x 30 GB/s x n / (2(n-1)) is 240 GB/s at 4 and 216 at 6; NVLS's
// graph has one channel per GPU (4 x 60, 6 x 50 GB/s), so its algBw is 160 at 4 and 216 at 6, where its
// 25 us latency (against the ring's 42.4) decides. Both print "24 coll channels, ... 16 nvls channels".
TEST(DebugLogChannels, H200WithoutNvlsAndH100SubsetsTunerChoices) {
  expect_nccls_choices(debug_log("h200x8-1node-tuner-debug-nvls-off-nccl2.30.4.txt"),
                       summarize_for_nccl(testing::preset("dgx-h200", 1, {}, {"NCCL_NVLS_ENABLE=0"})), 4);
  for (int gpus : {6, 4}) {
    const NcclDebugInfo log = debug_log("h100x" + std::to_string(gpus) + "-1node-tuner-debug-nccl2.29.2.txt");
    const NcclTopoSummary s = summarize_for_nccl(
        testing::preset("dgx-h100", 1, {"node.gpu.count=" + std::to_string(gpus), "node.nic.count=0"}));
    EXPECT_EQ(log.coll_channels, 24);
    EXPECT_EQ(s.coll_channels, log.coll_channels);
    EXPECT_EQ(s.nvls_channels, log.nvls_channels);
    expect_nccls_choices(log, s, 6);
  }
}

// validate compares the count a debug log prints with the prediction's: the p5 log's 16 agree with
// aws-p5's, so no cause; predicted with NCCL_MAX_NCHANNELS=4 they do not, and validate names the
// --env that predicts with NCCL's 16.
TEST(DebugLogChannels, ValidateNamesAChannelCountThatDiffers) {
  const std::string data = std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/";
  const std::string base = "validate " + data + "aws-p5-2node-efa-allreduce.txt --topology aws-p5 --nccl-debug " + data +
                           "nccl_debug_2.txt";
  const auto same = testing::run_ccsim(base);
  ASSERT_NE(same.code, 2) << same.err;
  EXPECT_EQ(same.out.find("[channel-count]"), std::string::npos) << same.out;
  const auto fewer = testing::run_ccsim(base + " --env NCCL_MAX_NCHANNELS=4");
  ASSERT_NE(fewer.code, 2) << fewer.err;
  EXPECT_NE(fewer.out.find("[channel-count]"), std::string::npos) << fewer.out;
  EXPECT_NE(fewer.out.find("prints 16 coll channels; ccsim predicted with 4"), std::string::npos) << fewer.out;
  EXPECT_NE(fewer.out.find("--env NCCL_MIN_NCHANNELS=16 --env NCCL_MAX_NCHANNELS=16"), std::string::npos) << fewer.out;
}

}  // namespace
}  // namespace ccsim
