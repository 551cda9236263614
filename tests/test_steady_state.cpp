// Pipelines past their chunk cap (sim/steady_state.h): extending the simulations at the cap and half
// of it by one period per extra chunk must give what the engine gives when it runs the extra chunks of
// the same size itself; and predict must use it, with NCCL's NVLSTree ceiling, for large sizes.
#include <gtest/gtest.h>

#include "algorithms/nccl_channels.h"
#include "algorithms/nvls.h"
#include "algorithms/tree.h"
#include "scenarios/predict.h"
#include "sim/engine.h"
#include "sim/steady_state.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

TEST(SteadyState, TreeExtendedPipelineEqualsMoreChunksOfTheSameSize) {
  // 8 single-GPU nodes, Simple: 2 channels x 64 chunks x NCCL's 512 KiB = 64 MiB at the cap. At
  // 256 MiB the engine itself runs 256 chunks of 512 KiB (cap raised) -- what NCCL does.
  const Topology topo = build_topology(testing::single_gpu_nodes_spec(8, 512, 1.0), "test");
  const TreePlan plan = plan_trees(topo, 2);
  const TreeScheduleOptions o = tree_options(Proto::Simple);
  const double cap = tree_chunk_cap_bytes(topo, plan, o);
  ASSERT_DOUBLE_EQ(cap, 64.0 * 512 * 1024 * 2);
  const auto run = [&](double size, int max_chunks) {
    TreeScheduleOptions opt = o;
    opt.max_chunks = max_chunks;
    return simulate_one(topo, tree_schedule(topo, plan, "all_reduce", size, opt), {});
  };
  const SimResult half = run(cap / 2, 64), full = run(cap, 64);
  const double size = 4 * cap;
  const SimResult direct = run(size, 256);
  const SimResult extended = extend_pipeline(half, full, cap, size);
  EXPECT_NEAR(extended.time_s, direct.time_s, 0.005 * direct.time_s);
  // Enlarging the chunks instead (the builder past its cap) stretches the fill: slower than NCCL.
  EXPECT_GT(run(size, 64).time_s, direct.time_s * 1.005);
  // Link bytes scale with the size.
  ASSERT_FALSE(extended.links.empty());
  EXPECT_NEAR(extended.links[0].bytes, direct.links[0].bytes, 1e-6 * direct.links[0].bytes);
}

TEST(SteadyState, NvlsTreeExtendedPipelineEqualsMoreChunksOfTheSameSize) {
  // 2 x dgx-h100 with NCCL's channel ceiling: 16 families x 8 channels x 64 chunks x 128 KiB = 1 GiB
  // at the cap.
  const Topology dgx = testing::preset("dgx-h100", 2);
  NvlsOptions o;
  o.channel_rate_cap_Bps = nvls_tree_channel_cap_Bps(summarize_for_nccl(dgx));
  const double cap = nvls_tree_chunk_cap_bytes(dgx, o);
  ASSERT_DOUBLE_EQ(cap, 1024.0 * (1 << 20));
  EngineOptions e;
  e.pipeline_depth = kNvlsPipelineDepth;
  const auto run = [&](double size, int max_chunks) {
    NvlsOptions opt = o;
    opt.max_chunks = max_chunks;
    return simulate_one(dgx, nvls_tree_schedule(dgx, "all_reduce", size, opt), e);
  };
  const double size = 2 * cap;
  const SimResult direct = run(size, 128);
  const SimResult extended = extend_pipeline(run(cap / 2, 64), run(cap, 64), cap, size);
  EXPECT_NEAR(extended.time_s, direct.time_s, 0.005 * direct.time_s);
}

TEST(SteadyState, PredictExtendsNvlsTreePastItsChunkCap) {
  // predict's 1 GiB on 2 x dgx-h100 (NVLSTree, NCCL's choice) lies on the line through its simulations
  // at 64 and 128 MiB: from 64 MiB on NCCL's chunk is the nominal 128 KiB, and a FIFO pipeline of
  // equal chunks costs one period per extra chunk. Past the cap (1 GiB) predict extends that line;
  // its bandwidth tends to NCCL's NVLSTree ceiling, 8 x 57.7 x 16/30 = 246.2 GB/s.
  const Topology dgx = testing::preset("dgx-h100", 2);
  PredictRequest req;
  req.collective = "all_reduce";
  req.sweep.min_bytes = 64ull << 20;
  req.sweep.max_bytes = 16ull << 30;
  req.sweep.step_factor = 4;  // 64 MiB, 256 MiB, 1 GiB, 4 GiB, 16 GiB
  const Prediction p = predict(dgx, req);
  ASSERT_EQ(p.sim.size(), 5u);
  for (const auto& c : p.choices) {
    EXPECT_EQ(c.sim_algo, Algo::NVLSTree);
    EXPECT_TRUE(c.by_engine);
  }
  NvlsOptions o;
  o.channel_rate_cap_Bps = nvls_tree_channel_cap_Bps(summarize_for_nccl(dgx));
  EngineOptions e;
  e.pipeline_depth = kNvlsPipelineDepth;
  const double t64 = simulate_one(dgx, nvls_tree_schedule(dgx, "all_reduce", 64.0 * (1 << 20), o), e).time_s;
  const double t128 = simulate_one(dgx, nvls_tree_schedule(dgx, "all_reduce", 128.0 * (1 << 20), o), e).time_s;
  EXPECT_NEAR(p.sim[0].time_s, t64, 1e-9 * t64);
  const double gib = 1024.0 * (1 << 20);
  EXPECT_NEAR(p.sim[2].time_s, t128 + (gib - 128.0 * (1 << 20)) * (t128 - t64) / (64.0 * (1 << 20)), 1e-9 * t128);
  const double slope_GBps = (16 * gib - 4 * gib) / (p.sim[4].time_s - p.sim[3].time_s) / 1e9;
  EXPECT_NEAR(slope_GBps, 8 * 57.7 * 16 / 30, 0.01 * 246.2);
}

}  // namespace
}  // namespace ccsim
