// MoE routing, placement and traces (scenarios/moe/): distinct nodes per token against the closed
// form, the without-replacement sampler against exact inclusion probabilities, skew calibration,
// EPLB's building blocks on hand-worked examples, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <set>

#include "common/error.h"
#include "scenarios/moe/rng.h"
#include "scenarios/moe/scenario_file.h"
#include "scenarios/moe/trace.h"
#include "scenarios/moe/traffic.h"
#include "tests/input_error_of.h"

namespace ccsim::moe {
namespace {

const std::string kSample = std::string(CCSIM_SOURCE_DIR) + "/scenarios/moe-trace-sample.csv";

std::string error_of(const std::function<void()>& f) { return testing::input_error_of(f); }

// C(a, k) / C(b, k) for a <= b.
double binomial_ratio(int a, int b, int k) {
  double r = 1;
  for (int i = 0; i < k; ++i) r *= static_cast<double>(a - i) / (b - i);
  return r;
}

MoeConfig deepseek(int ep, std::int64_t tokens_per_rank) {
  MoeConfig c;  // defaults: E 256, top-8, H 7168, G 8
  c.ep = ep;
  c.tokens_per_rank = tokens_per_rank;
  return c;
}

// The guide-table draw must return exactly the binary search's index for every u (the sampled
// routing, and so every MoE number, depends on it): uniform, zero-weight runs at both ends and in
// the middle, a Zipf(3) tail of tiny weights, and u at bucket edges and next to 1.
TEST(MoeRng, GuideTableDrawEqualsBinarySearch) {
  std::vector<std::vector<double>> weights = {std::vector<double>(128, 1.0), {0, 0, 1, 0, 0, 2, 0, 3, 0, 0}};
  std::vector<double> zipf(1024);
  for (int i = 0; i < 1024; ++i) zipf[i] = std::pow(i + 1.0, -3.0);
  weights.push_back(zipf);
  std::vector<double> ramp(300);
  for (int i = 0; i < 300; ++i) ramp[i] = i % 7 == 0 ? 0.0 : i * 0.37;
  weights.push_back(ramp);
  for (const auto& w : weights) {
    std::vector<double> cdf(w.size());
    double run = 0;
    for (std::size_t i = 0; i < w.size(); ++i) cdf[i] = run += w[i];
    const CdfTable table(cdf);
    const int n = static_cast<int>(cdf.size());
    const auto reference = [&](double u) {  // the first cdf[i] > u * total, else the last with weight
      const double target = u * cdf[n - 1];
      const int i = static_cast<int>(std::upper_bound(cdf.begin(), cdf.end(), target) - cdf.begin());
      return i < n ? i : static_cast<int>(std::lower_bound(cdf.begin(), cdf.end(), cdf[n - 1]) - cdf.begin());
    };
    Rng rng(7);
    for (int t = 0; t < 200000; ++t) {
      const double u = rng.uniform();
      ASSERT_EQ(table.draw(u), reference(u)) << "n " << n << " u " << u;
      ASSERT_EQ(draw_from_cdf(cdf.data(), n, u), reference(u));
    }
    for (int b = 0; b <= n; ++b) {
      for (double u : {static_cast<double>(b) / n, std::nextafter(static_cast<double>(b) / n, 0.0)}) {
        if (u >= 1) u = std::nextafter(1.0, 0.0);
        ASSERT_EQ(table.draw(u), reference(u)) << "n " << n << " u " << u;
      }
    }
    // A u that lands on an item's cdf boundary exactly.
    for (int i = 0; i < n; ++i) {
      const double u = cdf[i] / cdf[n - 1];
      if (u < 1) {
        ASSERT_EQ(table.draw(u), reference(u));
      }
    }
  }
}

TEST(MoeRouting, UniformDistinctNodesMatchClosedForm) {
  // DeepEP's reference numbers for E=256, k=8: N=2: 1.99, 4: 3.61, 8: 5.30, 16: 6.52.
  const std::vector<std::pair<int, double>> published = {{2, 1.99}, {4, 3.61}, {8, 5.30}, {16, 6.52}};
  for (const auto& [nodes, value] : published) {
    const int ep = nodes * 8;
    const MoeLayer layer = make_layer(deepseek(ep, 65536 / ep), RoutingSpec{}, PlacementSpec{}, 11);
    const RoutingStats s = routing_stats(layer);
    const double exact = nodes * (1 - binomial_ratio(256 - 256 / nodes, 256, 8));
    const double approx = nodes * (1 - std::pow(1 - 1.0 / nodes, 8));
    const double gpus_exact = ep * (1 - binomial_ratio(256 - 256 / ep, 256, 8));
    EXPECT_NEAR(exact, value, 0.006) << nodes;
    EXPECT_NEAR(s.distinct_nodes_per_token, exact, 0.01 * exact) << nodes;
    EXPECT_NEAR(s.distinct_nodes_per_token, approx, 0.02 * approx) << nodes;
    EXPECT_NEAR(s.distinct_gpus_per_token, gpus_exact, 0.01 * gpus_exact) << nodes;
    // Uniform routing is balanced: the hottest of `ep` ranks is a few % over the mean.
    EXPECT_LT(s.max_over_mean_rank_load, 1.05) << nodes;
    EXPECT_NEAR(s.remote_node_fraction, 1 - 1.0 / nodes, 0.01) << nodes;
  }
}

TEST(MoeRouting, NodeLimitCapsNodesPerToken) {
  MoeConfig c = deepseek(64, 500);  // 8 nodes
  c.node_limit = 4;
  const MoeLayer layer = make_layer(c, parse_routing_spec("zipf:0.5"), PlacementSpec{}, 3);
  const Routing& r = layer.routing;
  for (std::int64_t t = 0; t < r.tokens(); ++t) {
    std::set<int> groups;
    for (int j = 0; j < 8; ++j) groups.insert(r.expert_ids[t * 8 + j] / 32);
    ASSERT_LE(groups.size(), 4u);
  }
  const RoutingStats s = routing_stats(layer);
  EXPECT_LE(s.distinct_nodes_per_token, 4.0);
  // Unlimited, uniform E=256 k=8 over 8 nodes gives 5.30; the limit must bite.
  EXPECT_GT(s.distinct_nodes_per_token, 3.0);
  // Hierarchical EPLB keeps each group on its node, so the limit survives placement.
  const MoeLayer balanced = make_layer(c, parse_routing_spec("zipf:0.5"), parse_placement_spec("eplb:64"), 3);
  EXPECT_LE(routing_stats(balanced).distinct_nodes_per_token, 4.0);
}

TEST(MoeRouting, SamplerMatchesExactInclusionWithoutReplacement) {
  // Weights 0.5, 0.3, 0.2, k = 2. Successive sampling: P(item in) = P(first) + sum over the other
  // first picks j of p_j * p_i / (1 - p_j): 0.8393, 0.6750, 0.4857 (sum 2).
  MoeConfig c;
  c.experts = 3;
  c.top_k = 2;
  c.ep = 1;
  c.gpus_per_node = 1;
  c.tokens_per_rank = 200000;
  const Routing r = sample_routing(c, {0.5, 0.3, 0.2}, 5);
  const auto counts = r.expert_counts();
  const double exact[3] = {0.5 + 0.3 * 0.5 / 0.7 + 0.2 * 0.5 / 0.8, 0.3 + 0.5 * 0.3 / 0.5 + 0.2 * 0.3 / 0.8,
                           0.2 + 0.5 * 0.2 / 0.5 + 0.3 * 0.2 / 0.7};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(counts[i] / 200000.0, exact[i], 0.004) << i;
  for (std::int64_t t = 0; t < r.tokens(); ++t) ASSERT_NE(r.expert_ids[2 * t], r.expert_ids[2 * t + 1]);
  // The approximation used for calibration is within 6% on this tiny, skewed case (3 experts;
  // it tightens as E grows) and exact for equal weights.
  const auto pi = expected_inclusion({0.5, 0.3, 0.2}, 2);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(pi[i], exact[i], 0.06 * exact[i]) << i;
  for (double p : expected_inclusion(std::vector<double>(256, 1.0), 8)) EXPECT_NEAR(p, 8.0 / 256, 1e-12);
}

TEST(MoeRouting, HotExpertsAreTheMostLoaded) {
  const MoeLayer layer = make_layer(deepseek(32, 1000), parse_routing_spec("hot:0.4:4"), PlacementSpec{}, 9);
  auto counts = layer.routing.expert_counts();
  std::vector<std::int64_t> sorted = counts;
  std::sort(sorted.rbegin(), sorted.rend());
  // Hot weight 0.1 each vs 0.6/252 for the rest: inclusion ~0.55 vs ~0.02 per token.
  EXPECT_GT(sorted[3], 10 * sorted[4]);
}

TEST(MoeRouting, RatioCalibrationAndEplb) {
  // TensorRT-LLM's DeepSeek-R1 EP32 measurement: hottest rank 2.56x the mean; EPLB with 32
  // redundant experts brought it to about 1.12x.
  const MoeConfig c = deepseek(32, 4096);
  const RoutingSpec spec = parse_routing_spec("ratio:2.5");
  const MoeLayer contiguous = make_layer(c, spec, PlacementSpec{}, 1);
  const RoutingStats s = routing_stats(contiguous);
  EXPECT_NEAR(s.max_over_mean_rank_load, 2.5, 0.04 * 2.5);
  EXPECT_GT(contiguous.routing.zipf_s, 0.0);
  const RoutingStats global = routing_stats(make_layer(c, spec, parse_placement_spec("eplb-global:32"), 1));
  const RoutingStats hier = routing_stats(make_layer(c, spec, parse_placement_spec("eplb:32"), 1));
  std::printf("ratio:2.5 EP32: s=%.4f contiguous %.3f, eplb-global:32 %.3f, eplb:32 (hierarchical) %.3f\n",
              contiguous.routing.zipf_s, s.max_over_mean_rank_load, global.max_over_mean_rank_load,
              hier.max_over_mean_rank_load);
  EXPECT_LT(global.max_over_mean_rank_load, 1.05);
  EXPECT_LT(hier.max_over_mean_rank_load, 1.15);
  EXPECT_LT(hier.max_over_mean_rank_load, s.max_over_mean_rank_load);
  EXPECT_EQ(global.rank_load.size(), 32u);
}

TEST(MoePlacement, BalancedPackingAndReplication) {
  // 10, 9, 8, 1, 1, 1 into 2 packs of 3, heaviest first onto the lightest pack with room:
  // 10->A, 9->B, 8->B (9<10), 1->A (10<17), 1->A (11<17), 1->B (A full).
  const Packing p = balanced_packing({10, 9, 8, 1, 1, 1}, 2);
  EXPECT_EQ(p.pack, (std::vector<int>{0, 1, 1, 0, 0, 1}));
  EXPECT_EQ(p.rank_in_pack, (std::vector<int>{0, 0, 1, 1, 2, 2}));
  // Replicas go to the highest load per replica: 10,4,3 -> 10/1 then 10/2=5 > 4 -> 0, 0.
  EXPECT_EQ(replicate_experts({10, 4, 3}, 5), (std::vector<int>{0, 1, 2, 0, 0}));
  // 10,6,3: 10 -> 0 (now 5 per replica), then 6 > 5 -> 1.
  EXPECT_EQ(replicate_experts({10, 6, 3}, 5), (std::vector<int>{0, 1, 2, 0, 1}));
}

TEST(MoePlacement, EplbSlotsAndHierarchy) {
  const MoeConfig c = deepseek(32, 100);
  std::vector<double> load(256);
  for (int e = 0; e < 256; ++e) load[e] = 1.0 / (1 + (e * 37) % 256);
  const Placement hier = eplb_placement(c, load, parse_placement_spec("eplb:32"));
  EXPECT_EQ(hier.slots_per_rank, 9);
  ASSERT_EQ(hier.slot_expert.size(), 288u);
  for (int e = 0; e < 256; ++e) {
    ASSERT_GE(hier.replicas(e), 1);
    for (int i = hier.replica_offsets[e]; i < hier.replica_offsets[e + 1]; ++i)
      ASSERT_EQ(hier.replica_ranks[i] / 8, e / 64) << "expert " << e << " left its node group";
  }
  // The hottest expert (e = 0, load 1) gets the most replicas.
  int most = 0;
  for (int e = 0; e < 256; ++e) most = std::max(most, hier.replicas(e));
  EXPECT_EQ(hier.replicas(0), most);
  EXPECT_GT(most, 1);
}

TEST(MoePlacement, ReplicaChoicePrefersOwnGpuThenRoundRobin) {
  Placement p;
  p.ep = 8;
  p.gpus_per_node = 2;
  p.slots_per_rank = 1;
  p.slot_expert = {1, 0, 0, 2, 3, 0, 4, 5};  // expert 0 on ranks 1, 2, 5
  p.replica_offsets = {0, 3, 4, 5, 6, 7, 8};
  p.replica_ranks = {1, 2, 5, 0, 3, 4, 6, 7};
  EXPECT_EQ(p.choose_replica(0, 1, 17), 1);  // own GPU
  EXPECT_EQ(p.choose_replica(0, 0, 17), 5);  // otherwise token 17 % 3 = 2 -> third replica
  EXPECT_EQ(p.choose_replica(0, 6, 0), 1);
  EXPECT_EQ(p.choose_replica(0, 6, 1), 2);
  EXPECT_EQ(p.choose_replica(3, 6, 5), 4);   // a single replica
}

TEST(MoeTrace, SampleCsv) {
  MoeConfig c;
  c.experts = 16;
  c.top_k = 4;
  c.ep = 4;
  c.gpus_per_node = 2;
  const Routing r = read_trace(kSample, c);
  EXPECT_EQ(r.rank_offsets, (std::vector<std::int64_t>{0, 4, 8, 12, 16}));
  EXPECT_EQ(std::vector<std::int32_t>(r.expert_ids.begin(), r.expert_ids.begin() + 4),
            (std::vector<std::int32_t>{0, 5, 9, 13}));
  EXPECT_EQ(r.expert_ids[15 * 4 + 3], 14);
  const Routing layer1 = read_trace(kSample, c, 1);
  EXPECT_EQ(layer1.rank_offsets, (std::vector<std::int64_t>{0, 1, 1, 1, 1}));
  // Through make_layer: of the 64 layer-0 pairs, experts 0 and 3 appear 5 times, mean 64/16 = 4.
  RoutingSpec spec = parse_routing_spec("trace:" + kSample);
  const RoutingStats s = routing_stats(make_layer(c, spec, PlacementSpec{}, 0));
  EXPECT_EQ(s.pairs, 64);
  EXPECT_DOUBLE_EQ(s.max_over_mean_expert_load, 1.25);
  EXPECT_EQ(s.hottest_expert, 0);
}

TEST(MoeTrace, JsonAndBlockDealing) {
  const std::string path = ::testing::TempDir() + "ccsim_moe_trace.json";
  std::ofstream(path) << R"({"tokens": [{"experts": [0, 1]}, {"experts": [2, 3]}, {"experts": [1, 3]}, {"experts": [0, 2]}]})";
  MoeConfig c;
  c.experts = 4;
  c.top_k = 2;
  c.ep = 2;
  c.gpus_per_node = 1;
  const Routing r = read_trace(path, c);
  EXPECT_EQ(r.rank_offsets, (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_EQ(r.expert_ids, (std::vector<std::int32_t>{0, 1, 2, 3, 1, 3, 0, 2}));
}

TEST(MoeInput, BadConfigurationsNameTheFlag) {
  const auto with = [](auto change) {
    MoeConfig c = deepseek(32, 16);
    change(c);
    return error_of([&] { make_layer(c, RoutingSpec{}, PlacementSpec{}, 1); });
  };
  EXPECT_NE(with([](MoeConfig& c) { c.top_k = 300; }).find("--topk"), std::string::npos);
  EXPECT_NE(with([](MoeConfig& c) { c.ep = 24, c.experts = 256; }).find("--experts"), std::string::npos);
  EXPECT_NE(with([](MoeConfig& c) { c.node_limit = -1; }).find("--max-nodes"), std::string::npos);
  EXPECT_NE(with([](MoeConfig& c) { c.tokens_per_rank = -5; }).find("--tokens"), std::string::npos);
  EXPECT_NE(with([](MoeConfig& c) { c.gpus_per_node = 3; }).find("--gpus-per-node"), std::string::npos);
  EXPECT_EQ(with([](MoeConfig&) {}), "");
  EXPECT_NE(error_of([] { make_layer(deepseek(32, 16), RoutingSpec{}, parse_placement_spec("eplb:5"), 1); })
                .find("multiple of EP"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_routing_spec("zipf"); }).find("--routing"), std::string::npos);
  EXPECT_NE(error_of([] { parse_routing_spec("hot:1.5:2"); }).find("fraction"), std::string::npos);
  EXPECT_NE(error_of([] { parse_placement_spec("eplb:x"); }).find("--placement"), std::string::npos);
  EXPECT_NE(error_of([] { fit_zipf_to_ratio(deepseek(32, 16), 40, 1); }).find("beyond reach"), std::string::npos);
}

// A scenario file's runs as the flags they stand for: the base's keys first, then the run's; lists
// repeat the flag; pure-rdma is a switch. Bad shapes name the JSON pointer.
TEST(MoeScenarioFile, RunsBecomeFlagListsAndBadShapesNameThePointer) {
  const auto runs = read_scenario_runs(R"({"format": "ccsim-moe-scenario/1", "nodes": 2, "set": ["a=1", "b=2"],
    "runs": [{"name": "x", "routing": "zipf:1.1", "pure-rdma": true}, {"eplb": 16.5}]})",
                                       "s.json");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].name, "x");
  // nlohmann keeps object keys sorted: nodes before set.
  EXPECT_EQ(runs[0].flags, (std::vector<std::string>{"--nodes", "2", "--set", "a=1", "--set", "b=2", "--pure-rdma",
                                                     "--routing", "zipf:1.1"}));
  EXPECT_EQ(runs[1].name, "run 1");
  EXPECT_EQ(runs[1].flags.back(), "16.5");
  const auto error = [](const std::string& text) { return error_of([&] { read_scenario_runs(text, "s.json"); }); };
  EXPECT_EQ(error(R"({"format": 1, "runs": [{}]})"), "s.json: /format: expected \"ccsim-moe-scenario/1\"");
  EXPECT_EQ(error(R"({"format": "ccsim-moe-scenario/1", "runs": []})"), "s.json: /runs: expected a non-empty list of runs");
  EXPECT_EQ(error(R"({"format": "ccsim-moe-scenario/1", "runs": [{"tokens": {"a": 1}}]})"),
            "s.json: /runs/0/tokens: expected a string or a number");
  EXPECT_EQ(error(R"({"format": "ccsim-moe-scenario/1", "runs": [{"pure-rdma": 1}]})"),
            "s.json: /runs/0/pure-rdma: expected true or false");
  EXPECT_NE(error(R"({"format": "ccsim-moe-scenario/1", "runs": [{"name": "a\nb"}]})").find("/runs/0/name"),
            std::string::npos);
  EXPECT_NE(error("{\"format\": ").find("s.json"), std::string::npos);
}

TEST(MoeInput, BadTracesNameFileAndLine) {
  MoeConfig c;
  c.experts = 16;
  c.top_k = 4;
  c.ep = 4;
  c.gpus_per_node = 2;
  const std::string path = ::testing::TempDir() + "ccsim_moe_bad.csv";
  const auto err = [&](const std::string& text) {
    std::ofstream(path) << text;
    return error_of([&] { read_trace(path, c); });
  };
  EXPECT_EQ(err("rank,experts\n0,1 2 3 16\n"), path + " line 2: expert 16 is out of range [0, 15]");
  EXPECT_EQ(err("# c\nrank,experts\n0,1 2 3 4\n1\n"), path + " line 4: expected 2 comma-separated fields, got 1");
  EXPECT_EQ(err("rank,experts\n0,1 2 x 4\n"), path + " line 2: expert 'x' is not a whole number");
  EXPECT_EQ(err("rank,experts\n7,1 2 3 4\n"), path + " line 2: rank 7 is out of range [0, 3]");
  EXPECT_EQ(err("rank,experts\n0,1 2 3\n"), path + " line 2: token has 3 experts, top-k is 4");
  EXPECT_EQ(err("rank,experts\n0,1 2 3 3\n"), path + " line 2: expert 3 appears twice in one token");
  EXPECT_EQ(err("rank,expert\n"), path + " line 1: unknown column 'expert' (header: [layer,][rank,]experts)");
  EXPECT_EQ(err("{\"tokens\": [{\"experts\": [1, 2, 3, 99]}]}"),
            path + " /tokens/0/experts/3: expert 99 is out of range [0, 15]");
  // The common JSON reader (common/json_input.h): line and column, nlohmann's reason.
  EXPECT_EQ(err("{\"tokens\": [{\"experts\": [1, 2"),
            path + ": line 1, column 30: syntax error while parsing array - unexpected end of input; expected ']'");
  EXPECT_EQ(err("{\"tokens\": [], \"tokens\": []}"), path + ": /tokens: duplicate key 'tokens'");
  EXPECT_EQ(error_of([&] { read_trace(path + ".missing", c); }),
            path + ".missing: cannot open routing trace (No such file or directory)");
}

}  // namespace
}  // namespace ccsim::moe
