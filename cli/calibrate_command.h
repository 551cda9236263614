// `ccsim calibrate FILES... -o calib.json [--ranks N] [--nodes N] [--class nvlink|pcie|net]
// [--collective NAME]`: fits a calibration (docs/calibration.md) from nccl-tests and perftest logs,
// writes it atomically and prints a report.
#pragma once
#include <string>
#include <vector>

namespace ccsim {

int run_calibrate(const std::vector<std::string>& args);

}  // namespace ccsim
