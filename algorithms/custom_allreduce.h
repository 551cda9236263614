// vLLM's custom all-reduce (csrc/custom_all_reduce.cuh), ccsim's extension next to NCCL's algorithms
// (never chosen by NCCL's tuner; `--algo custom`). Inside one node whose GPUs map each other's
// buffers over NVLink / PCIe P2P, every GPU reads its peers' buffers directly and reduces locally:
//   one-shot: read the whole buffer S from each of the n-1 peers, reduce: (n-1) S in per GPU, 1 step;
//   two-shot: reduce-scatter (read 1/n of S from each peer), fenced barrier, all-gather (read each
//             peer's reduced 1/n): 2 (n-1)/n S in per GPU, 2 steps.
// No channel buffers and no ring steps: 1 or 2 steps instead of the ring's 2(n-1). See
// docs/custom-allreduce.md for vLLM's selection rule and where the constants come from.
#pragma once
#include <string>

#include "algorithms/schedule.h"
#include "topologies/topology.h"

namespace ccsim {

enum class CustomArVariant { OneShot, TwoShot };
const char* to_string(CustomArVariant v);

// Fixed costs and an optional cap on the copy kernel's read rate. Defaults: vLLM's kernel on H100
// outside CUDA graphs, from the latencies sglang PR #2904 measured for it (TP8: 4 KiB 9.3 us; the
// 0.5 -> 1 MiB two-shot rows give a 15.8 us intercept). On a dgx-h100 a read's route (GPU -> NVSwitch
// -> GPU) costs 1.0 us per step, so
//   launch_s        = 9.3 - 1.0 (route) - 0.4 (7 x 4 KiB at the read rate)  ~ 7.9 us: kernel launch,
//                     input copy into the registered buffer, start and end barriers;
//   stage_barrier_s = 15.8 - 7.9 - 2 x 1.0 (two steps' route)               ~ 5.9 us: two-shot's fenced
//                     (release/acquire) barrier between the stages.
// read_Bps: 0 lets the links (NVLink / PCIe) set the data time. The same table's two-shot slope
// (512 KiB -> 1 MiB: +14.6 us for +896 KiB read per GPU) implies the kernel's 36 blocks sustain only
// ~63 GB/s of remote reads per GPU there; set read_Bps = 63e9 to model that (docs/custom-allreduce.md).
struct CustomArTiming {
  double launch_s = 7.9e-6;
  double stage_barrier_s = 5.9e-6;
  double read_Bps = 0;               // > 0: remote reads per GPU the kernel sustains (all peers together)
};

struct CustomAllreduceOptions {
  CustomArTiming timing;
  double max_bytes = 8.0 * 1024 * 1024;  // vLLM's CustomAllreduce max_size: larger tensors go to NCCL
};

// vLLM's rule (CustomAllreduce::allreduce): 2 GPUs always one-shot; fully connected 4 GPUs below
// 512 KiB and 6 or 8 GPUs below 256 KiB one-shot; two-shot otherwise.
CustomArVariant vllm_custom_ar_variant(int world_size, double size_bytes);

// Throws InputError(where, why) unless vLLM would run its custom all-reduce on this topology and
// size: a single node; 2, 4, 6 or 8 GPUs; with more than 2 GPUs all pairs on NVLink (vLLM refuses
// "more than two PCIe-only GPUs"); with PCIe, P2P enabled; size below max_bytes.
void check_custom_allreduce(const Topology& topo, double size_bytes, const CustomAllreduceOptions& options,
                            const std::string& where = "--algo custom");

// The schedule: one transfer per (peer j -> reader i) and step; two-shot's second step waits for
// every first-step transfer (the barrier). With read_Bps > 0 every read is capped at read_Bps / (n - 1).
Schedule custom_allreduce_schedule(const Topology& topo, double size_bytes, const CustomAllreduceOptions& options);

// Closed form: launch (+ stage barrier) + per step: the route latency of a read plus
// max(busiest link load / bandwidth, (n-1) x bytes per peer / read_Bps).
double custom_allreduce_time_s(const Topology& topo, double size_bytes, const CustomAllreduceOptions& options);

}  // namespace ccsim
