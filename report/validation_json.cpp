// `ccsim validate --format json`: the whole typed validation report.
#include "report/render.h"

#include <cmath>

namespace ccsim {
namespace {

using ojson = nlohmann::ordered_json;

ojson number(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

ojson side_json(const SideVerdict& v) {
  return {{"side", v.side},           {"sizes", v.sizes},
          {"within", v.within},       {"median_error", number(v.median_error)},
          {"worst_error", number(v.worst_error)}, {"verdict", to_string(v.verdict)}};
}

}  // namespace

ojson validation_json(const ValidationReport& report) {
  ojson doc;
  doc["ccsim_version"] = report.ccsim_version;
  doc["tolerance_pct"] = report.tolerance_pct;
  doc["hardware"] = report.hardware;
  if (!report.nccl_env.empty()) doc["nccl_env"] = report.nccl_env;
  doc["pass"] = report.pass;
  if (report.debug.present) {
    const DebugFacts& d = report.debug;
    doc["nccl_debug"] = {{"file", d.file},
                         {"p2p_connections", d.p2p_ipc_connections},
                         {"shm_connections", d.shm_connections},
                         {"net_gdr_connections", d.net_gdr_connections},
                         {"net_connections_without_gdr", d.net_connections},
                         {"channels", d.channels},
                         {"nvls", d.nvls},
                         {"algorithms", d.algorithms},
                         {"choices", [&d] {
                            ojson a = ojson::array();
                            for (const auto& c : d.choices)
                              a.push_back({{"collective", c.collective}, {"bytes", c.bytes}, {"algorithm", c.algorithm},
                                           {"protocol", c.protocol}});
                            return a;
                          }()},
                         {"env", d.env},
                         {"tuner_plugin", d.tuner_plugin}};
  }
  ojson runs = ojson::array();
  for (const ValidatedRun& run : report.runs) {
    const LogFacts& f = run.log;
    ojson r;
    r["log"] = {{"file", f.file},
                {"run_index", f.run_index},
                {"collective", f.collective},
                {"collective_source", f.collective_source},
                {"ranks", f.ranks},
                {"ranks_source", f.ranks_source},
                {"hosts", f.hosts},
                {"processes", f.processes},
                {"gpus_per_process", f.gpus_per_process},
                {"threads_per_process", f.threads_per_process},
                {"iters", f.iters},
                {"agg_iters", f.agg_iters},
                {"graph_launches", f.graph_launches},
                {"blocking", f.blocking},
                {"nccl_version", f.nccl_version},
                {"nccl_tests_version", f.nccl_tests_version},
                {"nccl_env", f.nccl_env},
                {"datatype", f.datatype},
                {"op", f.op},
                {"root", f.root},
                {"has_out_of_place", f.has_out_of_place},
                {"has_in_place", f.has_in_place},
                {"notes", f.notes}};
    r["prediction"] = ojson::parse(prediction_metadata_json(run.prediction).dump());
    r["knee_bytes"] = run.knee_bytes;
    ojson sizes = ojson::array();
    for (const ValidatedSize& v : run.sizes) {
      ojson o = {{"size_bytes", v.size_bytes},
                 {"measured_time_us", number(v.measured_time_us)},
                 {"measured_busbw_GBps", number(v.measured_busbw_GBps)},
                 {"predicted_time_us", number(v.predicted_time_us)},
                 {"predicted_busbw_GBps", number(v.predicted_busbw_GBps)},
                 {"error", number(v.error)},
                 {"within_tolerance", v.within_tolerance},
                 {"side", v.latency_side ? "latency" : "bandwidth"},
                 {"nccl_algorithm", v.nccl_algorithm},
                 {"nccl_protocol", v.nccl_protocol},
                 {"predicted", v.predicted},
                 {"line", v.line}};
      if (v.measured_in_place_time_us) o["measured_in_place_time_us"] = number(*v.measured_in_place_time_us);
      sizes.push_back(std::move(o));
    }
    r["sizes"] = std::move(sizes);
    r["latency"] = side_json(run.latency);
    r["bandwidth"] = side_json(run.bandwidth);
    ojson causes = ojson::array();
    for (const LikelyCause& c : run.causes)
      causes.push_back({{"id", c.id}, {"title", c.title}, {"evidence", c.evidence}, {"next", c.next},
                        {"informational", c.informational}});
    r["causes"] = std::move(causes);
    r["pass"] = run.pass;
    runs.push_back(std::move(r));
  }
  doc["runs"] = std::move(runs);
  return doc;
}

std::string render_validation_json(const ValidationReport& report) { return validation_json(report).dump(2) + "\n"; }

}  // namespace ccsim
