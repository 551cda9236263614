// `ccsim validate LOG... [--topology P|FILE] [--nodes N] [--set K=V]... [--env NCCL_X=V]... [--calibration F]
//  [--nccl-debug DEBUGLOG] [--tolerance PCT] [-o report.html] [--format table|json|csv]`:
// a measured nccl-tests log against ccsim's prediction. Exit 0: every size within the tolerance;
// 1: some size outside it; 2: bad input (docs/validate.md).

#include "cli/algo_options.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/predict_options.h"
#include "cli/topology_options.h"
#include "common/error.h"
#include "common/output_file.h"
#include "common/text.h"
#include "report/html.h"
#include "report/render.h"
#include "scenarios/log_gpu_preset.h"
#include "scenarios/log_net_platform.h"
#include "scenarios/validate.h"
#include "scenarios/validate_debug.h"
#include "topologies/spec.h"

namespace ccsim {

namespace {

std::vector<OptionSpec> validate_specs() {
  std::vector<OptionSpec> specs = {
      {"", "calibration", true, false}, {"", "nccl-debug", true, false}, {"", "tolerance", true, false},
      {"o", "output", true, false},     {"", "format", true, false},     {"", "collective", true, false},
      {"", "ranks", true, false},       {"", "model", true, false},      {"", "jobs", true, false},
      {"", "algo", true, false},        {"", "proto", true, false},      {"", "nccl-version", true, false},
      {"h", "help", false, false},
  };
  for (auto& s : topology_option_specs()) specs.push_back(s);
  return specs;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "--topology dgx-h100 --nodes 2 --set k=v", as given, for the report.
std::string hardware_text(const ParsedArgs& args, const std::string& source) {
  std::string s = "--topology " + source;
  if (args.has("nodes")) s += " --nodes " + args.get("nodes");
  for (const auto& a : args.all("set")) s += " --set " + a;
  for (const auto& a : args.all("env")) s += " --env " + a;
  if (args.has("calibration")) s += " --calibration " + args.get("calibration");
  if (args.has("algo")) s += " --algo " + args.get("algo");
  if (args.has("proto")) s += " --proto " + args.get("proto");
  if (args.has("nccl-version")) s += " --nccl-version " + args.get("nccl-version");
  return s;
}

}  // namespace

int run_validate(const std::vector<std::string>& argv) {
  const ParsedArgs args = parse_args(argv, validate_specs());
  if (args.has("help")) {
    print_help();
    return 0;
  }
  if (args.positional().empty()) throw InputError("command line", "validate needs at least one nccl-tests log file");

  ValidateOptions opts;
  if (args.has("tolerance")) {
    opts.tolerance_pct = parse_double_arg(args, "tolerance", kDefaultValidateTolerancePct);
    if (!(opts.tolerance_pct > 0))
      throw InputError("--tolerance", "must be a percentage above 0, got '" + args.get("tolerance") + "'");
  }
  opts.model = model_from_args(args);
  opts.engine.parallel_jobs = parse_int_arg(args, "jobs", 2, 1);
  opts.overrides.collective = args.get("collective", "");
  opts.overrides.ranks = args.has("ranks") ? parse_int_arg(args, "ranks", 0, 1) : 0;
  opts.nodes_given = args.has("nodes");
  // What the run restricted NCCL to, when its source says so: flags or --env. Not the shell: the
  // environment validate runs in is not the run's (a NCCL_ALGO left in the shell must not change the verdict).
  opts.filter = algo_filter_from_args(args, /*shell_environment=*/false);
  opts.nccl_version = nccl_version_from_args(args);
  opts.nccl_version_given = args.has("nccl-version");
  const std::string output = args.get("output", "");
  const bool html = ends_with(lower(output), ".html") || ends_with(lower(output), ".htm");
  const std::string format = args.get("format", html ? "html" : "table");
  if (format != "table" && format != "json" && format != "csv" && format != "html")
    throw InputError("--format", "unknown format '" + format + "' (expected table, json, csv or html)");

  // The hardware: everything a log cannot say.
  std::string source;
  std::vector<NcclEnvNote> env_notes;
  // Without --topology: the preset the logs' device lists name (8 x Tesla V100-SXM2 -> dgx1-v100),
  // fitted to the run's GPUs before the user's --set; else dgx-h100.
  const std::vector<NcclTestsFile> logs = parse_nccl_tests_files(args.positional());
  DebugFacts debug;
  if (args.has("nccl-debug")) {
    debug = read_debug_facts(args.get("nccl-debug"));
  } else if (args.positional().size() == 1) {
    // A run with NCCL_DEBUG=INFO carries NCCL's own account of what it did in the log itself.
    if (auto own = debug_facts_in_log(args.positional().front())) debug = *own;
  }
  const LogHardware guessed = args.has("topology") ? LogHardware{} : hardware_from_logs(logs);
  // ... and, for one log of several hosts, the NICs NCCL listed (their count and link layer) and the
  // network a plugin or NCCL named (aws-ofi-nccl's instance: p5 is the aws-p5 preset; Google's TCPXO).
  LogHardware nics, network;
  if (!args.has("topology") && logs.size() == 1 && !logs.front().runs.empty()) {
    int hosts = 0;
    const int per_host = log_gpus_per_host(logs.front().runs.front(), &hosts);
    if (hosts > 1) {
      nics = nics_from_debug(debug, per_host);
      network = network_from_plugin(debug, per_host);
    }
  }
  const std::string& preset = network.preset.empty() ? guessed.preset : network.preset;
  source = args.get("topology", preset.empty() ? std::string("dgx-h100") : preset);
  nlohmann::json spec = load_topology_spec(source);
  for (const std::string& s : guessed.sets) apply_override(spec, s, "the log's devices (" + s + ")");
  for (const std::string& s : nics.sets) apply_override(spec, s, "the log's NCCL lines (" + s + ")");
  for (const std::string& s : network.sets) apply_override(spec, s, "the log's network plugin (" + s + ")");
  env_notes = apply_topology_args(args, spec, source);
  const std::optional<CalibrationArg> calibration = calibration_from_args(args, spec);
  if (calibration) {
    opts.calibration = ring_calibration(&calibration->calibration);
    opts.calibrated_timing = calibration->timing;
  }
  opts.model = model_with_calibration(args, calibration, opts.model);

  ValidationReport report = validate_logs(logs, spec, source, opts, debug);
  for (const auto& n : env_notes) report.nccl_env.push_back(n.text());
  std::string hardware = hardware_text(args, source);
  // The sets the logs gave, after the preset's name; and why, with what a user should pass instead.
  std::string fitted;
  std::vector<std::string> why;
  if (!args.has("topology") && preset.empty()) why.push_back("default");
  for (const LogHardware* h : std::initializer_list<const LogHardware*>{&guessed, &nics, &network}) {
    for (const std::string& s : h->sets) fitted += " --set " + s;
    if (!h->why.empty()) why.push_back(h->why);
  }
  hardware.insert(std::string("--topology ").size() + source.size(), fitted);
  if (!args.has("topology")) {
    why.push_back("pass --topology for the run's hardware");
    hardware += " (" + join(why, "; ") + ")";
  }
  report.hardware = hardware;

  const std::string text = format == "json"   ? render_validation_json(report)
                           : format == "csv"  ? render_validation_csv(report)
                           : format == "html" ? render_validation_html(report)
                                              : render_validation_text(report);
  write_output(output, text);
  return report.pass ? 0 : 1;
}

}  // namespace ccsim
