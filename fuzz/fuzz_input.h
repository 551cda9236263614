// What every libFuzzer target here shares: the contract it checks (docs/fuzzing.md). A parser
// given arbitrary bytes returns, or throws InputError (ccsim's bad-input exception, printed as one
// line with exit code 2); any other exception escaping, a crash, an ASan/UBSan report, a leak or
// an input slower than -timeout is a finding. Another exception is turned into a trap so that
// libFuzzer keeps the input and the what() is printed above its report.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "common/error.h"

namespace ccsim::fuzz {

inline std::string input_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `parse` (which throws what the parser throws) under the contract above.
template <class Parse>
int check_contract(Parse&& parse) {
  try {
    parse();
  } catch (const InputError&) {
    // a refused input: the expected outcome for most of them
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz finding: exception other than InputError escaped: %s\n", e.what());
    __builtin_trap();
  }
  return 0;
}

}  // namespace ccsim::fuzz
