// The `moe` command's scenario files (scenarios/moe-*.json, docs/moe.md "Scenario files"): a base
// and a list of runs, each written with the same keys as the command's flags. Reading one turns
// every run into the flag list it stands for, so that flags and files share one set of rules and
// error messages (cli/moe_runs.h parses the flags).
#pragma once
#include <string>
#include <vector>

namespace ccsim::moe {

struct ScenarioRun {
  std::string name;                // "name", or "run I"
  std::vector<std::string> flags;  // the base's keys, then the run's, as "--key" "value" pairs
};

// `text` is the file's content, `path` names it in errors. InputError (naming the path and the JSON
// pointer) for malformed JSON, a wrong or missing "format", an empty "runs", a value that is not a
// string, number, list of those or (for "pure-rdma") a bool, or a name or description with control
// characters.
std::vector<ScenarioRun> read_scenario_runs(const std::string& text, const std::string& path);

}  // namespace ccsim::moe
