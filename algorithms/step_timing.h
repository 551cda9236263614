// Fixed costs per algorithm step, as NCCL's cost model has them for the Simple protocol
// (NCCL 2.30 src/graph/tuning.cc: baseLat[Ring][Simple] and hwLat[NVLINK|PCI|NET][Ring][Simple]).
// In ccsim a step's fixed cost is split in two: the physical latency of the links on the route
// (from the topology) and a software delay (flag handshakes, proxy progress) that makes the sum equal
// to NCCL's per-step latency on an idle link. Issue #3 adds LL and LL128.
#pragma once

namespace ccsim {

struct StepTiming {
  double launch_s = 8.4e-6;       // baseLat Ring/Simple: kernel launch and setup, once per operation
  double nvlink_step_s = 3.4e-6;  // hwLat NVLINK Ring/Simple
  double pcie_step_s = 5.7e-6;    // hwLat PCI Ring/Simple
  double net_step_s = 14.0e-6;    // hwLat NET Ring/Simple
};

// The constants' provenance, printed in outputs.
constexpr const char* kStepTimingSource = "NCCL 2.30 Ring/Simple";

}  // namespace ccsim
