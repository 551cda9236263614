// `ccsim validate`: a measured nccl-tests log against ccsim's prediction of the same run. The log
// supplies everything it says (scenarios/validate_log.h); the topology supplies the hardware. Per
// size: measured, predicted, error and NCCL's assumed choice; a verdict for the latency side (below
// the knee S*) and the bandwidth side; likely causes where the error is large
// (scenarios/validate_causes.h). docs/validate.md.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/calibration.h"
#include "calibrate/nccl_tests_log.h"
#include "report/validation_report.h"
#include "scenarios/predict.h"
#include "scenarios/validate_log.h"

namespace ccsim {

// Default --tolerance: nccl-tests' own run-to-run spread on a healthy cluster is a few percent, and
// ccsim's engine agrees with NCCL's cost model and the reference logs within about 10% (docs/validate.md);
// 20% flags what a cluster acceptance check should look at.
constexpr double kDefaultValidateTolerancePct = 20.0;

struct ValidateOptions {
  double tolerance_pct = kDefaultValidateTolerancePct;
  PredictModel model = PredictModel::Engine;
  EngineOptions engine;
  LogOverrides overrides;         // --collective, --ranks
  // --algo / --proto (or NCCL_ALGO / NCCL_PROTO): the restriction the run had, when its source
  // states one (Google's TCPX configuration sets NCCL_ALGO=Ring NCCL_PROTO=Simple). Default: none.
  AlgoProtoFilter filter;
  // --nccl-version: whose tuner constants predict the log. Without it NCCL 2.30.7's, whatever the log
  // printed (the log's version is then named in its notes, with the flag that would use it).
  NcclVersion nccl_version = default_nccl_version();
  bool nccl_version_given = false;
  bool nodes_given = false;       // --nodes was given: the topology's node count wins over the log's hosts
  const Calibration* calibration = nullptr;
  StepTiming calibrated_timing;
};

// Validates run `run_index` of `file` on the hardware `spec` (a topology specification, --set applied;
// its node count is set from the log unless opts.nodes_given). InputError when the log and the
// hardware disagree (ranks per host against GPUs per node).
ValidatedRun validate_run(const NcclTestsRun& run, const std::string& file, int run_index, nlohmann::json spec,
                          const std::string& topology_source, const ValidateOptions& opts, const DebugFacts& debug);

// Every run of every log; report.pass when every size of every run is within the tolerance.
ValidationReport validate_logs(const std::vector<NcclTestsFile>& logs, const nlohmann::json& spec,
                               const std::string& topology_source, const ValidateOptions& opts, const DebugFacts& debug);

// The sides' verdict from their sizes (exposed for tests).
SideVerdict side_verdict(const std::string& side, const std::vector<const ValidatedSize*>& sizes, double tolerance);

}  // namespace ccsim
