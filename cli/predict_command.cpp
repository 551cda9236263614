// `ccsim predict` and the nccl-tests aliases (`ccsim all_reduce_perf ...`).
#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/algo_options.h"
#include "cli/predict_trace.h"
#include "cli/topology_options.h"
#include "topologies/spec.h"
#include "common/error.h"
#include "common/text.h"
#include "common/output_file.h"
#include "common/units.h"
#include "scenarios/collective_schedule.h"
#include "scenarios/nccl_tests_table.h"
#include "scenarios/predict.h"
#include "scenarios/report_formats.h"
#include "algorithms/step_timing.h"

namespace ccsim {

namespace {

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
      // nccl-tests flags accepted and ignored (they change how a real run measures, not what it costs)
      {"n", "iters", true, false},
      {"w", "warmup_iters", true, false},
      {"g", "ngpus", true, false},
      {"c", "check", true, false},
      {"t", "nthreads", true, false},
      {"m", "agg_iters", true, false},
      {"a", "average", true, false},
      {"p", "parallel_init", true, false},
      {"z", "blocking", true, false},
      {"G", "cudagraph", true, false},
      {"C", "report_cputime", true, false},
      {"T", "timeout", true, false},
      {"R", "local_register", true, false},
      // ccsim's own
      {"", "collective", true, false},
      {"", "algo", true, false},
      {"", "proto", true, false},
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
  const std::string model = args.get("model", "engine");
  if (model == "engine")
    req.model = PredictModel::Engine;
  else if (model == "closed-form")
    req.model = PredictModel::ClosedForm;
  else
    throw InputError("--model", "unknown model '" + model + "' (expected engine or closed-form)");
  const std::string format = args.get("format", "table");
  if (format != "table" && format != "json" && format != "csv")
    throw InputError("--format", "unknown format '" + format + "' (expected table, json or csv)");

  std::string source;
  nlohmann::json spec = topology_spec_from_args(args, "dgx-h100", &source);
  Calibration calibration;
  std::vector<std::string> calibration_notes;
  if (args.has("calibration")) {
    calibration = load_calibration(args.get("calibration"));
    const CalibrationEffect effect = calibration_effect(calibration, spec, StepTiming{});
    for (const auto& o : effect.spec_overrides) apply_override(spec, o, args.get("calibration"));
    req.calibration = &calibration;
    req.calibrated_timing = effect.timing;
    calibration_notes = effect.notes;
  }
  const Topology topo = build_topology(spec, source);
  const Prediction p = predict(topo, req);
  if (args.has("trace")) write_predict_trace(args.get("trace"), topo, req);

  std::string text;
  if (format == "table") {
    NcclTestsHeader h;
    h.ngpus = parse_int_arg(args, "ngpus", 1, 1);
    h.min_bytes = req.sweep.min_bytes;
    h.max_bytes = req.sweep.max_bytes;
    h.step = req.sweep.step_factor > 1 ? strprintf("%g(factor)", req.sweep.step_factor)
                                       : std::to_string(req.sweep.step_bytes) + "(bytes)";
    h.warmup_iters = parse_int_arg(args, "warmup_iters", 5, 0);
    h.iters = parse_int_arg(args, "iters", 20, 1);
    const auto& ab = p.alpha_beta;
    std::vector<std::string> pre = {
        "# ccsim " + std::string(CCSIM_VERSION) + " prediction, not a measurement: " + req.collective + " on " + topo.name +
            ", " + std::to_string(topo.num_nodes()) + " node(s) x " + std::to_string(topo.gpus_per_node()) +
            " GPUs = " + std::to_string(topo.num_gpus()) + " ranks",
        "# model: " + p.metadata["prediction"].get<std::string>(),
        (is_p2p_collective(req.collective) ? std::string("# NCCL (") + kNcclModelVersion + ", P2P: no tuner) picks: "
                                              : "# NCCL tuner (" + std::string(kNcclModelVersion) + ") picks: ") + p.metadata["nccl_choice"].get<std::string>(),
        "# predicted as: " + p.metadata["predicted_as"].get<std::string>(),
    };
    if (is_p2p_collective(req.collective)) {
      // The ring's alpha-beta says nothing about grouped send/recv.
      pre.push_back("# P2P: NCCL's channels, LL/Simple rule and chunks per message, PXN across nodes, CPU proxy "
                    "cost per network message (docs/collectives.md)");
    } else {
      pre.push_back("# ring alpha-beta (" + std::string(to_string(p.choices.back().ring_proto)) + "): launch " +
                    strprintf("%.2f", ab.launch_s * 1e6) + " us, alpha " + strprintf("%.2f", ab.alpha_s * 1e6) +
                    " us/step, beta " + strprintf("%.2f", ab.beta_Bps / 1e9) +
                    " GB/s per step, knee S* = n*alpha*beta = " + format_bytes(p.knee_bytes));
      pre.push_back("# ring bottleneck (closed form): " + ab.bottleneck);
    }
    if (req.calibration) {
      pre.push_back("# calibration: " + args.get("calibration") + " (class " +
                    p.metadata["calibration_class"].get<std::string>() + ")");
      for (const auto& note : calibration_notes) pre.push_back("# calibration note: " + note);
    }
    if (p.metadata.contains("busiest_links_at_largest_size") && !p.metadata["busiest_links_at_largest_size"].empty()) {
      const auto& l = p.metadata["busiest_links_at_largest_size"][0];
      pre.push_back("# busiest link at " + format_bytes(static_cast<double>(p.rows.back().size_bytes)) + " (engine): " +
                    l["from"].get<std::string>() + " -> " + l["to"].get<std::string>() + " (" +
                    l["link"].get<std::string>() + "), " + strprintf("%.0f", 100 * l["utilization"].get<double>()) +
                    "% of its bandwidth over the operation");
    }
    h.program_name = req.collective + "_perf";
    text = format_nccl_tests_output(h, pre, p.rows);
  } else if (format == "json") {
    text = format_rows_json(p.metadata, p.rows);
  } else {
    text = format_rows_csv(p.metadata, p.rows);
  }
  if (args.has("output"))
    write_file_atomically(args.get("output"), text);
  else
    std::cout << text << std::flush;
  return 0;
}

}  // namespace ccsim
