#include "scenarios/run_results_file.h"

#include "common/error.h"

namespace ccsim {

namespace {

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
  nlohmann::json out = {{"index", v.index}, {"name", v.name}, {"overrides", v.overrides}, {"workloads", workloads}};
  if (!v.env.empty()) out["env"] = v.env;  // absent without settings: results written before --env read the same
  return out;
}

VariantResult variant_result_from_json(const nlohmann::json& j) {
  VariantResult v;
  v.index = j.at("index").get<std::size_t>();
  v.name = j.at("name").get<std::string>();
  v.overrides = j.at("overrides").get<std::vector<std::string>>();
  if (j.contains("env")) v.env = j.at("env").get<std::vector<std::string>>();
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
