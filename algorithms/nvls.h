// NCCL's NVLS algorithms as Schedules with switch endpoints (docs/nvls.md).
//
// NVLS ("NVLink SHARP", NCCL 2.30 on sm90+ NVSwitch nodes) lets the NVSwitch reduce and replicate:
// a GPU's multimem.ld_reduce makes the switch read the same address on every GPU and return the sum,
// and multimem.st makes it write one GPU's data to every GPU. Every GPU is the "head" of 1/n of the
// buffer. One node, all_reduce of S bytes on n GPUs, for head j's slice (S/n):
//   ld_reduce  GPU i -> switch reducer (every i, S/n each), reducer -> GPU j (the sum, S/n)
//   st         GPU j -> switch (S/n), switch -> GPU i (every i, S/n each)
// so each GPU link carries S (operands) + S/n (its own slice's store) up and S/n + S down:
// S(1 + 1/n) each way, against the ring's 2(n-1)/n S. reduce_scatter is the ld_reduce half (S up,
// S/n down), all_gather the st half (S/n up, S down; S = the gathered size).
//
// NVLSTree (several nodes, all_reduce): inside every node the ld_reduce half delivers slice h (S/H,
// H heads = one per NIC rail) to head GPU h, the heads of all nodes reduce and broadcast slice h over
// NCCL's double binary tree on rail h (algorithms/tree.h nccl_dtree; each tree carries half), and
// every head writes the result to its node by multimem.st.
//
// The switch's reduction units are a topology vertex ("nN.nvswitch.sharp", VertexKind::Reducer)
// behind a link of the reduction rate (node.nvlink.nvls_reduce_GBps): ld_reduce operands cross it.
#pragma once
#include <string>

#include "algorithms/nccl_model.h"
#include "algorithms/schedule.h"
#include "topologies/topology.h"

namespace ccsim {

// NCCL 2.30 NVLS facts used here.
// NVLS kernels run chunkSteps = sliceSteps = 1: NCCL_STEPS = 8 chunks in flight per connection.
constexpr int kNvlsPipelineDepth = nccl230::kSteps;

struct NvlsOptions {
  // NCCL's NVLS channels (predict passes NcclTopoSummary::nvls_channels: 24/32 on sm100), recorded
  // in Transfer::channels (channels share path and timing).
  int channels = nccl230::nvls_channels(90, false);
  // One node: NCCL's NVLS heads (channel.nvls.nHeads, the NVLS graph's channels: every GPU up to
  // NCCL_MAX_NVLS_ARITY = 32; predict passes NcclTopoSummary::nvls_graph.nChannels), which set the
  // chunk rule's (channel, head) units and the loop; 0: every GPU. The flows still give every GPU a
  // slice of S/n (S/32 on 32 heads of 72 GPUs would load a head's link 1.4% more).
  int heads = 0;
  // Bytes per chunk of one channel and head; 0: NCCL's rule (nccl_nvls_chunk_bytes on one node,
  // nccl_nvls_tree_chunk_bytes for NVLSTree).
  double chunk_bytes = 0;
  int max_chunks = 64;                // NVLSTree: chunks per tree family, like the Tree's cap
  // NCCL 2.30 latencies (Simple; baseLat is 0 for both algorithms): NVLS hwLat[NVLINK][NVLS] = 25 us
  // per operation; NVLSTree hwLat[NVLINK][NVLSTree] = 25 us inside the node plus
  // hwLat[NET][NVLSTree] = 20.9 us per network hop.
  double intra_s = nccl230::hwLat[nccl230::kHwNvlink][static_cast<int>(Algo::NVLS)][2] * 1e-6;
  double tree_intra_s = nccl230::hwLat[nccl230::kHwNvlink][static_cast<int>(Algo::NVLSTree)][2] * 1e-6;
  double net_step_s = nccl230::hwLat[nccl230::kHwNet][static_cast<int>(Algo::NVLSTree)][2] * 1e-6;
  // NVLSTree: > 0: data bytes per second one channel moves across the network at most, whatever the
  // links allow. NCCL's tuner caps NVLSTree at perChMaxNVLSTreeBws, a measured kernel throughput
  // (nvls_tree_channel_cap_Bps gives it per running channel); 0: the links alone.
  double channel_rate_cap_Bps = 0;
};

// The options NCCL's own counts give: its NVLS channels (comm->nvlsChannels: 16 on sm90, 24 or 32 on
// sm100, algorithms/nccl_channels.cpp) and, for one node, its NVLS heads (the NVLS graph's channels,
// at most 32), so that the replay runs what the NCCL model counts.
NvlsOptions nccl_nvls_options(const NcclTopoSummary& summary);

// Whether the topology's nodes can run NVLS (NVSwitch with NVLink SHARP: node.nvlink.nvls).
bool nvls_supported(const Topology& topo);

// NVLS on one node: all_reduce, reduce_scatter or all_gather (`size_bytes` is the nccl-tests size:
// the buffer, the input buffer, the gathered buffer). One record per connection; no dependencies:
// multimem operations are cut-through, so all flows of the operation run concurrently (docs/nvls.md).
// Every transfer's delay is the NVLS latency plus the kernel's pipeline fill (nvls_pipeline_fill_s)
// minus its route's physical latency. The bytes are linear in the size, the fill is not (NCCL's chunk
// follows the size): rebuild per size. InputError when the topology has several nodes or no NVLS, when
// the protocol is not Simple (NCCL runs NVLS with Simple only), or for another collective.
Schedule nvls_schedule(const Topology& topo, const std::string& collective, double size_bytes, Proto proto);
Schedule nvls_schedule(const Topology& topo, const std::string& collective, double size_bytes,
                       const NvlsOptions& options);

// NVLSTree across nodes (all_reduce only, as in NCCL). Family (head h, tree t) is carried by half of
// the NVLS channels (each channel serves every head; the channels' halves run the two trees), chunked
// like the Tree: C = max(1, min(max_chunks, ceil(bytes per family and channel / chunk))) chunks per
// family, the chunk being NCCL's (nccl_nvls_tree_chunk_bytes), so the schedule is NOT linear in the
// size: rebuild it per size. Simulate with pipeline depth
// kNvlsPipelineDepth. InputError on one node, without NVLS or NICs, or for another protocol or collective.
Schedule nvls_tree_schedule(const Topology& topo, const std::string& collective, double size_bytes, Proto proto);
Schedule nvls_tree_schedule(const Topology& topo, const std::string& collective, double size_bytes,
                            const NvlsOptions& options);

// NCCL's NVLS chunk per channel and head on one node, in bytes (enqueue.cc calcCollChunking, NCCL 2.30):
// from `nvls_chunk_bytes` (NCCL_NVLS_CHUNKSIZE, 128 KiB, which NCCL caps at the Simple step NCCL_BUFFSIZE
// / 8 before it gets here; nvls_schedule does), then, with ops = channels x heads (channel, head)
// units, 64 KiB below 64 x ops x chunk, 32 KiB below 8 x ops x chunk and 16 KiB below 2 x ops x chunk,
// each test on the chunk the previous one left. dgx-h100 (16 channels x 8 heads): 128 KiB from 1 GiB,
// 64 KiB from 64 MiB, 32 KiB from 8 MiB, 16 KiB below. `size_bytes` is NCCL's nBytes (the buffer).
double nccl_nvls_chunk_bytes(double size_bytes, int channels, int heads,
                             double nvls_chunk_bytes = kDefaultNvlsChunkBytes);

// Warp groups a chunk passes through in NCCL's one-node NVLS kernel (src/device/all_reduce.h,
// reduce_scatter.h, all_gather.h; buffers of NCCL_STEPS chunks between them): all_reduce 3 (scatter:
// input -> this GPU's NVLS buffer of each head; reduce: ld_reduce + multimem.st; gather: NVLS buffer ->
// output), reduce_scatter 2 (scatter; ld_reduce into the output), all_gather 2 (multimem.st of the
// input; gather).
int nvls_kernel_stages(const std::string& collective);

// The pipeline fill of that kernel: the first loop's copy before its multimem traffic and the last
// loop's copy after it, (stages - 1) loops in all. A loop is channels x heads x chunk of the buffer
// (NCCL's chunk for this size); the stages run at one rate, the multimem traffic's, since that is what
// sets the kernel's measured rate (a balanced pipeline). So fill = (stages - 1) x the bandwidth term of
// min(S, loop). dgx-h100 all_reduce: 2 x 16 MiB of 128 KiB chunks (120 us) at 1 GiB and beyond,
// 2 x 2 MiB of 16 KiB chunks (15 us) from 2 to 8 MiB.
double nvls_pipeline_fill_s(const Topology& topo, const std::string& collective, double size_bytes,
                            const NvlsOptions& options = {});

// One line for `ccsim explain` where NCCL's choice is NVLS on one node: what ccsim's replay adds to
// NCCL's model (its chunk, loop and pipeline fill at this size), since NCCL's model has no fill.
// `options` as the replay gets them (NCCL's NVLS channels and heads).
std::string nvls_replay_note(const Topology& topo, const std::string& collective, double size_bytes,
                             const NvlsOptions& options);

// ccsim's closed form of nvls_schedule (derived in docs/nvls.md): every flow starts after the NVLS
// latency and the pipeline fill (the engine's idle flows show exactly that), and the busiest of three
// resources sets the bandwidth term, B = the GPU <-> NVSwitch link (per direction), R = the switch's
// reduction rate:
//   all_reduce:     T = intra + fill + max(S(1 + 1/n) / B, n S / R)
//   reduce_scatter: T = intra + fill + max(S / B, n S / R)
//   all_gather:     T = intra + fill + S / B
double nvls_closed_form_time_s(const Topology& topo, const std::string& collective, double size_bytes,
                               const NvlsOptions& options = {});

// ccsim's closed form of nvls_tree_schedule (docs/nvls.md): a pipeline whose first chunk crosses the
// tree at the idle rate and whose later chunks leave one per period of the busiest NIC direction,
// bounded below by the NVLink term. H heads, C chunks of c = S / (2 H C) bytes per family,
// d = ceil(log2 nodes), B the multimem data rate of a GPU's NVLink, beta the heads' route bottleneck
// across nodes, r a connection's share of the busiest NIC direction (beta / 2 for 2 nodes, beta / 4
// beyond: an interior node sends up + 2 down in one tree and up in the other); beta and r capped at
// K = channel_rate_cap_Bps x channels per family when set:
//   T = max(tree_intra + 2 H c / B + 2 d (net_step + c / min(beta, K)) + c / B + (C - 1) c / r,
//           tree_intra + S (1 + 1/n) / B)
// Within 2% of the engine where one term dominates (tests: 2 and 4 nodes; dgx-h100 in docs/nvls.md).
double nvls_tree_closed_form_time_s(const Topology& topo, double size_bytes, const NvlsOptions& options = {});

// NCCL's NVLSTree ceiling per running NVLS channel, in data bytes per second: the algorithm bandwidth
// of its busBw ceiling (nccl_busbw_ceiling_GBps) shared by the nvls_channels channels NCCL runs. 0: no cap.
double nvls_tree_channel_cap_Bps(const NcclTopoSummary& summary);

// Heads of an NVLSTree: local GPU of each NIC rail (the first GPU affined to it), one per rail.
std::vector<int> nvls_tree_heads(const Topology& topo);
// NCCL's NVLSTree chunk per channel and head, in bytes (enqueue.cc calcCollChunking, as of NCCL 2.30):
// NCCL_NVLS_CHUNKSIZE (`nvls_chunk_bytes`, 128 KiB), at most NCCL_NVLSTREE_MAX_CHUNKSIZE
// (`tree_max_chunk_bytes`; 0 for its default -2: 64 KiB from 4 nodes on, else no cap), then, with
// ops = channels x heads (channel, head) units in flight, 64 KiB below 4 x ops x 128 KiB and 32 KiB
// below ops x 64 KiB (and the larger-chunk steps for a larger chunk); `size_bytes` is NCCL's nBytes
// (the all_reduce buffer).
double nccl_nvls_tree_chunk_bytes(double size_bytes, int channels, int heads, int nodes,
                                  double nvls_chunk_bytes = kDefaultNvlsChunkBytes, double tree_max_chunk_bytes = 0);
// Chunks per family of an NVLSTree for a size (the rule above).
int nvls_tree_chunks(const Topology& topo, double size_bytes, const NvlsOptions& options);
// The size at which every family channel runs max_chunks chunks of the nominal chunk (that of large
// sizes); past it the builder enlarges the chunks (sim/steady_state.h extends the pipeline instead).
// 0 when half of it would still use a smaller chunk.
double nvls_tree_chunk_cap_bytes(const Topology& topo, const NvlsOptions& options);

}  // namespace ccsim
