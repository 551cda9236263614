// NCCL's Ring Broadcast and Ring Reduce as Schedules: on every ring (one family per NIC rail, as
// for the ring all_reduce, algorithms/ring.h) the data travels along a chain of n-1 hops, pipelined
// chunk by chunk. Broadcast starts at the root and ends at the root's ring predecessor (NCCL's
// runRing for Broadcast: the root sends, the others receive-copy-send, the rank before the root
// only receives). Reduce starts at the root's ring successor and ends at the root (the successor
// sends its data, the others receive-reduce-send, the root receives-reduces). See docs/collectives.md.
#pragma once
#include <string>

#include "algorithms/ring.h"
#include "algorithms/schedule.h"
#include "algorithms/step_timing.h"
#include "topologies/topology.h"

namespace ccsim {

// NCCL's chunk per channel for Broadcast/Reduce (BROADCAST_CHUNKSTEPS = REDUCE_CHUNKSTEPS = 1: one
// step of the protocol's buffer, nccl_buffer_bytes), in bytes on the wire; with NCCL's default
// buffers Simple 4 MiB / 8 steps = 512 KiB, LL 512 KiB / 8 = 64 KiB (half of it data), LL128
// 4800 KiB / 8 = 600 KiB (120/128 of it data).
double chain_chunk_wire_bytes(const Topology& topo, Proto p);

// NCCL_STEPS / BROADCAST_SLICESTEPS (1): slots per connection for Broadcast/Reduce. The chain's
// records of one connection are ordered by dependencies, so the engine's depth does not matter.
constexpr int kChainPipelineDepth = nccl230::kSteps;

struct ChainScheduleOptions {
  StepTiming timing;             // per-hop latency classes and launch (ring_protocol(p).timing)
  double wire_factor = 1.0;      // bytes on the wire per data byte (LL 2, LL128 128/120)
  double chunk_wire_bytes = nccl230::kSimpleBuffBytes / nccl230::kSteps;  // per channel (chain_chunk_wire_bytes)
  int max_chunks = 1 << 20;      // cap on chunks per family (only the head and tail size depend on it)
  // > 0: data bytes per second one NCCL channel moves, whatever the links allow: NCCL's Ring LL and
  // LL128 ceilings (ring_channel_cap_Bps). Every connection of the chain carries the whole stream,
  // so each is capped (the head chunk then pays it per hop, a fill of one chunk per hop).
  double channel_rate_cap_Bps = 0;
  // NCCL's channels for this operation (nccl_channels_threads: the tuner's channels after its thread
  // threshold), 0 when not known. Each channel moves its own chunks store-and-forward hop by hop, and
  // a hop's link serves the channels' chunks one after another, so the chain's pipeline has a unit
  // per channel and chunk, not per chunk of the channels in lockstep (chain_chunks).
  int nccl_channels = 0;
  // > 0: the piece of a channel's data a GPU forwards before the rest has arrived, in wire bytes, when
  // it is smaller than a chunk. LL and LL128 forward as their lines arrive (chain_forward_unit_wire_bytes),
  // Simple a whole slice (one step for broadcast and reduce): 0, the chunk.
  double forward_unit_wire_bytes = 0;
};

// What one NCCL thread block forwards per round of its loop, in wire bytes, for a protocol whose
// receivers pass data on before a step is complete: LL, one 16 B line per thread (prims_ll.h: each
// thread reads and stores its line, then moves on by nthreads lines); LL128, 2 KiB per warp
// (prims_ll128.h: WireWordPerSlice = WARP_SIZE x NCCL_LL128_SHMEM_ELEMS_PER_THREAD = 32 x 8 words of
// 8 B, each warp polling its own lines' flags), so nthreads x 64 B. 0 for Simple, whose receiver waits
// for a slice's tail flag (prims_simple.h), and for hops through a network proxy, which sends whole
// steps: the chain of a multi-node ring keeps the step.
double chain_forward_unit_wire_bytes(Proto p, int threads, bool multi_node);

// Chunks each family's data is cut into for a size: NCCL's channels of the family (options.nccl_channels
// / families; the plan's channels when not given) x ceil(wire bytes per channel / chunk_wire_bytes),
// in [1, max_chunks]. Depends on the size, so chain schedules are NOT linear in the size: build one
// per size (Schedule::scaled_to would keep the reference's chunk count).
int chain_chunks(const RingPlan& plan, double size_bytes, const ChainScheduleOptions& options);

// The chain of family `family` for a root: ranks in the order the data visits them (n entries;
// broadcast: root first; reduce: root last).
std::vector<int> chain_order(const RingPlan& plan, int family, const std::string& collective, int root);

// Broadcast or reduce of `size_bytes` (the nccl-tests size: the whole buffer) from / to `root`.
// Every family carries 1/F of the buffer (times the wire factor) in C chunks of c bytes, pipelined
// along its chain. Per hop three records (`step` 0, 1, 2): the head (chunk 0: it crosses hop h once
// it crossed hop h-1, and pays the hop's per-step latency; on the first hop also the launch), the
// body (chunks 1..C-2, streaming right behind the head, as NCCL's 8 slots per connection let the
// data of later chunks flow while earlier flags travel) and the tail (chunk C-1: after the body and
// after the upstream tail, so a hop never finishes before its input). (n-1) x 3 x F records, whatever
// the size. Throws std::invalid_argument for other collectives, InputError for a root outside [0, n).
Schedule chain_schedule(const Topology& topo, const RingPlan& plan, const std::string& collective, double size_bytes,
                        int root, const ChainScheduleOptions& options);

// The closed form of that pipeline, hops h with latency alpha_h (NCCL per-step latency) and
// bottleneck bandwidth beta_h, C chunks of c bytes per family (families on disjoint links):
//   T = launch + sum_h (alpha_h + c / beta_h) + (C - 1) c / min_h beta_h + r x restart_latency
// The first chunk crosses every hop, the others follow at the pace of the slowest hop. r = 2 (C >= 3),
// 1 (C = 2), 0 (C = 1): the body and the tail are new flows in the engine and pay the last hop's
// physical route latency again (restart_latency_s) -- an artifact of flow-level replay, at most a
// few microseconds.
double chain_closed_form_time_s(double launch_s, double sum_hop_alpha_s, double sum_hop_c_over_beta_s,
                                int chunks, double chunk_bytes, double min_beta_Bps, double restart_latency_s);

}  // namespace ccsim
