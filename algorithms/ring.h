// Ring collectives as NCCL runs them: every channel is a ring over all ranks; inside a node the ring
// follows NVLink (or PCIe locality), between nodes it crosses once per node on one rail, so that a
// cluster with R NICs per node runs R ring families side by side, one per rail.
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "algorithms/schedule.h"
#include "algorithms/step_timing.h"
#include "topologies/topology.h"

namespace ccsim {

struct RingFamily {
  std::vector<int> order;  // ranks in ring order; order[i] sends to order[(i + 1) % n]
  int rail = -1;           // NIC index used for the node crossings (-1: single node)
  int channels = 1;        // NCCL channels that follow this ring
};

struct RingPlan {
  std::vector<RingFamily> families;
  int total_channels() const;
};

// A chain through every GPU of one node from `first`, ending at `last` (-1: the GPU before `first`
// in index order, or any GPU on a mesh): over joined pairs on GPUs joined pair by pair (NVLink without
// NVSwitch: topologies/nvlink_mesh.h), else in index order (PCIe locality). Rings and trees cross a
// node along it.
std::vector<int> node_chain(const Topology& topo, int first, int last);

// Rings for the whole cluster. `channels` is the number of NCCL channels to spread over the
// families (at least one per family).
RingPlan plan_rings(const Topology& topo, int channels);

// The ring channels predict uses by default: two per NIC rail across nodes, two on one node (on GPUs
// joined pair by pair, two per ring the pairs hold).
int default_ring_channels(const Topology& topo);

// NCCL's Simple chunk: 4 steps of a 4 MiB buffer split in 8 slots = 2 MiB per channel and step.
constexpr double kSimpleChunkBytes = nccl230::kSimpleBuffBytes / nccl230::kSteps * 4;

struct RingScheduleOptions {
  StepTiming timing;
  double wire_factor = 1.0;  // protocol overhead: bytes on the wire per data byte (LL 2, LL128 128/120)
  bool expand_channels_and_chunks = false;  // one record per channel and chunk instead of merged records
  // > 0: data bytes per second one NCCL channel moves over any of its connections, whatever the links
  // allow: NCCL's Ring LL and LL128 ceilings and one block's Simple rate (ring_channel_cap_Bps). A
  // ring advances in lockstep, so every connection carries the whole stream and each is capped.
  double channel_rate_cap_Bps = 0;
};

// NCCL's ceiling of a ring with protocol `p` (nccl_busbw_ceiling_GBps: llMaxBw for LL,
// perChMaxRingLL128Bw x the ring graph's channels for LL128, one block's Simple rate x the coll
// channels for Simple) as data bytes per second of one of the plan's channels: a ring's busBw is the
// rate at which each of its connections moves data, summed over the channels. For an operation of
// `size_bytes`: below NCCL's thread thresholds fewer channels run and the kernels' part of the ceiling
// falls with them (nccl_busbw_ceiling_GBps with a size).
double ring_channel_cap_Bps(const NcclTopoSummary& summary, const RingPlan& plan, Proto p,
                            double size_bytes = std::numeric_limits<double>::infinity());

// The busbw a Simple ring or chain on `topo` whose path crosses the network (several NVLink domains)
// holds at most, bytes/s: one thread block's copy per channel NCCL runs at `size_bytes`
// (Topology::net_ring_channel_Bps x nccl_running_channels). 0 on one domain or without a rate.
double net_ring_channels_bound_Bps(const Topology& topo, const NcclTopoSummary& summary, double size_bytes);

// The cap per plan channel the replay of a ring or chain on `topo` runs with: ring_channel_cap_Bps and,
// with Simple on a ring whose path crosses the network (several NVLink domains), one thread block's
// copy per channel NCCL runs at `size_bytes` (Topology::net_ring_channel_Bps): Hopper rings across
// nodes hold about one P2P channel's rate per channel, half of what NCCL's one-node block moves
// (docs/accuracy.md "A ring channel across nodes"). 0: no cap.
double ring_replay_channel_cap_Bps(const Topology& topo, const NcclTopoSummary& summary, const RingPlan& plan, Proto p,
                                   double size_bytes);

// The schedule-wide settings every ring schedule carries (ring_schedule and the orbit generator).
void set_ring_schedule_caps(Schedule& s, const RingScheduleOptions& options);

// Ring all_reduce (reduce-scatter then all-gather: 2(n-1) steps), all_gather and reduce_scatter
// (n-1 steps). `size_bytes` is the nccl-tests size column: the buffer for all_reduce, the gathered
// buffer for all_gather and the input buffer for reduce_scatter.
Schedule ring_schedule(const Topology& topo, const RingPlan& plan, const std::string& collective, double size_bytes,
                       const RingScheduleOptions& options);

// What ring_schedule's records are made of, shared with the generator of its orbit representatives
// (sim/ring_orbits.h), so that both emit bit-identical records. Throws as ring_schedule.
struct RingLayout {
  struct Hop {
    int src, dst, rail;
    double delay_s;  // the step's software delay (launch excluded)
  };
  std::vector<std::vector<Hop>> hops;   // per family and ring position p: order[p] -> order[p + 1]
  std::vector<int> chunks_per_channel;  // per family
  double block_per_family = 0;          // wire bytes per family and step
  int steps = 0;
};
RingLayout ring_layout(const Topology& topo, const RingPlan& plan, const std::string& collective, double size_bytes,
                       const RingScheduleOptions& options);
// Records per family, position and step: 1, or channels x chunks when expanded.
int ring_pieces(const RingLayout& layout, const RingPlan& plan, const RingScheduleOptions& options, int family);
// The record of `family`'s hop at ring `position` in `step` (its `piece` when expanded), dependencies aside:
// ring_schedule makes it depend on the same family's previous position in the previous step.
Transfer ring_record(const RingLayout& layout, const RingPlan& plan, const RingScheduleOptions& options, int family,
                     int position, int step, int piece);

// Number of ring steps for a collective on n ranks.
int ring_steps(const std::string& collective, int nranks);

}  // namespace ccsim
