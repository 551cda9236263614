#include "algorithms/pat.h"

#include <algorithm>

#include "common/error.h"
#include "topologies/routing.h"

namespace ccsim {

void check_pat(const Topology& topo, const std::string& collective, const std::string& where) {
  if (collective != "all_gather" && collective != "reduce_scatter")
    throw InputError(where, "NCCL runs PAT for all_gather and reduce_scatter only, not " + collective);
  if (topo.gpus_per_node() != 1)
    throw InputError(where, "NCCL runs PAT with one GPU per node only (here " + std::to_string(topo.gpus_per_node()) +
                                " GPUs per node)");
  if (topo.num_nodes() < 2) throw InputError(where, "PAT needs at least 2 nodes");
}

int pat_steps(int nranks) {
  int k = 0;
  while ((1 << k) < nranks) ++k;
  return k;
}

int pat_blocks(int nranks, int dimension) {
  int count = 0;
  const int period = 1 << (dimension + 1), bit = 1 << dimension;
  for (int t = 1; t < nranks; ++t) count += (t % period) == bit;
  return count;
}

namespace {

int dimension_of(const std::string& collective, int steps, int step) {
  return collective == "reduce_scatter" ? step : steps - 1 - step;
}

int peer_of(const std::string& collective, int n, int rank, int dimension) {
  const int d = 1 << dimension;
  return collective == "reduce_scatter" ? (rank + d) % n : ((rank - d) % n + n) % n;
}

double fixed_cost_s(const PatTiming& timing, int blocks) { return timing.step_s + timing.per_block_s * blocks; }

}  // namespace

Schedule pat_schedule(const Topology& topo, const std::string& collective, double size_bytes, const PatTiming& timing) {
  check_pat(topo, collective);
  const int n = topo.num_gpus();
  const int steps = pat_steps(n);
  Schedule s;
  s.collective = collective;
  s.algorithm = "pat";
  s.nranks = n;
  s.size_bytes = size_bytes;
  std::vector<std::uint32_t> sent(n), received(n);  // rank's previous step: its send, its receive
  for (int step = 0; step < steps; ++step) {
    const int dim = dimension_of(collective, steps, step);
    const int blocks = pat_blocks(n, dim);
    std::vector<std::uint32_t> now_sent(n), now_received(n);
    for (int r = 0; r < n; ++r) {
      Transfer t;
      t.src = r;
      t.dst = peer_of(collective, n, r, dim);
      t.bytes = blocks * size_bytes / n;
      t.step = step;
      const double route_latency = route_latency_s(topo, route_between_gpus(topo, t.src, t.dst));
      t.delay_s = std::max(0.0, fixed_cost_s(timing, blocks) - route_latency) + (step == 0 ? timing.launch_s : 0.0);
      std::vector<std::uint32_t> deps;
      if (step > 0) deps = {sent[r], received[r]};
      now_sent[r] = s.add(t, deps);
      now_received[t.dst] = now_sent[r];
    }
    sent = now_sent;
    received = now_received;
  }
  return s;
}

double pat_time_s(const Topology& topo, const std::string& collective, double size_bytes, const PatTiming& timing) {
  check_pat(topo, collective);
  const int n = topo.num_gpus();
  const int steps = pat_steps(n);
  double total = timing.launch_s;
  for (int step = 0; step < steps; ++step) {
    const int dim = dimension_of(collective, steps, step);
    const double bytes = pat_blocks(n, dim) * size_bytes / n;
    LinkLoad load(topo);
    double latency = 0;
    for (int r = 0; r < n; ++r) {
      const Route route = route_between_gpus(topo, r, peer_of(collective, n, r, dim));
      latency = std::max(latency, route_latency_s(topo, route));
      for (const Hop& h : route) load.add(h, bytes);
    }
    total += std::max(fixed_cost_s(timing, pat_blocks(n, dim)), latency) + load.busiest().time_s;
  }
  return total;
}

}  // namespace ccsim
