// `ccsim predict`: the nccl-tests size sweep of one collective on one topology, predicted by the
// engine (default) or by the closed-form model, as nccl-tests rows.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/closed_form.h"
#include "algorithms/step_timing.h"
#include "calibrate/nccl_tests_log.h"
#include "sim/engine.h"
#include "topologies/topology.h"

namespace ccsim {

enum class PredictModel { Engine, ClosedForm };

struct SizeSweep {
  std::uint64_t min_bytes = 32ull << 20;  // nccl-tests defaults: -b 32M -e 32M -i 1M -f 1
  std::uint64_t max_bytes = 32ull << 20;
  double step_factor = 1;                 // > 1: multiply; otherwise add step_bytes
  std::uint64_t step_bytes = 1ull << 20;
};

// The sizes nccl-tests visits: min, then *factor (or +step) while <= max.
std::vector<std::uint64_t> sweep_sizes(const SizeSweep& sweep);

struct PredictRequest {
  std::string collective = "all_reduce";
  SizeSweep sweep;
  std::string datatype = "float";
  std::string op = "sum";
  int root = 0;
  PredictModel model = PredictModel::Engine;
  int channels = 0;  // 0: two per NIC rail (multi-node) / two (single node)
  StepTiming timing;
  EngineOptions engine;
};

struct Prediction {
  std::vector<NcclTestsRow> rows;
  AlphaBeta alpha_beta;   // of the ring plan, for the report
  double knee_bytes = 0;  // S* = n alpha beta
  std::vector<SimResult> sim;  // engine results per row (empty for the closed form)
  nlohmann::json metadata;     // topology, parameters, ccsim version: recorded in JSON/CSV outputs
};

// The nccl-tests size column and element count for a requested size: nccl-tests rounds the count
// down to whole elements (per rank for all_gather / reduce_scatter).
void nccl_tests_size_and_count(const std::string& collective, std::uint64_t requested, int type_size, int nranks,
                               std::uint64_t* size_bytes, std::uint64_t* count);

Prediction predict(const Topology& topo, const PredictRequest& request);

}  // namespace ccsim
