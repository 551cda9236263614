// libFuzzer target: the nccl-tests log parser (calibrate/nccl_tests_log.h) on arbitrary bytes.
// Contract (fuzz_input.h): runs, or InputError. docs/fuzzing.md says how to build and run it.
#include <sstream>

#include "calibrate/nccl_tests_log.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ccsim::fuzz::check_contract([&] {
    std::istringstream in(ccsim::fuzz::input_text(data, size));
    const auto runs = ccsim::parse_nccl_tests_log(in, "fuzz.log");
    // What a caller reads: every run has rows (the parser refuses an empty table).
    for (const auto& run : runs)
      if (run.rows.empty()) __builtin_trap();
  });
}
