// `ccsim moe`: one MoE layer's expert-parallel dispatch and combine under a routing skew, per transport
// (docs/moe.md). Flags describe one layer; a scenario file (scenarios/moe-*.json) lists several runs that
// share a base, each written with the same keys as the flags (so one set of rules and error messages).
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/moe_runs.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/output_file.h"
#include "scenarios/moe/layer_report.h"
#include "scenarios/moe/scenario_file.h"

namespace ccsim {
namespace {

std::vector<MoeRun> runs_from_scenario(const std::string& path, const std::vector<std::string>& extra) {
  std::vector<MoeRun> runs;
  for (moe::ScenarioRun& r : moe::read_scenario_runs(read_input_file(path, "scenario file"), path)) {
    r.flags.insert(r.flags.end(), extra.begin(), extra.end());
    // The run's place in the file comes first: a flag's error alone would not say which run.
    const std::string where = path + ": /runs/" + std::to_string(runs.size());
    try {
      MoeRun run = moe_run_from_args(parse_args(r.flags, moe_option_specs()));
      run.name = r.name;
      runs.push_back(std::move(run));
    } catch (const InputError& e) {
      throw InputError(where, e.what());
    }
  }
  return runs;
}

}  // namespace

int run_moe(const std::vector<std::string>& argv) {
  const ParsedArgs args = parse_args(argv, moe_option_specs());
  if (args.positional().size() > 1) throw InputError("command line", "moe takes at most one scenario file");
  const std::string format = args.get("format", "table");
  if (format != "table" && format != "json" && format != "csv")
    throw InputError(args.spelled("format"), "expected table, json or csv, got '" + format + "'");
  std::vector<MoeRun> runs;
  if (args.positional().empty()) {
    runs.push_back(moe_run_from_args(args));
  } else {
    // Flags after the file apply to every run (e.g. --seed 2), except the output options.
    std::vector<std::string> extra;
    for (const char* name : {"seed", "tokens", "routing", "eplb", "placement", "expert-compute-us"})
      if (args.has(name)) extra.insert(extra.end(), {std::string("--") + name, args.get(name)});
    runs = runs_from_scenario(args.positional().front(), extra);
  }
  std::string text, matrix;
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const moe::LayerReport report = moe::run_layer(runs[i].topo, runs[i].request);
    if (i == 0 && args.has("matrix")) matrix = moe::render_matrix_csv(report);
    if (format == "json") {
      nlohmann::ordered_json one = nlohmann::ordered_json::parse(moe::render_json(report));
      if (!runs[i].name.empty()) one["run"] = runs[i].name;
      all.push_back(std::move(one));
    } else if (format == "csv") {
      std::string csv = moe::render_csv(report);
      if (runs.size() > 1) {
        // One CSV with a leading run column.
        std::stringstream lines(csv);
        std::string line;
        bool header = true;
        while (std::getline(lines, line)) {
          if (header) {
            if (i == 0) text += "run," + line + "\n";
            header = false;
          } else {
            text += runs[i].name + "," + line + "\n";
          }
        }
      } else {
        text += csv;
      }
    } else {
      if (runs.size() > 1) text += "## run: " + runs[i].name + "\n";
      text += moe::render_table(report);
    }
  }
  if (format == "json") text = (runs.size() == 1 && runs[0].name.empty() ? all[0].dump(2) : all.dump(2)) + "\n";
  if (args.has("matrix")) write_file_atomically(args.get("matrix"), matrix);
  write_output(args.get("output", ""), text);
  return 0;
}

}  // namespace ccsim
