// libFuzzer target: a `ccsim run` scenario file (docs/scenarios.md) as load_scenario reads it: the
// user JSON reader (ordered, comments allowed), parse_scenario and each variant's spec
// (scenarios/scenario.h). Relative paths in it resolve against the repository's scenarios/
// folder, so that the seeds' topology and log references are read as `run` reads them.
// Contract (fuzz_input.h): a scenario, or InputError.
#include "common/json_input.h"
#include "fuzz/fuzz_input.h"
#include "scenarios/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ccsim::fuzz::check_contract([&] {
    const auto doc = ccsim::parse_user_json<nlohmann::ordered_json>(ccsim::fuzz::input_text(data, size), "fuzz.json",
                                                                    /*allow_comments=*/true);
    const auto scenario = ccsim::parse_scenario(doc, "fuzz.json", CCSIM_SOURCE_DIR "/scenarios/");
    for (const auto& variant : scenario.variants) ccsim::variant_spec(scenario, variant);
  });
}
