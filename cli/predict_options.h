// Options `predict` and `validate` share: --model and --calibration.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/step_timing.h"
#include "calibrate/calibration.h"
#include "cli/args.h"
#include "scenarios/predict.h"

namespace ccsim {

// --model engine|closed-form (default engine); InputError for another value.
PredictModel model_from_args(const ParsedArgs& args);

// A loaded --calibration: the fitted step timing, and what applying it changed.
struct CalibrationArg {
  std::string file;
  Calibration calibration;
  StepTiming timing;
  std::vector<std::string> overrides;  // --set style, applied to the topology
  std::vector<std::string> notes;
};

// --calibration FILE: loads it and applies its fitted bandwidths to `spec`; nullopt without the flag.
std::optional<CalibrationArg> calibration_from_args(const ParsedArgs& args, nlohmann::json& spec);

// The model of a prediction: --model when given; else, with a calibration that has a ring class, the
// calibrated ring's closed form (launch + steps x alpha + bytes / (beta x efficiency), the model the
// fit was made with: the engine's pipelined steps hide part of the fitted latency, 48% of it at the
// knee of a 10-node H100 reduce_scatter); else `model`.
PredictModel model_with_calibration(const ParsedArgs& args, const std::optional<CalibrationArg>& calibration,
                                    PredictModel model);

}  // namespace ccsim
