#include "cli/predict_trace.h"

#include "common/error.h"
#include "common/output_file.h"
#include "common/units.h"
#include "report/chrome_trace.h"
#include "scenarios/chosen_schedule.h"

namespace ccsim {

void write_predict_trace(const std::string& path, const Topology& topo, const PredictRequest& req,
                         std::size_t transfers) {
  const std::vector<std::uint64_t> sizes = sweep_sizes(req.sweep);
  if (sizes.size() != 1) throw InputError("--trace", "needs one size (-b equal to -e), got " + std::to_string(sizes.size()));
  if (req.model != PredictModel::Engine) throw InputError("--trace", "needs the engine (not --model closed-form)");
  if (req.calibration || req.custom_allreduce)
    throw InputError("--trace", "replays NCCL's choice; not with --calibration or --algo custom");
  if (transfers > kMaxTraceTransfers)
    throw InputError("--trace", "the schedule has " + std::to_string(transfers) + " transfers, above the " +
                                    std::to_string(kMaxTraceTransfers) +
                                    " a trace holds (each with its times and an event per link it crosses: ~0.9 GB of"
                                    " JSON at the limit; docs/errors.md); use fewer nodes or a smaller size");
  const double size = static_cast<double>(sizes.front());
  const ChosenSchedule cs = chosen_schedule(topo, req.collective, size, req.filter, req.root, "--trace", req.nccl_version);
  EngineOptions options = req.engine;
  options.pipeline_depth = cs.pipeline_depth;
  options.record_transfers = true;
  const SimResult r = simulate_one(topo, cs.schedule, options);
  write_file_atomically(path, chrome_trace_json(topo, cs.schedule, r,
                                                req.collective + " " + format_bytes(size) + " on " + topo.name + ", " +
                                                    std::to_string(topo.num_gpus()) + " ranks: " + cs.label));
}

}  // namespace ccsim
