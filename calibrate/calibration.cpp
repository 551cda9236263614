#include "calibrate/calibration.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>

#include "algorithms/closed_form.h"
#include "algorithms/collectives.h"
#include "algorithms/ring.h"
#include "calibrate/nccl_tests_infer.h"
#include "calibrate/nccl_tests_log.h"
#include "calibrate/perftest_log.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/json_input.h"
#include "common/text.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

using nlohmann::json;

// Physical bounds of a calibration file's values (docs/calibration.md, "Limits"): a latency above
// one second or a bandwidth outside 1 MB/s .. 10 TB/s (11x NVLink5's 900 GB/s per GPU) is a typo,
// and would make the engine's times meaningless or infinite.
constexpr double kMaxCalibratedLatency_s = 1.0;
constexpr double kMinCalibratedBandwidth_Bps = 1e6;
constexpr double kMaxCalibratedBandwidth_Bps = 1e13;
// Efficiency knots are measured / fitted-asymptote bandwidth: noise puts a few just above 1, never 2.
constexpr double kMaxEfficiencyFactor = 2.0;
constexpr double kNvlinkBusbwThreshold = 64e9;  // above any PCIe Gen5 x16 link (63 GB/s)

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// Host of a device line "Rank  0 Group  0 Pid  25 on HOST device  0 [...] NAME".
std::string device_host(const std::string& line) {
  std::istringstream in(line);
  std::string tok, prev;
  while (in >> tok) {
    if (prev == "on") return tok;
    prev = tok;
  }
  return "";
}

json fit_to_json(const AlphaBetaFit& f, double x_to_size) {
  json segs = json::array();
  for (const auto& s : f.segments)
    segs.push_back({{"from_bytes", s.from_x * x_to_size}, {"to_bytes", s.to_x * x_to_size},
                    {"latency_s", s.latency_s}, {"beta_Bps", std::isinf(s.beta_Bps) ? 0.0 : s.beta_Bps},
                    {"r2", s.r2}, {"max_rel_residual", s.max_rel_residual}, {"points", s.points}});
  return {{"r2", f.r2},
          {"max_rel_residual", f.max_rel_residual},
          {"max_rel_residual_with_outliers", f.max_rel_residual_all},
          {"max_rel_residual_with_efficiency", f.max_rel_residual_final},
          {"points", f.points},
          {"outliers", f.outliers.size()},
          {"latency_refined", f.latency_refined},
          {"switch_bytes", f.switch_x * x_to_size},
          {"segments", segs}};
}

json source_to_json(const CalibrationSource& s) {
  json j = {{"file", s.file},   {"kind", s.kind},     {"run", s.run},
            {"collective", s.collective}, {"ranks", s.ranks}, {"nodes", s.nodes},
            {"points", s.points}, {"intercept_s", s.intercept_s}, {"beta_Bps", s.beta_Bps},
            {"r2", s.r2},       {"max_rel_residual", s.max_rel_residual}};
  if (!s.method.empty()) j["method"] = s.method;
  return j;
}

// ---- JSON reading with paths ----

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError(source_, path + ": " + what);
  }
  const json& member(const json& obj, const std::string& path, const std::string& key, bool required) const {
    static const json null_json;
    if (!obj.is_object()) fail(path, "must be an object");
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(path + "/" + key, "missing");
      return null_json;
    }
    return *it;
  }
  // A number in [min, max] (or (min, max] unless `allow_equal`); absent or null is 0 when not
  // `required`, an error when it is. `max` is a physical bound (docs/calibration.md, "Limits").
  double number(const json& obj, const std::string& path, const std::string& key, bool required, double min_exclusive,
                bool allow_equal = false, double max = std::numeric_limits<double>::max()) const {
    const json& v = member(obj, path, key, required);
    if (v.is_null() && !required) return 0;
    if (!v.is_number()) fail(path + "/" + key, "must be a number (got " + cut_for_message(v.dump()) + ")");
    const double d = v.get<double>();
    if (!(allow_equal ? d >= min_exclusive : d > min_exclusive) || std::isinf(d))
      fail(path + "/" + key, std::string("must be a number ") + (allow_equal ? ">= " : "> ") + fmt(min_exclusive) +
                                 " (got " + cut_for_message(v.dump()) + ")");
    if (d > max) fail(path + "/" + key, "must be at most " + fmt(max) + " (got " + cut_for_message(v.dump()) + "; docs/calibration.md, Limits)");
    return d;
  }
  int integer(const json& obj, const std::string& path, const std::string& key) const {
    const json& v = member(obj, path, key, false);
    if (v.is_null()) return 0;
    if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 1000000000LL)
      fail(path + "/" + key, "must be an integer from 0 to 1e9 (got " + cut_for_message(v.dump()) + ")");
    return v.get<int>();
  }
  std::string string(const json& obj, const std::string& path, const std::string& key) const {
    const json& v = member(obj, path, key, false);
    if (v.is_null()) return "";
    if (!v.is_string()) fail(path + "/" + key, "must be a string (got " + cut_for_message(v.dump()) + ")");
    if (find_control_char(v.get<std::string>()) != std::string::npos)
      fail(path + "/" + key, "must not contain control characters, line separators or invalid UTF-8 (got \"" +
                                 cut_for_message(v.get<std::string>()) + "\")");
    return v.get<std::string>();
  }
  std::vector<std::string> notes(const json& obj, const std::string& path) const {
    std::vector<std::string> out;
    const json& v = member(obj, path, "notes", false);
    if (v.is_null()) return out;
    if (!v.is_array()) fail(path + "/notes", "must be an array of strings");
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) fail(path + "/notes/" + std::to_string(i), "must be a string (got " + cut_for_message(v[i].dump()) + ")");
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }
  std::vector<CalibrationSource> sources(const json& obj, const std::string& path) const {
    std::vector<CalibrationSource> out;
    const json& v = member(obj, path, "sources", false);
    if (v.is_null()) return out;
    if (!v.is_array()) fail(path + "/sources", "must be an array");
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string p = path + "/sources/" + std::to_string(i);
      CalibrationSource s;
      s.file = string(v[i], p, "file");
      s.kind = string(v[i], p, "kind");
      s.run = integer(v[i], p, "run");
      s.collective = string(v[i], p, "collective");
      s.ranks = integer(v[i], p, "ranks");
      s.nodes = integer(v[i], p, "nodes");
      s.points = static_cast<std::size_t>(integer(v[i], p, "points"));
      s.intercept_s = number(v[i], p, "intercept_s", false, 0, true);
      s.beta_Bps = number(v[i], p, "beta_Bps", false, 0, true);
      s.r2 = member(v[i], p, "r2", false).is_number() ? v[i]["r2"].get<double>() : 0;
      s.max_rel_residual = number(v[i], p, "max_rel_residual", false, 0, true);
      s.method = string(v[i], p, "method");
      out.push_back(s);
    }
    return out;
  }

 private:
  std::string source_;
};

}  // namespace

const std::vector<std::string>& calibration_classes() {
  static const std::vector<std::string> k{"nvlink", "pcie", "net"};
  return k;
}

const std::vector<std::string>& fitted_setting_keys() {
  static const std::vector<std::string> k{"node.nvlink.efficiency", "node.pcie.efficiency", "node.nic.efficiency",
                                          "node.gpu.net_ring_channel_GBps", "node.nic.latency_us", "node.cpu.launch_us"};
  return k;
}

FittedSettingRange fitted_setting_range(const std::string& key) {
  // A latency above 1 ms per step or launch is no cluster's (the worst measured floors are
  // TCPX's 1.7 ms per operation, many steps); node.cpu.launch_us must be positive (topologies/spec.cpp).
  if (key == "node.nic.latency_us") return {0.0, 1000.0, true};
  if (key == "node.cpu.launch_us") return {0.01, 1000.0, true};
  // A thread block's copy rate, GB/s: positive (0 means no cap) and at most a link's limit (topologies/spec.cpp).
  if (key == "node.gpu.net_ring_channel_GBps") return {0.0, 10000.0, false};
  return {0.0, 1.0, false};
}

bool calibrates_ring(const Calibration& cal) { return !cal.classes.empty(); }

const Calibration* ring_calibration(const Calibration* cal) {
  return cal && calibrates_ring(*cal) ? cal : nullptr;
}

// ---------------------------------------------------------------------------------------------
// Building

bool is_ring_collective(const std::string& c) {
  const CollectiveInfo* info = find_collective(c);
  return info && info->ring_step_multiple > 0;
}

std::string ring_path_class(int nodes, double peak_busbw_Bps) {
  if (nodes > 1) return "net";
  return peak_busbw_Bps > kNvlinkBusbwThreshold ? "nvlink" : "pcie";
}

void check_calibration_options(const NcclTestsOptions& opt) {
  if (!opt.path_class.empty() &&
      std::find(calibration_classes().begin(), calibration_classes().end(), opt.path_class) == calibration_classes().end())
    throw InputError("--class", "unknown path class '" + cut_for_message(opt.path_class) + "' (valid: nvlink, pcie, net)");
  if (!opt.collective.empty() && !is_ring_collective(nccl_tests_collective_from_name(opt.collective)))
    throw InputError("--collective", "'" + opt.collective +
                                         "' has no ring model to calibrate (valid: all_reduce, all_gather, reduce_scatter)");
}

std::vector<RingCurve> ring_curves_from_nccl_tests(const std::string& path, const NcclTestsOptions& opt) {
  return ring_curves_from_nccl_tests_text(path, read_input_file(path, "nccl-tests log"), opt);
}

std::vector<RingCurve> ring_curves_from_nccl_tests_text(const std::string& path, const std::string& text,
                                                        const NcclTestsOptions& opt) {
  check_calibration_options(opt);
  std::istringstream in(text);
  const auto runs = parse_nccl_tests_log(in, path);
  std::vector<RingCurve> out;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const NcclTestsRun& run = runs[r];
    RingCurve c;
    c.file = path;
    c.run = static_cast<int>(r);
    const bool one_process = run.devices.empty() && run.nthread * run.ngpus > 1;
    int log_ranks = run.ranks > 0 ? run.ranks : one_process ? run.nthread * run.ngpus : 0;
    // The collective from the flag, the log's test header or echoed command, else the table (redop,
    // root, count column, busbw/algbw against the rank count): never the file name.
    const CollectiveInference inferred =
        infer_collective(run, opt.collective, log_ranks > 0 ? log_ranks : opt.ranks, path,
                         "line " + std::to_string(run.header_line) + ": ");
    c.collective = inferred.collective->name;
    c.collective_source = inferred.source;
    for (const auto& n : inferred.notes) c.warnings.push_back(path + ": line " + std::to_string(run.header_line) + ": " + n);
    if (!is_ring_collective(c.collective))
      throw InputError(path, "line " + std::to_string(run.header_line) + ": collective '" + c.collective + "' (" +
                                 inferred.source +
                                 ") has no ring model to calibrate (use all_reduce_perf, all_gather_perf or "
                                 "reduce_scatter_perf logs)");
    // Ranks.
    if (opt.ranks > 0) {
      if (log_ranks > 0 && opt.ranks != log_ranks)
        throw InputError("--ranks", std::to_string(opt.ranks) + " contradicts " + path + ", which ran " +
                                        std::to_string(log_ranks) + " ranks");
      c.ranks = opt.ranks;
    } else if (log_ranks > 0) {
      c.ranks = log_ranks;
    } else {
      throw InputError(path, "line " + std::to_string(run.header_line) +
                                 ": the number of ranks is not in the log (an MPI run without a device list: nThread " +
                                 std::to_string(run.nthread) + " nGpus " + std::to_string(run.ngpus) +
                                 "); pass --ranks N");
    }
    if (c.ranks < 2) throw InputError(path, "a collective on " + std::to_string(c.ranks) + " rank has nothing to calibrate");
    // nccl-tests -g N: one thread launched N GPUs' kernels per iteration; its small-size times are
    // those launches (scenarios/launch_mode.h), which the fitted launch and alpha then contain.
    c.gpus_per_thread = std::max(1, run.ngpus);
    if (c.gpus_per_thread > 1)
      c.warnings.push_back(path + ": line " + std::to_string(run.header_line) + ": the run drove " +
                           std::to_string(c.gpus_per_thread) + " GPUs per thread (nGpus " +
                           std::to_string(run.ngpus) + ", -g): its latency side includes their serial host "
                           "launches, so the fitted launch and alpha describe that launch mode; predict with -g " +
                           std::to_string(c.gpus_per_thread) + " to compare, or calibrate from a -g 1 run");
    // Nodes.
    std::set<std::string> hosts;
    for (const auto& d : run.devices) {
      const std::string h = device_host(d);
      if (!h.empty()) hosts.insert(h);
    }
    const int log_nodes = !hosts.empty() ? static_cast<int>(hosts.size()) : one_process ? 1 : 0;
    if (opt.nodes > 0) {
      if (log_nodes > 0 && opt.nodes != log_nodes)
        throw InputError("--nodes", std::to_string(opt.nodes) + " contradicts " + path + ", which ran on " +
                                        std::to_string(log_nodes) + " hosts");
      c.nodes = opt.nodes;
    } else if (log_nodes > 0) {
      c.nodes = log_nodes;
    } else if (opt.path_class == "nvlink" || opt.path_class == "pcie") {
      c.nodes = 1;
    } else {
      throw InputError(path, "line " + std::to_string(run.header_line) +
                                 ": the number of nodes is not in the log (no device list); pass --nodes N (or --class)");
    }
    if (!run.has_avg_busbw)
      c.warnings.push_back(path + ": the table of line " + std::to_string(run.header_line) +
                           " has no 'Avg bus bandwidth' footer (log cut short?); the last row read is line " +
                           std::to_string(run.rows.back().line) + " (size " + std::to_string(run.rows.back().size_bytes) +
                           " B): beta is fitted without the sizes after it");
    // Points: out-of-place and in-place times.
    double peak_busbw = 0;
    for (const auto& row : run.rows) {
      const double s = static_cast<double>(row.size_bytes);
      for (double tu : {row.oop_time_us, row.ip_time_us}) {
        if (tu > 0 && std::isfinite(tu)) {
          c.sizes.push_back(s);
          c.times_s.push_back(tu * 1e-6);
        }
      }
      peak_busbw = std::max({peak_busbw, row.oop_busbw_GBps * 1e9, row.ip_busbw_GBps * 1e9});
    }
    std::set<double> distinct(c.sizes.begin(), c.sizes.end());
    if (distinct.size() < 3)
      throw InputError(path, "line " + std::to_string(run.header_line) + ": the table has " +
                                 std::to_string(distinct.size()) + " sizes with a time; at least 3 are needed to fit");
    c.path_class = opt.path_class.empty() ? ring_path_class(c.nodes, peak_busbw) : opt.path_class;
    out.push_back(std::move(c));
  }
  return out;
}

Calibration calibrate_ring_curves(const std::vector<RingCurve>& curves, double default_launch_s) {
  Calibration cal;
  for (const std::string& cls : calibration_classes()) {
    std::vector<const RingCurve*> mine;
    for (const auto& c : curves)
      if (c.path_class == cls) mine.push_back(&c);
    if (mine.empty()) continue;
    ClassCalibration cc;
    std::vector<AlphaBetaFit> fits;
    std::vector<double> steps;
    for (const RingCurve* c : mine) {
      const int st = ring_steps(c->collective, c->ranks);
      const double x_per_s = static_cast<double>(st) / c->ranks;
      std::vector<double> x(c->sizes.size());
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = c->sizes[i] * x_per_s;
      AlphaBetaFit f = fit_alpha_beta(x, c->times_s);
      if (std::isinf(f.beta_Bps) || !(f.beta_Bps > 0))
        throw InputError(c->file, "run " + std::to_string(c->run) +
                                      ": the times do not grow with the size (no bandwidth regime to fit); "
                                      "measure up to larger sizes (-e)");
      CalibrationSource s;
      s.file = c->file;
      s.kind = "nccl-tests";
      s.run = c->run;
      if (!c->collective_source.empty()) s.method = "fit; collective: " + c->collective_source;
      s.collective = c->collective;
      s.ranks = c->ranks;
      s.nodes = c->nodes;
      s.points = f.points;
      s.intercept_s = f.latency_s;
      s.beta_Bps = f.beta_Bps;
      s.r2 = f.r2;
      s.max_rel_residual = f.max_rel_residual;
      cc.sources.push_back(s);
      fits.push_back(f);
      steps.push_back(st);
    }
    // Reference source: the one with the most points (ties: the first).
    std::size_t ref = 0;
    for (std::size_t i = 1; i < fits.size(); ++i)
      if (fits[i].points > fits[ref].points) ref = i;
    // Launch and alpha.
    std::set<double> distinct_steps(steps.begin(), steps.end());
    bool fitted_launch = false;
    if (distinct_steps.size() >= 2) {
      // Least squares of intercept = launch + steps * alpha.
      double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
      for (std::size_t i = 0; i < fits.size(); ++i) {
        n += 1; sx += steps[i]; sy += fits[i].latency_s; sxx += steps[i] * steps[i]; sxy += steps[i] * fits[i].latency_s;
      }
      const double alpha = (n * sxy - sx * sy) / (n * sxx - sx * sx);
      const double launch = (sy - alpha * sx) / n;
      if (alpha > 0 && launch >= 0) {
        cc.alpha_s = alpha;
        cc.launch_s = launch;
        fitted_launch = true;
        std::string list;
        for (double s : distinct_steps) list += (list.empty() ? "" : ", ") + fmt(s);
        cc.launch_source = "fitted: intercept = launch + steps*alpha over " + std::to_string(fits.size()) +
                           " curves with " + list + " steps";
      }
    }
    if (!fitted_launch) {
      double sum_alpha = 0;
      cc.launch_s = default_launch_s;
      for (std::size_t i = 0; i < fits.size(); ++i) cc.launch_s = std::min(cc.launch_s, fits[i].latency_s);
      for (std::size_t i = 0; i < fits.size(); ++i) sum_alpha += (fits[i].latency_s - cc.launch_s) / steps[i];
      cc.alpha_s = sum_alpha / fits.size();
      cc.launch_source = cc.launch_s == default_launch_s
                             ? "default " + fmt(default_launch_s * 1e6) +
                                   " us (NCCL baseLat Ring/Simple): with one rank count launch and alpha are not separable"
                             : "intercept " + fmt(cc.launch_s * 1e6) + " us is below the default launch " +
                                   fmt(default_launch_s * 1e6) + " us: launch = intercept, alpha = 0";
      if (distinct_steps.size() >= 2) cc.launch_source += " (the fit over rank counts gave a negative launch or alpha)";
    }
    std::vector<double> betas;
    for (const auto& f : fits) betas.push_back(f.beta_Bps);
    cc.beta_Bps = median(betas);
    const RingCurve& rc = *mine[ref];
    cc.collective = rc.collective;
    cc.ranks = rc.ranks;
    cc.gpus_per_thread = std::max(1, rc.gpus_per_thread);
    cc.nodes = rc.nodes;
    cc.fit = fits[ref];
    const double x_to_size = rc.ranks / steps[ref];
    // Efficiency relative to the class beta (equal to the reference fit's beta for one source).
    // A knot above the file's bound comes from a mid size that ran faster than the fitted latency plus
    // the asymptote allow (a protocol switch's small-size segment carries a higher bandwidth than the
    // large one); it is held at the bound so that the file reads back.
    for (const auto& [x, e] : cc.fit.efficiency) {
      const double size = x * x_to_size;
      double factor = e * cc.beta_Bps / cc.fit.beta_Bps;
      if (factor > kMaxEfficiencyFactor) {
        cc.notes.push_back("efficiency knot at " + fmt(size) + " B: measured/model bandwidth " + fmt(factor) +
                           " held at the file's bound " + fmt(kMaxEfficiencyFactor) +
                           " (the calibrated model is slower than the measurement there)");
        factor = kMaxEfficiencyFactor;
      }
      cc.efficiency.emplace_back(size, factor);
    }
    cc.knee_bytes = cc.ranks * cc.alpha_s * cc.beta_Bps;
    cal.classes[cls] = std::move(cc);
  }
  return cal;
}

void add_perftest_file(Calibration& cal, const std::string& path) {
  add_perftest_text(cal, path, read_input_file(path, "perftest log"));
}

void add_perftest_text(Calibration& cal, const std::string& path, const std::string& text) {
  std::istringstream in(text);
  const auto parsed = parse_perftest_log(in, path);
  for (const auto& run : parsed)
    if (run.cut_line > 0)  // a warning on stderr: the table's rows are used, the sizes after the cut are missing
      std::cerr << "ccsim: warning: " << path << ": line " << run.cut_line << ": the perftest table of line " << run.header_line
                << " ends with the file, without its closing '----' line (output cut short?); its " << run.samples.size()
                << " rows are used\n";
  std::vector<std::string> selection_notes;
  const auto runs = select_perftest_runs(parsed, &selection_notes);
  for (auto& n : selection_notes) n = path + ": " + n;
  if (!add_perftest_runs(cal, path, runs, selection_notes))
    throw InputError(path, "no perftest table with a bandwidth or latency value to calibrate from");
}

bool add_perftest_runs(Calibration& cal, const std::string& path, const std::vector<PerftestRun>& runs,
                       const std::vector<std::string>& notes) {
  NicCalibration nic = cal.nic.value_or(NicCalibration{});
  nic.notes.insert(nic.notes.end(), notes.begin(), notes.end());
  bool used = false;
  for (const PerftestRun& run : runs) {
    const std::string name = run.test.empty() ? (run.is_bandwidth ? "perftest bw" : "perftest lat") : run.test;
    const std::string where = path + ": " + name + (run.header_line > 0 ? " table of line " + std::to_string(run.header_line)
                                                                        : " samples");
    // Bandwidth tests: the average bandwidth per direction (a bidirectional run prints the sum of both
    // directions: perftest's print_full_bw_report adds the remote report). Latency tests: the one-way
    // latency; perftest prints half the round trip for send and write (rtt_factor 2 in print_report_lat)
    // and the whole round trip for read and atomic (rtt_factor 1: a read's request goes out, its data
    // comes back), so those are halved.
    const double bw_scale = run.bidirectional ? 0.5 : 1.0;
    const bool round_trip = run.test == "ib_read_lat" || run.test == "ib_atomic_lat";
    const double lat_scale = round_trip ? 0.5 : 1.0;
    std::vector<double> x, t;
    for (const auto& s : run.samples) {
      if (run.is_bandwidth) {
        if (s.bw_avg_Gbps > 0 && s.bytes > 0) {
          x.push_back(static_cast<double>(s.bytes));
          t.push_back(s.bytes * 8.0 / (s.bw_avg_Gbps * bw_scale * 1e9));
        }
      } else {
        if (run.units == "cycles")
          throw InputError(path, "line " + std::to_string(run.header_line) +
                                     ": latency in CPU cycles (--report-cycles) cannot be calibrated; rerun without it");
        // t_typical is perftest's median of the iterations (robust to the OS spikes that set t_max and
        // pull t_avg up); older perftest prints no t_avg. t_avg only when t_typical is absent.
        const double us = s.t_typical_us > 0 ? s.t_typical_us : s.t_avg_us;
        if (us > 0) {
          x.push_back(static_cast<double>(s.bytes));
          t.push_back(us * lat_scale * 1e-6);
        }
      }
    }
    std::set<double> distinct(x.begin(), x.end());
    if (distinct.empty()) continue;
    CalibrationSource s;
    s.file = path;
    s.kind = name;
    s.run = run.index;
    s.collective = run.test;
    if (distinct.size() >= 3) {
      const AlphaBetaFit f = fit_alpha_beta(x, t);
      s.points = f.points;
      s.intercept_s = f.latency_s;
      s.beta_Bps = std::isinf(f.beta_Bps) ? 0 : f.beta_Bps;
      s.r2 = f.r2;
      s.max_rel_residual = f.max_rel_residual;
      s.method = "fit over " + std::to_string(distinct.size()) + " sizes";
      if (run.is_bandwidth) {
        // Bandwidth tests pipeline many messages: the asymptote is the NIC bandwidth.
        if (s.beta_Bps > 0) nic.beta_Bps = s.beta_Bps;
      } else {
        nic.latency_s = f.latency_s;  // latency tests: the intercept is the one-way latency
      }
    } else {
      // One size (perftest's default: 65536 B for bandwidth, 2 B for latency) or two: too few to
      // separate latency and bandwidth. Each test gives the one quantity it measures at that size.
      const double size = run.is_bandwidth ? *distinct.rbegin() : *distinct.begin();
      std::vector<double> at;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (x[i] == size) at.push_back(t[i]);
      const double time = median(at);
      const std::string sizes = distinct.size() == 1 ? "one size" : "2 sizes (too few to fit)";
      s.points = x.size();
      s.method = sizes + ": " + (run.is_bandwidth ? "bandwidth" : "latency") + " at " + fmt(size) + " B";
      if (run.is_bandwidth) {
        s.beta_Bps = size / time;
        nic.beta_Bps = s.beta_Bps;
        nic.notes.push_back(where + ": " + sizes + " (" + fmt(size) + " B): beta = the measured average bandwidth " +
                            fmt(s.beta_Bps * 8 / 1e9) + " Gb/s per direction" +
                            (run.bidirectional ? " (half the bidirectional sum)" : "") +
                            "; latency cannot be separated from one size and is left to the topology "
                            "(or a latency test)");
      } else {
        s.intercept_s = time;
        nic.latency_s = time;
        nic.notes.push_back(where + ": " + sizes + " (" + fmt(size) + " B): one-way latency = t_typical" +
                            (round_trip ? " / 2 (a read's round trip)" : " (perftest prints half the round trip)") + " = " +
                            fmt(time * 1e6) + " us, its bytes term not separated; bandwidth is left to the topology "
                                              "(or a bandwidth test)");
      }
    }
    if (run.bidirectional && run.is_bandwidth && distinct.size() >= 3)
      nic.notes.push_back(where + ": bidirectional: bandwidth per direction = half the printed sum");
    if (round_trip && distinct.size() >= 3)
      nic.notes.push_back(where + ": " + run.test + " prints the whole round trip: times halved before the fit");
    nic.sources.push_back(s);
    used = true;
  }
  if (used) cal.nic = nic;
  return used;
}

// ---------------------------------------------------------------------------------------------
// Files

std::string calibration_to_json(const Calibration& cal) {
  json doc;
  doc["format"] = kCalibrationFormat;
  doc["generator"] = std::string("ccsim ") + CCSIM_VERSION + " calibrate";
  json classes = json::object();
  for (const auto& [name, c] : cal.classes) {
    const double x_to_size = c.ranks / static_cast<double>(ring_steps(c.collective, c.ranks));
    json eff = json::array();
    for (const auto& [s, e] : c.efficiency) eff.push_back({s, e});
    json src = json::array();
    for (const auto& s : c.sources) src.push_back(source_to_json(s));
    classes[name] = {{"alpha_s", c.alpha_s},         {"beta_Bps", c.beta_Bps},  {"launch_s", c.launch_s},
                     {"launch_source", c.launch_source}, {"collective", c.collective}, {"ranks", c.ranks},
                     {"nodes", c.nodes},             {"gpus_per_thread", c.gpus_per_thread},
                     {"knee_bytes", c.knee_bytes}, {"efficiency", eff},
                     {"fit", fit_to_json(c.fit, x_to_size)}, {"sources", src}};
  }
  doc["classes"] = classes;
  if (cal.nic) {
    json src = json::array();
    for (const auto& s : cal.nic->sources) src.push_back(source_to_json(s));
    doc["nic"] = {{"latency_s", cal.nic->latency_s}, {"beta_Bps", cal.nic->beta_Bps}, {"sources", src}};
    if (!cal.nic->notes.empty()) doc["nic"]["notes"] = cal.nic->notes;
  }
  if (cal.shm) {
    json src = json::array();
    for (const auto& s : cal.shm->sources) src.push_back(source_to_json(s));
    doc["shm"] = {{"channel_Bps", cal.shm->channel_Bps}, {"sources", src}};
    if (cal.shm->step_s > 0) doc["shm"]["step_s"] = cal.shm->step_s;
    if (!cal.shm->notes.empty()) doc["shm"]["notes"] = cal.shm->notes;
  }
  if (cal.fitted) {
    json src = json::array();
    for (const auto& s : cal.fitted->sources) src.push_back(source_to_json(s));
    doc["fitted"] = {{"settings", cal.fitted->settings}, {"sources", src}};
    if (!cal.fitted->notes.empty()) doc["fitted"]["notes"] = cal.fitted->notes;
  }
  return doc.dump(2) + "\n";
}

Calibration calibration_from_json(const json& doc, const std::string& source) {
  Reader rd(source);
  if (!doc.is_object()) rd.fail("/", "a calibration file must be a JSON object");
  const std::string format = rd.string(doc, "", "format");
  if (format != kCalibrationFormat)
    rd.fail("/format", "must be \"" + std::string(kCalibrationFormat) + "\" (got " +
                           (doc.contains("format") ? doc["format"].dump() : std::string("nothing")) + ")");
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "format" && it.key() != "generator" && it.key() != "classes" && it.key() != "nic" && it.key() != "shm" &&
        it.key() != "fitted")
      rd.fail("/" + it.key(), "unknown key (valid: format, generator, classes, nic, shm, fitted)");
  Calibration cal;
  const json& classes = rd.member(doc, "", "classes", true);
  if (!classes.is_object()) rd.fail("/classes", "must be an object");
  for (auto it = classes.begin(); it != classes.end(); ++it) {
    const std::string p = "/classes/" + it.key();
    if (std::find(calibration_classes().begin(), calibration_classes().end(), it.key()) == calibration_classes().end())
      rd.fail(p, "unknown path class (valid: nvlink, pcie, net)");
    const json& o = it.value();
    if (!o.is_object()) rd.fail(p, "must be an object");
    ClassCalibration c;
    c.alpha_s = rd.number(o, p, "alpha_s", true, 0, true, kMaxCalibratedLatency_s);
    c.beta_Bps = rd.number(o, p, "beta_Bps", true, 0, false, kMaxCalibratedBandwidth_Bps);
    if (c.beta_Bps < kMinCalibratedBandwidth_Bps)
      rd.fail(p + "/beta_Bps", "must be at least " + fmt(kMinCalibratedBandwidth_Bps) + " (1 MB/s; got " + fmt(c.beta_Bps) +
                                   "; docs/calibration.md, Limits)");
    c.launch_s = rd.number(o, p, "launch_s", true, 0, true, kMaxCalibratedLatency_s);
    c.launch_source = rd.string(o, p, "launch_source");
    c.collective = rd.string(o, p, "collective");
    if (c.collective.empty()) c.collective = "all_reduce";
    if (!is_ring_collective(c.collective))
      rd.fail(p + "/collective", "must be all_reduce, all_gather or reduce_scatter (got \"" + c.collective + "\")");
    c.ranks = rd.integer(o, p, "ranks");
    c.nodes = rd.integer(o, p, "nodes");
    // Absent in files of ccsim before the -g launch mode: one GPU per thread (nccl-tests' default).
    c.gpus_per_thread = std::max(1, rd.integer(o, p, "gpus_per_thread"));
    c.knee_bytes = rd.number(o, p, "knee_bytes", false, 0, true);
    const json& eff = rd.member(o, p, "efficiency", false);
    if (!eff.is_null()) {
      if (!eff.is_array()) rd.fail(p + "/efficiency", "must be an array of [size_bytes, factor] pairs");
      for (std::size_t i = 0; i < eff.size(); ++i) {
        const std::string q = p + "/efficiency/" + std::to_string(i);
        const json& k = eff[i];
        if (!k.is_array() || k.size() != 2 || !k[0].is_number() || !k[1].is_number())
          rd.fail(q, "must be a [size_bytes, factor] pair of numbers (got " + cut_for_message(k.dump()) + ")");
        const double s = k[0].get<double>(), e = k[1].get<double>();
        if (!(s > 0) || std::isinf(s)) rd.fail(q + "/0", "size must be > 0 (got " + k[0].dump() + ")");
        // measured / model bandwidth: a run does not beat its own asymptote by more than noise.
        if (!(e > 0 && e <= kMaxEfficiencyFactor))
          rd.fail(q + "/1", "factor must be in (0, " + fmt(kMaxEfficiencyFactor) + "] (got " + k[1].dump() + ")");
        // The factor multiplies beta_Bps: the bandwidth it gives must stay within the same range.
        if (c.beta_Bps * e < kMinCalibratedBandwidth_Bps || c.beta_Bps * e > kMaxCalibratedBandwidth_Bps)
          rd.fail(q + "/1", "factor " + k[1].dump() + " x beta_Bps " + fmt(c.beta_Bps) + " = " + fmt(c.beta_Bps * e) +
                                " B/s is outside 1e6 (1 MB/s) .. 1e13 B/s (10 TB/s; docs/calibration.md, Limits)");
        if (!c.efficiency.empty() && !(s > c.efficiency.back().first))
          rd.fail(q + "/0", "sizes must increase (got " + k[0].dump() + " after " + fmt(c.efficiency.back().first) + ")");
        c.efficiency.emplace_back(s, e);
      }
    }
    c.sources = rd.sources(o, p);
    const json& fit = rd.member(o, p, "fit", false);
    if (!fit.is_null()) {
      if (!fit.is_object()) rd.fail(p + "/fit", "must be an object");
      const json& r2 = rd.member(fit, p + "/fit", "r2", false);
      if (!r2.is_null() && !r2.is_number()) rd.fail(p + "/fit/r2", "must be a number (got " + cut_for_message(r2.dump()) + ")");
      c.fit.r2 = r2.is_number() ? r2.get<double>() : 0.0;
      c.fit.max_rel_residual = rd.number(fit, p + "/fit", "max_rel_residual", false, 0, true);
      c.fit.points = static_cast<std::size_t>(rd.integer(fit, p + "/fit", "points"));
      // Informative, but of the shape ccsim writes: an array of objects of numbers (fit_to_json).
      const json& segs = rd.member(fit, p + "/fit", "segments", false);
      if (!segs.is_null()) {
        if (!segs.is_array())
          rd.fail(p + "/fit/segments", "must be an array of segment objects (got " + cut_for_message(segs.dump()) + ")");
        for (std::size_t i = 0; i < segs.size(); ++i) {
          const std::string q = p + "/fit/segments/" + std::to_string(i);
          if (!segs[i].is_object()) rd.fail(q, "must be an object (got " + cut_for_message(segs[i].dump()) + ")");
          for (auto m = segs[i].begin(); m != segs[i].end(); ++m)
            if (!m.value().is_number() || !std::isfinite(m.value().get<double>()))
              rd.fail(q + "/" + cut_for_message(m.key()), "must be a number (got " + cut_for_message(m.value().dump()) + ")");
        }
      }
    }
    c.fit.latency_s = c.launch_s + (c.ranks > 1 ? ring_steps(c.collective, c.ranks) * c.alpha_s : 0);
    c.fit.beta_Bps = c.beta_Bps;
    cal.classes[it.key()] = std::move(c);
  }
  const json& nic = rd.member(doc, "", "nic", false);
  if (!nic.is_null()) {
    NicCalibration n;
    n.latency_s = rd.number(nic, "/nic", "latency_s", false, 0, true, kMaxCalibratedLatency_s);
    n.beta_Bps = rd.number(nic, "/nic", "beta_Bps", false, 0, true, kMaxCalibratedBandwidth_Bps);
    if (n.beta_Bps > 0 && n.beta_Bps < kMinCalibratedBandwidth_Bps)
      rd.fail("/nic/beta_Bps", "must be 0 (not measured) or at least " + fmt(kMinCalibratedBandwidth_Bps) + " (1 MB/s; got " +
                                   fmt(n.beta_Bps) + "; docs/calibration.md, Limits)");
    n.sources = rd.sources(nic, "/nic");
    n.notes = rd.notes(nic, "/nic");
    cal.nic = n;
  }
  const json& shm = rd.member(doc, "", "shm", false);
  if (!shm.is_null()) {
    ShmCalibration s;
    s.channel_Bps = rd.number(shm, "/shm", "channel_Bps", true, 0, false, kMaxCalibratedBandwidth_Bps);
    if (s.channel_Bps < kMinCalibratedBandwidth_Bps)
      rd.fail("/shm/channel_Bps", "must be at least " + fmt(kMinCalibratedBandwidth_Bps) + " (1 MB/s; got " +
                                      fmt(s.channel_Bps) + "; docs/calibration.md, Limits)");
    s.step_s = rd.number(shm, "/shm", "step_s", false, 0, true, 1e-3);
    s.sources = rd.sources(shm, "/shm");
    s.notes = rd.notes(shm, "/shm");
    cal.shm = s;
  }
  const json& fitted = rd.member(doc, "", "fitted", false);
  if (!fitted.is_null()) {
    FittedSettings f;
    const json& settings = rd.member(fitted, "/fitted", "settings", true);
    if (!settings.is_object() || settings.empty()) rd.fail("/fitted/settings", "must be an object of fitted settings");
    for (auto it = settings.begin(); it != settings.end(); ++it) {
      const auto& keys = fitted_setting_keys();
      if (std::find(keys.begin(), keys.end(), it.key()) == keys.end())
        rd.fail("/fitted/settings/" + it.key(), "unknown setting (valid: " + join(keys, ", ") + ")");
      const FittedSettingRange range = fitted_setting_range(it.key());
      f.settings[it.key()] = rd.number(settings, "/fitted/settings", it.key(), true, range.min, range.min_inclusive, range.max);
    }
    f.sources = rd.sources(fitted, "/fitted");
    f.notes = rd.notes(fitted, "/fitted");
    cal.fitted = f;
  }
  return cal;
}

Calibration load_calibration(const std::string& path) {
  return calibration_from_json(parse_user_json(read_input_file(path, "calibration file"), path, /*allow_comments=*/false),
                               path);
}

// ---------------------------------------------------------------------------------------------
// Using

double calibration_efficiency(const Calibration& cal, const std::string& path_class, double size_bytes) {
  auto it = cal.classes.find(path_class);
  if (it == cal.classes.end()) return 1.0;
  return interpolate_efficiency(it->second.efficiency, size_bytes);
}

double calibrated_ring_time_s(const ClassCalibration& c, const std::string& collective, int nranks, double size_bytes) {
  AlphaBeta ab;
  ab.launch_s = c.launch_s;
  ab.alpha_s = c.alpha_s;
  ab.beta_Bps = c.beta_Bps * interpolate_efficiency(c.efficiency, size_bytes);
  return ring_closed_form_time_s(collective, nranks, size_bytes, ab);
}

CalibrationEffect calibration_effect(const Calibration& cal, const json& topology_spec, const StepTiming& defaults) {
  CalibrationEffect eff;
  eff.timing = defaults;
  const Topology topo = build_topology(topology_spec, "topology");
  const json& node = topo.spec.at("node");
  auto obj = [&](const char* key) -> const json* {
    auto it = node.find(key);
    return it == node.end() || it->is_null() ? nullptr : &*it;
  };
  const json* nvlink = obj("nvlink");
  const json* pcie = obj("pcie");
  const json* nic = obj("nic");
  const json* cpu = obj("cpu");
  const int nic_count = nic ? nic->value("count", 0) : 0;

  // Launch: from the first class (nvlink, pcie, net) that has one; every class's alpha was identified
  // together with its launch, so the sum launch + steps*alpha is what the fit measured.
  bool launch_set = false;
  for (const std::string& cls : calibration_classes()) {
    auto it = cal.classes.find(cls);
    if (it == cal.classes.end()) continue;
    if (!launch_set) {
      eff.timing.launch_s = it->second.launch_s;
      launch_set = true;
    } else if (std::fabs(it->second.launch_s - eff.timing.launch_s) > 1e-12) {
      eff.notes.push_back(cls + ": launch " + fmt(it->second.launch_s * 1e6) + " us differs from the one in use (" +
                          fmt(eff.timing.launch_s * 1e6) + " us)");
    }
  }

  if (auto it = cal.classes.find("nvlink"); it != cal.classes.end()) {
    const ClassCalibration& c = it->second;
    eff.timing.nvlink_step_s = c.alpha_s;
    if (nvlink) {
      const int links = nvlink->value("links_per_gpu", 1);
      // The fitted bandwidth is what the links achieve: it replaces nominal rate x efficiency.
      eff.spec_overrides.push_back("node.nvlink.GBps_per_link=" + fmt(c.beta_Bps / 1e9 / links));
      eff.spec_overrides.push_back("node.nvlink.efficiency=1");
      eff.spec_overrides.push_back("node.nvlink.latency_us=0");  // the fitted step carries the hop's latency
    } else {
      eff.notes.push_back("nvlink: the topology has no NVLink; the fitted bandwidth is not applied");
    }
  }

  if (auto it = cal.classes.find("pcie"); it != cal.classes.end()) {
    const ClassCalibration& c = it->second;
    eff.timing.pcie_step_s = c.alpha_s;
    if (!pcie) {
      eff.notes.push_back("pcie: the topology has no PCIe; the fitted bandwidth is not applied");
    } else {
      // The model's ring bandwidth on one node of this topology, with the links as they are.
      json one = topology_spec;
      set_node_count(one, 1);
      const Topology t1 = build_topology(one, "topology");
      const RingPlan plan = plan_rings(t1, 2);
      const AlphaBeta model = ring_alpha_beta(t1, plan, defaults);
      const double ratio = c.beta_Bps / model.beta_Bps;
      const std::string p2p = pcie->value("p2p", std::string("switch"));
      // Every link the ring can be limited by inside the node scales by the same ratio, so the
      // model's ring bandwidth becomes the fitted one whichever link is the bottleneck.
      // PCIe bandwidth is (generation, lanes) x efficiency: keep the generation if its nominal rate
      // covers the fitted link bandwidth (else take the first that does) and set the efficiency to
      // fitted / nominal. The NIC keeps its own generation.
      const int gen = pcie->value("generation", 4);
      const int lanes = pcie->value("lanes", 16);
      const double e0 = pcie->value("efficiency", 1.0);
      const double target = e0 * pcie_bandwidth_Bps(gen, lanes) * ratio;  // fitted achievable link bandwidth
      int best = gen;
      while (best < 6 && pcie_bandwidth_Bps(best, lanes) < target) ++best;
      const double efficiency = std::min(1.0, target / pcie_bandwidth_Bps(best, lanes));
      if (best != gen) {
        eff.spec_overrides.push_back("node.pcie.generation=" + std::to_string(best));
        if (nic_count > 0)
          eff.spec_overrides.push_back("node.nic.pcie_generation=" + std::to_string(nic->value("pcie_generation", gen)));
      }
      eff.spec_overrides.push_back("node.pcie.efficiency=" + fmt(efficiency));
      eff.spec_overrides.push_back("node.pcie.latency_us=0");  // the fitted step carries the hop's latency
      // An SHM connection's two-way share (node.pcie.shm_two_way_efficiency) is in the fitted rate too:
      // left at its default, a calibrated pair through host memory ran at 0.65 of what it measured.
      eff.spec_overrides.push_back("node.pcie.shm_two_way_efficiency=1");
      eff.notes.push_back("pcie: fitted/model ring bandwidth " + fmt(ratio) + " (model bottleneck " + model.bottleneck +
                          "): PCIe Gen" + std::to_string(best) + " x" + std::to_string(lanes) + " at efficiency " +
                          fmt(efficiency));
      if (p2p == "none" && cpu) {
        // Staged through host memory: the memory budget scales too.
        const double mem = cpu->value("host_memory_GBps", 100.0);
        eff.spec_overrides.push_back("node.cpu.host_memory_GBps=" + fmt(mem * ratio));
        eff.notes.push_back("pcie: p2p none: host memory bandwidth scaled by the same ratio");
      }
    }
  }

  if (auto it = cal.classes.find("net"); it != cal.classes.end()) {
    const ClassCalibration& c = it->second;
    if (nic_count > 0) {
      // One ring family per rail: each NIC carries 1/count of the ring's data.
      eff.spec_overrides.push_back("node.nic.Gbps=" + fmt(c.beta_Bps * 8 / 1e9 / nic_count));
      eff.spec_overrides.push_back("node.nic.efficiency=1");  // the fit is the achieved rate
      // The fitted steps carry the network hop's latency (the NICs, the switches, the PCIe between GPU
      // and NIC): the description's own would floor every step at the route's latency, above a fit
      // whose small sizes ran fewer network crossings than the equivalent ring (Tree across nodes).
      eff.spec_overrides.push_back("node.nic.latency_us=0");
      if (topology_spec.contains("fabric") && topology_spec.at("fabric").is_object())
        eff.spec_overrides.push_back("fabric.switch_latency_us=0");
      if (pcie) eff.spec_overrides.push_back("node.pcie.latency_us=0");
    } else {
      eff.notes.push_back("net: the topology has no NICs; the fitted bandwidth is not applied");
    }
    // alpha is the mean over the ring's n hops: `nodes` network hops, the rest inside nodes.
    const int n = c.ranks, nodes = std::max(1, c.nodes);
    const bool intra_fitted = cal.classes.count(nvlink ? "nvlink" : "pcie") > 0;
    double& intra_step = nvlink ? eff.timing.nvlink_step_s : eff.timing.pcie_step_s;
    const double intra = intra_step;
    double net = nodes > 0 ? (n * c.alpha_s - (n - nodes) * intra) / nodes : c.alpha_s;
    if (net < 0 && !intra_fitted) {
      // The intra-node step is NCCL's Ring/Simple constant, not a measurement, and it alone exceeds the
      // fitted mean (the small sizes ran LL, whose steps are a fraction of Simple's): every hop takes the
      // fitted mean, so that the ring's steps add up to what the run measured.
      eff.notes.push_back("net: the fitted mean step latency " + fmt(c.alpha_s * 1e6) + " us is below the default " +
                          fmt(intra * 1e6) + " us of an intra-node step; every step of the ring takes " +
                          fmt(c.alpha_s * 1e6) + " us");
      intra_step = c.alpha_s;
      net = c.alpha_s;
    } else if (net < 0) {
      eff.notes.push_back("net: the fitted mean step latency " + fmt(c.alpha_s * 1e6) + " us is below the " +
                          std::to_string(n - nodes) + " intra-node steps' " + fmt(intra * 1e6) +
                          " us (NCCL likely ran a non-ring algorithm); network step latency set to 0");
      net = 0;
    }
    eff.timing.net_step_s = net;
    if (nic_count > 0 && nodes > 1) {
      // The described ring with the fitted NICs, on the fitted run's node count: the GPUs' PCIe to
      // their NICs (or NVLink) can bound it below the fit, which a run above the ring's bound (NVLSTree
      // on two nodes) measured. The equivalent ring then needs its bandwidth term scaled.
      json full = topology_spec;
      for (const std::string& o : eff.spec_overrides) apply_override(full, o, "calibration");
      set_node_count(full, nodes);
      const Topology t = build_topology(full, "topology");
      const AlphaBeta model = ring_alpha_beta(t, plan_rings(t, default_ring_channels(t)), eff.timing);
      const double ratio = c.beta_Bps / model.beta_Bps;
      if (ratio > 1.0 + 1e-9) {
        eff.ring_bandwidth_scale["net"] = ratio;
        eff.notes.push_back("net: the described ring reaches " + fmt(model.beta_Bps / 1e9) + " GB/s (bottleneck " +
                            model.bottleneck + "), below the fitted " + fmt(c.beta_Bps / 1e9) +
                            " GB/s: the calibrated ring's bandwidth term is scaled by " + fmt(ratio));
      }
    }
  }
  if (cal.nic) {
    if (nic_count > 0 && cal.nic->beta_Bps > 0 && !cal.classes.count("net")) {
      eff.spec_overrides.push_back("node.nic.Gbps=" + fmt(cal.nic->beta_Bps * 8 / 1e9));
      eff.spec_overrides.push_back("node.nic.efficiency=1");  // the measured rate is the achieved one
    }
    if (nic_count > 0 && cal.nic->latency_s > 0)
      eff.spec_overrides.push_back("node.nic.latency_us=" + fmt(cal.nic->latency_s * 1e6));
  }
  if (cal.shm) {
    // Used only by the pairs NCCL joins through SHM (topologies/routing.h, nccl_shm_pair).
    if (pcie) {
      eff.spec_overrides.push_back("node.pcie.shm_channel_GBps=" + fmt(cal.shm->channel_Bps / 1e9));
      if (cal.shm->step_s > 0) eff.spec_overrides.push_back("node.pcie.shm_step_us=" + fmt(cal.shm->step_s * 1e6));
    } else
      eff.notes.push_back("shm: the topology has no PCIe; the SHM channel rate is not applied");
  }
  if (cal.fitted) {
    // After the NIC's figures: what a collective run's NCCL achieved over a link, fitted through the
    // model, which a perftest's point-to-point figures are not.
    for (const auto& [key, value] : cal.fitted->settings) {
      const bool absent = (key.rfind("node.nic.", 0) == 0 && nic_count == 0) || (key == "node.nvlink.efficiency" && !nvlink) ||
                          (key == "node.pcie.efficiency" && !pcie);
      if (absent) {
        eff.notes.push_back("fitted: the topology has no such link; " + key + " is not applied");
        continue;
      }
      eff.spec_overrides.push_back(key + "=" + fmt(value));
    }
  }
  return eff;
}

Calibration scale_ring_efficiency(Calibration cal, const CalibrationEffect& effect) {
  for (const auto& [cls, scale] : effect.ring_bandwidth_scale) {
    auto it = cal.classes.find(cls);
    if (it == cal.classes.end()) continue;
    auto& knots = it->second.efficiency;
    if (knots.empty()) knots.emplace_back(1.0, 1.0);  // flat: one knot holds the factor at every size
    for (auto& k : knots) k.second *= scale;
  }
  return cal;
}

}  // namespace ccsim
