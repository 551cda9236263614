// The cluster as a typed graph: GPUs, NVSwitches, PCIe switches, CPU sockets (root complexes),
// host memory, NICs and fabric switches. Every edge is a full-duplex link: `bandwidth_Bps` is
// available in each direction independently (bytes/s per direction), except links whose
// `shared_duplex` is true (host memory: reads and writes share one budget).
#pragma once
#include <boost/graph/adjacency_list.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace ccsim {

// Reducer: the reduction units of a switch (NVLink SHARP in the NVSwitch chips, "n0.nvswitch.sharp"),
// a vertex hanging off its switch by a Reduction link whose bandwidth is the rate at which the switch
// consumes operand bytes. Only in-switch reductions (NVLS) cross it; it is a dead end, so no other
// route passes through it.
enum class VertexKind { Gpu, NvSwitch, PcieSwitch, Cpu, HostMemory, Nic, LeafSwitch, SpineSwitch, Reducer };
enum class LinkKind { NvLink, Pcie, InterSocket, Memory, Network, Reduction };
// TcpSockets: NCCL's socket transport, payloads staged through host memory. GpuDirectTcpx /
// GpuDirectTcpxo: Google's GPUDirect-TCPX (A3 High) and GPUDirect-TCPXO (A3 Mega) net plugins, TCP
// whose payloads move NIC<->GPU memory without host staging (topologies/transports.h). Efa: AWS's
// Elastic Fabric Adapter (SRD through libfabric and the aws-ofi-nccl net plugin).
enum class Transport { InfiniBand, RoCE, TcpSockets, GpuDirectTcpx, GpuDirectTcpxo, Efa };

const char* to_string(VertexKind kind);
const char* to_string(LinkKind kind);
const char* to_string(Transport transport);

struct Vertex {
  VertexKind kind = VertexKind::Gpu;
  std::string name;  // unique, e.g. "n3.gpu5", "n3.nic5", "leaf.g0.r5", "spine"
  int node = -1;     // owning node, -1 for fabric switches
  int index = 0;     // index among vertices of the same kind in the same node; rail for leaves
  int group = -1;    // leaf group (fabric pod) for leaf switches, -1 otherwise
};

struct Link {
  LinkKind kind = LinkKind::NvLink;
  double bandwidth_Bps = 0;  // per direction, bytes/s
  double latency_s = 0;      // one-way
  bool shared_duplex = false;
  std::string label;         // human description, e.g. "NVLink4 x18", "PCIe Gen5 x16", "NDR 400Gb/s IB"
  int node = -1;             // owning node (-1: fabric); used for symmetry
};

// Whether two links carry flows alike: the same kind, bandwidth, latency and duplex sharing (their
// label and owner aside). The symmetry proofs map a route onto its image only over such links.
inline bool same_link_properties(const Link& a, const Link& b) {
  return a.kind == b.kind && a.bandwidth_Bps == b.bandwidth_Bps && a.latency_s == b.latency_s &&
         a.shared_duplex == b.shared_duplex;
}

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, Vertex, Link>;
using VertexId = boost::graph_traits<Graph>::vertex_descriptor;
using EdgeId = boost::graph_traits<Graph>::edge_descriptor;

// One traversed link of a route. `forward` is true when going from source(edge) to target(edge).
struct Hop {
  EdgeId edge;
  bool forward = true;
};
using Route = std::vector<Hop>;

// A memo of routes. Its hops hold edge descriptors, which point into one graph's edge storage, so a
// copied or moved-from Topology must not carry them over (boost::adjacency_list copies its edges, and
// the copy's descriptors differ): copying or moving the memo yields an empty one.
class RouteMemo : public std::unordered_map<std::uint64_t, Route> {
 public:
  RouteMemo() = default;
  RouteMemo(const RouteMemo&) : std::unordered_map<std::uint64_t, Route>() {}
  RouteMemo(RouteMemo&&) noexcept : std::unordered_map<std::uint64_t, Route>() {}
  RouteMemo& operator=(const RouteMemo&) {
    clear();
    return *this;
  }
  RouteMemo& operator=(RouteMemo&&) noexcept {
    clear();
    return *this;
  }
};

// NCCL / nvidia-smi path classes, closest first.
enum class PathClass { Loc, Nvl, Pix, Pxb, Phb, Node, Sys, Net };
const char* to_string(PathClass c);
// The class as NCCL names a level (NCCL_P2P_LEVEL, NCCL_NET_GDR_LEVEL): NCCL's PHB covers nvidia-smi's
// PHB and NODE (PathClass::Node stands for it), NVL is NVLink.
const char* nccl_level_name(PathClass c);
// Its inverse for LOC, NVL, PIX, PXB, PHB, SYS (upper case); false for any other name.
bool nccl_level_from_name(const std::string& name, PathClass* out);

// Network-side properties that are not plain links.
struct NetworkProps {
  Transport transport = Transport::InfiniBand;
  bool gpudirect_rdma = true;   // false: GPU<->NIC traffic is staged through host memory (true for tcpx/tcpxo: GPU-direct TCP)
  double nic_bandwidth_Bps = 0; // per NIC, per direction: the line rate (links carry it x efficiency)
  double message_rate_per_s = 330e6;  // messages per second a NIC accepts (GPU-initiated puts; node.nic.message_rate_Mps)
  // The network latency the net plugin reports to NCCL (ncclNetProperties_t.latency, microseconds;
  // node.nic.plugin_latency_us). NCCL's search copies it into each graph's latencyInter and its tuner
  // adds it to every network step (twice on Simple); the engine's steps do not use it.
  double plugin_latency_us = 0;
};

// NCCL's channel-count settings, 0 where the description leaves NCCL's default: NCCL_MIN_NCHANNELS /
// NCCL_MAX_NCHANNELS (node.gpu.nccl_min_channels, nccl_max_channels; the legacy NCCL_MIN/MAX_NRINGS
// write the same keys), NCCL_MIN_CTAS / NCCL_MAX_CTAS (node.gpu.nccl_min_ctas, nccl_max_ctas: the
// communicator's config.minCTAs / maxCTAs) and NCCL_NVLS_NCHANNELS (node.nvlink.nvls_channels).
// summarize_for_nccl (algorithms/nccl_channels.cpp) applies them as connect.cc and nvls.cc do.
constexpr int kNcclMaxChannels = 64;  // NCCL's MAXCHANNELS, the bound of every channel setting (nccl230::kMaxChannels)
struct NcclChannelSettings {
  int min_channels = 0, max_channels = 0;
  int min_ctas = 0, max_ctas = 0;
  int nvls_channels = 0;
  // NCCL_NCHANNELS_PER_NET_PEER (node.nic.nccl_channels_per_net_peer): P2P channels to a peer across
  // the network; 0: NCCL's rule (2, halved while 2 x ranks > 4 x p2pnChannels; algorithms/p2p.cpp).
  int channels_per_net_peer = 0;
};

// NCCL's per-connection buffer of each protocol, in bytes, 0 where the description leaves NCCL's
// default (LL 512 KiB, LL128 4.69 MiB, Simple 4 MiB): NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE and
// NCCL_BUFFSIZE (node.gpu.nccl_ll_buffsize_bytes, nccl_ll128_buffsize_bytes, nccl_buffsize_bytes).
// A step is an eighth of it (NCCL_STEPS): the chunk of trees, chains and CollNet, and the bound of
// the P2P chunk (algorithms/step_timing.h nccl_buffer_bytes).
struct NcclBufferSizes {
  std::int64_t ll_bytes = 0, ll128_bytes = 0, simple_bytes = 0;
};
// Their bounds: at least 8 steps of 4 KiB, at most 1 GiB (ccsim's sanity limits; NCCL checks none).
constexpr std::int64_t kMinNcclBufferBytes = 32 * 1024;
constexpr std::int64_t kMaxNcclBufferBytes = std::int64_t{1} << 30;

// node.cpu.launch_us's default, in microseconds: NCCL's enqueue work per communicator and the kernel
// launch together, the slope of NVIDIA/nccl-tests#123's DGX-A100 -g N series (4.23 us per GPU from 4
// to 8 GPUs; tests/data/published). A bare CUDA launch is less: 3.8 us back to back in NVIDIA's
// "Getting Started with CUDA Graphs" (A. Gray, 2019); 4.3-4.9 us per launch call on an H200 with a Xeon host,
// where a one-rank NCCL 2.28.3 call takes 5.8-6.0 us (calibrate/samples/README.md).
constexpr double kDefaultHostLaunchUs = 4.2;

// node.pcie.shm_step_us's default: one step of NCCL's SHM transport waits for its flag (the tail the
// sender stores into pinned host memory, which the receiver's thread polls over PCIe; the head back).
// ccsim-probe-cuda's host_flag test passes a counter between two thread blocks through flags in
// pinned host memory: 1.57 and 1.38 us one way in two runs on an H200 (PCIe Gen5 x16, Xeon host;
// calibrate/samples/h200-probe-cuda.json, h200-probe-cuda-repeat.json), 0.35 us through device memory.
// NCCL's model charges a PCIe step 1.0 us on LL (hwLat[PCI][Ring][LL]), a P2P flag in GPU memory.
constexpr double kDefaultShmStepUs = 1.5;

// node.pcie.shm_two_way_efficiency's default: one H200 (PCIe Gen5 x16, Xeon host) writing and reading
// NCCL-style FIFOs in pinned host memory at once moves 33 GB/s each way with 8 channels
// (ccsim-probe-cuda shm_fifo, calibrate/samples/h200-probe-cuda.json), where it reads or writes host
// memory alone at 50-52 GB/s (host_kernel, 132 blocks) and ccsim's Gen5 link is 50.4: 33 / 50.4 = 0.65.
// Checked on logs of other hosts (docs/accuracy.md "NCCL's SHM channel rate"): 0.63 (2 RTX 2080 Ti,
// Gen3) and 0.59 (8 RTX 4090 on EPYC, Gen4) of the links' rate for two-way SHM traffic.
constexpr double kDefaultShmTwoWayEfficiency = 0.65;

// node.nvlink.nvls_chunk_bytes's default: NCCL_NVLS_CHUNKSIZE, 128 KiB in NCCL 2.30 (src/init.cc,
// NCCL_PARAM(NvlsChunkSize, "NVLS_CHUNKSIZE", 128*1024)); the bound is ccsim's, a sanity limit.
constexpr int kDefaultNvlsChunkBytes = 128 * 1024;
constexpr int kMaxNvlsChunkBytes = 64 * 1024 * 1024;
// NCCL's P2P chunk (comm->p2pChunkSize, src/init.cc): NCCL_P2P_NET_CHUNKSIZE on several nodes,
// NCCL_P2P_NVL_CHUNKSIZE where every GPU pair is NVLink, NCCL_P2P_PCI_CHUNKSIZE otherwise (NCCL 2.30's
// defaults 128 KiB, 512 KiB, 128 KiB). The description's node.nic / node.nvlink / node.pcie
// p2p_chunk_bytes set them (aws-ofi-nccl sets the NET one to 512 KiB on p5).
struct P2pChunkSizes {
  int net = 128 * 1024;
  int nvl = 512 * 1024;
  int pci = 128 * 1024;
};
// NCCL_P2P_LL_THRESHOLD (node.gpu.nccl_p2p_ll_threshold_bytes): a P2P message of at most this many
// bytes per channel goes by LL, above by Simple (enqueue.cc addP2pToPlan); NCCL 2.30's default 16 KiB.
constexpr int kDefaultP2pLLThresholdBytes = 16384;
constexpr int kMinP2pChunkBytes = 512;               // Simple's grain, as the NVLS chunk's
constexpr int kMaxP2pChunkBytes = 64 * 1024 * 1024;

class Topology {
 public:
  // --- construction (used by the builder) ---
  VertexId add_vertex(const Vertex& v);
  EdgeId add_link(VertexId a, VertexId b, const Link& link);  // one edge per vertex pair
  void finalize(int num_nodes, int gpus_per_node, int nodes_per_leaf);  // indexes GPUs/NICs, checks

  // --- structure ---
  const Graph& graph() const { return graph_; }
  const Vertex& vertex(VertexId v) const { return graph_[v]; }
  const Link& link(EdgeId e) const { return graph_[e]; }
  std::size_t num_vertices() const { return boost::num_vertices(graph_); }
  std::size_t num_edges() const { return boost::num_edges(graph_); }
  int num_nodes() const { return num_nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int num_gpus() const { return num_nodes_ * gpus_per_node_; }
  int nics_per_node() const { return nics_per_node_; }
  int nodes_per_leaf() const { return nodes_per_leaf_; }
  VertexId gpu(int rank) const { return gpus_.at(rank); }          // rank = node * gpus_per_node + local
  VertexId nic(int node, int index) const { return nics_.at(node * nics_per_node_ + index); }
  // Looks a vertex up by (kind, node, index, group); returns false if absent.
  bool find_vertex(VertexKind kind, int node, int index, int group, VertexId* out) const;
  // Looks a vertex up by its unique name (linear scan: for the few switch endpoints of a schedule).
  bool find_vertex_by_name(const std::string& name, VertexId* out) const;
  EdgeId edge_between(VertexId a, VertexId b) const;               // throws if none

  // --- node-level facts the algorithms need ---
  std::string name;            // preset or file name
  std::string gpu_model;       // e.g. "H100-SXM5-80GB"
  std::string gpu_arch;        // e.g. "sm90"
  bool gpu_c2c = false;        // GPUs attached to their CPU by NVLink-C2C (node.gpu.c2c): NCCL's GPU-NIC path P2C
  std::string cpu_vendor;      // "intel", "amd", ...
  int cpu_model_id = 0;        // CPUID model (node.cpu.model_id); 0 when the description does not say
  int cpu_family_id = 0;       // CPUID family (node.cpu.family_id; AMD: 23 Zen 1/2, 25 Zen 3/4, 26 Zen 5); 0: not stated
  bool has_nvswitch = false;
  bool nvls_capable = false;
  double nvls_efficiency = 1.0;  // NVLink data rate of multimem (NVLS) traffic / that of P2P traffic
  // NCCL's NVLS chunk per channel and head (node.nvlink.nvls_chunk_bytes: NCCL_NVLS_CHUNKSIZE) and
  // NVLSTree's cap on it (node.nvlink.nvls_tree_max_chunk_bytes: NCCL_NVLSTREE_MAX_CHUNKSIZE; 0 is
  // NCCL's default rule). NVLSTree's chunking reads them (algorithms/nvls.cpp).
  int nvls_chunk_bytes = kDefaultNvlsChunkBytes;
  int nvls_tree_max_chunk_bytes = 0;
  NetworkProps network;
  nlohmann::json spec;         // the fully resolved specification it was built from (recorded in outputs)
  // Added by the topology layer: local GPU index -> NIC index (NCCL-style affinity, identical on
  // every node). Filled by build_topology(); nic_for_gpu() (nic_affinity.h) computes it when empty.
  std::vector<int> nic_affinity;
  // Also by build_topology() (topologies/nic_affinity.h): per local GPU the NICs its channels use
  // (channel c on [c % size]), per NIC the local GPU rings and trees cross the network through.
  std::vector<std::vector<int>> gpu_nics;
  std::vector<int> nic_gpu;
  int nvlinks_per_gpu = 0;     // NVLink count per GPU (for "NV18" in topo -m), 0 without NVLink
  // GPUs joined pair by pair without an NVSwitch (node.nvlink.peers; a 2-GPU bridge too): NVLinks
  // between local GPUs a and b at [a * gpus_per_node + b], symmetric. Empty with an NVSwitch or
  // without NVLink (topologies/nvlink_mesh.h reads it).
  std::vector<int> nvlink_peer_links;
  std::string pcie_p2p = "switch";  // node P2P mode: "switch", "host" or "none"
  // The farthest PCIe path class NCCL's P2P transport takes between two GPUs (NCCL_P2P_LEVEL; its
  // PHB is PathClass::Node here): node.pcie.nccl_p2p_level, by default NCCL's own (src/graph/paths.cc
  // ncclTopoCheckP2p: PATH_SYS, lowered to PATH_PXB on Intel and ARM CPUs). Farther PCIe pairs use SHM.
  PathClass pcie_p2p_level = PathClass::Sys;
  // NCCL's P2P transport over NVLink (node.nvlink.nccl_p2p; false: NCCL_P2P_DISABLE=1). Without it
  // NCCL moves intra-node data through its SHM transport (host memory) even where NVLink exists.
  bool nccl_p2p = true;
  // > 0: the bytes per second one NCCL channel moves through the SHM transport (node.pcie.shm_channel_GBps):
  // the receiving GPU's thread block loads the FIFO in pinned host memory over PCIe, a stream of
  // non-posted reads that few blocks keep short of the link (ccsim-probe-cuda's host_kernel test measures
  // it). 0: not limiting, the links' rates apply.
  double shm_channel_Bps = 0;
  // The bytes per second one channel of NCCL's P2P transport moves between GPUs of a node (one thread
  // block's copy; node.gpu.p2p_channel_GBps, by default the arch's: topologies/gpu_copy_rate.h). Caps
  // the connections of send/recv and all-to-all schedules, whose messages run on a few channels each.
  // 0: not limiting.
  double p2p_channel_Bps = 0;
  // The bytes per second one channel of a ring whose path crosses the network moves at most, a thread
  // block's copy (node.gpu.net_ring_channel_GBps; by default the P2P channel rate on the archs where that
  // was measured: topologies/gpu_copy_rate.h). Caps every connection of such a ring at this rate times
  // the channels NCCL runs. 0: not limiting.
  double net_ring_channel_Bps = 0;
  // node.pcie.shm_two_way_efficiency: the share of its links' rate an SHM connection keeps when one of
  // its GPUs both writes into and reads from pinned host memory (a ring, all_gather, alltoall; not a
  // broadcast's or reduce's root or leaf). Default kDefaultShmTwoWayEfficiency, measured by ccsim's
  // probe; not applied where shm_channel_Bps is given (a rate measured from a run already holds it).
  double shm_two_way_efficiency = kDefaultShmTwoWayEfficiency;
  // node.pcie.shm_step_us: the least a step of an SHM connection costs, its flag's handoff through
  // pinned host memory (kDefaultShmStepUs); a step costs the larger of it and NCCL's PCIe step.
  double shm_step_s = kDefaultShmStepUs * 1e-6;
  P2pChunkSizes p2p_chunks;  // node.{nic,nvlink,pcie}.p2p_chunk_bytes (algorithms/p2p.h nccl_p2p_config)
  int p2p_ll_threshold_bytes = kDefaultP2pLLThresholdBytes;  // node.gpu.nccl_p2p_ll_threshold_bytes
  NcclChannelSettings nccl_channels;  // node.gpu.nccl_{min,max}_{channels,ctas}, node.nvlink.nvls_channels
  NcclBufferSizes nccl_buffers;       // node.gpu.nccl_{ll_,ll128_,}buffsize_bytes
  // Host CPU time of one NCCL collective's launch (node.cpu.launch_us): what one thread driving
  // several GPUs (nccl-tests -g N) pays N times per iteration (scenarios/launch_mode.h).
  double host_launch_s = kDefaultHostLaunchUs * 1e-6;
  // Host CPU time per channel the collective runs, added to each launch (node.cpu.launch_us_per_channel):
  // NCCL's enqueue prepares every channel's work before the launch, so a -g N thread pays it N times
  // per iteration. 0 by default: the logs' hosts pay 0.03-0.23 us (docs/accuracy.md "what -g N costs
  // per channel"), no figure fits them all.
  double host_launch_per_channel_s = 0;
  // Memo of route_between_gpus (routing.cpp), keyed by (src, dst, rail): routes depend only on the
  // graph, which does not change after finalize().
  mutable RouteMemo route_cache;
  // Memo of node 0's routes between two of its vertices (routing.cpp), keyed by the vertex pair.
  mutable RouteMemo node0_route_cache;
  // When every node's vertices are one contiguous block of this size, vertex for vertex a copy of
  // node 0's (what build_topology makes): node n's vertex i is n * block + i. 0 otherwise. Lets
  // routing compute a route inside node n once, in node 0, instead of once per node over the
  // whole graph (quadratic in the node count: 65536 nodes took minutes).
  std::size_t node_vertex_block() const { return node_vertex_block_; }

 private:
  Graph graph_;
  int num_nodes_ = 0;
  int gpus_per_node_ = 0;
  int nics_per_node_ = 0;
  int nodes_per_leaf_ = 0;
  std::vector<VertexId> gpus_;
  std::vector<VertexId> nics_;
  std::map<std::tuple<int, int, int, int>, VertexId> by_key_;  // (kind, node, index, group)
  std::size_t node_vertex_block_ = 0;
};

}  // namespace ccsim
