// libFuzzer target: a `moe` scenario file (scenarios/moe-*.json, docs/moe.md "Scenario files"),
// read by read_scenario_runs (scenarios/moe/scenario_file.h) and each run's flags parsed into a
// layer and its topology as the command does (cli/moe_runs.h), without simulating it. Contract
// (fuzz_input.h): runs whose layer passed validation, or InputError.
#include "cli/moe_runs.h"
#include "fuzz/fuzz_input.h"
#include "scenarios/moe/scenario_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ccsim::fuzz::check_contract([&] {
    for (const auto& run : ccsim::moe::read_scenario_runs(ccsim::fuzz::input_text(data, size), "fuzz.json")) {
      const ccsim::MoeRun layer = ccsim::moe_run_from_args(ccsim::parse_args(run.flags, ccsim::moe_option_specs()));
      // What the layer's simulation relies on: EP is the cluster, every rank has its experts.
      if (layer.request.config.ep != layer.topo.num_gpus() || layer.request.config.ep < 1) __builtin_trap();
    }
  });
}
