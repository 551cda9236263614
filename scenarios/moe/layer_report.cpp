#include "scenarios/moe/layer_report.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "scenarios/moe/transport_schedule.h"
#include "topologies/nvlink_mesh.h"
#include "topologies/routing.h"
#include "workloads/workload.h"

namespace ccsim::moe {
namespace {

double mean_of(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}
double max_of(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }

std::string format(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

// Per-direction bandwidth of a GPU's NIC path and of its NVLink (0 when absent).
struct GpuRates {
  double rdma_Bps = 0, nvlink_Bps = 0;
};
GpuRates gpu_rates(const Topology& topo) {
  GpuRates r;
  const int G = topo.gpus_per_node();
  if (topo.num_nodes() > 1) r.rdma_Bps = route_bandwidth_Bps(topo, route_between_gpus(topo, 0, G, -1));
  // All of a GPU's NVLink: its NVSwitch link, or its joined peers' links together (DGX-1).
  if (G > 1) r.nvlink_Bps = gpu_nvlink_Bps(topo, topo.gpu(0));
  return r;
}

// Why the slowest rank is slow: the heaviest of its four link loads (RDMA/NVLink, in/out) as time.
std::string slowest_reason(const PhaseTraffic& t, int rank, const GpuRates& rates) {
  struct Load {
    const char* what;
    double bytes, rate;
  };
  const auto r = static_cast<std::size_t>(rank);
  const Load loads[] = {{"RDMA in", t.rdma_bytes_received[r], rates.rdma_Bps},
                        {"RDMA out", t.rdma_bytes_sent[r], rates.rdma_Bps},
                        {"NVLink in", t.nvlink_bytes_received[r], rates.nvlink_Bps},
                        {"NVLink out", t.nvlink_bytes_sent[r], rates.nvlink_Bps}};
  const Load* worst = nullptr;
  double worst_s = -1;
  for (const Load& l : loads) {
    const double s = l.rate > 0 ? l.bytes / l.rate : 0.0;
    if (s > worst_s) worst_s = s, worst = &l;
  }
  const std::vector<double>& all = std::string(worst->what).rfind("RDMA", 0) == 0
                                       ? (std::string(worst->what) == "RDMA in" ? t.rdma_bytes_received : t.rdma_bytes_sent)
                                       : (std::string(worst->what) == "NVLink in" ? t.nvlink_bytes_received : t.nvlink_bytes_sent);
  const double mean = mean_of(all);
  return std::string(worst->what) + format(" %.2f MB (%.2fx the mean rank's) at %.1f GB/s", worst->bytes / 1e6,
                                           mean > 0 ? worst->bytes / mean : 0.0, worst->rate / 1e9);
}

PhaseReport phase_report(const Topology& topo, const PhaseTraffic& traffic, const RoutingStats& stats,
                         const WorkloadResult& w, std::size_t op, const GpuRates& rates) {
  PhaseReport p;
  p.phase = traffic.phase;
  const OpTiming& timing = w.ops[op];
  const std::size_t n = timing.rank_finish_s.size();
  // A rank is done with a phase when the last data for it has arrived (it cannot compute, or return the
  // tokens' results, before): its receive finish. (Senders of an aggregated PXN record share its end, so
  // send times would tie the hot receiver with every rank that sends to it.) A marker at a rank (the end
  // of a pipeline stage into it) counts as an arrival.
  std::vector<double> received(n, 0.0);
  const ComposedRange& range = w.ranges[op];
  for (std::size_t i = range.begin; i < range.end; ++i) {
    const auto dst = static_cast<std::size_t>(w.composed.transfers[i].dst);
    if (dst < n) received[dst] = std::max(received[dst], w.sim.transfer_end_s[i]);
  }
  std::vector<double> rank_time(n, 0.0);
  for (std::size_t r = 0; r < n; ++r) rank_time[r] = std::max(0.0, received[r] - timing.rank_start_s[r]);
  p.slowest_rank = static_cast<int>(std::max_element(rank_time.begin(), rank_time.end()) - rank_time.begin());
  p.time_us = (timing.finish_s - timing.start_s) * 1e6;
  p.mean_rank_time_us = mean_of(rank_time) * 1e6;
  p.rdma_bytes_mean = mean_of(traffic.rdma_bytes_sent);
  p.rdma_bytes_max = max_of(traffic.rdma_bytes_sent);
  p.nvlink_bytes_mean = mean_of(traffic.nvlink_bytes_sent);
  p.nvlink_bytes_max = max_of(traffic.nvlink_bytes_sent);

  // The phase's busiest link direction, from its own records' routes.
  LinkLoad load(topo);
  for (std::size_t i = range.begin; i < range.end; ++i) {
    const Transfer& t = w.composed.transfers[i];
    if (t.is_marker()) continue;
    for (const ccsim::Hop& h : route_between_gpus(topo, t.src, t.dst, t.rail)) load.add(h, t.bytes);
  }
  p.transfers = range.end - range.begin;
  const LinkLoad::Busiest busiest = load.busiest();
  const double phase_s = timing.finish_s - timing.start_s;
  if (busiest.entry) {
    const LinkKind kind = topo.link(busiest.entry->edge).kind;
    p.bottleneck = kind == LinkKind::NvLink ? "nvlink" : "rdma";
    p.busiest_link = describe_link_direction(topo, busiest.entry->edge, busiest.key->dir);
    p.busiest_link_utilization = phase_s > 0 ? busiest.time_s / phase_s : 0.0;
  }
  // DeepEP's benchmarks divide logical bytes by the kernel time: the normal kernels' per class
  // (tests/test_internode.py, test_intranode.py), the low-latency kernels' every (token, expert)
  // selection whatever its path (tests/test_low_latency.py).
  const double logical =
      traffic.transport == Transport::DeepepLowLatency
          ? static_cast<double>(stats.pairs) / static_cast<double>(n) * static_cast<double>(traffic.bytes_per_token)
      : p.bottleneck == "nvlink" ? traffic.logical_nvlink_bytes
                                 : traffic.logical_rdma_bytes;
  p.bottleneck_GBps = phase_s > 0 ? logical / phase_s / 1e9 : 0.0;
  p.rdma_logical_GBps = phase_s > 0 ? traffic.logical_rdma_bytes / phase_s / 1e9 : 0.0;
  p.nvlink_logical_GBps = phase_s > 0 ? traffic.logical_nvlink_bytes / phase_s / 1e9 : 0.0;
  p.slowest_why = slowest_reason(traffic, p.slowest_rank, rates);
  std::vector<double> tokens(stats.rank_tokens_received.begin(), stats.rank_tokens_received.end());
  p.slowest_rank_tokens = stats.rank_tokens_received[static_cast<std::size_t>(p.slowest_rank)];
  p.mean_rank_tokens = mean_of(tokens);
  return p;
}

// Bytes each source sends for each destination GPU: one copy per (token, destination GPU) in the
// dispatch dtype, relayed or not (what a heatmap of who-talks-to-whom shows).
std::vector<double> dispatch_matrix(const MoeLayer& layer) {
  const Routing& routing = layer.routing;
  const auto ep = static_cast<std::size_t>(layer.config.ep);
  std::vector<double> m(ep * ep, 0.0);
  const double bytes = static_cast<double>(bytes_per_token(layer.config.dispatch_dtype, layer.config.hidden));
  const int k = routing.top_k;
  std::vector<int> seen;
  for (std::size_t src = 0; src < ep; ++src)
    for (std::int64_t tok = routing.rank_offsets[src]; tok < routing.rank_offsets[src + 1]; ++tok) {
      seen.clear();
      for (int j = 0; j < k; ++j) {
        const int dst = layer.placement.choose_replica(routing.expert_ids[static_cast<std::size_t>(tok * k + j)],
                                                       static_cast<int>(src), tok);
        if (std::find(seen.begin(), seen.end(), dst) != seen.end()) continue;
        seen.push_back(dst);
        m[src * ep + static_cast<std::size_t>(dst)] += bytes;
      }
    }
  return m;
}

}  // namespace

LayerReport run_layer(const Topology& topo, const LayerRequest& request) {
  LayerReport report;
  report.request = request;
  report.topology = topo.name;
  report.nodes = topo.num_nodes();
  report.gpus_per_node = topo.gpus_per_node();
  const MoeLayer layer = make_layer(request.config, request.routing, request.placement, request.seed);
  report.routing = routing_stats(layer);
  report.zipf_s = layer.routing.zipf_s;
  report.dispatch_matrix_bytes = dispatch_matrix(layer);
  const TransportCosts costs = transport_costs(topo);
  const GpuRates rates = gpu_rates(topo);
  for (const Transport transport : request.transports) {
    const TokenCounts counts = count_tokens(layer, transport, request.options);  // one pass, both phases
    const PhaseTraffic dispatch = phase_traffic(layer, counts, Phase::Dispatch);
    const PhaseTraffic combine = phase_traffic(layer, counts, Phase::Combine);
    std::vector<WorkloadOp> ops(2);
    ops[0] = {"dispatch", phase_schedule(topo, layer, dispatch, costs)};
    ops[1] = {"combine", phase_schedule(topo, layer, combine, costs), WorkloadOp::Start::AfterBarrier, 0,
              request.expert_compute_us * 1e-6};
    const WorkloadResult w = simulate_workload(topo, ops, request.engine);
    TransportReport t;
    t.transport = transport;
    t.dispatch = phase_report(topo, dispatch, report.routing, w, 0, rates);
    t.combine = phase_report(topo, combine, report.routing, w, 1, rates);
    t.layer_time_us = (w.ops[1].finish_s - w.ops[0].start_s) * 1e6;
    report.transports.push_back(std::move(t));
  }
  return report;
}

}  // namespace ccsim::moe
