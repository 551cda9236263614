// NCCL's channel-count settings (NCCL_MIN/MAX_NCHANNELS, their legacy NRINGS names, NCCL_MIN/MAX_CTAS,
// NCCL_NVLS_NCHANNELS) as NCCL 2.30 applies them, and what fewer channels cost in the engine.
// Channel counts are derived by hand from connect.cc (ncclTopoPostset: comm->nChannels = min(max
// channels, n, maxCTAs), then the first channels duplicated up to max(min channels, minCTAs)) and
// nvls.cc (nvlsChannels = max(minCTAs, min(maxCTAs, NVLS_NCHANNELS or 16 on sm90))); dgx-h100 runs
// 24 coll channels on one node and 16 on two (tests/test_nccl_model.cpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/nccl_channels.h"
#include "algorithms/p2p.h"
#include "algorithms/tuner.h"
#include "common/error.h"
#include "scenarios/predict.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

NcclTopoSummary h100(int nodes, const std::vector<std::string>& envs) {
  return summarize_for_nccl(testing::preset("dgx-h100", nodes, {}, envs));
}

TEST(ChannelSettings, MaxThenMinAsConnectCcAppliesThem) {
  EXPECT_EQ(h100(2, {}).coll_channels, 16);
  EXPECT_EQ(h100(2, {"NCCL_MAX_NCHANNELS=4"}).coll_channels, 4);
  EXPECT_EQ(h100(2, {"NCCL_MIN_NCHANNELS=32"}).coll_channels, 32);
  // Max first, then min duplicates the first channels: max 4, min 8 -> 8.
  EXPECT_EQ(h100(2, {"NCCL_MAX_NCHANNELS=4", "NCCL_MIN_NCHANNELS=8"}).coll_channels, 8);
  // The legacy names write the same settings.
  EXPECT_EQ(h100(1, {"NCCL_MAX_NRINGS=2"}).coll_channels, 2);
  EXPECT_EQ(h100(1, {"NCCL_MIN_NRINGS=40"}).coll_channels, 40);
  // NCCL clamps: a maximum below 1 is 1, a minimum above MAXCHANNELS (64) is 64.
  EXPECT_EQ(h100(1, {"NCCL_MAX_NCHANNELS=0"}).coll_channels, 1);
  EXPECT_EQ(h100(1, {"NCCL_MIN_NCHANNELS=100"}).coll_channels, 64);
  // NVLS channels: 16 on sm90, NCCL_NVLS_NCHANNELS replaces it; the channel names leave it alone.
  EXPECT_EQ(h100(1, {}).nvls_channels, 16);
  EXPECT_EQ(h100(1, {"NCCL_NVLS_NCHANNELS=8"}).nvls_channels, 8);
  EXPECT_EQ(h100(1, {"NCCL_MAX_NCHANNELS=4"}).nvls_channels, 16);
}

TEST(ChannelSettings, CtasBoundCollectiveAndNvlsChannels) {
  // maxCTAs 4: coll min(64, 24, 4) = 4, NVLS max(1, min(4, 16)) = 4.
  const NcclTopoSummary four = h100(1, {"NCCL_MAX_CTAS=4"});
  EXPECT_EQ(four.coll_channels, 4);
  EXPECT_EQ(four.nvls_channels, 4);
  // minCTAs 32: coll max(24, 32) = 32, NVLS max(32, 16) = 32.
  const NcclTopoSummary many = h100(1, {"NCCL_MIN_CTAS=32"});
  EXPECT_EQ(many.coll_channels, 32);
  EXPECT_EQ(many.nvls_channels, 32);
  // minCTAs above maxCTAs is lowered to maxCTAs (init.cc's config check): both 2.
  const NcclTopoSummary both = h100(1, {"NCCL_MIN_CTAS=8", "NCCL_MAX_CTAS=2"});
  EXPECT_EQ(both.coll_channels, 2);
  EXPECT_EQ(both.nvls_channels, 2);
  // The P2P path follows: p2pnChannels is pow2Up of the coll channels (2 x dgx-h100: 3 -> 4).
  const Topology two = testing::preset("dgx-h100", 2, {}, {"NCCL_MAX_CTAS=3"});
  const NcclTopoSummary s = summarize_for_nccl(two);
  EXPECT_EQ(s.coll_channels, 3);
  EXPECT_EQ(nccl_p2p_config(two, s).p2p_channels, 4);
}

TEST(ChannelSettings, DescriptionKeysAndTheirBounds) {
  // The same settings as --set keys; outside NCCL's range they are refused with the key's place.
  const Topology t = testing::preset("dgx-h100", 1, {"node.gpu.nccl_max_channels=6", "node.nvlink.nvls_channels=12"});
  EXPECT_EQ(summarize_for_nccl(t).coll_channels, 6);
  EXPECT_EQ(summarize_for_nccl(t).nvls_channels, 12);
  EXPECT_THROW(testing::preset("dgx-h100", 1, {"node.gpu.nccl_max_channels=0"}), InputError);
  EXPECT_THROW(testing::preset("dgx-h100", 1, {"node.gpu.nccl_min_ctas=65"}), InputError);
  // NVLS channels on a node without NVLS: refused as a key, no effect as an environment setting.
  EXPECT_THROW(testing::preset("hgx-a100", 1, {"node.nvlink.nvls_channels=8"}), InputError);
  EXPECT_EQ(summarize_for_nccl(testing::preset("hgx-a100", 1, {}, {"NCCL_NVLS_NCHANNELS=8"})).nvls_channels, 0);
}

// The engine's time of an all_reduce of `bytes` on one dgx-h100 node, Ring/Simple, with `envs`.
double ring_simple_us(const std::vector<std::string>& envs, std::uint64_t bytes) {
  PredictRequest req;
  req.collective = "all_reduce";
  req.sweep.min_bytes = req.sweep.max_bytes = bytes;
  req.filter = parse_algo_filter("Ring", "Simple", "test");
  return predict(testing::preset("dgx-h100", 1, {}, envs), req).rows.front().oop_time_us;
}

// With few channels the ring runs at one thread block's Simple rate per channel, Hopper's one-node
// perChMaxTreeBw of 38.7 GB/s: 1 GiB all_reduce over 8 ranks moves 2 x 7/8 x 1 GiB per connection,
// 48.55 ms at one channel and 12.14 ms at four (plus NCCL's 56 us of ring latency; 1% covers it).
// At the default 24 channels the NVLink binds instead (370.8 x 0.97 data rate), as before.
TEST(ChannelSettings, FewChannelsRunAtOneBlocksRate) {
  const double bytes = 1 << 30;
  const double per_connection = 2.0 * 7 / 8 * bytes;
  EXPECT_NEAR(ring_simple_us({"NCCL_MAX_NCHANNELS=1"}, 1 << 30), per_connection / 38.7e9 * 1e6,
              0.01 * per_connection / 38.7e9 * 1e6);
  EXPECT_NEAR(ring_simple_us({"NCCL_MAX_CTAS=4"}, 1 << 30), per_connection / (4 * 38.7e9) * 1e6,
              0.01 * per_connection / (4 * 38.7e9) * 1e6);
  const double busbw_default = per_connection / (ring_simple_us({}, 1 << 30) * 1e-6) / 1e9;
  EXPECT_GT(busbw_default, 340.0);
  EXPECT_LT(busbw_default, 370.8);
}

// Eight Blackwell cards on a two-socket AMD PCIe host (the RTX 5090 row of docs/accuracy.md): a ring
// crosses the sockets, whose link NCCL counts at 16 GB/s (AMD_BW), below the lowest speed of its
// sm100 intra-node array (18 GB/s). NCCL's search finds nothing and falls back to one channel at 0.1
// GB/s, the tuner's figure; Hopper's array (down to 3 GB/s) finds a ring on the same host. The closed
// form then times the choice by the ring's alpha-beta over the links, not by 0.1 GB/s (NCCL's own
// model: 128 MiB in 2.3 s), and lands where the engine's replay of the same ring does.
TEST(ChannelSettings, BlackwellCardsOnAPcieHostFallBackAndTheClosedFormTakesTheLinks) {
  const std::vector<std::string> host = {"node.nic.count=0", "node.pcie.generation=5", "node.pcie.switches_per_socket=0",
                                         "node.cpu.vendor=amd"};
  std::vector<std::string> blackwell = host, hopper = host;
  blackwell.push_back("node.gpu.arch=sm120");
  hopper.push_back("node.gpu.arch=sm90");
  const Topology t = testing::preset("pcie-gen4-8gpu", 1, blackwell);
  const NcclTopoSummary s = summarize_for_nccl(t);
  EXPECT_TRUE(s.ring.searchFallback);
  EXPECT_EQ(s.ring.nChannels, 1);
  EXPECT_DOUBLE_EQ(s.ring.bwIntra, 0.1);
  EXPECT_FALSE(summarize_for_nccl(testing::preset("pcie-gen4-8gpu", 1, hopper)).ring.searchFallback);

  PredictRequest req;
  req.collective = "all_reduce";
  req.sweep.min_bytes = req.sweep.max_bytes = 128u << 20;
  const double nccl_model_us = choose(s, Func::AllReduce, 128u << 20).time_us;
  const double engine_us = predict(t, req).rows.front().oop_time_us;
  req.model = PredictModel::ClosedForm;
  const double closed_us = predict(t, req).rows.front().oop_time_us;
  EXPECT_GT(nccl_model_us, 1e6);  // 134 MB at a fraction of 0.1 GB/s
  EXPECT_NEAR(closed_us, engine_us, 0.02 * engine_us);
  // The ring's bound: 2 x 7/8 x 128 MiB through each GPU's PCIe Gen5 x16 link (50.4 GB/s of data).
  EXPECT_GT(closed_us, 2.0 * 7 / 8 * (128 << 20) / 50.5e9 * 1e6);
}

}  // namespace
}  // namespace ccsim
