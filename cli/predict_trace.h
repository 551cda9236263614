// `ccsim predict --trace FILE`: replays the size's chosen schedule once more with per-transfer
// times and writes it as a Chrome / Perfetto trace (report/chrome_trace.h).
#pragma once
#include <string>

#include "scenarios/predict.h"

namespace ccsim {

// InputError("--trace", ...) unless the request is one size, predicted by the engine from NCCL's
// choice (no --calibration, no --algo custom).
void write_predict_trace(const std::string& path, const Topology& topo, const PredictRequest& req);

}  // namespace ccsim
