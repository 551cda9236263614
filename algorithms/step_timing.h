// Fixed costs per algorithm step and what a protocol does to the bytes on the wire, as NCCL's cost
// model and kernels have them (NCCL 2.30: baseLat[Ring][p], hwLat[NVLINK|PCI|NET][Ring][p];
// LL lines carry 4 data bytes per 8, LL128 120 per 128; NCCL_STEPS slots per connection).
// In ccsim a step's fixed cost is split in two: the physical latency of the links on the route
// (from the topology) and a software delay (flag handshakes, proxy progress) that makes the sum equal
// to NCCL's per-step latency on an idle link.
#pragma once
#include "algorithms/nccl_model.h"
#include "topologies/topology.h"

namespace ccsim {

struct StepTiming {
  double launch_s = nccl230::baseLat[1][2] * 1e-6;                       // Ring/Simple: 8.4 us
  double nvlink_step_s = nccl230::hwLat[nccl230::kHwNvlink][1][2] * 1e-6;  // 3.4 us
  double pcie_step_s = nccl230::hwLat[nccl230::kHwPci][1][2] * 1e-6;       // 5.7 us
  double net_step_s = nccl230::hwLat[nccl230::kHwNet][1][2] * 1e-6;        // 14 us
};

// A connection's buffer of protocol `p` in bytes: the description's NCCL_BUFFSIZE / NCCL_LL_BUFFSIZE /
// NCCL_LL128_BUFFSIZE (Topology::nccl_buffers), else NCCL 2.30's default (nccl230::buff_bytes). NCCL
// cuts it into NCCL_STEPS slots (init.cc computeBuffSizes, enqueue.cc's stepSize).
std::int64_t nccl_buffer_bytes(const Topology& topo, Proto p);

// NCCL 2.30's per-step constants of an algorithm and protocol: launch = baseLat[a][p], per-step
// latency hwLat[NVLINK|PCI|NET][a][p].
StepTiming nccl_step_timing(Algo a, Proto p);

// How a protocol runs a ring.
struct RingProtocol {
  Proto proto = Proto::Simple;
  StepTiming timing;
  double wire_factor = 1.0;  // bytes on the wire per byte of data: LL 2 (4 B flag per 4 B data), LL128 128/120
  // Steps in flight per connection: NCCL_STEPS (8) / slice steps (Simple 2, LL/LL128 1).
  int pipeline_depth = nccl230::kSteps / 2;
};

RingProtocol ring_protocol(Proto p);

// A ring across several nodes, as NCCL's cost model charges it (tuning.cc, Ring's all_reduce,
// all_gather and reduce_scatter): every step inside a node costs at least the proxy's network
// overhead, three times that on Simple (getNetOverhead: 1 us on Intel and other CPUs, 2 us on AMD;
// NcclTopoSummary::net_overhead_us), since the ring advances at the pace of its network steps,
// which the proxy thread serves. A ring on one node (`nodes` 1) is returned as it is. Broadcast and
// reduce (NCCL's chains) are not charged it: callers do not pass their timing here.
StepTiming multi_node_ring_timing(StepTiming timing, Proto p, int nodes, double net_overhead_us);

// NCCL's per-step latency of a hop between two ranks: network across nodes, NVLink when the route
// starts on NVLink, PCIe otherwise; a pair NCCL joins through SHM at least node.pcie.shm_step_us.
double step_latency_s(const Topology& topo, const StepTiming& timing, int src, int dst, int rail);

// The software part of a hop's step cost: NCCL's per-step latency minus the physical latency of the
// route (at least 0), so that an idle hop costs exactly NCCL's per-step latency.
double step_software_delay_s(const Topology& topo, const StepTiming& timing, int src, int dst, int rail);

// The constants' provenance, printed in outputs.
constexpr const char* kStepTimingSource = "NCCL 2.30.7 Ring constants";

}  // namespace ccsim
