// The files `ccsim run` writes and `ccsim merge` reads back: results.json (rows plus per-variant
// detail, exactly round-tripped) and results.csv. Kept apart from run_results.cpp, which runs the
// engine, so that the reader can be fuzzed without SimGrid (fuzz/run_results_fuzz.cpp).
// docs/scenarios.md describes every field.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenarios/run_results.h"

namespace ccsim {

constexpr const char* kRunResultsFormat = "ccsim-run-results/1";

// Exact round trip (doubles print as their shortest round-trip text): what a variant's child
// process hands to the parent.
nlohmann::json variant_result_to_json(const VariantResult& v);
VariantResult variant_result_from_json(const nlohmann::json& j);

// The output files. `done` holds the finished variants in scenario order (a prefix or any subset
// after Ctrl-C); `complete` says whether every variant (of the shard, when sharded) finished. A
// shard's results.json names it ("shard": {"index", "count"}); the whole scenario's has no "shard".
std::string format_run_results_json(const Scenario& scenario, const std::vector<VariantResult>& done, bool complete,
                                    const Shard& shard = {});

// What `ccsim merge` reads back from a results.json (InputError naming `file` and the place).
struct RunResultsFile {
  std::string scenario, scenario_file;
  std::size_t variants_total = 0;
  bool complete = false;
  Shard shard;
  std::vector<VariantResult> variants;
};
RunResultsFile parse_run_results_json(const std::string& text, const std::string& file);
// Header: variant,workload,collective,size_bytes,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,
// predicted_as,model,busiest_link,busiest_link_class,busiest_link_utilization,latency_share,
// measured_time_us,measured_busbw_GBps,error_pct,within_tolerance,side
std::string format_run_results_csv(const std::vector<VariantResult>& done);

}  // namespace ccsim
