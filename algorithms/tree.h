// NCCL's Tree all_reduce as a Schedule: a double binary tree across nodes (NCCL's ncclGetBtree /
// ncclGetDtree, src/graph/trees.cc: two complementary binary trees over the nodes, so that a node is
// interior in at most one of them) and, inside every node, a chain over the node's GPUs whose head
// talks to the network through one NIC rail. Each tree carries half of the data on its own channels
// (families); the data is pipelined chunk by chunk: reduce up the chain and the tree, broadcast down.
// See docs/tree.md.
#pragma once
#include <string>
#include <vector>

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

// NCCL's Tree/Simple chunk per channel: a 4 MiB buffer in NCCL_STEPS = 8 slots, one slot per chunk
// (Tree runs chunkSteps = sliceSteps = 1).
constexpr double kTreeSimpleChunkBytes = 512.0 * 1024;

// NCCL 2.30's Tree constants for a protocol: launch = baseLat[Tree][p], per-step latency
// hwLat[NVLINK|PCI|NET][Tree][p] (Simple: 8.4 us; 4.0, 4.0, 14 us).
StepTiming tree_step_timing(Proto p);

struct TreeScheduleOptions {
  StepTiming timing = tree_step_timing(Proto::Simple);
  double wire_factor = 1.0;                     // bytes on the wire per data byte (LL 2, LL128 128/120)
  double chunk_bytes = kTreeSimpleChunkBytes;   // per channel
  int max_chunks = 64;                          // chunks per family: max(1, min(max_chunks, ceil(bytes per channel / chunk_bytes)))
  int launch_wave = 4;                          // chunks whose dependency-free transfers pay the launch: the
                                                // ones that start at once (engine pipeline_depth); later
                                                // chunks start after an earlier one finished, past the launch
};

// Number of chunks each family's data is split into for a size (the rule of TreeScheduleOptions).
int tree_chunks(const TreePlan& plan, double size_bytes, const TreeScheduleOptions& options);

// Tree all_reduce (the only collective NCCL runs on its trees). `size_bytes` is the buffer size.
// Transfers are emitted chunk by chunk (chunk-major), up the tree then down; `step` is the chunk
// index; dependency-free transfers (chain tails of leaf nodes sending up) of the first
// `launch_wave` chunks pay the launch. Throws std::invalid_argument for other collectives.
Schedule tree_schedule(const Topology& topo, const TreePlan& plan, const std::string& collective, double size_bytes,
                       const TreeScheduleOptions& options);

}  // namespace ccsim
