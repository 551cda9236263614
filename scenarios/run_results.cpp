#include "scenarios/run_results.h"

#include <map>
#include <optional>

#include "algorithms/nccl_channels.h"
#include "algorithms/nccl_model.h"
#include "calibrate/calibration.h"
#include "common/error.h"
#include "common/text.h"
#include "scenarios/chosen_schedule.h"
#include "scenarios/collective_schedule.h"
#include "scenarios/nccl_tests_table.h"
#include "scenarios/predict.h"
#include "scenarios/straggler.h"
#include "scenarios/validate.h"
#include "scenarios/validate_debug.h"
#include "topologies/spec.h"

namespace ccsim {

namespace {

std::string link_name(const LinkStat& l) { return l.from + " -> " + l.to + " (" + l.label + ")"; }

double utilization(const LinkStat& l, double time_s) {
  return time_s > 0 && l.bandwidth_Bps > 0 ? l.bytes / l.bandwidth_Bps / time_s : 0.0;
}

// NCCL's cost model of (algo, proto) at `bytes`: its latency over its whole time.
double nccl_latency_share(const NcclTopoSummary& summary, Func func, std::uint64_t bytes, Algo algo, Proto proto) {
  for (const AlgoProtoCost& c : nccl_costs(summary, func, bytes))
    if (c.algo == algo && c.proto == proto && c.time_us > 0) return c.eff_latency_us / c.time_us;
  return -1;
}

std::vector<LinkClassUse> link_classes_of(const SimResult& r) {
  std::map<std::string, LinkClassUse> best;  // keyed by class name: deterministic order
  for (const LinkStat& l : r.links) {
    const std::string cls = to_string(l.kind);
    const double u = utilization(l, r.time_s);
    auto it = best.find(cls);
    if (it == best.end() || u > it->second.utilization) best[cls] = {cls, link_name(l), u};
  }
  std::vector<LinkClassUse> out;
  for (auto& [cls, use] : best) out.push_back(use);
  return out;
}

ScenarioWorkloadResult run_sweep(const Topology& topo, const ScenarioWorkload& w, const Calibration* calibration,
                         const StepTiming& calibrated_timing, const std::string& where, const VariantRunOptions& options) {
  PredictRequest req;
  req.collective = w.collective;
  req.sweep.min_bytes = w.min_bytes;
  req.sweep.max_bytes = w.max_bytes;
  req.sweep.step_factor = w.step_factor;
  req.datatype = w.datatype;
  req.model = w.model == "engine" ? PredictModel::Engine : PredictModel::ClosedForm;
  req.filter = parse_algo_filter(w.algo, w.proto, where);
  req.nccl_version = w.nccl_version;
  req.engine.parallel_jobs = options.engine_jobs;
  req.calibration = calibration;
  req.calibrated_timing = calibrated_timing;
  const Prediction p = predict(topo, req);

  ScenarioWorkloadResult out;
  out.workload = w.name;
  out.collective = w.collective;
  out.kind = w.kind;
  out.knee_bytes = p.knee_bytes;
  const bool p2p = is_p2p_collective(w.collective);
  NcclTopoSummary summary = summarize_for_nccl(topo);
  summary.nccl_version = w.nccl_version;
  const Func func = p2p ? Func::AllReduce : func_from_collective(w.collective);
  int last_engine_row = -1;
  for (std::size_t i = 0; i < p.rows.size(); ++i) {
    const SizeChoice& c = p.choices[i];
    RunRow row;
    row.size_bytes = p.rows[i].size_bytes;
    row.time_us = p.rows[i].oop_time_us;
    row.algbw_GBps = p.rows[i].oop_algbw_GBps;
    row.busbw_GBps = p.rows[i].oop_busbw_GBps;
    row.algorithm = c.custom ? "custom" : p2p ? "P2P" : to_string(c.sim_algo);
    row.protocol = c.custom ? "" : to_string(c.sim_proto);
    row.predicted_as = c.simulated;
    row.by_engine = req.model == PredictModel::Engine && c.by_engine;
    if (row.by_engine && i < p.sim.size() && !p.sim[i].links.empty()) {
      row.busiest_link = link_name(p.sim[i].links.front());
      row.busiest_link_class = to_string(p.sim[i].links.front().kind);
      row.busiest_link_utilization = utilization(p.sim[i].links.front(), p.sim[i].time_s);
      last_engine_row = static_cast<int>(i);
    }
    if (!p2p && !c.custom) row.latency_share = nccl_latency_share(summary, func, row.size_bytes, c.sim_algo, c.sim_proto);
    out.rows.push_back(row);
  }
  if (last_engine_row >= 0) out.link_classes = link_classes_of(p.sim[static_cast<std::size_t>(last_engine_row)]);
  return out;
}

ScenarioWorkloadResult run_straggler(const Topology& topo, const ScenarioWorkload& w, const std::string& where,
                             const VariantRunOptions& options) {
  const ChosenSchedule cs =
      chosen_schedule(topo, w.collective, static_cast<double>(w.min_bytes), parse_algo_filter(w.algo, w.proto, where), 0, where,
                      w.nccl_version);
  const double delay_s = w.delay_us * 1e-6;
  EngineOptions eo;
  eo.pipeline_depth = cs.pipeline_depth;
  eo.parallel_jobs = options.engine_jobs;
  const std::vector<SimResult> r =
      simulate(topo, {cs.schedule, delay_rank_start(cs.schedule, w.late_rank, delay_s)}, eo);
  const StragglerTimes base = per_rank_collective_times(r[0], -1, 0.0);
  const StragglerTimes late = per_rank_collective_times(r[1], w.late_rank, delay_s);

  ScenarioWorkloadResult out;
  out.workload = w.name;
  out.collective = w.collective;
  out.kind = w.kind;
  out.late_rank = w.late_rank;
  out.delay_us = w.delay_us;
  for (double s : base.per_rank_s) out.baseline_per_rank_us.push_back(s * 1e6);
  for (double s : late.per_rank_s) out.per_rank_us.push_back(s * 1e6);
  out.shortest_rank = late.shortest_rank;
  RunRow row;
  row.size_bytes = w.min_bytes;
  row.time_us = r[1].time_s * 1e6;  // the operation, from the first rank's start to the last end
  row.algbw_GBps = row.time_us > 0 ? static_cast<double>(w.min_bytes) / 1e3 / row.time_us : 0.0;
  row.busbw_GBps = row.algbw_GBps * busbw_factor(w.collective, topo.num_gpus());
  const auto slash = cs.label.find('/');
  row.algorithm = cs.label.substr(0, slash);
  row.protocol = slash == std::string::npos ? "" : cs.label.substr(slash + 1);
  row.predicted_as = cs.label + " (rank " + std::to_string(w.late_rank) + " " + strprintf("%g", w.delay_us) + " us late)";
  row.by_engine = true;
  if (!r[1].links.empty()) {
    row.busiest_link = link_name(r[1].links.front());
    row.busiest_link_class = to_string(r[1].links.front().kind);
    row.busiest_link_utilization = utilization(r[1].links.front(), r[1].time_s);
  }
  out.rows.push_back(row);
  out.link_classes = link_classes_of(r[1]);
  return out;
}

// A validate workload: `ccsim validate` of the workload's log on this variant's hardware. Rows are
// the prediction at the log's sizes with the measurement beside it.
ScenarioWorkloadResult run_validate(const Scenario& scenario, const nlohmann::json& spec, const ScenarioWorkload& w,
                                    const Calibration* calibration, const StepTiming& calibrated_timing,
                                    const VariantRunOptions& options) {
  ValidateOptions opts;
  opts.tolerance_pct = w.tolerance_pct;
  opts.model = w.model == "engine" ? PredictModel::Engine : PredictModel::ClosedForm;
  opts.engine.parallel_jobs = options.engine_jobs;
  opts.overrides.ranks = w.ranks;
  opts.nccl_version = w.nccl_version;
  opts.nccl_version_given = w.nccl_version_given;
  opts.nodes_given = scenario.nodes_given;
  opts.calibration = calibration;
  opts.calibrated_timing = calibrated_timing;
  const DebugFacts debug = w.nccl_debug_file.empty() ? DebugFacts{} : read_debug_facts(w.nccl_debug_file);
  const ValidationReport report = validate_logs(parse_nccl_tests_files({w.log_file}), spec, scenario.topology_source, opts, debug);
  const ValidatedRun& run = report.runs.at(0);  // a log with several runs: the first (the report notes it)

  ScenarioWorkloadResult out;
  out.workload = w.name;
  out.collective = run.log.collective;
  out.kind = w.kind;
  out.knee_bytes = run.knee_bytes;
  out.log_file = w.log_file;
  out.tolerance_pct = w.tolerance_pct;
  out.pass = run.pass;
  const LogFacts& f = run.log;
  out.notes.push_back("log: " + f.file + ": " + f.collective + " [" + f.collective_source + "], " + std::to_string(f.ranks) +
                      " ranks [" + f.ranks_source + "], " + std::to_string(f.processes) + " process(es) x " +
                      std::to_string(f.gpus_per_process) + " GPU(s)");
  if (report.runs.size() > 1)
    out.notes.push_back("the log holds " + std::to_string(report.runs.size()) + " runs; the first is validated here");
  for (const auto& n : f.notes) out.notes.push_back("note: " + n);
  for (const SideVerdict* v : {&run.latency, &run.bandwidth})
    out.notes.push_back(v->side + " side: " + std::to_string(v->within) + " of " + std::to_string(v->sizes) +
                        " size(s) within " + strprintf("%g%%", w.tolerance_pct) + ", median error " +
                        strprintf("%+.1f%%", 100 * v->median_error) + ": " + to_string(v->verdict));
  for (const ValidatedSize& v : run.sizes) {
    RunRow row;
    row.size_bytes = v.size_bytes;
    row.time_us = v.predicted_time_us;
    row.busbw_GBps = v.predicted_busbw_GBps;
    row.algbw_GBps = v.predicted_time_us > 0 ? static_cast<double>(v.size_bytes) / 1e3 / v.predicted_time_us : 0.0;
    row.algorithm = v.nccl_algorithm;
    row.protocol = v.nccl_protocol;
    row.predicted_as = v.predicted;
    row.by_engine = opts.model == PredictModel::Engine;
    row.measured_time_us = v.measured_time_us;
    row.measured_busbw_GBps = v.measured_busbw_GBps;
    row.within_tolerance = v.within_tolerance ? 1 : 0;
    row.side = v.latency_side ? "latency" : "bandwidth";
    out.rows.push_back(row);
  }
  for (const LikelyCause& c : run.causes) out.causes.push_back({c.id, c.title, c.evidence, c.next, c.informational});
  return out;
}

}  // namespace

VariantResult run_variant(const Scenario& scenario, std::size_t variant_index, const VariantRunOptions& options) {
  const ScenarioVariant& variant = scenario.variants.at(variant_index);
  nlohmann::json spec = variant_spec(scenario, variant);
  StepTiming calibrated_timing;
  std::optional<Calibration> scaled;  // the calibration as this variant's topology replays it
  if (scenario.calibration) {
    const CalibrationEffect effect = calibration_effect(*scenario.calibration, spec, StepTiming{});
    for (const auto& o : effect.spec_overrides) apply_override(spec, o, scenario.calibration_file);
    calibrated_timing = effect.timing;
    scaled = scale_ring_efficiency(*scenario.calibration, effect);
  }
  const Calibration* ring = scaled ? ring_calibration(&*scaled) : nullptr;
  const Topology topo = build_topology(spec, scenario.file + " (variant " + variant.name + ")");
  VariantResult out;
  out.index = variant_index;
  out.name = variant.name;
  out.overrides = variant.overrides;
  out.env = variant.env;
  for (std::size_t i = 0; i < scenario.workloads.size(); ++i) {
    const ScenarioWorkload& w = scenario.workloads[i];
    const std::string where = scenario.file + ": /workloads/" + std::to_string(i);
    if (w.kind == "straggler")
      out.workloads.push_back(run_straggler(topo, w, where, options));
    else if (w.kind == "validate")
      out.workloads.push_back(run_validate(scenario, spec, w, ring, calibrated_timing, options));
    else
      out.workloads.push_back(run_sweep(topo, w, ring, calibrated_timing, where, options));
  }
  return out;
}

Shard parse_shard(const std::string& text) {
  Shard s;
  const auto slash = text.find('/');
  auto whole = [&](const std::string& part, int* out) {
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoi(part);
    return true;
  };
  if (slash == std::string::npos || !whole(text.substr(0, slash), &s.index) || !whole(text.substr(slash + 1), &s.count) ||
      s.count < 1 || s.index < 1 || s.index > s.count)
    throw InputError("--shard", "expected K/N with 1 <= K <= N (the K-th of N parts, as Slurm's "
                                "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT), got '" + cut_for_message(text) + "'");
  return s;
}

}  // namespace ccsim
