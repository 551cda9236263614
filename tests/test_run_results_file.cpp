// The results.json reader that `ccsim merge` uses (scenarios/run_results_file.h), on the stored
// shard files of tests/data/run-results/ (README there): every variant reads back to exactly the
// JSON it came from (doubles included), the header fields are the file's, and a file with a field
// of the wrong type is one InputError naming the file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "common/error.h"
#include "common/input_file.h"
#include "scenarios/run_results_file.h"

namespace ccsim {
namespace {

std::string stored(const std::string& name) {
  return read_input_file(std::string(CCSIM_SOURCE_DIR) + "/tests/data/run-results/" + name, "test input");
}

TEST(RunResultsFile, StoredShardsReadBackToTheirOwnJson) {
  for (const char* name : {"straggler-2node-shard-1of2.json", "validate-rtx2080ti-x2-3rows.json"}) {
    SCOPED_TRACE(name);
    const std::string text = stored(name);
    const nlohmann::json doc = nlohmann::json::parse(text);
    const RunResultsFile f = parse_run_results_json(text, name);
    EXPECT_EQ(f.scenario, doc.at("scenario").get<std::string>());
    EXPECT_EQ(f.variants_total, doc.at("variants_total").get<std::size_t>());
    EXPECT_TRUE(f.complete);
    ASSERT_EQ(f.variants.size(), doc.at("variants").size());
    for (std::size_t i = 0; i < f.variants.size(); ++i) EXPECT_EQ(variant_result_to_json(f.variants[i]), doc.at("variants")[i]);
  }
}

TEST(RunResultsFile, StragglerShardKeepsItsShardAndPerRankTimes) {
  const RunResultsFile f = parse_run_results_json(stored("straggler-2node-shard-1of2.json"), "s.json");
  EXPECT_EQ(f.shard.index, 1);
  EXPECT_EQ(f.shard.count, 2);
  ASSERT_FALSE(f.variants.empty());
  ASSERT_FALSE(f.variants[0].workloads.empty());
  const ScenarioWorkloadResult& w = f.variants[0].workloads[0];
  EXPECT_EQ(w.kind, "straggler");
  EXPECT_EQ(w.late_rank, 5);  // the scenario's late_rank
  EXPECT_EQ(w.per_rank_us.size(), 16u);  // two dgx-h100 nodes
}

TEST(RunResultsFile, WrongFieldTypeIsOneInputErrorNamingTheFile) {
  nlohmann::json doc = nlohmann::json::parse(stored("straggler-2node-shard-1of2.json"));
  doc["variants"][0]["workloads"][0]["late_rank"] = "five";
  try {
    parse_run_results_json(doc.dump(), "shard3/results.json");
    FAIL() << "a string late_rank was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("shard3/results.json"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace ccsim
