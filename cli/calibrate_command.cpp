#include "cli/calibrate_command.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "algorithms/ring.h"
#include "calibrate/calibration.h"
#include "calibrate/probe_import.h"
#include "cli/algo_options.h"
#include "cli/args.h"
#include "cli/topology_options.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/text.h"
#include "common/output_file.h"
#include "scenarios/model_fit.h"

namespace ccsim {
namespace {


std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) { b /= 1024; ++u; }
  return strprintf(b >= 100 || u == 0 ? "%.0f" : "%.3g", b) + " " + units[u];
}

enum class FileKind { NcclTests, Perftest, Probe };

FileKind sniff(const std::string& path, const std::string& text) {
  // A probe document is JSON (a pipe has no .json name): an object at its first character. So is
  // nccl-tests' own result file (-J), whose sizes are under "results" where a probe has "probe" and
  // "samples" (calibrate/nccl_tests_json.h).
  const auto first = text.find_first_not_of(" \t\r\n");
  if ((path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0) || (first != std::string::npos && text[first] == '{'))
    return text.find("\"results\"") != std::string::npos && text.find("\"probe\"") == std::string::npos ? FileKind::NcclTests
                                                                                                       : FileKind::Probe;
  std::istringstream f(text);
  std::string line;
  bool perftest = false;
  while (std::getline(f, line)) {
    if (line.find("(elements)") != std::string::npos || line.find("nThread") != std::string::npos) return FileKind::NcclTests;
    if (line.find("#bytes") != std::string::npos) perftest = true;
  }
  return perftest ? FileKind::Perftest : FileKind::NcclTests;
}

void print_report(const Calibration& cal, const std::string& output) {
  std::ostringstream o;
  o << "# ccsim calibrate -> " << output << "\n";
  for (const std::string& cls : calibration_classes()) {
    auto it = cal.classes.find(cls);
    if (it == cal.classes.end()) continue;
    const ClassCalibration& c = it->second;
    o << cls << ": alpha " << strprintf("%.3f", c.alpha_s * 1e6) << " us/step, beta " << strprintf("%.2f", c.beta_Bps / 1e9)
      << " GB/s, launch " << strprintf("%.2f", c.launch_s * 1e6) << " us (" << c.launch_source << ")\n";
    o << "  fit: " << c.collective << " on " << c.ranks << " ranks, " << c.nodes << " node(s); R^2 "
      << strprintf("%.4f", c.fit.r2) << ", largest residual " << strprintf("%.1f", c.fit.max_rel_residual * 100) << "% (lines), "
      << strprintf("%.1f", c.fit.max_rel_residual_final * 100) << "% (with efficiency), " << c.fit.outliers.size()
      << " outlier(s) of " << c.fit.points << " points\n";
    o << "  knee S* = n*alpha*beta = " << human_bytes(c.knee_bytes) << "\n";
    if (c.fit.segments.size() > 1) {
      o << "  protocol switch detected at " << human_bytes(c.fit.switch_x * c.ranks / ring_steps(c.collective, c.ranks))
        << ":\n";
      for (const auto& s : c.fit.segments)
        o << "    segment: intercept " << strprintf("%.2f", s.latency_s * 1e6) << " us, beta "
          << strprintf("%.2f", s.beta_Bps / 1e9) << " GB/s, R^2 " << strprintf("%.4f", s.r2) << ", largest residual "
          << strprintf("%.1f", s.max_rel_residual * 100) << "%, " << s.points << " points\n";
    }
    if (c.efficiency.empty()) {
      o << "  efficiency: 1 (the alpha-beta line fits)\n";
    } else {
      o << "  efficiency knots (size: measured/model bandwidth):";
      for (const auto& [s, e] : c.efficiency) o << " " << human_bytes(s) << ":" << strprintf("%.3f", e);
      o << "\n";
    }
    for (const auto& n : c.notes) o << "  note: " << n << "\n";
    for (const auto& s : c.sources)
      o << "  source: " << s.file << " (run " << s.run << ", " << s.collective << ", " << s.ranks << " ranks, " << s.nodes
        << " node(s)): intercept " << strprintf("%.2f", s.intercept_s * 1e6) << " us, beta " << strprintf("%.2f", s.beta_Bps / 1e9)
        << " GB/s\n";
  }
  if (cal.nic) {
    o << "nic: latency "
      << (cal.nic->latency_s > 0 ? strprintf("%.2f", cal.nic->latency_s * 1e6) + " us" : std::string("not measured (the topology's)"))
      << ", bandwidth "
      << (cal.nic->beta_Bps > 0 ? strprintf("%.2f", cal.nic->beta_Bps * 8 / 1e9) + " Gb/s" : std::string("not measured (the topology's)"))
      << "\n";
    for (const auto& s : cal.nic->sources) {
      o << "  source: " << s.file << " (" << s.kind << ", table " << s.run << "): ";
      if (s.method.rfind("fit", 0) == 0 || s.method.empty())
        o << "intercept " << strprintf("%.2f", s.intercept_s * 1e6) << " us, bandwidth " << strprintf("%.2f", s.beta_Bps * 8 / 1e9)
          << " Gb/s, R^2 " << strprintf("%.4f", s.r2) << "\n";
      else if (s.beta_Bps > 0)
        o << s.method << ": " << strprintf("%.2f", s.beta_Bps * 8 / 1e9) << " Gb/s (no fit)\n";
      else
        o << s.method << ": " << strprintf("%.2f", s.intercept_s * 1e6) << " us (no fit)\n";
    }
    for (const auto& n : cal.nic->notes) o << "  note: " << n << "\n";
  }
  if (cal.fitted) {
    o << "fitted through the model:";
    for (const auto& [key, value] : cal.fitted->settings) o << " " << key << "=" << strprintf("%.4g", value);
    o << "\n";
    for (const auto& s : cal.fitted->sources)
      o << "  source: " << s.file << " (run " << s.run << ", " << s.collective << ", " << s.ranks << " ranks, " << s.nodes
        << " node(s)): " << s.method << "\n";
    for (const auto& n : cal.fitted->notes) o << "  note: " << n << "\n";
  }
  if (cal.shm) {
    o << "shm: " << strprintf("%.3f", cal.shm->channel_Bps / 1e9) << " GB/s per channel (node.pcie.shm_channel_GBps)";
    if (cal.shm->step_s > 0) o << strprintf(", %.3f us per step (node.pcie.shm_step_us)", cal.shm->step_s * 1e6);
    o << "\n";
    for (const auto& s : cal.shm->sources) o << "  source: " << s.file << " (" << s.kind << "): " << s.method << "\n";
    for (const auto& n : cal.shm->notes) o << "  note: " << n << "\n";
  }
  std::cout << o.str() << std::flush;
}

}  // namespace

int run_calibrate(const std::vector<std::string>& argv) {
  std::vector<OptionSpec> specs = {
      {"o", "output", true, false}, {"", "ranks", true, false},      {"", "class", true, false},
      {"", "collective", true, false}, {"", "nccl-version", true, false}, {"", "link", true, false},
      {"", "algo", true, false},       {"", "proto", true, false},
      {"h", "help", false, false},
  };
  for (const auto& s : topology_option_specs()) specs.push_back(s);  // --topology, --nodes, --set, --env
  const ParsedArgs args = parse_args(argv, specs);
  if (args.has("help")) {
    std::cout << "usage: ccsim calibrate FILES... -o calib.json [--ranks N] [--nodes N] [--class nvlink|pcie|net] "
                 "[--collective NAME]\n"
                 "       ccsim calibrate LOGS... --topology PRESET|FILE [--nodes N] [--set K=V]... [--env NCCL_X=V]... "
                 "[--nccl-version X.Y] [--algo A] [--proto P] [--link nvlink|pcie|nic] -o calib.json\n"
                 "       (with --topology: the efficiency of the link that bounds each run's plateau and the cost that "
                 "sets its latency side, fitted through the model)\n(see docs/calibration.md)\n";
    return 0;
  }
  // With --topology the nccl-tests runs are fitted through the model on that hardware (the link that
  // bounds each plateau, the cost that sets the latency side: scenarios/model_fit.h) instead of as
  // equivalent rings.
  const bool through_model = args.has("topology");
  for (const char* flag : {"set", "env", "nccl-version", "link", "algo", "proto"})
    if (!through_model && args.has(flag))
      throw InputError(args.spelled(flag), "describes the hardware of a fit through the model: give --topology too");
  if (through_model && args.has("class"))
    throw InputError(args.spelled("class"), "fits an equivalent ring; with --topology the link that bounds the run is fitted");
  if (args.positional().empty())
    throw InputError("command line", "give the logs to calibrate from: ccsim calibrate FILES... -o calib.json");
  if (!args.has("output")) throw InputError("command line", "missing -o FILE (where to write the calibration)");
  NcclTestsOptions opt;
  opt.ranks = parse_int_arg(args, "ranks", 0, 2);
  opt.nodes = parse_int_arg(args, "nodes", 0, 1);
  opt.path_class = args.get("class");
  if (args.has("class") && opt.path_class != "nvlink" && opt.path_class != "pcie" && opt.path_class != "net")
    throw InputError(args.spelled("class"), "unknown path class '" + cut_for_message(opt.path_class) + "' (valid: nvlink, pcie, net)");
  opt.collective = args.get("collective");

  // The hardware of a fit through the model, as validate takes it.
  std::string topology_source;
  nlohmann::json spec;
  ValidateOptions fit_options;
  if (through_model) {
    spec = topology_spec_from_args(args, "", &topology_source);
    fit_options.overrides.collective = opt.collective;
    fit_options.overrides.ranks = opt.ranks;
    fit_options.nodes_given = args.has("nodes");
    fit_options.nccl_version = nccl_version_from_args(args);
    fit_options.nccl_version_given = args.has("nccl-version");
    fit_options.filter = algo_filter_from_args(args, /*shell_environment=*/false);
  }
  std::vector<RunFit> run_fits;
  const std::string link = args.get("link");
  if (args.has("link") && link != "nvlink" && link != "pcie" && link != "nic")
    throw InputError(args.spelled("link"), "unknown link '" + cut_for_message(link) + "' (valid: nvlink, pcie, nic)");

  std::vector<RingCurve> curves;
  std::vector<std::pair<std::string, std::string>> perftest;  // path, text
  std::vector<ProbeDocument> probes;
  for (const std::string& path : args.positional()) {
    // Read once: the path may be a pipe (`ccsim calibrate <(ssh host cat log)`).
    std::string text = read_input_file(path, "log");
    switch (sniff(path, text)) {
      case FileKind::NcclTests: {
        if (through_model) {
          std::istringstream in(text);
          const std::vector<NcclTestsRun> runs = parse_nccl_tests_log(in, path);
          for (std::size_t r = 0; r < runs.size(); ++r)
            run_fits.push_back(
                fit_through_model(runs[r], path, static_cast<int>(r), spec, topology_source, fit_options, link));
          break;
        }
        auto c = ring_curves_from_nccl_tests_text(path, text, opt);
        for (const auto& curve : c)
          for (const auto& w : curve.warnings) std::cerr << "ccsim: warning: " << w << "\n";
        curves.insert(curves.end(), c.begin(), c.end());
        break;
      }
      case FileKind::Perftest:
        perftest.emplace_back(path, std::move(text));
        break;
      case FileKind::Probe:
        probes.push_back(parse_probe_document(path, text));
        if (probes.back().probe == "nccl") {
          auto c = ring_curves_from_nccl_probe(probes.back(), opt);
          for (const auto& curve : c)
            for (const auto& w : curve.warnings) std::cerr << "ccsim: warning: " << w << "\n";
          curves.insert(curves.end(), c.begin(), c.end());
        }
        break;
    }
  }
  Calibration cal = calibrate_ring_curves(curves);
  if (!run_fits.empty()) cal.fitted = fitted_settings(run_fits);
  for (const auto& [path, text] : perftest) add_perftest_text(cal, path, text);
  for (const ProbeDocument& probe : probes) {
    if (probe.probe == "verbs") add_verbs_probe(cal, probe);
    if (probe.probe == "cuda") add_cuda_probe(cal, probe);
  }
  const std::string output = args.get("output");
  write_file_atomically(output, calibration_to_json(cal));
  print_report(cal, output);
  return 0;
}

}  // namespace ccsim
