// The output folder of `ccsim run` and `ccsim merge`: results.json, results.csv, report.html, each
// written whole or not at all (docs/scenarios.md).
#pragma once
#include <string>
#include <vector>

#include "scenarios/run_results.h"
#include "scenarios/scenario.h"

namespace ccsim {

// Creates `dir` if needed; InputError (-o) when it exists and is not a directory.
void ensure_output_directory(const std::string& dir);

void write_run_outputs(const std::string& dir, const Scenario& sc, const std::vector<VariantResult>& done, bool complete,
                       const Shard& shard);

}  // namespace ccsim
