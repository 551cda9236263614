// NCCL's Tree all_reduce as a Schedule: a double binary tree across nodes (NCCL's ncclGetBtree /
// ncclGetDtree, src/graph/trees.cc: two complementary binary trees over the nodes, so that a node is
// interior in at most one of them) and, inside every node, a chain over the node's GPUs whose head
// talks to the network through one NIC rail. Each tree carries half of the data on its own channels
// (families); the data is pipelined chunk by chunk: reduce up the chain and the tree, broadcast down.
// See docs/tree.md.
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "algorithms/nccl_model.h"
#include "algorithms/schedule.h"
#include "algorithms/step_timing.h"
#include "topologies/topology.h"

namespace ccsim {

// One node of NCCL's binary tree over `nranks` positions: parent (-1 at the root) and up to two
// children (-1 when absent), exactly as ncclGetBtree returns them.
struct BtreeLinks {
  int up = -1;
  int down0 = -1;
  int down1 = -1;
};
BtreeLinks nccl_btree(int nranks, int rank);
// Tree `which` (0 or 1) of NCCL's double binary tree: tree 0 is the btree (root 0); tree 1 is its
// mirror (rank -> nranks-1-rank) when nranks is even, or the btree shifted by one rank when nranks
// is odd (root nranks-1, or 1).
BtreeLinks nccl_dtree(int nranks, int rank, int which);

// Tree `which` of NCCL's double binary tree over `nodes` nodes (nccl_dtree), as lists.
struct NodeTree {
  int root = 0;
  std::vector<int> parent;                 // per node: its parent (-1 at the root)
  std::vector<std::vector<int>> children;  // per node: 0, 1 or 2 children
  std::vector<int> top_down;               // the root, then breadth-first
};
NodeTree nccl_node_tree(int nodes, int which);

// One tree family: one of the two trees on one rail, with its channels.
struct TreeFamily {
  int tree = 0;                               // 0: btree, 1: its mirror / shift (ncclGetDtree)
  int rail = -1;                              // NIC index of the node crossings (-1: single node)
  int channels = 1;                           // NCCL channels following this tree
  int root_node = 0;
  std::vector<int> parent_node;               // per node: parent node in the inter-node tree (-1: root)
  std::vector<std::vector<int>> child_nodes;  // per node: its children (0, 1 or 2)
  std::vector<int> chain;                     // local GPU order in every node; chain[0] is the head,
                                              // the GPU affined to NIC `rail`, which talks to the network
  int depth() const;                          // edges from the root to the deepest node of the inter-node tree
};

struct TreePlan {
  std::vector<TreeFamily> families;  // rail-major: families 2r and 2r+1 are trees 0 and 1 on rail r
  int total_channels() const;
};

// Trees for the whole cluster: for every NIC rail (one pseudo-rail on a single node) the two trees of
// the double binary tree, each with max(1, channels / (2 * rails)) channels.
TreePlan plan_trees(const Topology& topo, int channels);

// NCCL 2.30's Tree chunk per channel in data bytes (enqueue.cc, calcCollChunking): one slot of the
// protocol's buffer (Simple 512 KiB; LL 64 KiB of lines = 32 KiB of data; LL128 614400 B of lines =
// 576000 B of data), for LL128 halved while the size gives fewer than (1 + log2i(nodes) + 0.1 ppn) x
// 64/ppn chunks per channel (down to 128 KiB) and x 16/ppn (down to 32 KiB), then rounded down to
// the protocol's grain (LL 16 B, LL128 1920 B, Simple 512 B). `channels` is the number of channels
// that share the buffer.
double nccl_tree_chunk_bytes(Proto p, double size_bytes, int channels, int nodes, int ranks, std::int64_t buffer_bytes);

// NCCL 2.30's Tree constants for a protocol: launch = baseLat[Tree][p], per-step latency
// hwLat[NVLINK|PCI|NET][Tree][p] (Simple: 8.4 us; 4.0, 4.0, 14 us).
StepTiming tree_step_timing(Proto p);

// Connection slots of NCCL's Tree: NCCL_STEPS = 8 buffers per connection, one chunk each
// (chunkSteps = sliceSteps = 1 for every protocol): up to 8 chunks in flight per connection, and a
// sender may run at most 8 chunks ahead of its receiver's consumption.
constexpr int kTreeSlots = nccl230::kSteps;

struct TreeScheduleOptions {
  Proto proto = Proto::Simple;
  StepTiming timing = tree_step_timing(Proto::Simple);
  double wire_factor = 1.0;                     // bytes on the links per data byte (LL 2, LL128 128/120; tree_options
                                                // adds NCCL's Tree all_reduce efficiency, 1 / 0.92)
  double chunk_bytes = 0;                       // data bytes per chunk and channel; 0: NCCL's rule for `proto`
  int max_chunks = 64;                          // chunks per family: max(1, min(max_chunks, ceil(bytes per channel / chunk)))
  int launch_wave = 4;                          // chunks whose dependency-free transfers pay the launch: the
                                                // ones that start at once (engine pipeline_depth); later
                                                // chunks start after an earlier one finished, past the launch
  int flow_control_slots = 0;                   // > 0: chunk k of a connection waits until its receiver has
                                                // forwarded chunk k - slots (NCCL's FIFO credits); 0: no credit
  bool fifo_connections = false;                // Schedule::fifo_connections: chunks of a connection leave
                                                // one after the other (NCCL's proxy / copy loop); false: up
                                                // to the engine's pipeline_depth share the connection
  double channel_rate_cap_Bps = 0;              // > 0: data bytes per second one channel moves at most
                                                // (NCCL's ceilings: tree_channel_cap_Bps); Simple: on every
                                                // hop across nodes, LL/LL128: where the data enters
};

// The options NCCL would run a protocol with: its timing, wire factor and chunking, 8 slots of flow
// control, FIFO connections (every dependency-free transfer pays the launch).
TreeScheduleOptions tree_options(Proto p);

// Number of chunks each family's data is split into for a size (the rule of TreeScheduleOptions).
int tree_chunks(const Topology& topo, const TreePlan& plan, double size_bytes, const TreeScheduleOptions& options);
// The size at which every channel runs max_chunks chunks of NCCL's nominal chunk (the largest, that of
// large sizes); past it the builder enlarges the chunks (sim/steady_state.h extends the pipeline
// instead). 0 when half of it would already use a smaller chunk (LL128's rule on deep trees).
double tree_chunk_cap_bytes(const Topology& topo, const TreePlan& plan, const TreeScheduleOptions& options);

// NCCL's Tree ceiling (nccl_busbw_ceiling_GBps: perChMaxTreeBws, and llMaxBws / perChMaxTreeLL128Bws
// for LL / LL128) per channel of the plan, in data bytes per second: algBw = busBw / 2 for Tree
// all_reduce, shared by the plan's channels, for an operation of `size_bytes` (fewer channels run
// below NCCL's thread thresholds: nccl_busbw_ceiling_GBps with a size). 0: no ceiling.
double tree_channel_cap_Bps(const NcclTopoSummary& summary, const TreePlan& plan, Proto p,
                            double size_bytes = std::numeric_limits<double>::infinity());

// Tree all_reduce (the only collective NCCL runs on its trees). `size_bytes` is the buffer size.
// Transfers are emitted chunk by chunk (chunk-major), up the tree then down; `step` is the chunk
// index; dependency-free transfers (chain tails of leaf nodes sending up) of the first
// `launch_wave` chunks pay the launch. Throws std::invalid_argument for other collectives.
Schedule tree_schedule(const Topology& topo, const TreePlan& plan, const std::string& collective, double size_bytes,
                       const TreeScheduleOptions& options);

// The tree schedules of a size sweep. A tree's chunk count follows the size (NCCL's chunking), so
// its schedule must be built per size -- but sizes with the same chunk count have schedules that
// differ only by a common byte factor (delays do not depend on the size), so one reference schedule
// per chunk count is enough: the engine scales it to each of its sizes (simulate_sweeps). Groups are
// in order of their first size; every size index appears in exactly one group.
struct TreeSizeGroup {
  int chunks = 1;
  Schedule schedule;                  // built for the group's largest size
  std::vector<std::size_t> indices;   // positions in `sizes_bytes`
};
std::vector<TreeSizeGroup> tree_schedules_for_sizes(const Topology& topo, const TreePlan& plan,
                                                    const std::string& collective,
                                                    const std::vector<double>& sizes_bytes,
                                                    const TreeScheduleOptions& options);

}  // namespace ccsim
