// The JSON output of a prediction, and the metadata object JSON and CSV share.
#include "report/render.h"

#include "scenarios/report_formats.h"

namespace ccsim {

nlohmann::json prediction_metadata_json(const PredictionReport& report) {
  const ReportFacts& f = report.facts;
  nlohmann::json meta;
  meta["ccsim_version"] = f.ccsim_version;
  meta["prediction"] = f.model;
  meta["collective"] = f.collective;
  meta["cost_model"] = f.cost_model;
  meta["step_constants"] = f.step_constants;
  nlohmann::json per_size = nlohmann::json::array();
  for (const auto& s : report.sizes)
    per_size.push_back({{"size_bytes", s.row.size_bytes},
                        {"nccl_algorithm", s.nccl_algorithm},
                        {"nccl_protocol", s.nccl_protocol},
                        {"nccl_model_time_us", s.nccl_model_time_us},
                        {"predicted", s.predicted},
                        {"launch_bound", s.launch_bound}});
  meta["nccl_choice"] = f.nccl_choice;
  meta["predicted_as"] = f.predicted_as;
  meta["per_size"] = per_size;
  if (!f.calibration_class.empty()) meta["calibration_class"] = f.calibration_class;
  if (!f.calibration_overrides.empty()) meta["calibration_overrides"] = f.calibration_overrides;
  if (!f.nccl_env.empty()) meta["nccl_env"] = f.nccl_env;
  if (!f.algo_filter.empty()) meta["algo_filter"] = f.algo_filter;
  if (!f.proto_filter.empty()) meta["proto_filter"] = f.proto_filter;
  meta["nranks"] = f.nranks;
  meta["nodes"] = f.nodes;
  meta["gpus_per_node"] = f.gpus_per_node;
  meta["channels"] = f.channels;
  meta["ring_families"] = f.ring_families;
  meta["alpha_us"] = f.alpha_s * 1e6;
  meta["beta_GBps"] = f.beta_Bps / 1e9;
  meta["launch_us"] = f.launch_s * 1e6;
  meta["launch_mode"] = {{"threads", f.launch.threads},
                         {"gpus_per_thread", f.launch.gpus_per_thread},
                         {"host_launch_us", f.host_launch_s * 1e6},
                         {"iters", f.launch.iters},
                         {"agg_iters", f.launch.agg_iters},
                         {"graph_launches", f.launch.graph_launches},
                         {"blocking", f.launch.blocking}};
  if (f.host_launch_per_channel_s > 0) meta["launch_mode"]["host_launch_us_per_channel"] = f.host_launch_per_channel_s * 1e6;
  meta["knee_bytes"] = f.knee_bytes;
  meta["bottleneck"] = f.bottleneck;
  if (f.ring_channel_bound_GBps > 0)
    meta["ring_channel_bound"] = {{"channels", f.ring_channel_bound_channels}, {"busbw_GBps", f.ring_channel_bound_GBps}};
  meta["datatype"] = f.datatype;
  meta["op"] = f.op;
  if (!f.busiest_links_at_largest_size.empty()) {
    nlohmann::json busiest = nlohmann::json::array();
    for (const ReportLink& l : f.busiest_links_at_largest_size)
      busiest.push_back({{"from", l.from},
                         {"to", l.to},
                         {"link", l.label},
                         {"bandwidth_GBps", l.bandwidth_GBps},
                         {"bytes", l.bytes},
                         {"busy_us", l.busy_us},
                         {"utilization", l.utilization}});
    meta["busiest_links_at_largest_size"] = busiest;
  }
  if (f.has_engine_stats)
    meta["engine"] = {{"transfers", f.transfers},
                      {"flows_simulated", f.flows_simulated},
                      {"symmetry_order", f.symmetry_order},
                      {"merge_bundle", f.merge_bundle}};
  meta["topology"] = f.topology_spec;
  return meta;
}

std::string render_prediction_json(const PredictionReport& report) {
  return format_rows_json(prediction_metadata_json(report), report.rows());
}

}  // namespace ccsim
