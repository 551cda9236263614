// Which schedule the engine replays for NCCL's (algorithm, protocol) choice of one collective: one
// recipe per algorithm, so `predict` stays a size sweep and each algorithm owns its schedule builder.
// An algorithm the engine cannot replay on a topology (not built yet, or not applicable there) is
// reported with the reason; predict then replays Ring with Ring's best protocol and says so.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "algorithms/nccl_model.h"
#include "algorithms/ring.h"
#include "algorithms/schedule.h"
#include "algorithms/step_timing.h"
#include "topologies/topology.h"

namespace ccsim {

struct ReplayContext {
  const Topology* topo = nullptr;
  std::string collective;                       // "all_reduce", ...
  int ring_channels = 0;                        // ring channels; 0: two per NIC rail (multi-node) / two (one node)
  const StepTiming* calibrated_timing = nullptr;  // set: replay the ring with fitted timing, no wire overhead
  const NcclTopoSummary* summary = nullptr;     // NCCL's view of the topology (P2P channels, proxy cost)
  int root = 0;                                 // broadcast / reduce root
  // Ring and alltoall schedules as orbit representatives where the fabric's rotations hold
  // (sim/ring_orbits.h, sim/p2p_orbits.h): for the engine with its symmetry on; off, the whole
  // schedule (traces need every record).
  bool orbit_schedules = false;
};

struct ReplayRecipe {
  Algo algo = Algo::Ring;
  Proto proto = Proto::Simple;
  bool p2p = false;         // NCCL's P2P path (sendrecv, alltoall): no algorithm (`algo` unused), `proto` per message
  std::string label;        // "Ring/LL" or "P2P/Simple", shown in reports
  int pipeline_depth = 4;   // slices in flight per connection (engine)
  // Sizes with the same key share one schedule, built at their largest size and scaled to each
  // (Schedule::scaled_to): a constant for schedules linear in the size (ring), the chunk count for
  // chunked ones (tree), the size itself where every size needs its own schedule.
  std::function<long(double size_bytes)> structure_key;
  std::function<Schedule(double size_bytes)> build;
  // > 0: the size at which the builder's chunk cap is reached with the nominal chunk (tree_chunk_cap_bytes
  // and its kin). Larger sizes are not simulated: their time extends the pipeline from this size and
  // half of it by one period per extra chunk (sim/steady_state.h), as NCCL runs more chunks, not larger.
  double chunk_cap_bytes = 0;
  // Replayed on the fluid solver (sim/fluid_network.h) instead of SimGrid: set for the FIFO pipelines
  // (tree, NVLSTree, CollNet) above kFluidPipelineAboveGpus.
  bool fluid_solver = false;
};

// Schedules held whole (every record) stop at this many GPUs: a ring's 16 n^2 records are ~6 GiB at
// 2048 (cli/commands.h has the engine's overall limit). Rings and alltoalls generated as orbit
// representatives (sim/ring_orbits.h, sim/p2p_orbits.h) go further; one whose rotations do not hold
// there is refused.
constexpr int kMaxWholeScheduleGpus = 2048;
// Orbit-representative ring schedules above kMaxWholeScheduleGpus are simulated record by record:
// beyond this many records (about 60 s of SimGrid and 1.5 GiB) they are refused too.
constexpr std::size_t kMaxOrbitRecords = std::size_t{8} << 20;
// An alltoall's orbit representatives above kMaxWholeScheduleGpus plan the messages of the nodes one
// node rotation spans (sim/p2p_orbits.h: 1 M at 4096 dgx-h100 GPUs, leaf groups of 32), of every node
// without node rotation; beyond this many (a whole alltoall of 2048 GPUs plans 4.2 M: 0.7 GiB) they
// are refused.
constexpr std::size_t kMaxOrbitMessages = std::size_t{4} << 20;

// Above this many GPUs the FIFO pipelines (Tree, NVLSTree, CollNet) are replayed on the fluid solver:
// thousands of their connections are in flight at once and SimGrid re-solves them all at every event
// (Tree/Simple, 1 GiB, 128 dgx-h100 nodes: 19 s of SimGrid against 2.6 s; docs/performance.md). Up to
// it SimGrid replays them as before, so that those results stay as they were (the solvers agree to
// the printed digit on Tree Simple and LL and NVLSTree, not on every LL128 size: docs/engine.md).
constexpr int kFluidPipelineAboveGpus = 512;
// ... and whatever the count, where one NVLink domain holds more GPUs than a server does (GB200 NVL72:
// 72): the NVLS flows of a domain's heads are all in flight at once, and SimGrid's cost per completed
// comm grows with the comms in flight (its completion removes the comm from a list it walks): NVLSTree
// on 2 NVL72 racks, 1 GiB, 146 s of SimGrid against 1.9 s, the same time to the printed digit
// (docs/performance.md).
constexpr int kFluidPipelineAboveDomainGpus = 16;
// Whether a FIFO pipeline (tree, NVLSTree, CollNet) on `topo` is replayed on the fluid solver.
bool pipeline_on_fluid_solver(const Topology& topo);

// NVLSTree replays up to this many nodes (4096 dgx-h100 GPUs, the engine's limit): with the rail
// quotient (1/8 of the flows on dgx-h100) its chunk-cap size, 128 MiB, took 1.4 s on 32 nodes, 3.1 s
// on 64 and 11 s on 128 with SimGrid; on the fluid solver 1 GiB on 512 nodes takes 18 s of CPU and
// 1.7 GiB (docs/nvls.md).
constexpr int kNvlsTreeEngineMaxNodes = 512;
// CollNet replays up to this many nodes (in one leaf group: the spine's reduction is not modelled).
// Its schedules are simulated whole (no quotient): SimGrid up to kCollNetSimGridMaxNodes (1 GiB on
// 16 dgx-h100 nodes took 9 s, on 32 43 s), the fluid solver beyond.
constexpr int kCollNetEngineMaxNodes = 64;
constexpr int kCollNetSimGridMaxNodes = 8;

// Whether the engine replays `algo` for the context's collective on its topology; when not, `why`
// says so in words for the report.
bool engine_replays(const ReplayContext& ctx, Algo algo, std::string* why);

// The recipe for (algo, proto). Precondition: engine_replays(ctx, algo). Broadcast and reduce run
// Ring as a pipelined chain; sendrecv and alltoall are NCCL's P2P path whatever `algo` says (NCCL
// has no algorithm choice for them), with `proto` its per-message protocol.
ReplayRecipe replay_recipe(const ReplayContext& ctx, Algo algo, Proto proto);

}  // namespace ccsim
