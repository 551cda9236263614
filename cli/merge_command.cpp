// `ccsim merge DIR... -o OUT [--scenario FILE]`: combines the outputs of `ccsim run --shard K/N`
// (one folder per shard, as a cluster job array leaves them) into one results.json, results.csv
// and report.html, byte-identical to a single `ccsim run` of the whole scenario. The scenario is
// read again (from the path the shards recorded, or --scenario) for the report and to check that
// every variant is the scenario's. Exit 0 when every variant is there, 1 when some are missing
// (the files then say "complete": false), 2 on bad input (shards of different scenarios, a variant
// twice, an unfinished shard).
#include <algorithm>
#include <iostream>
#include <map>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/run_outputs.h"
#include "common/error.h"
#include "common/input_file.h"
#include "scenarios/run_results.h"
#include "scenarios/run_results_file.h"
#include "scenarios/scenario.h"

namespace ccsim {

int run_merge(const std::vector<std::string>& argv) {
  const ParsedArgs args = parse_args(argv, {{"o", "output", true, false}, {"", "scenario", true, false}, {"h", "help", false, false}});
  if (args.has("help")) {
    print_help();
    return 0;
  }
  if (args.positional().empty()) throw InputError("command line", "expected the shards' output folders: ccsim merge DIR... -o OUT");
  if (!args.has("output")) throw InputError("command line", "missing -o OUT (where the merged results go)");

  std::vector<RunResultsFile> shards;
  for (const auto& dir : args.positional()) {
    const std::string file = dir + "/results.json";
    shards.push_back(parse_run_results_json(read_input_file(file, "results file"), file));
    const RunResultsFile& s = shards.back();
    if (!s.complete)
      throw InputError(file, "shard " + std::to_string(s.shard.index) + "/" + std::to_string(s.shard.count) +
                                 " did not finish (\"complete\": false); run it again");
    const RunResultsFile& first = shards.front();
    if (s.scenario != first.scenario || s.scenario_file != first.scenario_file || s.variants_total != first.variants_total)
      throw InputError(file, "is scenario '" + s.scenario + "' (" + s.scenario_file + ", " + std::to_string(s.variants_total) +
                                 " variants), not '" + first.scenario + "' (" + first.scenario_file + ", " +
                                 std::to_string(first.variants_total) + " variants) as " + args.positional().front());
  }
  const std::string scenario_path = args.get("scenario", shards.front().scenario_file);
  const Scenario sc = load_scenario(scenario_path);
  if (sc.name != shards.front().scenario || sc.variants.size() != shards.front().variants_total)
    throw InputError(scenario_path, "is scenario '" + sc.name + "' with " + std::to_string(sc.variants.size()) +
                                        " variants; the shards ran '" + shards.front().scenario + "' with " +
                                        std::to_string(shards.front().variants_total));

  std::map<std::size_t, std::pair<VariantResult, std::string>> by_index;  // scenario order, and where each came from
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const std::string file = args.positional()[k] + "/results.json";
    for (VariantResult& v : shards[k].variants) {
      if (v.index >= sc.variants.size() || sc.variants[v.index].name != v.name)
        throw InputError(file, "variant '" + v.name + "' is not variant " + std::to_string(v.index) + " of " + scenario_path);
      const auto [it, fresh] = by_index.try_emplace(v.index, v, file);
      if (!fresh) throw InputError(file, "variant '" + v.name + "' is also in " + it->second.second + " (overlapping shards)");
    }
  }
  std::vector<VariantResult> done;
  for (auto& [index, entry] : by_index) done.push_back(std::move(entry.first));
  const bool complete = done.size() == sc.variants.size();
  const std::string out = args.get("output");
  ensure_output_directory(out);
  write_run_outputs(out, sc, done, complete, Shard{});
  if (!complete) {
    std::cerr << "ccsim merge: " << done.size() << " of " << sc.variants.size() << " variants; the missing shards' results are not "
              << "in " << out << " (results.json says \"complete\": false)\n";
    return 1;
  }
  return 0;
}

}  // namespace ccsim
