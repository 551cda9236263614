// NCCL's point-to-point path (ncclSend / ncclRecv inside a group) as Schedules: any set of messages
// with per-peer sizes (alltoallv_schedule, what an MoE dispatch issues), and nccl-tests' sendrecv
// (every rank sends to rank+1 and receives from rank-1) and alltoall (every rank sends count elements
// to every rank) as callers of it. What NCCL 2.30 decides per operation (each message from its own
// size), restated from its source
// (src/graph/paths.cc ncclTopoComputeP2pChannels / ncclTopoGetNchannels, src/enqueue.cc
// scheduleP2pTasksToPlan / addP2pToPlan, src/init.cc p2pChunkSize, src/include/channel.h):
//   - channels: p2pnChannels = pow2Up(min(comm->nChannels, 64)); p2pnChannelsPerPeer = pow2Up(min over
//     peers of: NVLink peer 2 x NVLink links, other local peer 2, network peer (NCCL_NCHANNELS_PER_NET_PEER
//     unset) from the GPU's NICs counted by bandwidth (ncclTopoGetLocalNetCountByBw: netCount NICs of
//     netBw GB/s): from NCCL 2.29, max(netCount, ceil(netBw / NCCL_P2P_PER_CHANNEL_NET_BW 14)), one
//     channel per 14 GB/s of NIC (4 for a 400 Gb/s NIC); before, max(netCount, 2 halved while
//     2 x nRanks > 4 x p2pnChannels)), at most p2pnChannels. --nccl-version picks the rule;
//   - per operation: nChannelsMin = perPeer halved while nChannelsMin x nRanks > p2pnChannels;
//     nChannels = min(nChannelsMin, ceil(bytes / minPart)), doubled (up to perPeer) while the part
//     exceeds maxPart; minPart/maxPart = chunk/2 / chunk across nodes, chunk/8 / 32 chunk in one node;
//   - protocol: LL when bytes <= nChannels x NCCL_P2P_LL_THRESHOLD (16384), Simple otherwise; a
//     zero-byte send is still an operation (1 channel, LL, one proxy step of 0 bytes);
//   - chunk: Simple p2pChunkSize (NCCL_P2P_NET_CHUNKSIZE 128 KiB across nodes, NCCL_P2P_NVL_CHUNKSIZE
//     512 KiB in an all-NVLink node, NCCL_P2P_PCI_CHUNKSIZE 128 KiB otherwise), over the network /4
//     below one chunk and /2 below 8 chunks; LL one 64 KiB step (32 KiB of data);
//   - concurrency: peers are taken in rounds (p2pSchedule order); a channel's CTA runs one batch at
//     a time, a batch holding up to NCCL_MAX_DEV_WORK_P2P_PER_BATCH = 8 operations of one group of 8
//     consecutive rounds (enqueue.cc ncclAddWorkBatchToPlan). Across nodes a group's rounds share a
//     base channel, so at most p2pnChannels / nChannels x 8 peers are in flight; in one node (one
//     NVLink domain) each round has its own base, reverseBits(round) (channel.h), so at most
//     p2pnChannels, or 8 x p2pnChannels / nChannels when that is fewer; later rounds wait for a slot.
//   - PXN: a message to a GPU of another node leaves through the NIC of the destination's rail,
//     reached over NVLink through the local GPU on that rail (topologies/routing.h), whose CPU proxy
//     thread posts the network sends. The proxy's cost per message is P2pConfig::proxy_cost_s, from
//     the topology (NCCL's getNetOverhead by CPU vendor, NcclTopoSummary::net_overhead_us).
//   - PXN aggregation (ccsim's, for speed): the messages a rail GPU sends to one destination in one
//     wave travel as one network record; P2pScheduleOptions::aggregate_pxn.
// See docs/collectives.md for the model and its approximations.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "algorithms/nccl_model.h"
#include "algorithms/schedule.h"
#include "algorithms/step_timing.h"
#include "topologies/topology.h"

namespace ccsim {

constexpr int kP2pOpsPerBatch = 8;              // NCCL_MAX_DEV_WORK_P2P_PER_BATCH
// Engine slots per connection: NCCL_STEPS, P2P slice steps 1. A connection carries one record per
// wave at most, so the slots bind only beyond 8 waves.
constexpr int kP2pPipelineDepth = nccl230::kSteps;
constexpr double kP2pLLStepWireBytes = nccl230::kLLBuffBytes / nccl230::kSteps;  // NCCL LL buffer 524288 B / NCCL_STEPS

// NCCL's P2P parameters of a communicator on a topology.
struct P2pConfig {
  int nranks = 1;
  bool multi_node = false;
  int p2p_channels = 1;        // comm->p2pnChannels
  int channels_per_peer = 1;   // comm->p2pnChannelsPerPeer
  // comm->p2pChunkSize: NCCL_P2P_{NET,NVL,PCI}_CHUNKSIZE, their defaults P2pChunkSizes
  // (topologies/topology.h), a description's node.nic/nvlink/pcie.p2p_chunk_bytes otherwise.
  double chunk_bytes = P2pChunkSizes{}.net;
  const char* chunk_param = "NCCL_P2P_NET_CHUNKSIZE";  // the setting it comes from
  // NCCL_P2P_LL_THRESHOLD: LL up to this many bytes per channel of a message (Topology).
  double ll_threshold_bytes = kDefaultP2pLLThresholdBytes;
  bool pxn = false;            // inter-node messages go through the rail-local GPU (NVLink present)
  // CPU proxy cost per network message the proxy thread handles, seconds: NCCL's own estimate of the
  // per-step network overhead, getNetOverhead() in src/graph/tuning.cc (1 us Intel, 2 us AMD, 1 us
  // other; NCCL_NET_OVERHEAD overrides). NcclTopoSummary::net_overhead_us carries it.
  double proxy_cost_s = 1e-6;
};

// NCCL_P2P_PER_CHANNEL_NET_BW's default (NCCL 2.29+ src/graph/paths.cc): the network bandwidth NCCL
// counts on per P2P channel when it sizes the channels to a peer across nodes, GB/s (an integer
// parameter in NCCL, divided into the integer part of the NICs' bandwidth).
constexpr int kNcclP2pPerChannelNetGBps = 14;

// From `summary`: comm->nChannels (coll_channels), the proxy cost (net_overhead_us), the GPU's NICs
// counted by bandwidth and the NCCL version whose channel rule applies.
P2pConfig nccl_p2p_config(const Topology& topo, const NcclTopoSummary& summary);

// What NCCL decides for one send of `bytes` (addP2pToPlan).
struct P2pOp {
  int channels = 1;           // channels the message is split over
  Proto proto = Proto::Simple;
  double chunk_data_bytes = 0;  // data bytes per chunk (per proxy step)
  int chunks = 1;             // chunks over all channels (network: proxy steps)
  int max_concurrent_peers = 8;  // p2pnChannels / nChannels x 8; in one node at most p2pnChannels
};
P2pOp nccl_p2p_op(const P2pConfig& cfg, double bytes, bool network);

struct P2pScheduleOptions {
  // Per-hop latency and launch per protocol: NCCL has no P2P cost model; ccsim uses the Ring
  // constants of the protocol for the single hop of a message (ring_protocol(p).timing).
  bool model_proxy = true;   // add the proxy's per-message cost to network messages
  // PXN funnels a node's cross-node messages onto the rails: every message from node A to GPU d
  // leaves A through the NIC of d's rail, sent by the GPU on that rail. With aggregation on, those
  // messages travel as one record per (that GPU, d, wave, protocol, slot dependency) over the network
  // part of the route, plus one NVLink record per (sending GPU, relay GPU, wave, protocol) for the
  // legs to the relay; messages inside a node stay one record each. NCCL's decisions (protocol,
  // channels, rounds, proxy load) are still taken per message. Off: one record per message, whole route.
  // docs/collectives.md says where the two differ (messages of unequal size inside one group).
  bool aggregate_pxn = true;
};

// One ncclSend of a grouped send/recv: `bytes` payload bytes from rank `src` to rank `dst` (the
// matching ncclRecv is implied).
struct P2pMessage {
  int src = 0;
  int dst = 0;
  double bytes = 0;  // payload bytes of one ncclSend
};

// Grouped ncclSend/ncclRecv with per-peer sizes (alltoallv): each rank's messages are issued in NCCL's
// p2p round order (p2p_round_peers); protocol, channels and chunks per message from its own size.
// A message from a rank to itself is a local copy (NCCL copies it inside the GPU) and is not
// simulated. A zero-byte message is still an operation in NCCL (addP2pToPlan: one channel, LL, one
// proxy step of 0 bytes), so it costs its launch, hop latency and proxy turn and carries no bytes.
// At most one message per (src, dst) (NCCL would run a second one in a later epoch); ranks must be
// in range and bytes finite and >= 0: std::invalid_argument otherwise. Schedule::size_bytes is the
// total payload of the messages (self copies included).
Schedule alltoallv_schedule(const Topology& topo, const P2pConfig& cfg, const std::vector<P2pMessage>& messages,
                            const P2pScheduleOptions& options = {});

// nccl-tests sendrecv: rank r sends `size_bytes` to (r+1) mod n (and receives from r-1).
Schedule sendrecv_schedule(const Topology& topo, const P2pConfig& cfg, double size_bytes,
                           const P2pScheduleOptions& options = {});

// nccl-tests alltoall: `size_bytes` is the nccl-tests size (count x n x element bytes per rank); every
// rank sends size/n bytes to each other rank (the copy to itself stays in the GPU's memory and is
// not simulated). Peers are visited in NCCL's round order (round r: the rank r ahead, node-major);
// round r waits for round r - max_concurrent_peers of the same rank (its channel slot).
Schedule alltoall_schedule(const Topology& topo, const P2pConfig& cfg, double size_bytes,
                           const P2pScheduleOptions& options = {});

// The records of alltoall_schedule(topo, cfg, size_bytes, options) whose source lies in nodes
// [0, node_shift) (any node when node_shift is 0) and, with `rail_rotation`, has local index 0: one per
// orbit of the rotations by node_shift nodes and by one local GPU and NIC (sim/symmetry.h), in
// alltoall_schedule's order, with the same fields and finish lists; a dependency points at the
// representative of the whole schedule's dependency (its image under the rotation that brings its
// source to local index 0). Only the messages of nodes [0, node_shift) are planned. For a caller that
// has proven that those rotations map the schedule onto itself (sim/p2p_orbits.h, which also sets
// Schedule::orbit_order and kin). PXN aggregation on (the default); node_shift must divide the nodes.
Schedule alltoall_representatives(const Topology& topo, const P2pConfig& cfg, double size_bytes, int node_shift,
                                  bool rail_rotation, const P2pScheduleOptions& options = {});

// Which NIC a message from `src` to `dst` leaves through and which GPU's NIC sends it: rail -1 and
// nic_gpu -1 inside a node; across nodes the source's own NIC (nic_gpu = src) or, with PXN, the NIC of
// the destination's rail, sent by the GPU on that rail in the source's node.
struct P2pPath {
  int rail = -1;
  int nic_gpu = -1;
};
P2pPath p2p_message_path(const Topology& topo, const P2pConfig& cfg, int src, int dst);

// Ranks in NCCL's p2p round order for `rank` (round 0 is the rank itself): round r sends to the rank
// r/ppn nodes and r%ppn local GPUs ahead (ncclP2pSchedule's node-major order).
std::vector<int> p2p_round_peers(int nranks, int gpus_per_node, int rank);
// The round in which `src` sends to `dst`: the position of dst in p2p_round_peers(nranks, gpus_per_node, src).
int p2p_round(int nranks, int gpus_per_node, int src, int dst);

// The closed form of a P2P schedule with independent messages: per wave (records with equal `step`),
// the largest fixed delay (launch, hop latency, proxy) plus the busiest link direction's bytes over its
// bandwidth; waves add up. Exact for uniform, uncongested waves where every message shares its
// bottleneck with equally sized ones.
double p2p_closed_form_time_s(const Topology& topo, const Schedule& schedule);

// p2p_closed_form_time_s(topo, alltoall_schedule(topo, cfg, size_bytes)) without the schedule (n(n-1)
// messages: 17 GB at 32768 GPUs), in O(GPUs) time and O(nodes + gpus_per_node^2) memory, where every
// node is a copy of node 0 (Topology::node_vertex_block) with equal NIC-leaf and leaf-spine links
// per rail, and every cross-node route has routing.cpp's shape (inside the source node, its NIC, the
// leaf, the spine when the leaf groups differ, the destination's leaf and NIC, inside the destination
// node): then a node's links carry the same bytes in every node, a full leaf group's spine links the
// same in every full group, and the fixed costs of node pairs inside one leaf group are equal, as are
// those across groups. Per wave the rounds give the counts: how many messages of each pair of local
// indices, how many of them cross groups (per nodes delta, in closed form), the proxies' loads. The
// numbers are the schedule's (equal bytes summed as counts: 1e-15 apart at most; tests/test_p2p.cpp).
// Elsewhere it builds the schedule, up to kMaxAlltoallClosedFormScheduleGpus GPUs (InputError above).
double alltoall_closed_form_time_s(const Topology& topo, const P2pConfig& cfg, double size_bytes);
// The counting part of it alone: nullopt where the fabric is not so uniform.
std::optional<double> alltoall_closed_form_by_counts(const Topology& topo, const P2pConfig& cfg, double size_bytes);
// The largest alltoall whose closed form builds its schedule (n(n-1) messages: ~0.7 GiB at 2048 GPUs).
constexpr int kMaxAlltoallClosedFormScheduleGpus = 2048;

}  // namespace ccsim
