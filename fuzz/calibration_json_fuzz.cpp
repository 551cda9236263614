// libFuzzer target: a calibration file (docs/calibration.md) as `--calibration FILE` reads it: the
// user JSON reader (common/json_input.h, no comments) and calibration_from_json
// (calibrate/calibration.h). Contract (fuzz_input.h): a calibration, or InputError.
#include "calibrate/calibration.h"
#include "common/json_input.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ccsim::fuzz::check_contract([&] {
    const auto doc = ccsim::parse_user_json(ccsim::fuzz::input_text(data, size), "fuzz.json", /*allow_comments=*/false);
    ccsim::calibration_from_json(doc, "fuzz.json");
  });
}
