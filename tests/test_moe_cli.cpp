// `ccsim moe` end to end: the documented JSON fields, determinism, the matrix, scenario files, bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace ccsim {
namespace {

using testing::run_ccsim;

const std::string kSmall = "moe --nodes 2 --tokens 256 --experts 64 --topk 8 --routing zipf:1.1 --seed 3";

TEST(MoeCli, JsonHasTheDocumentedFields) {
  const auto r = run_ccsim(kSmall + " --transport deepep-normal,nccl --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* phase : {"dispatch", "combine"}) {
    ASSERT_TRUE(j.contains(phase));
    EXPECT_GT(j[phase]["time_us"].get<double>(), 0);
    const std::string b = j[phase]["bottleneck"];
    EXPECT_TRUE(b == "rdma" || b == "nvlink") << b;
    EXPECT_GT(j[phase]["bottleneck_GBps"].get<double>(), 0);
  }
  // Two nodes, 64 experts, top-8 drawn without replacement: at most 2 nodes, at least 1, and close to
  // the uniform limit's 2(1 - (1/2)^8) = 1.99 under this mild skew.
  const double nodes = j["routing"]["distinct_nodes_per_token"];
  EXPECT_GT(nodes, 1.8);
  EXPECT_LE(nodes, 2.0);
  EXPECT_GE(j["routing"]["max_over_mean_rank_load"].get<double>(), 1.0);
  ASSERT_EQ(j["transports"].size(), 2u);
  EXPECT_EQ(j["transports"][1]["transport"], "nccl");
}

TEST(MoeCli, SameSeedSameBytesOtherSeedOtherRouting) {
  const auto a = run_ccsim(kSmall + " --format json"), b = run_ccsim(kSmall + " --format json");
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  const auto c = run_ccsim("moe --nodes 2 --tokens 256 --experts 64 --topk 8 --routing zipf:1.1 --seed 4 --format json");
  EXPECT_NE(a.out, c.out);
}

TEST(MoeCli, MatrixIsRankByRank) {
  const std::string path = testing::temp_file("matrix.csv");
  const auto r = run_ccsim(kSmall + " --matrix " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string m = testing::read_text_file(path);
  std::remove(path.c_str());
  // A header and one row per rank, each with 16 destination columns.
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 17);
  const std::string first_row = m.substr(m.find('\n') + 1, m.find('\n', m.find('\n') + 1) - m.find('\n') - 1);
  EXPECT_EQ(std::count(first_row.begin(), first_row.end(), ','), 16);
}

TEST(MoeCli, ScenarioFileRunsEveryRun) {
  const std::string path = testing::temp_file("moe.json");
  std::ofstream(path) << R"({"format": "ccsim-moe-scenario/1", "nodes": 2, "tokens": 128, "experts": 64,
    "runs": [{"name": "u", "routing": "uniform"}, {"name": "s", "routing": "ratio:2", "eplb": 16}]})";
  const auto r = run_ccsim("moe " + path + " --format csv");
  ASSERT_EQ(r.code, 0) << r.err;
  // Header + 2 runs x 1 transport x 2 phases.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 5);
  EXPECT_NE(r.out.find("\ns,deepep-normal,dispatch,"), std::string::npos) << r.out;
  std::ofstream(path) << R"({"format": "ccsim-moe-scenario/1", "runs": [{"name": "x", "topk": 300}]})";
  const auto bad = run_ccsim("moe " + path);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("/runs/0"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("--topk"), std::string::npos) << bad.err;
  std::remove(path.c_str());
}

TEST(MoeCli, BadInputIsOneLineAndExitTwo) {
  const char* cases[][2] = {
      {"moe --topk 300", "--topk"},
      {"moe --nodes 4 --experts 250", "--experts"},
      {"moe --tokens -5", "--tokens"},
      {"moe --routing zipf:", "--routing"},
      {"moe --transport carrier-pigeon", "--transport"},
      {"moe --routing trace:/nonexistent/trace.csv", "trace.csv"},
      {"moe --ep 12", "--ep"},
      {"moe --nodes 47168", "--nodes"},  // fuzz_moe_scenario: seconds to build, refused up front
  };
  for (const auto& c : cases) {
    const auto r = run_ccsim(c[0]);
    EXPECT_EQ(r.code, 2) << c[0] << ": " << r.err;
    EXPECT_NE(r.err.find(c[1]), std::string::npos) << c[0] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c[0] << ": " << r.err;
  }
}

TEST(MoeCli, ATraceNamingAnUnknownExpertIsRefusedWithItsLine) {
  const std::string path = testing::temp_file("trace.csv");
  std::ofstream(path) << "experts\n1 2 3 4 5 6 7 8\n1 2 3 4 5 6 7 999\n";
  const auto r = run_ccsim("moe --experts 64 --routing trace:" + path);
  std::remove(path.c_str());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("line 3"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ccsim
