// `ccsim predict --trace FILE`: replays the size's chosen schedule once more with per-transfer
// times and writes it as a Chrome / Perfetto trace (report/chrome_trace.h).
#pragma once
#include <cstddef>
#include <string>

#include "scenarios/predict.h"

namespace ccsim {

// A trace holds every transfer of the whole schedule with its times, and writes one event per
// transfer and per link direction it crosses (~220 bytes of JSON each, ~4 per ring transfer): beyond
// this many transfers (~0.9 GB of JSON, ~1.3 GiB peak: docs/errors.md) it is refused before its
// schedule is built. A 2048-GPU ring (67 M transfers) ended in std::bad_alloc.
constexpr std::size_t kMaxTraceTransfers = std::size_t{1} << 20;

// InputError("--trace", ...) unless the request is one size, predicted by the engine from NCCL's
// choice (no --calibration, no --algo custom), whose schedule (`transfers` records, as the
// prediction counted them; 0 when unknown) is at most kMaxTraceTransfers.
void write_predict_trace(const std::string& path, const Topology& topo, const PredictRequest& req,
                         std::size_t transfers);

}  // namespace ccsim
