#include "cli/predict_options.h"

#include <utility>

#include "common/error.h"
#include "topologies/spec.h"

namespace ccsim {

PredictModel model_from_args(const ParsedArgs& args) {
  const std::string model = args.get("model", "engine");
  if (model == "engine") return PredictModel::Engine;
  if (model == "closed-form") return PredictModel::ClosedForm;
  throw InputError("--model", "unknown model '" + model + "' (expected engine or closed-form)");
}

std::optional<CalibrationArg> calibration_from_args(const ParsedArgs& args, nlohmann::json& spec) {
  if (!args.has("calibration")) return std::nullopt;
  CalibrationArg c;
  c.file = args.get("calibration");
  c.calibration = load_calibration(c.file);
  const CalibrationEffect effect = calibration_effect(c.calibration, spec, StepTiming{});
  c.calibration = scale_ring_efficiency(std::move(c.calibration), effect);
  for (const auto& o : effect.spec_overrides) apply_override(spec, o, c.file);
  c.timing = effect.timing;
  c.overrides = effect.spec_overrides;
  c.notes = effect.notes;
  if (!args.has("model") && ring_calibration(&c.calibration))
    c.notes.push_back("predicted with the calibrated ring's closed form, the model the fit was made with "
                      "(--model engine replays it; its pipelined steps hide part of the fitted latency)");
  return c;
}

PredictModel model_with_calibration(const ParsedArgs& args, const std::optional<CalibrationArg>& calibration,
                                    PredictModel model) {
  if (args.has("model") || !calibration || !ring_calibration(&calibration->calibration)) return model;
  return PredictModel::ClosedForm;
}

}  // namespace ccsim
