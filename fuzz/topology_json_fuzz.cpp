// libFuzzer target: a topology file (docs/topology.md) as `--topology FILE` reads it: the user JSON
// reader with its limits (common/json_input.h, comments allowed) and build_topology, which checks
// every key and bound (topologies/spec.h). Contract (fuzz_input.h): a topology, or InputError.
#include "common/json_input.h"
#include "fuzz/fuzz_input.h"
#include "topologies/spec.h"
#include "topologies/topology.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ccsim::fuzz::check_contract([&] {
    const auto spec = ccsim::parse_user_json(ccsim::fuzz::input_text(data, size), "fuzz.json", /*allow_comments=*/true);
    ccsim::build_topology(spec, "fuzz.json");
  });
}
