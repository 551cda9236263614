// ccsim's estimate of NCCL's channel counts (summarize_for_nccl: the topology search, connect.cc's
// doublings; nccl_p2p_config: ncclTopoComputeP2pChannels) against what real NCCL_DEBUG=INFO logs print
// ("N coll channels, ... N p2p channels, N p2p channels per peer"), each described as the accuracy
// table describes its log (docs/accuracy.md).
#include <gtest/gtest.h>

#include <string>

#include "algorithms/nccl_channels.h"
#include "algorithms/p2p.h"
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
// at 16 (connect.cc); p2p pow2Up(16) = 16; per peer min(NVLink 36, network 2) = 2; NVLS 16 (sm90).
TEST(DebugLogChannels, TwoP5Nodes) {
  const NcclDebugInfo log = debug_log("nccl_debug_2.txt");
  const Topology topo = testing::preset("aws-p5", 2);
  const NcclTopoSummary s = summarize_for_nccl(topo);
  const P2pConfig p2p = nccl_p2p_config(topo, s.coll_channels, s.net_overhead_us);
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
