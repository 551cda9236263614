// The typed prediction report (report/prediction_report.h): what predict fills, and that every
// renderer prints from it (the byte-identical outputs are checked against the pre-report code in
// the commit that introduced it; here: the facts and per-size fields themselves).
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/nccl_channels.h"
#include "algorithms/tuner.h"
#include "report/render.h"
#include "scenarios/predict.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

Prediction predict_sizes(const Topology& topo, const std::string& collective, std::vector<std::uint64_t> sizes,
                         PredictModel model) {
  PredictRequest req;
  req.collective = collective;
  req.sizes = std::move(sizes);
  req.model = model;
  return predict(topo, req);
}

TEST(PredictionReport, FactsAndPerSizeChoices) {
  const Topology topo = testing::preset("dgx-h100", 2);
  const Prediction p = predict_sizes(topo, "all_reduce", {8, 8ull << 30}, PredictModel::ClosedForm);
  const PredictionReport& r = p.report;
  EXPECT_EQ(r.facts.collective, "all_reduce");
  EXPECT_EQ(r.facts.nranks, 16);
  EXPECT_EQ(r.facts.nodes, 2);
  EXPECT_EQ(r.facts.gpus_per_node, 8);
  EXPECT_FALSE(r.facts.p2p);
  EXPECT_DOUBLE_EQ(r.facts.knee_bytes, p.knee_bytes);
  EXPECT_EQ(r.facts.table_header.program_name, "all_reduce_perf");
  ASSERT_EQ(r.sizes.size(), 2u);
  // The rows are predict's rows; the choice is NCCL's (closed form: nothing replayed by the engine).
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r.sizes[i].row.size_bytes, p.rows[i].size_bytes);
    EXPECT_DOUBLE_EQ(r.sizes[i].row.oop_time_us, p.rows[i].oop_time_us);
    EXPECT_EQ(r.sizes[i].nccl_algorithm, to_string(p.choices[i].nccl_algo));
    EXPECT_FALSE(r.sizes[i].by_engine);
    EXPECT_FALSE(r.sizes[i].busiest_link.has_value());
  }
  // NCCL's model is latency + bytes / (1000 x bandwidth): at 8 B the bytes term is below a
  // nanosecond, at 8 GiB the latency (under 100 us) is under 1% of tens of milliseconds.
  ASSERT_TRUE(r.sizes[0].latency_share && r.sizes[1].latency_share);
  EXPECT_GT(*r.sizes[0].latency_share, 0.9999);
  EXPECT_LT(*r.sizes[1].latency_share, 0.01);
  EXPECT_GT(*r.sizes[1].latency_share, 0.0);
  // The share is the latency term of NCCL's cost row for its pick over that row's time.
  const TunerChoice nccl = choose(summarize_for_nccl(topo), Func::AllReduce, 8ull << 30);
  for (const auto& row : nccl.table)
    if (row.algo == nccl.algo && row.proto == nccl.proto) {
      EXPECT_NEAR(row.eff_latency_us + (8ull << 30) / (1000 * row.eff_bw_GBps), row.time_us, 1e-6 * row.time_us);
      EXPECT_NEAR(*r.sizes[1].latency_share, row.eff_latency_us / row.time_us, 1e-12);
    }
  EXPECT_EQ(r.rows().size(), 2u);
}

TEST(PredictionReport, EngineRowsNameTheirBusiestLink) {
  const Topology topo = testing::preset("dgx-h100", 1);
  const Prediction p = predict_sizes(topo, "all_reduce", {1ull << 30}, PredictModel::Engine);
  const ReportSize& s = p.report.sizes.front();
  EXPECT_TRUE(s.by_engine);
  ASSERT_TRUE(s.busiest_link.has_value());
  EXPECT_EQ(s.busiest_link->link_class, "NVLink");  // one node: only NVLink carries data
  EXPECT_GT(s.busiest_link->utilization, 0.0);
  EXPECT_LE(s.busiest_link->utilization, 1.0 + 1e-9);
  ASSERT_FALSE(p.report.facts.busiest_links_at_largest_size.empty());
  EXPECT_EQ(p.report.facts.busiest_links_at_largest_size.front().from, s.busiest_link->from);
}

TEST(PredictionReport, P2pHasNoTunerModel) {
  const Topology topo = testing::preset("dgx-h100", 1);
  const PredictionReport r = predict_sizes(topo, "alltoall", {1ull << 20}, PredictModel::ClosedForm).report;
  EXPECT_TRUE(r.facts.p2p);
  EXPECT_EQ(r.sizes.front().nccl_algorithm, "P2P");
  EXPECT_FALSE(r.sizes.front().latency_share.has_value());
  // The table's preamble says so instead of printing the ring's alpha-beta.
  EXPECT_NE(render_prediction_table(r).find("# NCCL (NCCL 2.30.7, P2P: no tuner) picks: "), std::string::npos);
}

}  // namespace
}  // namespace ccsim
