// Routes through the topology graph, NCCL-style GPU->NIC affinity and nvidia-smi path classes.
#pragma once
#include <map>
#include <string>

#include "topologies/nic_affinity.h"
#include "topologies/topology.h"

namespace ccsim {

// Every Hop of a route returned here holds the edge descriptor with source < target (the
// orientation the edge is stored with, see Topology::add_link); `forward` is true when the hop goes
// from the lower to the higher vertex id. Two hops over the same link compare equal by `edge`.

// Route between two GPUs (global ranks), as NCCL would move the data.
// Intra-node: NVLink (through the NVSwitch) when both GPUs have NVLink; otherwise PCIe according to
// the node's P2P mode ("switch": peer-to-peer through the closest common PCIe switch / root complex /
// inter-socket link; "host": always up to the CPU root complex and back down; "none": staged
// through host memory, GPU->..->CPU->memory->CPU->..->GPU).
// Inter-node: leaves through NIC `rail` of the source node (-1: the NIC affined to the source GPU)
// and enters through the NIC of the same index on the destination node (rail-aligned). If the
// source GPU's channels do not use that NIC and the GPU has NVLink, the data first crosses NVLink
// to the GPU that does (first_gpu_on_rail, PXN). Without GPUDirect RDMA, GPU<->NIC traffic is staged in host memory.
// rail == kRailOwnNics: leaves through the source GPU's own NIC and enters through the destination GPU's
// own NIC, crossing the spine when the two rails' leaves differ (GPU-initiated RDMA as NVSHMEM does it:
// every GPU posts on its own NIC and targets its peer's, DeepEP's low-latency kernels).
// Throws std::out_of_range on bad ranks/rails.
constexpr int kRailOwnNics = -2;
Route route_between_gpus(const Topology& topo, int src_rank, int dst_rank, int rail = -1);
// The same route, computed without keeping it in Topology::route_cache: for one pass over millions
// of routes (the proof of an alltoall's symmetry, sim/p2p_orbits.h), which the memo would hold.
Route route_between_gpus_unmemoized(const Topology& topo, int src_rank, int dst_rank, int rail = -1);

// Whether NCCL connects two GPUs (global ranks) of one node through its SHM transport: no NVLink
// P2P between them and node.pcie.p2p none (or node.nvlink.nccl_p2p false, NCCL_P2P_DISABLE), or
// a PCIe path farther than NCCL's P2P level (node.pcie.nccl_p2p_level), the route staged through
// pinned host memory. False across nodes and for a rank with itself.
bool nccl_shm_pair(const Topology& topo, int src_rank, int dst_rank);
// Whether any GPU pair of a node is an SHM pair.
bool nccl_any_shm_pair(const Topology& topo);
// The per-channel cap on a connection between src and dst (vertex ranks of a schedule: a switch
// endpoint is not a GPU): Topology::shm_channel_Bps where NCCL joins them through SHM and a rate is
// given, 0 (none) otherwise. What the engine, its splitter and the P2P closed form all apply.
double nccl_shm_channel_Bps(const Topology& topo, int src_rank, int dst_rank);

// Generic preferred shortest path from a to b (Dijkstra): NVLink first, then fewer PCIe bridges,
// then lower latency. Never passes through another GPU, NIC or host memory; leaves the node only
// when a and b are in different nodes. Empty route when a == b. Throws std::runtime_error when
// there is no path.
Route route_between(const Topology& topo, VertexId a, VertexId b);

// nvidia-smi topo -m / NCCL path class between two vertices (GPUs, NICs, ...).
PathClass path_class(const Topology& topo, VertexId a, VertexId b);

// The vertex a hop leaves and the one it reaches.
VertexId hop_from(const Topology& topo, const Hop& h);
VertexId hop_to(const Topology& topo, const Hop& h);

// Reverses a route (b->a from a->b).
Route reverse_route(const Route& route);

// Sum of link latencies (one way).
double route_latency_s(const Topology& topo, const Route& route);
// Bottleneck bandwidth per direction: a link used k times in the same direction counts 1/k;
// a shared_duplex link used k times in any direction counts 1/k.
double route_bandwidth_Bps(const Topology& topo, const Route& route);

// Vertices visited by a route, starting with `start` (for printing / tests).
std::vector<VertexId> route_vertices(const Topology& topo, const Route& route);
// "n0.gpu0 -> n0.nvswitch -> n0.gpu1"
std::string format_route(const Topology& topo, const Route& route);

// A link direction as flows share it: the link (its two vertex ids, lower first: one edge per vertex
// pair) and `dir` 1 forward, 0 backward, or 2 for both directions of a shared-duplex link (host
// memory: reads and writes share one budget, so both directions count as one). Ordered by (lower
// vertex, higher vertex, dir): the order, and so every tie among busiest links, follows the graph,
// not where memory happened to hold it.
struct LinkDirectionKey {
  std::size_t low = 0, high = 0;
  int dir = 0;  // 1 forward, 0 backward, 2 shared
  bool operator<(const LinkDirectionKey& o) const {
    return low != o.low ? low < o.low : high != o.high ? high < o.high : dir < o.dir;
  }
};
LinkDirectionKey link_direction_key(const Topology& topo, const Hop& h);

// "a -> b (label)" for link `e` taken in direction `dir` (a LinkDirectionKey's), "a <-> b (label)" when
// shared (dir 2).
std::string describe_link_direction(const Topology& topo, EdgeId e, int dir);

// Bytes per link direction (shared-duplex links counted as one), and the busiest link direction.
class LinkLoad {
 public:
  struct Entry {
    double bytes = 0;
    double bandwidth_Bps = 0;  // the link's, per direction
    EdgeId edge;               // the link
  };
  explicit LinkLoad(const Topology& topo) : topo_(&topo) {}

  // Adds `bytes` to the direction of the link that hop `h` crosses.
  void add(const Hop& h, double bytes);

  // The link direction with the largest bytes / bandwidth (the first in key order among equal ones)
  // and that time; no link and 0 s when the load is empty or every time is 0.
  struct Busiest {
    const LinkDirectionKey* key = nullptr;
    const Entry* entry = nullptr;
    double time_s = 0;
  };
  Busiest busiest() const;

  const std::map<LinkDirectionKey, Entry>& entries() const { return entries_; }

 private:
  const Topology* topo_;
  std::map<LinkDirectionKey, Entry> entries_;
};

}  // namespace ccsim
