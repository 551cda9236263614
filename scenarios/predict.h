// `ccsim predict`: the nccl-tests size sweep of one collective on one topology. For every size
// NCCL's tuner (algorithms/tuner.h, NCCL 2.30.7's cost model) picks an algorithm and protocol,
// honouring --algo/--proto and NCCL_ALGO/NCCL_PROTO. The closed-form model reports the tuner's
// time; the engine replays the tuner's choice (scenarios/replay.h), or, where it cannot replay that
// algorithm on this topology, the row is NCCL's cost model of the choice, and the report says so.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/closed_form.h"
#include "algorithms/step_timing.h"
#include "algorithms/tuner.h"
#include "calibrate/calibration.h"
#include "calibrate/nccl_tests_log.h"
#include "scenarios/launch_mode.h"
#include "report/prediction_report.h"
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

// Limits of a sweep (docs/errors.md): above 100,000 sizes even the closed-form model prints a
// table nobody reads; sizes above 1 PiB are beyond any GPU's memory.
inline constexpr std::uint64_t kMaxSweepSizes = 100000;
inline constexpr std::uint64_t kMaxSweepBytes = 1ull << 50;
// Above this many sizes, the commands warn on stderr that the engine will take a while.
inline constexpr std::uint64_t kWarnSweepSizes = 1000;

// The sizes nccl-tests visits: min, then *factor (or +step) while <= max. InputError for sweeps
// above the limits and factors that do not grow -b.
std::vector<std::uint64_t> sweep_sizes(const SizeSweep& sweep);

struct PredictRequest {
  std::string collective = "all_reduce";
  SizeSweep sweep;
  std::vector<std::uint64_t> sizes;  // explicit sizes instead of the sweep (validate: a log's size column)
  std::string datatype = "float";
  std::string op = "sum";
  int root = 0;
  PredictModel model = PredictModel::Engine;
  AlgoProtoFilter filter;  // --algo / --proto / NCCL_ALGO / NCCL_PROTO
  NcclVersion nccl_version = default_nccl_version();  // --nccl-version: whose tuner constants pick and cost
  // --algo custom: vLLM's custom all-reduce (algorithms/custom_allreduce.h) for the sizes below its
  // limit, NCCL's choice (within `filter`) above, as vLLM falls back to NCCL.
  bool custom_allreduce = false;
  int channels = 0;        // engine ring channels; 0: two per NIC rail (multi-node) / two (single node)
  EngineOptions engine;
  // With a calibration (ccsim calibrate), the ring is replayed with the calibrated step timing, the
  // fitted bandwidths already applied to the topology (calibration_effect), and the fitted efficiency
  // of the bandwidth term at each size; the tuner's protocol choice is not used, since the measured
  // curve already contains whatever NCCL chose on that machine. A calibration without a ring class
  // (NIC or SHM figures only) is not set here: its overrides are the topology (ring_calibration).
  const Calibration* calibration = nullptr;
  StepTiming calibrated_timing;
  // nccl-tests -t / -g: with several GPUs per thread every size costs at least their serial host
  // launches (scenarios/launch_mode.h, node.cpu.launch_us).
  LaunchMode launch;
};

// The calibration class that describes a topology's ring: net across nodes, else nvlink or pcie.
std::string calibration_class_for(const Topology& topo);

// What was predicted for one size.
struct SizeChoice {
  Algo nccl_algo = Algo::Ring;     // NCCL's pick (within the filter)
  Proto nccl_proto = Proto::Simple;
  double nccl_time_us = 0;         // NCCL's cost model for its pick
  double nccl_latency_us = -1;     // its latency term (latency x latCount); -1 where NCCL has no model
  Proto ring_proto = Proto::Simple; // Ring's best protocol at this size (the ring alpha-beta report)
  Algo sim_algo = Algo::Ring;       // what was predicted: replayed by the engine, or the closed form's
  Proto sim_proto = Proto::Simple;
  bool custom = false;              // vLLM's custom all-reduce (sim_algo/sim_proto unused)
  bool p2p = false;                 // NCCL's P2P path (sendrecv, alltoall): no algorithm and no tuner;
                                    // sim_proto/nccl_proto are the messages' protocol, the algos unused
  bool by_engine = true;            // false: NCCL's cost model of its choice (the engine cannot replay it here)
  std::string simulated;            // "Tree/LL", "CollNetDirect/Simple (NCCL cost model: ...)", "Ring (calibrated)"
};

struct Prediction {
  std::vector<NcclTestsRow> rows;
  std::vector<SizeChoice> choices;
  AlphaBeta alpha_beta;   // of the ring plan with the largest size's protocol, for the report
  double knee_bytes = 0;  // S* = n alpha beta
  std::vector<SimResult> sim;  // engine results per row (empty for the closed form)
  // The typed report every output renders (report/prediction_report.h). predict() fills all but the
  // caller's parts: facts.table_header (nccl-tests flags) and the calibration's file name and notes.
  PredictionReport report;
};

Prediction predict(const Topology& topo, const PredictRequest& request);

// nccl-tests' -d all / -o all: one sweep per operand (nccl_tests_operands of the request's datatype
// and op), their report rows in that order under one report whose facts are the first sweep's, with
// the request's datatype and op ("all"). Operands of one element size that NVLink SHARP reduces alike
// predict alike (NCCL's choice and kernels do not otherwise depend on the op or the type), so each
// such group is predicted once and its rows relabelled. `rows`, `choices` and `sim` are the first
// sweep's.
Prediction predict_operands(const Topology& topo, const PredictRequest& request, const std::vector<ReduceOperand>& operands);

// "Ring/LL 8 B..64 KiB; NVLS/Simple 128 KiB..8 GiB": runs of equal labels over the sizes.
std::string summarize_ranges(const std::vector<std::uint64_t>& sizes, const std::vector<std::string>& labels);

}  // namespace ccsim
