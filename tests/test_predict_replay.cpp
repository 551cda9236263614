// predict replays the tuner's choice per size (scenarios/replay.h): each algorithm's engine time is
// checked against that algorithm's own closed form, and the fallback (NCCL's cost model where the
// engine cannot replay the choice) against the tuner's number.
#include <gtest/gtest.h>

#include "algorithms/collnet.h"
#include "algorithms/custom_allreduce.h"
#include "algorithms/nccl_channels.h"
#include "algorithms/nvls.h"
#include "algorithms/tree.h"
#include "algorithms/tree_closed_form.h"
#include "algorithms/tuner.h"
#include "common/error.h"
#include "scenarios/predict.h"
#include "scenarios/replay.h"
#include "test_helpers.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

PredictRequest one_size(const std::string& collective, std::uint64_t bytes) {
  PredictRequest req;
  req.collective = collective;
  req.sweep.min_bytes = req.sweep.max_bytes = bytes;
  return req;
}

TEST(PredictReplay, OneH100NodeLargeAllReduceIsNvlsReplayedByTheEngine) {
  const Topology topo = testing::preset("dgx-h100", 1);
  const std::uint64_t size = 1ull << 30;
  const Prediction p = predict(topo, one_size("all_reduce", size));
  ASSERT_EQ(p.choices.size(), 1u);
  EXPECT_EQ(p.choices[0].nccl_algo, Algo::NVLS);  // NCCL 2.30's tuner on an NVLS node at 1 GiB
  EXPECT_TRUE(p.choices[0].by_engine);
  EXPECT_EQ(p.choices[0].simulated, "NVLS/Simple");
  const double closed = nvls_closed_form_time_s(topo, "all_reduce", static_cast<double>(size));
  EXPECT_NEAR(p.sim[0].time_s / closed, 1.0, 0.02);
}

TEST(PredictReplay, SmallAllReduceOnFourNodesIsTreeReplayedByTheEngine) {
  const Topology topo = testing::preset("dgx-h100", 4);
  const Prediction p = predict(topo, one_size("all_reduce", 8));
  ASSERT_EQ(p.choices.size(), 1u);
  EXPECT_EQ(p.choices[0].nccl_algo, Algo::Tree);
  EXPECT_EQ(p.choices[0].nccl_proto, Proto::LL);
  EXPECT_TRUE(p.choices[0].by_engine);
  // At 8 B the tree is pure latency: the engine equals the pipelined closed form's fixed costs.
  const TreeClosedForm cf = tree_closed_form(topo, plan_trees(topo, default_ring_channels(topo)), 8.0,
                                             tree_options(Proto::LL));
  EXPECT_NEAR(p.sim[0].time_s / cf.time_s, 1.0, 0.02);
}

// On sm100 NCCL runs 32 NVLS channels across nodes (24 on one node, 16 on sm90): the replay must
// run as many, each under NCCL's per-channel share of its NVLSTree ceiling, or the ceiling it
// enforces is 16/32 of NCCL's (the engine gave 382 GB/s busbw at 4 GiB against 495 from NCCL's
// model before). The engine follows the pipelined closed form for those 32 channels.
TEST(PredictReplay, NvlsTreeOnSm100RunsNcclsThirtyTwoChannels) {
  nlohmann::json spec = load_topology_spec("dgx-h100");
  apply_override(spec, "node.gpu.arch=sm100", "test");
  set_node_count(spec, 2);
  const Topology topo = build_topology(spec, "dgx-h100");
  const NcclTopoSummary sum = summarize_for_nccl(topo);
  ASSERT_EQ(sum.nvls_channels, 32);
  const std::uint64_t size = 256ull << 20;
  PredictRequest req = one_size("all_reduce", size);
  req.filter = parse_algo_filter("NVLSTree", "Simple", "test");
  const Prediction p = predict(topo, req);
  ASSERT_EQ(p.choices.size(), 1u);
  ASSERT_TRUE(p.choices[0].by_engine);
  NvlsOptions o;
  o.channels = 32;
  o.channel_rate_cap_Bps = nvls_tree_channel_cap_Bps(sum);
  const double closed = nvls_tree_closed_form_time_s(topo, static_cast<double>(size), o);
  EXPECT_NEAR(p.sim[0].time_s / closed, 1.0, 0.02);
  NvlsOptions sixteen = o;
  sixteen.channels = 16;
  EXPECT_GT(nvls_tree_closed_form_time_s(topo, static_cast<double>(size), sixteen), 1.1 * closed);
}

TEST(PredictReplay, NvlsTreeBeyondTheEngineLimitReportsNcclsCostModel) {
  const int nodes = kNvlsTreeEngineMaxNodes + 4;
  const Topology topo = testing::preset("dgx-h100", nodes);
  const std::uint64_t size = 256ull << 20;
  const Prediction p = predict(topo, one_size("all_reduce", size));
  ASSERT_EQ(p.choices.size(), 1u);
  ASSERT_EQ(p.choices[0].nccl_algo, Algo::NVLSTree);
  EXPECT_FALSE(p.choices[0].by_engine);
  EXPECT_NE(p.choices[0].simulated.find("NCCL cost model"), std::string::npos);
  const TunerChoice nccl = choose(summarize_for_nccl(topo), Func::AllReduce, size);
  EXPECT_NEAR(p.rows[0].oop_time_us, nccl.time_us + testing::kFirstLaunchShareUs, 1e-9);
}

TEST(PredictReplay, ForcedCollNetOnASharpFabricReplaysTheCollNetSchedule) {
  nlohmann::json spec = load_topology_spec("dgx-h100");
  set_node_count(spec, 4);
  apply_override(spec, "fabric.sharp=true", "test");
  const Topology topo = build_topology(spec, "test");
  const std::uint64_t size = 64ull << 20;
  PredictRequest req = one_size("all_reduce", size);
  req.filter = parse_algo_filter("CollNetDirect", "", "--algo");
  const Prediction p = predict(topo, req);
  ASSERT_EQ(p.choices.size(), 1u);
  EXPECT_EQ(p.choices[0].simulated, "CollNetDirect/Simple");
  EngineOptions e;
  e.pipeline_depth = kCollNetPipelineDepth;
  const SimResult direct =
      simulate_one(topo, collnet_direct_schedule(topo, "all_reduce", static_cast<double>(size), Proto::Simple), e);
  EXPECT_NEAR(p.sim[0].time_s, direct.time_s, 1e-9 * direct.time_s);
}

TEST(PredictReplay, CustomAllReduceBelowVllmsLimitThenNccl) {
  const Topology topo = testing::preset("dgx-h100", 1);
  PredictRequest req = one_size("all_reduce", 128 * 1024);
  req.sweep.max_bytes = 16ull << 20;
  req.sweep.step_factor = 128;  // 128 KiB, then 16 MiB
  req.custom_allreduce = true;
  const Prediction p = predict(topo, req);
  ASSERT_EQ(p.choices.size(), 2u);
  // TP8 decode's 128 KiB: vLLM's one-shot (8 GPUs, below 256 KiB), engine = closed form.
  EXPECT_TRUE(p.choices[0].custom);
  EXPECT_EQ(p.choices[0].simulated, "custom all-reduce/one-shot");
  const double closed = custom_allreduce_time_s(topo, 128.0 * 1024, CustomAllreduceOptions{});
  EXPECT_NEAR(p.sim[0].time_s / closed, 1.0, 0.01);
  // 16 MiB is above vLLM's 8 MiB max_size: NCCL runs it (NVLS on this node).
  EXPECT_FALSE(p.choices[1].custom);
  EXPECT_EQ(p.choices[1].sim_algo, Algo::NVLS);
}

TEST(PredictReplay, CustomAllReduceRefusesSeveralNodes) {
  const Topology topo = testing::preset("dgx-h100", 2);
  PredictRequest req = one_size("all_reduce", 128 * 1024);
  req.custom_allreduce = true;
  EXPECT_THROW(predict(topo, req), InputError);
}

}  // namespace
}  // namespace ccsim
