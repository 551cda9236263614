// `ccsim run --shard K/N` and `ccsim merge`: the flow of docs/cluster.md's Slurm job array with
// local processes. N shard processes run side by side (as array tasks would), each writes its own
// folder, and the merge is byte-identical to one run of the whole scenario; shards are disjoint and
// cover it; bad shards and bad merges are one line and exit 2; a missing shard is exit 1.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "common/error.h"
#include "scenarios/run_results.h"
#include "tests/test_run_helpers.h"

namespace ccsim {
namespace {

using namespace run_testing;

const char* kScenario = R"({"format": "ccsim-scenario/1", "name": "sharded",
  "cluster": {"topology": "dgx-h100", "nodes": 2},
  "workloads": [{"collective": "all_reduce", "sizes": {"min": "1M", "max": "1G", "factor": 8}, "model": "closed-form"},
                {"collective": "all_gather", "sizes": {"min": "1M", "max": "16M", "factor": 4}}],
  "variants": {"matrix": {"node.nic.Gbps": [200, 400], "node.nvlink.nvls": [false, true], "fabric.oversubscription": [1, 2]}}})";

TEST(Shards, EveryVariantInExactlyOneShard) {
  for (int n : {1, 2, 3, 7, 8, 20}) {
    std::vector<int> owner(8, 0);
    for (int k = 1; k <= n; ++k) {
      const Shard s = parse_shard(std::to_string(k) + "/" + std::to_string(n));
      for (std::size_t v = 0; v < owner.size(); ++v) owner[v] += s.holds(v) ? 1 : 0;
    }
    for (int c : owner) EXPECT_EQ(c, 1) << n << " shards";
  }
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "-1/2", "1/2/3", ""}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--shard: expected K/N", 0), 0u) << e.what();
    }
  }
}

TEST(Shards, MergedShardsAreByteIdenticalToOneRun) {
  const std::string dir = fresh_dir("shards");
  write_text(dir + "/s.json", kScenario);
  // In the folder, as an array task sees its working directory: relative paths throughout.
  const auto in_dir = [&](const std::string& args) { return shell("cd '" + dir + "' && " + CCSIM_BINARY + " " + args, dir); };
  ASSERT_EQ(in_dir("run s.json -o whole -q").code, 0);
  // Three array tasks at once, each in its own folder.
  const CommandResult tasks = shell("cd '" + dir + "' && for k in 1 2 3; do " + std::string(CCSIM_BINARY) +
                                        " run s.json --shard $k/3 --jobs 1 -q -o part$k & done; wait",
                                    dir);
  ASSERT_EQ(tasks.code, 0) << tasks.err;
  std::set<std::size_t> seen;
  for (int k = 1; k <= 3; ++k) {
    const nlohmann::json part = nlohmann::json::parse(slurp(dir + "/part" + std::to_string(k) + "/results.json"));
    EXPECT_EQ(part["shard"]["index"], k);
    EXPECT_EQ(part["shard"]["count"], 3);
    EXPECT_EQ(part["complete"], true);
    for (const auto& v : part["variants"]) EXPECT_TRUE(seen.insert(v["index"].get<std::size_t>()).second);
  }
  EXPECT_EQ(seen.size(), 8u);
  const CommandResult m = in_dir("merge part3 part1 part2 -o merged");  // any order
  ASSERT_EQ(m.code, 0) << m.err;
  for (const char* f : {"results.json", "results.csv", "report.html"})
    EXPECT_EQ(slurp(dir + "/merged/" + f), slurp(dir + "/whole/" + f)) << f;

  // A shard missing: the merge says so and exits 1, with complete files of what is there.
  const CommandResult partial = in_dir("merge part1 part3 -o partial");
  EXPECT_EQ(partial.code, 1);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir + "/partial/results.json"))["complete"], false);
  // The same shard twice, a folder that is not a run's, another scenario: one line, exit 2.
  const CommandResult twice = in_dir("merge part1 part1 -o x");
  EXPECT_EQ(twice.code, 2);
  EXPECT_NE(twice.err.find("overlapping shards"), std::string::npos) << twice.err;
  EXPECT_EQ(in_dir("merge nowhere -o x").code, 2);
  write_text(dir + "/t.json", std::string(kScenario).replace(std::string(kScenario).find("sharded"), 7, "another"));
  ASSERT_EQ(in_dir("run t.json -o other -q --shard 2/3").code, 0);
  const CommandResult mixed = in_dir("merge part1 other -o x");
  EXPECT_EQ(mixed.code, 2);
  EXPECT_NE(mixed.err.find("is scenario 'another'"), std::string::npos) << mixed.err;
  EXPECT_EQ(std::count(mixed.err.begin(), mixed.err.end(), '\n'), 1);
  EXPECT_NE(::access((dir + "/x").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace ccsim
