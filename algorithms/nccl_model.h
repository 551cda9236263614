// NCCL's own closed-form cost model (NCCL 2.30.7: src/graph/tuning.cc ncclTopoTuneModel and
// ncclTopoGetAlgoTime, src/enqueue.cc topoGetAlgoInfo), restated: the constant tables, the
// per-algorithm/protocol latency and bandwidth formulas, and the channel/thread reduction NCCL
// applies after choosing. Facts about NCCL are restated from its Apache-2.0 source, not copied.
//
// Units: latency in microseconds, bandwidth in GB/s (1e9 B/s), sizes in bytes. "nBytes" is what
// NCCL feeds its tuner: ncclFuncMaxSendRecvCount * element size = max(send, recv) buffer bytes
// of one rank, i.e. the nccl-tests "size" column for every collective.
//
// The graph bandwidths and channel counts the model starts from (what NCCL's topology search
// would find) come from nccl_channels.h (summarize_for_nccl).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/nccl_versions.h"

namespace ccsim {

// NCCL order (NCCL_ALGO_TREE=0 .. NCCL_ALGO_PAT=6, NCCL_PROTO_LL=0 .. NCCL_PROTO_SIMPLE=2,
// ncclFuncBroadcast=0 .. ncclFuncAllReduce=4).
enum class Algo { Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT };
enum class Proto { LL, LL128, Simple };
enum class Func { Broadcast, Reduce, AllGather, ReduceScatter, AllReduce };
constexpr int kNumAlgos = 7;
constexpr int kNumProtos = 3;
constexpr int kNumFuncs = 5;

// NCCL's spellings: ncclAlgoStr {"Tree","Ring","CollNetDirect","CollNetChain","NVLS","NVLSTree","PAT"},
// ncclProtoStr {"LL","LL128","Simple"}, ncclFuncStr {"Broadcast","Reduce","AllGather","ReduceScatter","AllReduce"}.
const char* to_string(Algo a);
const char* to_string(Proto p);
const char* to_string(Func f);

// "all_reduce" -> AllReduce, also "allreduce", "AllReduce", "all-reduce" (case-insensitive);
// broadcast, reduce, all_gather, reduce_scatter. Anything else: InputError listing the valid names.
Func func_from_collective(const std::string& name);

// The NCCL version whose constants are used by default, printed in reports (--nccl-version picks
// another range of nccl_versions.h; NcclTopoSummary::nccl_version).
constexpr const char* kNcclModelVersion = "NCCL 2.30.7";

// NCCL path types (topo.h), closest first. Only the order matters to the model.
enum class NcclPath { Loc, Nvl, Nvb, C2c, Pix, Pxb, P2c, Pxn, Phb, Sys, Net, Dis };
const char* to_string(NcclPath p);

// One ncclTopoGraph as the tuner sees it.
struct NcclGraphInfo {
  int nChannels = 0;        // graph channels (before connect.cc duplication)
  double bwIntra = 0;       // GB/s per channel inside a node
  double bwInter = 0;       // GB/s per channel across the network (= bwIntra on a single node)
  NcclPath typeIntra = NcclPath::Loc;
  NcclPath typeInter = NcclPath::Pix;
  double latencyInter = 0;  // us, NET latency reported by the net plugin (0 for IB verbs / sockets)
  bool sameChannels = true; // all channels follow the same order (Ring Broadcast/Reduce latency)
  bool balancedTree = true; // tree pattern BALANCED/SPLIT (false: NCCL_TOPO_PATTERN_TREE, bw x0.85)
  // NCCL's search found no speed of its array that the links carry ("Could not find a path for pattern
  // ..., falling back to simple order", search.cc): 1 channel at 0.1 GB/s, a figure for the tuner's
  // comparisons, not a rate (Blackwell's intra-node array stops at 18 GB/s, above a PCIe host's
  // inter-socket path).
  bool searchFallback = false;
  std::string derivation;   // how ccsim derived it (printed by explain)
};

enum class ArchIndex { Volta = 0, Ampere = 1, Hopper = 2, Blackwell = 3 };
const char* to_string(ArchIndex a);

// Everything of a communicator that NCCL's tuner reads.
struct NcclTopoSummary {
  std::string name;          // topology name, for reports
  int nranks = 1, nnodes = 1, ppn = 1;
  int compCap = 90;          // e.g. 90 for sm90
  ArchIndex arch = ArchIndex::Hopper;
  std::string cpu_vendor;    // "intel", "amd", anything else = other
  bool nvls = false;         // NVLS support (NVSwitch with NVLink SHARP, sm90+)
  bool nvswitch = false;     // ncclTopoGetNvsCount > 0
  bool collnet = false;      // a CollNet (SHARP) network plugin is present and enabled
  bool collnet_chain = true; // collNetChainSupport when collnet is present
  NcclGraphInfo ring, tree, collnet_graph, nvls_graph;
  int coll_channels = 1;     // comm->nChannels after connect.cc duplication
  int nvls_channels = 0;     // comm->nvlsChannels (NCCL_NVLS_NCHANNELS default)
  double net_overhead_us = 1.0;  // getNetOverhead: Intel 1, AMD 2, other 1 (NCCL_NET_OVERHEAD overrides)
  // ncclTopoGetLocalNetCountByBw for local GPU 0 (src/graph/topo.cc): the NICs its channels use, in
  // channel order, counted until their GPU->NIC path bandwidth adds up to the GPU's own path to its
  // CPU, and that bandwidth (GB/s, NCCL units). 0 without NICs or on one node. P2P channels per
  // network peer follow from them (algorithms/p2p.cpp).
  int net_count_by_bw = 0;
  double net_bw_by_count = 0;
  NcclVersion nccl_version = default_nccl_version();  // whose tuner constants nccl_costs uses
  std::vector<std::string> notes;  // derivation notes, printed by explain
};

// One row of NCCL's Latency/AlgBw table for a function, plus the time for a size.
struct AlgoProtoCost {
  Algo algo = Algo::Ring;
  Proto proto = Proto::Simple;
  bool applicable = false;   // NCCL computes this (func, algo, proto) at all (else lat/bw/time are 0/-1)
  bool enabled = false;      // counted by the default tuner (applicable, supported, LL128 rule, ...)
  std::string why_disabled;  // empty when enabled
  double latency_us = 0;     // comm->latencies[func][a][p] (before the per-size plateau factor)
  double bw_GBps = 0;        // comm->bandwidths[func][a][p] = algBw (before the tree correction)
  double busbw_GBps = 0;     // the busBw it came from (graph nChannels x per-channel bw, refined)
  double eff_latency_us = 0; // latency as used for this size (Ring Simple plateau x1.4 / x1.9) x latCount
  double eff_bw_GBps = 0;    // bandwidth as used for this size (tree correction factor applied)
  double time_us = -1;       // lat*latCount + nBytes/(1000*bw); -1 when not applicable
  int channels = 0;          // nMaxChannels topoGetAlgoInfo would give this size if chosen
  int threads = 0;           // threads per block (nWarps*32) likewise
};

// Index into a cost vector: algo * kNumProtos + proto.
inline int cost_index(Algo a, Proto p) { return static_cast<int>(a) * kNumProtos + static_cast<int>(p); }

// NCCL's cost table for one function and size: 21 rows in NCCL order (algo-major). `numPipeOps`
// (> 1 in aggregation mode) multiplies the latency: latCount = numPipeOps for Ring,
// DIVUP(numPipeOps, NCCL_MAX_DEV_WORK_BATCH_COLLS) otherwise.
std::vector<AlgoProtoCost> nccl_costs(const NcclTopoSummary& s, Func f, std::uint64_t bytes, int numPipeOps = 1);

// Channels/threads NCCL uses for a chosen (algo, proto) at a size (topoGetAlgoInfo).
void nccl_channels_threads(const NcclTopoSummary& s, Algo a, Proto p, std::uint64_t bytes, int* channels, int* threads);

// NCCL's ceilings on an algorithm's bus bandwidth that are not link rates (GB/s): the measured kernel
// and protocol limits ncclTopoTuneModel applies, llMaxBws (Ring LL; Tree LL), the graph's channels x
// perChMaxRingLL128Bws (Ring LL128), perChMaxTreeBws (Tree), perChMaxTreeLL128Bws (Tree LL128) and
// perChMaxNVLSTreeBws (NVLSTree), each over the graph's channels or the fewer that run (coll_channels,
// nvls_channels: NCCL_MAX_NCHANNELS / NCCL_MAX_CTAS); for Ring/Simple, which NCCL does not bound, one
// thread block's Simple rate (the one-node perChMaxTreeBw) x the coll channels. 0 where none applies
// (other algorithms or functions, a zero table entry). The efficiencies it also applies (LL x0.5,
// LL128 x0.92, Tree all_reduce x0.92, /3.8) are not ceilings: the engine's wire bytes stand for them
// (the protocols' line overheads, and kTreeAllReduceEfficiency in the Tree's wire factor). Always
// NCCL 2.30.7's tables: they stand for the kernels' rates, which --nccl-version (s.nccl_version:
// NCCL's choice and model) does not change.
double nccl_busbw_ceiling_GBps(const NcclTopoSummary& s, Func f, Algo a, Proto p);

// The same ceiling for an operation of `bytes`. NCCL runs fewer Ring and Tree channels for small
// operations (nccl_channels_threads: enqueue.cc drops channels while the bytes are below channels x
// threads x its thread threshold), and what the kernels reach is a rate per channel: the ceiling's
// one-node entries (no network in the path) scale by the channels that run over those at full size
// (nccl_running_channel_share), while the entries for several nodes, the network's limit, stay. So
// the result is min(ceiling, one-node ceiling x share). NCCL's model charges the whole ceiling at
// every size (it chooses before the channels are dropped).
double nccl_busbw_ceiling_GBps(const NcclTopoSummary& s, Func f, Algo a, Proto p, double bytes);

// The channels NCCL runs for an operation of `bytes` (nccl_channels_threads, any size: negative and
// huge ones are clamped), and their share of those it runs at full size, for Ring and Tree; 1 for the
// other algorithms (their channel counts do not follow the size).
int nccl_running_channels(const NcclTopoSummary& s, Algo a, Proto p, double bytes);
double nccl_running_channel_share(const NcclTopoSummary& s, Algo a, Proto p, double bytes);

// Why NCCL's default rule disables LL128 for a graph ("" when enabled).
std::string ll128_disabled_reason(const NcclTopoSummary& s, const NcclGraphInfo& g);

// NCCL's integer log2 (log2i / log2Down): -1 for 0.
int nccl_log2i(std::uint64_t x);

// --- the constant tables (NCCL 2.30.7 ncclTunerConstantsDefaults), exposed for tests/reports ---
namespace nccl230 {
constexpr int kHwNvlink = 0, kHwPci = 1, kHwNet = 2;
extern const double baseLat[kNumAlgos][kNumProtos];
extern const double hwLat[3][kNumAlgos][kNumProtos];
extern const double llMaxBws[4][3];            // [arch or cpu row][N1, N2, N4+]
extern const double perChMaxRingLL128Bws[4][3];
extern const double perChMaxTreeLL128Bws[4][3];
extern const double perChMaxTreeBws[4][3];
extern const double perChMaxNVLSTreeBws[4][3];
extern const double nvlsEfficiency[4];
extern const double treeCorrectionFactor[kNumProtos][24];
constexpr int kMaxDevWorkBatchColls = 16;       // NCCL_MAX_DEV_WORK_BATCH_COLLS = 1024 / sizeof(ncclDevWorkColl) (64 B assumed)
constexpr int kMaxChannels = 64;                // MAXCHANNELS
constexpr int kMaxNthreads = 640;               // NCCL_MAX_NTHREADS
constexpr int kSimpleMaxNthreads = 512;         // NCCL_SIMPLE_MAX_NTHREADS
constexpr int kLLMaxNthreads = 512;             // NCCL_LL_MAX_NTHREADS
constexpr int kLL128MaxNthreads = 640;          // NCCL_LL128_MAX_NTHREADS
constexpr int kLLThreadThreshold = 8;           // NCCL_LL_THREAD_THRESHOLD
constexpr int kLL128ThreadThreshold = 8;        // NCCL_LL128_THREAD_THRESHOLD
constexpr int kSimpleThreadThreshold = 64;      // NCCL_SIMPLE_THREAD_THRESHOLD
constexpr double kPciBw = 12.0;                 // PCI_BW (GB/s), Ring Simple 256-thread rule
constexpr int kMaxNvlsArity = 32;               // NCCL_MAX_NVLS_ARITY
// NCCL_NVLS_NCHANNELS' default (src/transport/nvls.cc): 16 on sm90, 24 on sm100 within one node,
// 32 on sm100 across nodes. The replay's default and the tuner's summary both read it.
constexpr int nvls_channels(int compCap, bool multi_node) { return compCap >= 100 ? (multi_node ? 32 : 24) : 16; }
constexpr int kMaxDirectArity = 7;              // NCCL_MAX_DIRECT_ARITY
// Tree all_reduce's efficiency in NCCL's model (src/graph/tuning.cc: "busBw = std::min(busBw*.92,
// nChannels*perChMaxTreeBw)" for Tree AllReduce, every protocol): the tree kernel moves data at 0.92 of
// its graph's link bandwidth. The tuner applies it to busBw; the engine's Tree replay charges it on the
// links (algorithms/tree.cpp tree_options).
constexpr double kTreeAllReduceEfficiency = 0.92;

// A connection's buffer per protocol (src/include/device.h, src/init.cc), cut into NCCL_STEPS slots:
//   LL:     NCCL_LL_LINES_PER_THREAD 8 lines/thread x NCCL_LL_MAX_NTHREADS 512 threads x 8 steps x
//           16 B line (ncclLLFifoLine: half data, half flags) = 524288 B;
//   LL128:  NCCL_LL128_ELEMS_PER_THREAD 120 elems/thread x NCCL_LL128_MAX_NTHREADS 640 threads x
//           8 steps x 8 B = 4915200 B (120 of every 128 B are data);
//   Simple: DEFAULT_BUFFSIZE (NCCL_BUFFSIZE) 4 MiB.
constexpr int kSteps = 8;                        // NCCL_STEPS
constexpr std::int64_t kLLBuffBytes = 8LL * kLLMaxNthreads * kSteps * 16;
constexpr std::int64_t kLL128BuffBytes = 120LL * kLL128MaxNthreads * kSteps * 8;
constexpr std::int64_t kSimpleBuffBytes = std::int64_t{1} << 22;
static_assert(kLLBuffBytes == 524288 && kLL128BuffBytes == 4915200 && kSimpleBuffBytes == 4194304,
              "NCCL 2.30 protocol buffer sizes");
// The buffer of protocol p (bytes on the wire, flags included).
constexpr std::int64_t buff_bytes(Proto p) {
  return p == Proto::LL ? kLLBuffBytes : p == Proto::LL128 ? kLL128BuffBytes : kSimpleBuffBytes;
}
}  // namespace nccl230

}  // namespace ccsim
