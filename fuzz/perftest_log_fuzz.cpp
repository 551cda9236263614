// libFuzzer target: the perftest output parser (calibrate/perftest_log.h) and the choice of the
// tables a calibration uses (select_perftest_runs), as `ccsim calibrate --perftest` runs them.
// Contract (fuzz_input.h): runs, or InputError.
#include <sstream>

#include "calibrate/perftest_log.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ccsim::fuzz::check_contract([&] {
    std::istringstream in(ccsim::fuzz::input_text(data, size));
    const auto runs = ccsim::parse_perftest_log(in, "fuzz.txt");
    std::vector<std::string> notes;
    ccsim::select_perftest_runs(runs, &notes);
  });
}
