// `ccsim predict` and the nccl-tests aliases (`ccsim all_reduce_perf ...`).
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/algo_options.h"
#include "cli/predict_options.h"
#include "cli/predict_trace.h"
#include "cli/topology_options.h"
#include "topologies/spec.h"
#include "common/error.h"
#include "common/text.h"
#include "common/output_file.h"
#include "common/units.h"
#include "algorithms/collectives.h"
#include "algorithms/nccl_types.h"
#include "report/render.h"
#include "scenarios/predict.h"
#include "scenarios/replay.h"

namespace ccsim {

namespace {

// Whether every schedule the engine may replay above kMaxWholeScheduleGpus stays small: alltoall
// generated as orbit representatives (sim/p2p_orbits.h), rings likewise (sim/ring_orbits.h; a tuned
// ring collective, or a calibration, which replays the ring), and Tree, NVLSTree and CollNet
// all_reduce, whose schedules grow linearly in the GPUs (2(n-1) records per family and chunk at
// most: 8.4 M at 4096 dgx-h100 GPUs); the symmetry on. An algorithm the filter allows but the engine
// does not replay there (NVLS or PAT across dgx-h100 nodes) falls back to Ring or to NCCL's cost
// model. The recipes refuse, in one line, what the fabric's rotations do not cover.
bool replays_scalable_schedules_only(const PredictRequest& req, const Topology& topo) {
  if (req.collective == "alltoall") return req.engine.exploit_symmetry;
  const CollectiveInfo* info = find_collective(req.collective);
  if (!info || info->shape != CollectiveShape::Tuned || !info->tuner_func || info->ring_step_multiple == 0 ||
      !req.engine.exploit_symmetry || req.custom_allreduce)
    return false;
  if (req.calibration) return true;
  ReplayContext ctx;
  ctx.topo = &topo;
  ctx.collective = req.collective;
  for (int a = 0; a < kNumAlgos; ++a) {
    const Algo algo = static_cast<Algo>(a);
    const bool linear = algo == Algo::Ring || algo == Algo::Tree || algo == Algo::NVLSTree ||
                        algo == Algo::CollNetDirect || algo == Algo::CollNetChain;
    for (int p = 0; p < kNumProtos; ++p)
      if (!linear && req.filter.allows(*info->tuner_func, algo, static_cast<Proto>(p)) && engine_replays(ctx, algo, nullptr))
        return false;
  }
  return true;
}

std::vector<OptionSpec> predict_specs() {
  std::vector<OptionSpec> specs = {
      // nccl-tests flags that change the prediction
      {"b", "minbytes", true, false},
      {"e", "maxbytes", true, false},
      {"f", "stepfactor", true, false},
      {"i", "stepbytes", true, false},
      {"d", "datatype", true, false},
      {"o", "op", true, false},
      {"r", "root", true, false},
      {"g", "ngpus", true, false},     // GPUs per thread: their launches serialise (scenarios/launch_mode.h)
      {"t", "nthreads", true, false},  // threads per process
      // nccl-tests' timing loop: the first iteration's launches, blocking, graphs (scenarios/launch_mode.h)
      {"n", "iters", true, false},
      {"m", "agg_iters", true, false},
      {"z", "blocking", true, false},
      {"G", "cudagraph", true, false},
      // nccl-tests flags accepted and ignored (they change how a real run checks or reports, not its time)
      {"w", "warmup_iters", true, false},
      {"c", "check", true, false},
      {"a", "average", true, false},
      {"p", "parallel_init", true, false},
      {"C", "report_cputime", true, false},
      {"T", "timeout", true, false},
      {"R", "local_register", true, false},
      // ccsim's own
      {"", "collective", true, false},
      {"", "algo", true, false},
      {"", "proto", true, false},
      {"", "nccl-version", true, false},
      {"", "format", true, false},
      {"", "output", true, false},
      {"", "model", true, false},
      {"", "calibration", true, false},
      {"", "channels", true, false},
      {"", "jobs", true, false},
      {"", "no-symmetry", false, false},
      {"", "no-merge", false, false},
      {"", "trace", true, false},
      {"h", "help", false, false},
  };
  for (auto& s : topology_option_specs()) specs.push_back(s);
  return specs;
}


}  // namespace

int run_predict(const std::vector<std::string>& argv, const std::string& collective_from_alias) {
  const ParsedArgs args = parse_args(argv, predict_specs());
  if (args.has("help")) {
    print_help();
    return 0;
  }
  if (!args.positional().empty())
    throw InputError("command line", "unexpected argument '" + args.positional().front() + "'");

  PredictRequest req;
  req.collective = args.get("collective", collective_from_alias.empty() ? "all_reduce" : collective_from_alias);
  if (!collective_from_alias.empty() && args.has("collective") && args.get("collective") != collective_from_alias)
    throw InputError("--collective", "conflicts with the command name (" + collective_from_alias + "_perf)");
  req.sweep.min_bytes = parse_size_arg(args, "minbytes", req.sweep.min_bytes);
  req.sweep.max_bytes = parse_size_arg(args, "maxbytes", req.sweep.max_bytes);
  req.sweep.step_bytes = parse_size_arg(args, "stepbytes", req.sweep.step_bytes);
  if (args.has("stepfactor")) {
    req.sweep.step_factor = parse_double_arg(args, "stepfactor", 1);
    if (!(req.sweep.step_factor >= 1))
      throw InputError(args.spelled("stepfactor"), "step factor must be >= 1, got '" + args.get("stepfactor") + "'");
  }
  // Refused above the limits before any work; a long sweep is said up front (docs/errors.md).
  if (const std::size_t n = sweep_sizes(req.sweep).size(); n > kWarnSweepSizes)
    std::cerr << "ccsim: warning: " << n << " sizes to predict (above " << kWarnSweepSizes << ")\n";
  req.datatype = args.get("datatype", "float");
  req.op = args.get("op", "sum");
  req.root = parse_int_arg(args, "root", 0, 0);
  req.channels = parse_int_arg(args, "channels", 0, 1);
  req.engine.parallel_jobs = parse_int_arg(args, "jobs", 2, 1);
  req.engine.exploit_symmetry = !args.has("no-symmetry");
  req.engine.merge_identical = !args.has("no-merge");
  if (args.has("algo") && lower(trim(args.get("algo"))) == "custom") {
    // ccsim's extension: vLLM's custom all-reduce; NCCL (default choice, NCCL_PROTO honoured) above its limit.
    req.custom_allreduce = true;
    req.filter = algo_filter_from_args(args.without("algo"));
  } else {
    req.filter = algo_filter_from_args(args);
  }
  req.nccl_version = nccl_version_from_args(args);
  req.model = model_from_args(args);
  const std::string format = args.get("format", "table");
  if (format != "table" && format != "json" && format != "csv")
    throw InputError("--format", "unknown format '" + format + "' (expected table, json or csv)");

  std::string source;
  std::vector<NcclEnvNote> env_notes;
  nlohmann::json spec = topology_spec_from_args(args, "dgx-h100", &source, &env_notes);
  const std::optional<CalibrationArg> calibration = calibration_from_args(args, spec);
  if (calibration) {
    req.calibration = ring_calibration(&calibration->calibration);
    req.calibrated_timing = calibration->timing;
  }
  req.model = model_with_calibration(args, calibration, req.model);
  const Topology topo = build_topology(spec, source);
  req.launch.gpus_per_thread = parse_int_arg(args, "ngpus", 1, 1);
  req.launch.threads = parse_int_arg(args, "nthreads", 1, 1);
  req.launch.iters = parse_int_arg(args, "iters", 20, 1);
  req.launch.agg_iters = parse_int_arg(args, "agg_iters", 1, 1);
  req.launch.graph_launches = parse_int_arg(args, "cudagraph", 0, 0);
  req.launch.blocking = parse_int_arg(args, "blocking", 0, 0) != 0;
  // One process's GPUs are on one node: nccl-tests' ranks are processes x threads x GPUs.
  if (const long long per_process = static_cast<long long>(req.launch.threads) * req.launch.gpus_per_thread;
      per_process > topo.gpus_per_node() || topo.gpus_per_node() % per_process != 0)
    throw InputError(args.has("ngpus") ? args.spelled("ngpus") : args.spelled("nthreads"),
                     std::to_string(req.launch.threads) + " thread(s) x " + std::to_string(req.launch.gpus_per_thread) +
                         " GPUs per process does not divide the node's " + std::to_string(topo.gpus_per_node()) +
                         " GPUs");
  // The engine's limits (cli/commands.h): refused up front rather than run for minutes and exhaust memory.
  const std::string where = args.has("nodes") ? "--nodes" : source;
  const std::string gpus = std::to_string(topo.num_gpus()) + " GPUs";
  if (req.model == PredictModel::Engine && topo.num_gpus() > kMaxEngineGpus)
    throw InputError(where, gpus + " is above the engine's limit of " + std::to_string(kMaxEngineGpus) +
                                " (its ring replays 2.1 M flows and takes about a minute at " +
                                std::to_string(kMaxEngineGpus) + "); use --model closed-form (docs/errors.md)");
  if (req.model == PredictModel::Engine && topo.num_gpus() > kMaxWholeScheduleGpus && !replays_scalable_schedules_only(req, topo))
    throw InputError(where, gpus + " is above the engine's limit of " + std::to_string(kMaxWholeScheduleGpus) +
                                " for schedules it holds whole (they grow as GPUs squared: ~6 GiB at " +
                                std::to_string(kMaxWholeScheduleGpus) + "); up to " + std::to_string(kMaxEngineGpus) +
                                " GPUs it replays ring all_reduce, all_gather and reduce_scatter and alltoall, generated"
                                " one orbit at a time, and Tree, NVLSTree and CollNet all_reduce (symmetry on); or use"
                                " --model closed-form (docs/errors.md)");
  if (args.has("trace") && topo.num_gpus() > kMaxWholeScheduleGpus)
    throw InputError(args.spelled("trace"), "a trace records every transfer of the whole schedule: at most " +
                                                std::to_string(kMaxWholeScheduleGpus) + " GPUs (got " + gpus + ")");
  // -d all / -o all: one sweep per datatype and op, in nccl-tests' order, under one table.
  const std::vector<ReduceOperand> operands =
      nccl_tests_operands(req.datatype, req.op, collective_info(req.collective).reduces);
  Prediction p = predict_operands(topo, req, operands);
  if (args.has("trace")) {  // the first sweep's transfers
    PredictRequest traced = req;
    traced.datatype = operands.front().datatype;
    traced.op = operands.front().op;
    write_predict_trace(args.get("trace"), topo, traced, p.sim.empty() ? 0 : p.sim.front().transfers);
  }
  PredictionReport& report = p.report;
  NcclTestsHeader& h = report.facts.table_header;
  h.min_bytes = req.sweep.min_bytes;
  h.max_bytes = req.sweep.max_bytes;
  h.step = req.sweep.step_factor > 1 ? strprintf("%g(factor)", req.sweep.step_factor)
                                     : std::to_string(req.sweep.step_bytes) + "(bytes)";
  h.warmup_iters = parse_int_arg(args, "warmup_iters", 5, 0);
  for (const auto& n : env_notes) report.facts.nccl_env.push_back(n.text());
  if (calibration) {
    report.facts.calibration_file = calibration->file;
    report.facts.calibration_overrides = calibration->overrides;
    report.facts.calibration_notes.insert(report.facts.calibration_notes.begin(), calibration->notes.begin(),
                                          calibration->notes.end());
  }

  const std::string text = format == "table" ? render_prediction_table(report)
                           : format == "json" ? render_prediction_json(report)
                                              : render_prediction_csv(report);
  write_output(args.get("output", ""), text);
  return 0;
}

}  // namespace ccsim
