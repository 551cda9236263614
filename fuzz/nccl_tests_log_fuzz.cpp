// libFuzzer target: the nccl-tests log parser (calibrate/nccl_tests_log.h) on arbitrary bytes.
// The parser's contract: it returns runs or throws InputError; anything else (another exception,
// a crash, an ASan/UBSan report, a hang) is a finding. docs/fuzzing.md says how to build and run it.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "calibrate/nccl_tests_log.h"
#include "common/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto runs = ccsim::parse_nccl_tests_log(in, "fuzz.log");
    // What a caller reads: every run has rows (the parser refuses an empty table).
    for (const auto& run : runs)
      if (run.rows.empty()) __builtin_trap();
  } catch (const ccsim::InputError&) {
    // a refused input: the expected outcome for most of them
  }
  return 0;
}
