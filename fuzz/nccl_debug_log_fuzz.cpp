// libFuzzer target: the NCCL_DEBUG=INFO log parser (calibrate/nccl_debug_log.h) that
// `ccsim validate --nccl-debug` reads. Contract (fuzz_input.h): what it found, or InputError.
#include <sstream>

#include "calibrate/nccl_debug_log.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ccsim::fuzz::check_contract([&] {
    std::istringstream in(ccsim::fuzz::input_text(data, size));
    ccsim::parse_nccl_debug_log(in, "fuzz.log");
  });
}
