#include "algorithms/step_timing.h"

#include <algorithm>

#include "topologies/routing.h"

namespace ccsim {

std::int64_t nccl_buffer_bytes(const Topology& topo, Proto p) {
  const NcclBufferSizes& b = topo.nccl_buffers;
  const std::int64_t set = p == Proto::LL ? b.ll_bytes : p == Proto::LL128 ? b.ll128_bytes : b.simple_bytes;
  return set > 0 ? set : nccl230::buff_bytes(p);
}

StepTiming nccl_step_timing(Algo algo, Proto p) {
  const int a = static_cast<int>(algo), q = static_cast<int>(p);
  StepTiming t;
  t.launch_s = nccl230::baseLat[a][q] * 1e-6;
  t.nvlink_step_s = nccl230::hwLat[nccl230::kHwNvlink][a][q] * 1e-6;
  t.pcie_step_s = nccl230::hwLat[nccl230::kHwPci][a][q] * 1e-6;
  t.net_step_s = nccl230::hwLat[nccl230::kHwNet][a][q] * 1e-6;
  return t;
}

RingProtocol ring_protocol(Proto p) {
  RingProtocol r;
  r.proto = p;
  r.timing = nccl_step_timing(Algo::Ring, p);
  switch (p) {
    case Proto::LL:
      r.wire_factor = 2.0;  // ncclLLFifoLine: 8 B data + 8 B flags per 16 B line
      r.pipeline_depth = nccl230::kSteps;
      break;
    case Proto::LL128:
      r.wire_factor = 128.0 / 120.0;  // 120 data bytes per 128 B line
      r.pipeline_depth = nccl230::kSteps;
      break;
    case Proto::Simple:
      r.wire_factor = 1.0;
      r.pipeline_depth = nccl230::kSteps / 2;
      break;
  }
  return r;
}

StepTiming multi_node_ring_timing(StepTiming timing, Proto p, int nodes, double net_overhead_us) {
  if (nodes < 2) return timing;
  const double floor_s = net_overhead_us * (p == Proto::Simple ? 3.0 : 1.0) * 1e-6;
  timing.nvlink_step_s = std::max(timing.nvlink_step_s, floor_s);
  timing.pcie_step_s = std::max(timing.pcie_step_s, floor_s);
  return timing;
}

double step_latency_s(const Topology& topo, const StepTiming& timing, int src, int dst, int rail) {
  const int gpn = topo.gpus_per_node();
  if (src / gpn != dst / gpn) return timing.net_step_s;
  const Route route = route_between_gpus(topo, src, dst, rail);
  if (!route.empty() && topo.link(route.front().edge).kind == LinkKind::NvLink) return timing.nvlink_step_s;
  // NCCL's SHM transport: the step's flag goes through pinned host memory (node.pcie.shm_step_us).
  if (nccl_shm_pair(topo, src, dst)) return std::max(timing.pcie_step_s, topo.shm_step_s);
  return timing.pcie_step_s;
}

double step_software_delay_s(const Topology& topo, const StepTiming& timing, int src, int dst, int rail) {
  const double route_latency = route_latency_s(topo, route_between_gpus(topo, src, dst, rail));
  return std::max(0.0, step_latency_s(topo, timing, src, dst, rail) - route_latency);
}

}  // namespace ccsim
