#include "scenarios/validate.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "algorithms/collectives.h"
#include "common/error.h"
#include "scenarios/log_gpu_preset.h"
#include "scenarios/validate_causes.h"
#include "topologies/spec.h"

namespace ccsim {

SideVerdict side_verdict(const std::string& side, const std::vector<const ValidatedSize*>& sizes, double tolerance) {
  SideVerdict v;
  v.side = side;
  v.sizes = static_cast<int>(sizes.size());
  if (sizes.empty()) return v;
  std::vector<double> errors;
  for (const ValidatedSize* s : sizes) {
    errors.push_back(s->error);
    if (s->within_tolerance) ++v.within;
    if (std::fabs(s->error) > std::fabs(v.worst_error)) v.worst_error = s->error;
  }
  std::sort(errors.begin(), errors.end());
  const std::size_t m = errors.size();
  v.median_error = m % 2 ? errors[m / 2] : 0.5 * (errors[m / 2 - 1] + errors[m / 2]);
  if (v.within == v.sizes) v.verdict = Verdict::Within;
  else if (v.median_error > tolerance) v.verdict = Verdict::Slower;
  else if (v.median_error < -tolerance) v.verdict = Verdict::Faster;
  else v.verdict = Verdict::Mixed;
  return v;
}

namespace {

// What the log's "NCCL version" line says against the tuner constants used ("" when nothing to say).
std::string nccl_version_note(const std::string& log_version, const ValidateOptions& opts) {
  if (log_version.empty()) return "";
  const std::string used = opts.nccl_version.label() + "'s tuner";
  NcclVersion ran;
  try {
    ran = parse_nccl_version(log_version, "log");
  } catch (const InputError&) {
    return "the log ran NCCL " + log_version + ", outside the tuner versions ccsim models (" + supported_nccl_versions() +
           "); predicted with " + used;
  }
  if (opts.nccl_version_given) {
    if (ran.tuner == opts.nccl_version.tuner) return "";
    return "the log ran NCCL " + log_version + " (tuner constants of " + ran.range() + "); predicted with " + used +
           " (--nccl-version) as asked";
  }
  if (ran.tuner == opts.nccl_version.tuner) return "";
  return "the log ran NCCL " + log_version + "; predicted with " + used + ": rerun with --nccl-version " +
         std::to_string(ran.major) + "." + std::to_string(ran.minor) + " for its tuner constants (" + ran.range() + ")";
}

// The node count of the run: --nodes, else the log's hosts, else ranks / GPUs per node.
int run_nodes(const LogFacts& log, const nlohmann::json& spec, int gpus_per_node, const ValidateOptions& opts) {
  if (opts.nodes_given) return spec.value("nodes", 1);
  if (log.hosts > 0) return log.hosts;
  return std::max(1, log.ranks / std::max(1, gpus_per_node));
}

Prediction predict_for_log(const Topology& topo, const LogFacts& log, const std::vector<std::uint64_t>& sizes,
                           const ValidateOptions& opts, const AlgoProtoFilter& filter) {
  PredictRequest req;
  req.collective = log.collective;
  req.sizes = sizes;
  req.datatype = log.datatype;
  req.op = log.op.empty() ? "sum" : log.op;  // collectives that do not reduce ignore it
  req.root = std::max(0, log.root);
  req.model = opts.model;
  req.engine = opts.engine;
  req.filter = filter;
  req.nccl_version = opts.nccl_version;
  req.calibration = opts.calibration;
  req.calibrated_timing = opts.calibrated_timing;
  // The log's launch mode (nThread, nGpus of its header, or the device list's GPUs per process):
  // predicted as nccl-tests ran it (scenarios/launch_mode.h).
  req.launch.threads = std::max(1, log.threads_per_process);
  req.launch.gpus_per_thread = std::max(1, log.gpus_per_process / req.launch.threads);
  req.launch.iters = log.iters;
  req.launch.agg_iters = log.agg_iters;
  req.launch.graph_launches = log.graph_launches;
  req.launch.blocking = log.blocking;
  return predict(topo, req);
}

}  // namespace

ValidatedRun validate_run(const NcclTestsRun& run, const std::string& file, int run_index, nlohmann::json spec,
                          const std::string& topology_source, const ValidateOptions& opts, const DebugFacts& debug) {
  ValidatedRun out;
  const int gpus_per_node = spec.contains("node") && spec["node"].contains("gpu") ? spec["node"]["gpu"].value("count", 0) : 0;
  LogOverrides overrides = opts.overrides;
  overrides.gpus_per_node = gpus_per_node;
  out.log = infer_log_facts(run, file, run_index, overrides);
  LogFacts& log = out.log;
  if (const std::string note = nccl_version_note(log.nccl_version, opts); !note.empty()) log.notes.push_back(note);

  const int nodes = run_nodes(log, spec, gpus_per_node, opts);
  if (nodes * gpus_per_node != log.ranks)
    throw InputError(file, "the log has " + std::to_string(log.ranks) + " ranks" +
                               (log.hosts > 0 ? " on " + std::to_string(log.hosts) + " host(s)" : std::string()) +
                               " but the hardware is " + std::to_string(nodes) + " node(s) x " +
                               std::to_string(gpus_per_node) + " GPUs; describe the GPUs the run used (--set "
                               "node.gpu.count=N, --nodes N" +
                               (log.hosts == 1 ? std::string("; on one host the NICs carry nothing: --set node.nic.count=0 "
                                                             "if the node's NIC count does not fit N GPUs")
                                               : std::string()) +
                               ")");
  set_node_count(spec, nodes);
  const Topology topo = build_topology(spec, topology_source);
  // The log names its GPUs: a topology of another architecture predicts other hardware.
  const std::string gpu_name = log_gpu_name(run);
  const std::string log_arch = gpu_arch_from_name(gpu_name);
  if (amd_gpu_name(gpu_name))
    log.notes.push_back("the log's GPUs are " + gpu_name + ": AMD GPUs run RCCL, whose algorithms and tuner ccsim does "
                        "not model (it restates NCCL's); the prediction is NCCL's on the given NVIDIA hardware");
  else if (!log_arch.empty() && !topo.gpu_arch.empty() && log_arch != topo.gpu_arch)
    log.notes.push_back("the log's GPUs are " + gpu_name + " (" + log_arch + ") but the topology describes " + topo.gpu_model +
                        " (" + topo.gpu_arch + "): the prediction is for other GPUs (a preset of the log's GPUs, or --set "
                        "node.gpu.arch=" + log_arch + " and their links)");

  // The sizes to predict: the log's size column (nccl-tests already rounded it to whole elements);
  // size 0 rows (nccl-tests prints them for counts below one element per rank) time nothing.
  std::vector<std::uint64_t> sizes;
  std::vector<const NcclTestsRow*> rows;
  std::set<std::uint64_t> seen;
  for (const auto& row : run.rows) {
    if (row.size_bytes == 0 || !seen.insert(row.size_bytes).second) continue;
    sizes.push_back(row.size_bytes);
    rows.push_back(&row);
  }
  if (sizes.empty()) throw InputError(file, "no row with a size above 0 bytes");
  if (rows.size() < run.rows.size())
    log.notes.push_back(std::to_string(run.rows.size() - rows.size()) + " row(s) of size 0 or repeated sizes not validated");

  const Prediction p = predict_for_log(topo, log, sizes, opts, opts.filter);
  out.prediction = p.report;
  out.knee_bytes = p.knee_bytes;
  const double tol = opts.tolerance_pct / 100.0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const NcclTestsRow& m = *rows[i];
    const ReportSize& pred = p.report.sizes[i];
    ValidatedSize v;
    v.size_bytes = sizes[i];
    v.line = m.line;
    v.measured_time_us = log.has_out_of_place ? m.oop_time_us : m.ip_time_us;
    v.measured_busbw_GBps = log.has_out_of_place ? m.oop_busbw_GBps : m.ip_busbw_GBps;
    if (log.has_out_of_place && log.has_in_place) v.measured_in_place_time_us = m.ip_time_us;
    v.predicted_time_us = pred.row.oop_time_us;
    v.predicted_busbw_GBps = pred.row.oop_busbw_GBps;
    v.error = v.predicted_time_us > 0 ? v.measured_time_us / v.predicted_time_us - 1 : 0;
    v.within_tolerance = std::fabs(v.error) <= tol;
    v.latency_side = static_cast<double>(v.size_bytes) < p.knee_bytes;
    v.nccl_algorithm = pred.nccl_algorithm;
    v.nccl_protocol = pred.nccl_protocol;
    v.predicted = pred.predicted;
    out.sizes.push_back(v);
  }
  std::vector<const ValidatedSize*> latency, bandwidth;
  for (const auto& s : out.sizes) (s.latency_side ? latency : bandwidth).push_back(&s);
  out.latency = side_verdict("latency", latency, tol);
  out.bandwidth = side_verdict("bandwidth", bandwidth, tol);
  out.pass = out.latency.within == out.latency.sizes && out.bandwidth.within == out.bandwidth.sizes;

  // Counterfactual: NCCL restricted to Ring, where the prediction's large sizes use another algorithm
  // (NVLS unavailable, NCCL_ALGO=Ring, or Tree/NVLSTree beating the ring limit on 2 nodes).
  std::optional<PredictionReport> ring_only;
  const CollectiveInfo& info = collective_info(log.collective);
  const bool non_ring = std::any_of(bandwidth.begin(), bandwidth.end(),
                                    [](const ValidatedSize* s) { return s->nccl_algorithm != "Ring"; });
  if (info.shape == CollectiveShape::Tuned && non_ring && !opts.calibration)
    ring_only = predict_for_log(topo, log, sizes, opts, parse_algo_filter("Ring", "", "validate (Ring only)")).report;
  out.causes = likely_causes(out, topo, debug, ring_only ? &*ring_only : nullptr, tol, opts.nccl_version);
  return out;
}

ValidationReport validate_logs(const std::vector<NcclTestsFile>& logs, const nlohmann::json& spec,
                               const std::string& topology_source, const ValidateOptions& opts, const DebugFacts& debug) {
  ValidationReport report;
  report.ccsim_version = CCSIM_VERSION;
  report.tolerance_pct = opts.tolerance_pct;
  report.debug = debug;
  report.pass = true;
  for (const NcclTestsFile& log : logs) {
    for (std::size_t r = 0; r < log.runs.size(); ++r) {
      report.runs.push_back(validate_run(log.runs[r], log.path, static_cast<int>(r), spec, topology_source, opts, debug));
      report.pass = report.pass && report.runs.back().pass;
    }
  }
  return report;
}

}  // namespace ccsim
