#include "scenarios/run_results.h"

#include <map>

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
  const ValidationReport report = validate_logs({w.log_file}, spec, scenario.topology_source, opts, debug);
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

nlohmann::json row_to_json(const RunRow& r) {
  auto optional = [](double v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {{"size_bytes", r.size_bytes},
          {"time_us", r.time_us},
          {"algbw_GBps", r.algbw_GBps},
          {"busbw_GBps", r.busbw_GBps},
          {"algorithm", r.algorithm},
          {"protocol", r.protocol},
          {"predicted_as", r.predicted_as},
          {"model", r.by_engine ? "engine" : "closed-form"},
          {"busiest_link", r.busiest_link},
          {"busiest_link_class", r.busiest_link_class},
          {"busiest_link_utilization", optional(r.busiest_link_utilization)},
          {"latency_share", optional(r.latency_share)},
          {"measured_time_us", optional(r.measured_time_us)},
          {"measured_busbw_GBps", optional(r.measured_busbw_GBps)},
          {"error_pct", r.measured_time_us < 0 || !(r.time_us > 0) ? nlohmann::json(nullptr)
                                                                   : nlohmann::json(100 * (r.measured_time_us / r.time_us - 1))},
          {"within_tolerance", r.within_tolerance < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.within_tolerance == 1)},
          {"side", r.side}};
}

RunRow row_from_json(const nlohmann::json& j) {
  auto optional = [&](const char* key) { return j.at(key).is_null() ? -1.0 : j.at(key).get<double>(); };
  RunRow r;
  r.size_bytes = j.at("size_bytes").get<std::uint64_t>();
  r.time_us = j.at("time_us").get<double>();
  r.algbw_GBps = j.at("algbw_GBps").get<double>();
  r.busbw_GBps = j.at("busbw_GBps").get<double>();
  r.algorithm = j.at("algorithm").get<std::string>();
  r.protocol = j.at("protocol").get<std::string>();
  r.predicted_as = j.at("predicted_as").get<std::string>();
  r.by_engine = j.at("model").get<std::string>() == "engine";
  r.busiest_link = j.at("busiest_link").get<std::string>();
  r.busiest_link_class = j.at("busiest_link_class").get<std::string>();
  r.busiest_link_utilization = optional("busiest_link_utilization");
  r.latency_share = optional("latency_share");
  r.measured_time_us = optional("measured_time_us");
  r.measured_busbw_GBps = optional("measured_busbw_GBps");
  r.within_tolerance = j.at("within_tolerance").is_null() ? -1 : j.at("within_tolerance").get<bool>() ? 1 : 0;
  r.side = j.at("side").get<std::string>();
  return r;
}

// CSV field: quoted when it holds a comma, quote or newline.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Shortest text that reads back to the same double (as nlohmann::json prints numbers).
std::string number_text(double v) { return nlohmann::json(v).dump(); }

}  // namespace

VariantResult run_variant(const Scenario& scenario, std::size_t variant_index, const VariantRunOptions& options) {
  const ScenarioVariant& variant = scenario.variants.at(variant_index);
  nlohmann::json spec = variant_spec(scenario, variant);
  Calibration calibration;
  StepTiming calibrated_timing;
  if (!scenario.calibration_file.empty()) {
    calibration = load_calibration(scenario.calibration_file);
    const CalibrationEffect effect = calibration_effect(calibration, spec, StepTiming{});
    for (const auto& o : effect.spec_overrides) apply_override(spec, o, scenario.calibration_file);
    calibrated_timing = effect.timing;
  }
  const Topology topo = build_topology(spec, scenario.file + " (variant " + variant.name + ")");
  VariantResult out;
  out.index = variant_index;
  out.name = variant.name;
  out.overrides = variant.overrides;
  for (std::size_t i = 0; i < scenario.workloads.size(); ++i) {
    const ScenarioWorkload& w = scenario.workloads[i];
    const std::string where = scenario.file + ": /workloads/" + std::to_string(i);
    if (w.kind == "straggler")
      out.workloads.push_back(run_straggler(topo, w, where, options));
    else if (w.kind == "validate")
      out.workloads.push_back(run_validate(scenario, spec, w, scenario.calibration_file.empty() ? nullptr : &calibration,
                                           calibrated_timing, options));
    else
      out.workloads.push_back(run_sweep(topo, w, scenario.calibration_file.empty() ? nullptr : &calibration,
                                        calibrated_timing, where, options));
  }
  return out;
}

nlohmann::json variant_result_to_json(const VariantResult& v) {
  nlohmann::json workloads = nlohmann::json::array();
  for (const ScenarioWorkloadResult& w : v.workloads) {
    nlohmann::json rows = nlohmann::json::array(), classes = nlohmann::json::array();
    for (const RunRow& r : w.rows) rows.push_back(row_to_json(r));
    for (const LinkClassUse& c : w.link_classes)
      classes.push_back({{"class", c.link_class}, {"link", c.link}, {"utilization", c.utilization}});
    nlohmann::json wj = {{"workload", w.workload},       {"collective", w.collective}, {"kind", w.kind},
                         {"knee_bytes", w.knee_bytes},   {"rows", rows},               {"link_classes_at_largest_size", classes}};
    if (w.kind == "straggler") {
      wj["late_rank"] = w.late_rank;
      wj["delay_us"] = w.delay_us;
      wj["per_rank_time_us"] = w.per_rank_us;
      wj["baseline_per_rank_time_us"] = w.baseline_per_rank_us;
      wj["shortest_rank"] = w.shortest_rank;
    }
    if (w.kind == "validate") {
      nlohmann::json causes = nlohmann::json::array();
      for (const RunCause& c : w.causes)
        causes.push_back({{"id", c.id}, {"title", c.title}, {"evidence", c.evidence}, {"next", c.next},
                          {"informational", c.informational}});
      wj["log"] = w.log_file;
      wj["tolerance_pct"] = w.tolerance_pct;
      wj["pass"] = w.pass;
      wj["notes"] = w.notes;
      wj["causes"] = causes;
    }
    workloads.push_back(std::move(wj));
  }
  return {{"index", v.index}, {"name", v.name}, {"overrides", v.overrides}, {"workloads", workloads}};
}

VariantResult variant_result_from_json(const nlohmann::json& j) {
  VariantResult v;
  v.index = j.at("index").get<std::size_t>();
  v.name = j.at("name").get<std::string>();
  v.overrides = j.at("overrides").get<std::vector<std::string>>();
  for (const auto& wj : j.at("workloads")) {
    ScenarioWorkloadResult w;
    w.workload = wj.at("workload").get<std::string>();
    w.collective = wj.at("collective").get<std::string>();
    w.kind = wj.at("kind").get<std::string>();
    w.knee_bytes = wj.at("knee_bytes").get<double>();
    for (const auto& r : wj.at("rows")) w.rows.push_back(row_from_json(r));
    for (const auto& c : wj.at("link_classes_at_largest_size"))
      w.link_classes.push_back({c.at("class").get<std::string>(), c.at("link").get<std::string>(), c.at("utilization").get<double>()});
    if (w.kind == "straggler") {
      w.late_rank = wj.at("late_rank").get<int>();
      w.delay_us = wj.at("delay_us").get<double>();
      w.per_rank_us = wj.at("per_rank_time_us").get<std::vector<double>>();
      w.baseline_per_rank_us = wj.at("baseline_per_rank_time_us").get<std::vector<double>>();
      w.shortest_rank = wj.at("shortest_rank").get<int>();
    }
    if (w.kind == "validate") {
      w.log_file = wj.at("log").get<std::string>();
      w.tolerance_pct = wj.at("tolerance_pct").get<double>();
      w.pass = wj.at("pass").get<bool>();
      w.notes = wj.at("notes").get<std::vector<std::string>>();
      for (const auto& c : wj.at("causes"))
        w.causes.push_back({c.at("id").get<std::string>(), c.at("title").get<std::string>(), c.at("evidence").get<std::string>(),
                            c.at("next").get<std::string>(), c.at("informational").get<bool>()});
    }
    v.workloads.push_back(std::move(w));
  }
  return v;
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

RunResultsFile parse_run_results_json(const std::string& text, const std::string& file) {
  RunResultsFile out;
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file, std::string("not a ccsim run results.json: ") + e.what());
  }
  try {
    if (!doc.is_object() || doc.value("format", "") != kRunResultsFormat)
      throw InputError(file, std::string("not a ccsim run results.json (expected \"format\": \"") + kRunResultsFormat + "\")");
    out.scenario = doc.at("scenario").get<std::string>();
    out.scenario_file = doc.at("scenario_file").get<std::string>();
    out.variants_total = doc.at("variants_total").get<std::size_t>();
    out.complete = doc.at("complete").get<bool>();
    if (doc.contains("shard")) {
      out.shard.index = doc.at("shard").at("index").get<int>();
      out.shard.count = doc.at("shard").at("count").get<int>();
    }
    for (const auto& v : doc.at("variants")) out.variants.push_back(variant_result_from_json(v));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file, std::string("malformed ccsim run results: ") + e.what());
  }
  return out;
}

std::string format_run_results_json(const Scenario& scenario, const std::vector<VariantResult>& done, bool complete,
                                    const Shard& shard) {
  nlohmann::json rows = nlohmann::json::array(), variants = nlohmann::json::array();
  for (const VariantResult& v : done) {
    variants.push_back(variant_result_to_json(v));
    for (const ScenarioWorkloadResult& w : v.workloads)
      for (const RunRow& r : w.rows) {
        nlohmann::json row = {{"variant", v.name}, {"workload", w.workload}, {"collective", w.collective}};
        row.update(row_to_json(r));
        rows.push_back(std::move(row));
      }
  }
  const nlohmann::json doc = {{"format", kRunResultsFormat},
                              {"scenario", scenario.name},
                              {"scenario_file", scenario.file},
                              {"ccsim_version", CCSIM_VERSION},
                              {"complete", complete},
                              {"variants_total", scenario.variants.size()},
                              {"variants_done", done.size()},
                              {"rows", rows},
                              {"variants", variants}};
  nlohmann::json out = doc;
  if (!shard.whole()) out["shard"] = {{"index", shard.index}, {"count", shard.count}};
  return out.dump(2) + "\n";
}

std::string format_run_results_csv(const std::vector<VariantResult>& done) {
  std::string out =
      "variant,workload,collective,size_bytes,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,predicted_as,model,"
      "busiest_link,busiest_link_class,busiest_link_utilization,latency_share,measured_time_us,measured_busbw_GBps,error_pct,"
      "within_tolerance,side\n";
  auto optional = [](double v) { return v < 0 ? std::string() : number_text(v); };
  for (const VariantResult& v : done)
    for (const ScenarioWorkloadResult& w : v.workloads)
      for (const RunRow& r : w.rows)
        out += csv_field(v.name) + "," + csv_field(w.workload) + "," + w.collective + "," + std::to_string(r.size_bytes) + "," +
               number_text(r.time_us) + "," + number_text(r.algbw_GBps) + "," + number_text(r.busbw_GBps) + "," +
               csv_field(r.algorithm) + "," + csv_field(r.protocol) + "," + csv_field(r.predicted_as) + "," +
               (r.by_engine ? "engine" : "closed-form") + "," + csv_field(r.busiest_link) + "," +
               csv_field(r.busiest_link_class) + "," + optional(r.busiest_link_utilization) + "," +
               optional(r.latency_share) + "," + optional(r.measured_time_us) + "," + optional(r.measured_busbw_GBps) + "," +
               (r.measured_time_us < 0 || !(r.time_us > 0) ? std::string() : number_text(100 * (r.measured_time_us / r.time_us - 1))) +
               "," + (r.within_tolerance < 0 ? std::string() : r.within_tolerance == 1 ? "true" : "false") + "," + r.side + "\n";
  return out;
}

}  // namespace ccsim
