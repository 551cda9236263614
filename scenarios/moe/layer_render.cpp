// Renderers of the MoE layer report (scenarios/moe/layer_report.h); field names are documented in
// docs/moe.md "Report" and are a contract with users' scripts.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "scenarios/moe/layer_report.h"

namespace ccsim::moe {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// The JSON number of a double, rounded to what the measurement can mean (stable across libm versions).
double rounded(double v, double unit) { return unit > 0 ? static_cast<double>(static_cast<long long>(v / unit + (v >= 0 ? 0.5 : -0.5))) * unit : v; }

nlohmann::ordered_json phase_json(const PhaseReport& p) {
  nlohmann::ordered_json j;
  j["time_us"] = rounded(p.time_us, 0.001);
  j["mean_rank_time_us"] = rounded(p.mean_rank_time_us, 0.001);
  j["bottleneck"] = p.bottleneck;
  j["bottleneck_GBps"] = rounded(p.bottleneck_GBps, 0.001);
  j["logical_GBps"] = {{"rdma", rounded(p.rdma_logical_GBps, 0.001)}, {"nvlink", rounded(p.nvlink_logical_GBps, 0.001)}};
  j["busiest_link"] = p.busiest_link;
  j["busiest_link_utilization"] = rounded(p.busiest_link_utilization, 0.0001);
  j["rdma_bytes_per_rank"] = {{"mean", rounded(p.rdma_bytes_mean, 1)}, {"max", rounded(p.rdma_bytes_max, 1)}};
  j["nvlink_bytes_per_rank"] = {{"mean", rounded(p.nvlink_bytes_mean, 1)}, {"max", rounded(p.nvlink_bytes_max, 1)}};
  j["slowest_rank"] = {{"rank", p.slowest_rank},
                       {"why", p.slowest_why},
                       {"tokens", p.slowest_rank_tokens},
                       {"mean_tokens", rounded(p.mean_rank_tokens, 0.01)}};
  j["transfers"] = p.transfers;
  return j;
}


}  // namespace

std::string render_json(const LayerReport& r) {
  const LayerRequest& q = r.request;
  nlohmann::ordered_json j;
  j["format"] = "ccsim-moe/1";
  j["topology"] = r.topology;
  j["nodes"] = r.nodes;
  j["gpus_per_node"] = r.gpus_per_node;
  if (!q.calibration_file.empty())
    j["calibration"] = {{"file", q.calibration_file}, {"settings", q.calibration_settings}};
  j["layer"] = {{"tokens_per_rank", q.config.tokens_per_rank},
                {"hidden", q.config.hidden},
                {"experts", q.config.experts},
                {"topk", q.config.top_k},
                {"ep", q.config.ep},
                {"max_nodes", q.config.node_limit},
                {"dispatch_dtype", wire_dtype_name(q.config.dispatch_dtype)},
                {"combine_dtype", wire_dtype_name(q.config.combine_dtype)},
                {"placement", placement_spec_name(q.placement)},
                {"expert_compute_us", q.expert_compute_us},
                {"seed", q.seed}};
  const RoutingStats& s = r.routing;
  j["routing"] = {{"spec", routing_spec_name(q.routing)},
                  {"zipf_s", rounded(r.zipf_s, 1e-6)},
                  {"tokens", s.tokens},
                  {"distinct_nodes_per_token", rounded(s.distinct_nodes_per_token, 1e-6)},
                  {"distinct_gpus_per_token", rounded(s.distinct_gpus_per_token, 1e-6)},
                  {"remote_node_fraction", rounded(s.remote_node_fraction, 1e-6)},
                  {"max_over_mean_rank_load", rounded(s.max_over_mean_rank_load, 1e-6)},
                  {"hottest_rank", s.hottest_rank},
                  {"max_over_mean_expert_load", rounded(s.max_over_mean_expert_load, 1e-6)},
                  {"hottest_expert", s.hottest_expert}};
  nlohmann::ordered_json ts = nlohmann::ordered_json::array();
  for (const TransportReport& t : r.transports) {
    nlohmann::ordered_json tj;
    tj["transport"] = transport_name(t.transport);
    tj["dispatch"] = phase_json(t.dispatch);
    tj["combine"] = phase_json(t.combine);
    tj["layer_time_us"] = rounded(t.layer_time_us, 0.001);
    ts.push_back(std::move(tj));
  }
  j["transports"] = std::move(ts);
  // The first transport's phases at the top level too: the short form scripts read.
  if (!r.transports.empty()) {
    j["dispatch"] = phase_json(r.transports.front().dispatch);
    j["combine"] = phase_json(r.transports.front().combine);
  }
  return j.dump(2) + "\n";
}

std::string render_table(const LayerReport& r) {
  const LayerRequest& q = r.request;
  const RoutingStats& s = r.routing;
  std::ostringstream out;
  out << "# ccsim moe: " << r.topology << ", " << r.nodes << " nodes x " << r.gpus_per_node << " GPUs (EP "
      << q.config.ep << ")\n";
  if (!q.calibration_file.empty()) {
    out << "# calibration " << q.calibration_file << ":";
    for (const std::string& setting : q.calibration_settings) out << " " << setting;
    out << "\n";
  }
  out << "# layer: " << q.config.tokens_per_rank << " tokens/rank, hidden " << q.config.hidden << ", "
      << q.config.experts << " experts, top-" << q.config.top_k << ", max nodes/token "
      << (q.config.node_limit > 0 ? std::to_string(q.config.node_limit) : std::string("unlimited")) << ", dispatch "
      << wire_dtype_name(q.config.dispatch_dtype) << ", combine " << wire_dtype_name(q.config.combine_dtype)
      << ", placement " << placement_spec_name(q.placement) << ", seed " << q.seed << "\n";
  out << "# routing " << routing_spec_name(q.routing);
  if (r.zipf_s > 0) out << " (zipf s " << fmt("%.3f", r.zipf_s) << ")";
  out << ": distinct nodes/token " << fmt("%.3f", s.distinct_nodes_per_token) << ", GPUs/token "
      << fmt("%.3f", s.distinct_gpus_per_token) << ", hottest rank " << s.hottest_rank << " at "
      << fmt("%.2f", s.max_over_mean_rank_load) << "x the mean load, hottest expert " << s.hottest_expert << " at "
      << fmt("%.2f", s.max_over_mean_expert_load) << "x\n";
  out << "#\n";
  char line[512];
  std::snprintf(line, sizeof line, "# %-14s %-8s %10s %10s %9s %10s %10s %10s %10s %8s  %s\n", "transport", "phase",
                "time_us", "mean_us", "bottlnck", "GB/s", "RDMA_MB", "RDMA_max", "NVL_MB", "slowest", "why");
  out << line;
  for (const TransportReport& t : r.transports)
    for (const PhaseReport* p : {&t.dispatch, &t.combine}) {
      std::snprintf(line, sizeof line, "  %-14s %-8s %10.1f %10.1f %9s %10.1f %10.2f %10.2f %10.2f %8d  %s\n",
                    transport_name(t.transport), phase_name(p->phase), p->time_us, p->mean_rank_time_us,
                    p->bottleneck.c_str(), p->bottleneck_GBps, p->rdma_bytes_mean / 1e6, p->rdma_bytes_max / 1e6,
                    p->nvlink_bytes_mean / 1e6, p->slowest_rank, p->slowest_why.c_str());
      out << line;
    }
  out << "#\n";
  for (const TransportReport& t : r.transports) {
    out << "# " << transport_name(t.transport) << ": layer " << fmt("%.1f", t.layer_time_us) << " us; busiest link "
        << t.dispatch.busiest_link << " (" << fmt("%.0f", 100 * t.dispatch.busiest_link_utilization)
        << "% busy in dispatch); slowest rank " << t.dispatch.slowest_rank << " receives " << t.dispatch.slowest_rank_tokens
        << " tokens vs " << fmt("%.0f", t.dispatch.mean_rank_tokens) << " mean\n";
  }
  if (r.transports.size() > 1) {
    const TransportReport* best = &r.transports.front();
    for (const TransportReport& t : r.transports)
      if (t.layer_time_us < best->layer_time_us) best = &t;
    out << "# fastest layer: " << transport_name(best->transport) << "\n";
  }
  return out.str();
}

std::string render_csv(const LayerReport& r) {
  std::ostringstream out;
  out << "transport,phase,time_us,mean_rank_time_us,bottleneck,bottleneck_GBps,rdma_bytes_mean,rdma_bytes_max,"
         "nvlink_bytes_mean,nvlink_bytes_max,slowest_rank,slowest_rank_tokens,mean_rank_tokens,"
         "distinct_nodes_per_token,max_over_mean_rank_load,layer_time_us\n";
  char line[512];
  for (const TransportReport& t : r.transports)
    for (const PhaseReport* p : {&t.dispatch, &t.combine}) {
      std::snprintf(line, sizeof line, "%s,%s,%.3f,%.3f,%s,%.3f,%.0f,%.0f,%.0f,%.0f,%d,%lld,%.2f,%.6f,%.6f,%.3f\n",
                    transport_name(t.transport), phase_name(p->phase), p->time_us, p->mean_rank_time_us,
                    p->bottleneck.c_str(), p->bottleneck_GBps, p->rdma_bytes_mean, p->rdma_bytes_max,
                    p->nvlink_bytes_mean, p->nvlink_bytes_max, p->slowest_rank,
                    static_cast<long long>(p->slowest_rank_tokens), p->mean_rank_tokens,
                    r.routing.distinct_nodes_per_token, r.routing.max_over_mean_rank_load, t.layer_time_us);
      out << line;
    }
  return out.str();
}

std::string render_matrix_csv(const LayerReport& r) {
  const auto n = static_cast<std::size_t>(r.request.config.ep);
  std::ostringstream out;
  out << "src\\dst";
  for (std::size_t d = 0; d < n; ++d) out << "," << d;
  out << "\n";
  for (std::size_t s = 0; s < n; ++s) {
    out << s;
    for (std::size_t d = 0; d < n; ++d) out << "," << fmt("%.0f", r.dispatch_matrix_bytes[s * n + d]);
    out << "\n";
  }
  return out.str();
}

}  // namespace ccsim::moe
