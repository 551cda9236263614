// libFuzzer target: a shard's results.json as `ccsim merge DIR...` reads it back
// (parse_run_results_json, scenarios/run_results_file.h). Contract (fuzz_input.h): the shard's
// variants, or InputError. merge's checks across shards and against the scenario come after the
// parse and read only fields the parse has typed.
#include "fuzz/fuzz_input.h"
#include "scenarios/run_results_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ccsim::fuzz::check_contract(
      [&] { ccsim::parse_run_results_json(ccsim::fuzz::input_text(data, size), "shard/results.json"); });
}
