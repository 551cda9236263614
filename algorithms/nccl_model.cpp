#include "algorithms/nccl_model.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "algorithms/collectives.h"
#include "common/error.h"
#include "topologies/nccl_hardware_figures.h"

namespace ccsim {

const char* to_string(Algo a) {
  switch (a) {
    case Algo::Tree: return "Tree";
    case Algo::Ring: return "Ring";
    case Algo::CollNetDirect: return "CollNetDirect";
    case Algo::CollNetChain: return "CollNetChain";
    case Algo::NVLS: return "NVLS";
    case Algo::NVLSTree: return "NVLSTree";
    case Algo::PAT: return "PAT";
  }
  return "?";
}

const char* to_string(Proto p) {
  switch (p) {
    case Proto::LL: return "LL";
    case Proto::LL128: return "LL128";
    case Proto::Simple: return "Simple";
  }
  return "?";
}

const char* to_string(Func f) {
  switch (f) {
    case Func::Broadcast: return "Broadcast";
    case Func::Reduce: return "Reduce";
    case Func::AllGather: return "AllGather";
    case Func::ReduceScatter: return "ReduceScatter";
    case Func::AllReduce: return "AllReduce";
  }
  return "?";
}

const char* to_string(NcclPath p) {
  static const char* names[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
  return names[static_cast<int>(p)];
}

const char* to_string(ArchIndex a) {
  switch (a) {
    case ArchIndex::Volta: return "Volta";
    case ArchIndex::Ampere: return "Ampere";
    case ArchIndex::Hopper: return "Hopper";
    case ArchIndex::Blackwell: return "Blackwell";
  }
  return "?";
}

Func func_from_collective(const std::string& name) {
  const CollectiveInfo* info = find_collective_spelled(name);
  if (info && info->tuner_func) return *info->tuner_func;
  throw InputError("collective", "unknown collective \"" + name +
                                     "\" for NCCL's tuner (valid: broadcast, reduce, all_gather, reduce_scatter, all_reduce)");
}

int nccl_log2i(std::uint64_t x) {
  if (x == 0) return -1;
  int l = 0;
  while (x >>= 1) ++l;
  return l;
}

namespace nccl230 {
// baseLatencies (us): Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT x {LL, LL128, Simple}.
const double baseLat[kNumAlgos][kNumProtos] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}};
// hwLatencies (us) [NVLINK, PCI, NET][algo][proto].
const double hwLat[3][kNumAlgos][kNumProtos] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}}};
// llMaxBws: row = GPU arch on one node, CPU vendor row (0 Intel/other, 1 AMD/mixed) on several.
const double llMaxBws[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
const double perChMaxRingLL128Bws[4][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
const double perChMaxTreeLL128Bws[4][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
const double perChMaxTreeBws[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
const double perChMaxNVLSTreeBws[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
const double nvlsEfficiency[4] = {0.0, 0.0, kNcclNvlsEfficiencyHopper, kNcclNvlsEfficiencyBlackwell};
// Powers of two of nBytes>>6 (64 B .. 512 MB); ncclTopoGetAlgoTime reads indexes 0..22 for Tree.
const double treeCorrectionFactor[kNumProtos][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
}  // namespace nccl230

namespace {

using namespace nccl230;

const NcclGraphInfo& graph_for(const NcclTopoSummary& s, Algo a) {
  switch (a) {
    case Algo::Tree: return s.tree;
    case Algo::Ring: return s.ring;
    case Algo::CollNetDirect:
    case Algo::CollNetChain: return s.collnet_graph;
    case Algo::NVLS:
    case Algo::NVLSTree: return s.nvls_graph;
    case Algo::PAT: return s.ring;  // PAT runs on the ring channels
  }
  return s.ring;
}

bool is_amd(const NcclTopoSummary& s) { return s.cpu_vendor == "amd" || s.cpu_vendor == "mixed"; }

// Which (func, algo) pairs NCCL's tuner computes at all (ncclTopoTuneModel loop).
bool func_has_algo(Func f, Algo a) {
  switch (f) {
    case Func::Broadcast:
    case Func::Reduce: return a == Algo::Ring;
    case Func::AllGather:
    case Func::ReduceScatter: return a == Algo::Ring || a == Algo::NVLS || a == Algo::CollNetDirect || a == Algo::PAT;
    case Func::AllReduce: return a != Algo::PAT;
  }
  return false;
}

int max_threads(const NcclTopoSummary& s, Algo a, Proto p) {
  if (p == Proto::LL) return kLLMaxNthreads;
  if (p == Proto::LL128) return kLL128MaxNthreads;
  // Simple
  if (a == Algo::Ring) return s.ring.bwIntra * s.ring.nChannels <= kPciBw ? 256 : kSimpleMaxNthreads;
  if (a == Algo::Tree) return kSimpleMaxNthreads;
  return kMaxNthreads;  // CollNet*, NVLS*, PAT
}

long thread_threshold(const NcclTopoSummary& s, Algo a, Proto p) {
  if (a == Algo::CollNetDirect || a == Algo::CollNetChain) {
    if (p == Proto::Simple) return 512;
  }
  long t = p == Proto::LL ? kLLThreadThreshold : p == Proto::LL128 ? kLL128ThreadThreshold : kSimpleThreadThreshold;
  if (a == Algo::Ring && p == Proto::LL) t *= s.nranks;
  return t;
}


}  // namespace

std::string ll128_disabled_reason(const NcclTopoSummary& s, const NcclGraphInfo& g) {
  if (s.compCap < 70) return "LL128 needs sm70 or newer";
  if (s.nccl_version.tuner->ll128_listed_archs_only && s.compCap != 70 && s.compCap != 80 && s.compCap != 90)
    return "LL128 disabled by default: " + s.nccl_version.label() + " enables it on sm70, sm80 and sm90 only (here sm" +
           std::to_string(s.compCap) + ")";
  // NCCL_LL128_C2C=1 (default): on sm90+ LL128 is allowed up to PXN between GPU and NIC, else up to PXB.
  // Before 2.27 a C2C-attached GPU's NIC path was PHB to this rule (NcclTunerConstants::ll128_over_p2c).
  const NcclPath maxInter = s.compCap >= 90 ? NcclPath::Pxn : NcclPath::Pxb;
  if (g.typeInter == NcclPath::P2c && !s.nccl_version.tuner->ll128_over_p2c)
    return "LL128 disabled by default: " + s.nccl_version.label() +
           " enables it across nodes on C2C-attached GPUs (GPU-NIC path P2C) from 2.27 only";
  if (g.typeInter > maxInter)
    return std::string("LL128 disabled by default: GPU-NIC path ") + to_string(g.typeInter) + " is beyond " +
           to_string(maxInter);
  if (g.typeIntra > NcclPath::Nvb)
    return std::string("LL128 disabled by default: intra-node path ") + to_string(g.typeIntra) +
           " is not NVLink (needs NVL/NVB)";
  return "";
}

void nccl_channels_threads(const NcclTopoSummary& s, Algo a, Proto p, std::uint64_t bytes, int* channels, int* threads) {
  const double nBytes = static_cast<double>(bytes);
  int nc = s.coll_channels;
  int nt = max_threads(s, a, p);
  double thr = static_cast<double>(thread_threshold(s, a, p));
  if (a == Algo::CollNetDirect) {
    // CollNet channel tuning: nHeads = collnet graph channels.
    const int nHeads = std::max(1, s.collnet_graph.nChannels);
    int ncSwitch = 16;
    bool flag = true;
    while (ncSwitch >= 1 && flag) {
      while ((flag = nBytes < static_cast<double>(nc) * nt * nHeads * thr) && nc > ncSwitch) {
        if (nc == ncSwitch + ncSwitch / 2) thr /= 2;
        nc--;
      }
      ncSwitch /= 2;
    }
  } else if (a == Algo::NVLS || a == Algo::NVLSTree) {
    nc = (s.nnodes > 1 && a == Algo::NVLS) ? std::min(s.nvls_channels, s.coll_channels) : s.nvls_channels;
  } else {
    while (nBytes < static_cast<double>(nc) * nt * thr) {
      if (nc >= 2) nc--;
      else break;
    }
  }
  if (a != Algo::NVLS && a != Algo::NVLSTree && a != Algo::CollNetDirect) {
    while (nBytes < static_cast<double>(nc) * nt * thr) {
      if (nt % 128 == 0) nt /= 2;
      else break;
    }
  }
  if (p == Proto::Simple) {
    if (a == Algo::Ring) nt += 32;      // extra warp for sync
    if (a == Algo::Tree) nt += 4 * 32;  // split thread model
  }
  if (nt / 32 < 3) nt = 3 * 32;
  if (a == Algo::Tree || a == Algo::PAT) nt = kMaxNthreads;
  *channels = nc;
  *threads = nt;
}

namespace {

// The per-architecture and per-node-count ceilings of ncclTopoTuneModel for a topology.
struct Ceilings {
  double llMaxBw, perChMaxTreeBw, perChMaxRingLL128Bw, perChMaxTreeLL128Bw, perChMaxNVLSTreeBw;
};
// The table row of the GPU architecture (compCapIndex): versions without Blackwell rows read Hopper's.
int arch_row(const NcclTopoSummary& s, const NcclTunerConstants& t) {
  const int ci = static_cast<int>(s.arch);
  return t.blackwell_rows ? ci : std::min(ci, static_cast<int>(ArchIndex::Hopper));
}

// perChMaxNVLSTreeBw of a version without one: no bound.
constexpr double kNoCeiling = std::numeric_limits<double>::max();

// `nnodes`: the topology's, or 1 for the kernels' own rates (the one-node column, where no network
// is in the path).
Ceilings ceilings_for(const NcclTopoSummary& s, const NcclTunerConstants& t, int nnodes) {
  const int ci = arch_row(s, t);
  const int index2 = nnodes <= 2 ? nnodes - 1 : 2;
  const int index1 = nnodes == 1 ? ci : (is_amd(s) ? 1 : 0);
  return {t.llMaxBws[index1][index2], t.perChMaxTreeBws[ci][index2], t.perChMaxRingLL128Bws[ci][index2],
          t.perChMaxTreeLL128Bws[ci][index2], t.perChMaxNVLSTreeBws ? t.perChMaxNVLSTreeBws[ci][index2] : kNoCeiling};
}

}  // namespace

namespace {

// The ceiling of nccl_busbw_ceiling_GBps from one set of table entries.
double busbw_ceiling_from(const NcclTopoSummary& s, const NcclTunerConstants& tuner, const Ceilings& c, Func f, Algo a,
                          Proto p) {
  // NCCL's model counts the graph's channels; where NCCL_MAX_NCHANNELS / NCCL_MAX_CTAS leave fewer
  // running (comm->nChannels, nvlsChannels below the graph's), the per-channel ceilings count those.
  const int ring_channels = std::min(s.ring.nChannels, s.coll_channels);
  const int tree_channels = std::min(s.tree.nChannels, s.coll_channels);
  switch (a) {
    case Algo::Ring:
      if (p == Proto::LL) return c.llMaxBw;
      if (p == Proto::LL128) return ring_channels * c.perChMaxRingLL128Bw;
      // Simple: what one channel's thread block copies, on every channel that runs. NCCL gives no
      // Ring figure (its rings are link-bound at the default channel counts); its one-node Tree
      // Simple ceiling is its measurement of one channel's block (perChMaxTreeBws[arch][1 node]:
      // Hopper 38.7 GB/s; a published H200 node measures 37.5 busbw with one CTA, docs/accuracy.md).
      return s.coll_channels * tuner.perChMaxTreeBws[arch_row(s, tuner)][0];
    case Algo::Tree: {
      if (f != Func::AllReduce) return 0;
      const double tree = tree_channels * c.perChMaxTreeBw;
      if (p == Proto::LL) return std::min(tree, c.llMaxBw);
      if (p == Proto::LL128) return std::min(tree, tree_channels * c.perChMaxTreeLL128Bw);
      return tree;
    }
    case Algo::NVLSTree:
      return f == Func::AllReduce && p == Proto::Simple && s.nnodes > 1 && c.perChMaxNVLSTreeBw != kNoCeiling
                 ? std::min(s.nvls_graph.nChannels, s.nvls_channels) * c.perChMaxNVLSTreeBw
                 : 0;
    default:
      return 0;
  }
}

}  // namespace

double nccl_busbw_ceiling_GBps(const NcclTopoSummary& s, Func f, Algo a, Proto p) {
  if (s.nranks < 2) return 0;
  // Kernel and protocol rates the engine's links cannot produce: NCCL 2.30.7's measurements whatever
  // release's tuner picks (--nccl-version moves the choice and NCCL's model, not the kernels' rates).
  const NcclTunerConstants& tuner = *default_nccl_version().tuner;
  return busbw_ceiling_from(s, tuner, ceilings_for(s, tuner, s.nnodes), f, a, p);
}

double nccl_busbw_ceiling_GBps(const NcclTopoSummary& s, Func f, Algo a, Proto p, double bytes) {
  const double full = nccl_busbw_ceiling_GBps(s, f, a, p);
  const double share = nccl_running_channel_share(s, a, p, bytes);
  if (full <= 0 || share >= 1.0) return full;
  // The kernels' part of the ceiling (its one-node entries: no network in the path) is a rate per
  // channel and falls with the channels that run; the network's part (the entries for 2 and more
  // nodes, llMaxBws by CPU vendor) is the network's, which fewer channels do not slow.
  const NcclTunerConstants& tuner = *default_nccl_version().tuner;
  const double kernels = busbw_ceiling_from(s, tuner, ceilings_for(s, tuner, 1), f, a, p);
  return std::min(full, kernels * share);
}

int nccl_running_channels(const NcclTopoSummary& s, Algo a, Proto p, double bytes) {
  int channels = 0, threads = 0;
  nccl_channels_threads(s, a, p, static_cast<std::uint64_t>(std::min(std::max(bytes, 0.0), 1e18)), &channels, &threads);
  return channels;
}

double nccl_running_channel_share(const NcclTopoSummary& s, Algo a, Proto p, double bytes) {
  if (a != Algo::Ring && a != Algo::Tree) return 1.0;
  const int full = nccl_running_channels(s, a, p, 1e18);
  return full > 0 ? static_cast<double>(nccl_running_channels(s, a, p, bytes)) / full : 1.0;
}

std::vector<AlgoProtoCost> nccl_costs(const NcclTopoSummary& s, Func f, std::uint64_t bytes, int numPipeOps) {
  std::vector<AlgoProtoCost> rows;
  rows.reserve(kNumAlgos * kNumProtos);
  const int nRanks = s.nranks;
  const int nNodes = s.nnodes;
  const double ppn = static_cast<double>(nRanks) / nNodes;
  const NcclTunerConstants& t = *s.nccl_version.tuner;
  const int ci = arch_row(s, t);
  const Ceilings c = ceilings_for(s, t, s.nnodes);
  const double llMaxBw = c.llMaxBw;
  const double perChMaxTreeBw = c.perChMaxTreeBw;
  const double perChMaxRingLL128Bw = c.perChMaxRingLL128Bw;
  const double perChMaxTreeLL128Bw = c.perChMaxTreeLL128Bw;
  const double perChMaxNVLSTreeBw = c.perChMaxNVLSTreeBw;
  const int nsteps = f == Func::AllReduce ? 2 * (nRanks - 1)
                     : (f == Func::AllGather || f == Func::ReduceScatter) ? nRanks - 1
                                                                          : nRanks;
  const bool agrs = f == Func::AllGather || f == Func::ReduceScatter;

  for (int ai = 0; ai < kNumAlgos; ++ai) {
    for (int pi = 0; pi < kNumProtos; ++pi) {
      const Algo a = static_cast<Algo>(ai);
      const Proto p = static_cast<Proto>(pi);
      AlgoProtoCost r;
      r.algo = a;
      r.proto = p;
      const NcclGraphInfo& g = graph_for(s, a);

      // --- applicability (what ncclTopoTuneModel computes at all) ---
      std::string na;
      if (nRanks <= 1) na = "a single rank: NCCL does no communication";
      else if (!func_has_algo(f, a)) {
        na = std::string(to_string(a)) + " does not implement " + to_string(f) + " in NCCL 2.30 (" + to_string(f) +
             ": " + (f == Func::AllReduce ? "Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree"
                     : agrs ? "Ring, NVLS, CollNetDirect, PAT" : "Ring") + ")";
      } else if ((a == Algo::NVLS || a == Algo::NVLSTree) && p != Proto::Simple) {
        na = std::string(to_string(a)) + " runs the Simple protocol only";
      } else if ((a == Algo::CollNetDirect || a == Algo::CollNetChain) && p != Proto::Simple) {
        na = std::string(to_string(a)) + " runs the Simple protocol only";
      } else if (a == Algo::PAT && !t.pat) {
        na = "PAT does not exist in " + s.nccl_version.label() + " (NCCL 2.23 added it)";
      } else if (a == Algo::PAT && p != Proto::Simple) {
        na = "PAT runs the Simple protocol only";
      } else if (a == Algo::PAT && nNodes != nRanks) {
        na = "PAT supports one GPU per node only (here " + std::to_string(s.ppn) + " GPUs per node)";
      } else if ((a == Algo::CollNetDirect || a == Algo::CollNetChain) && (!s.collnet || g.nChannels < 1)) {
        na = std::string(to_string(a)) + " needs a CollNet (SHARP) network; none configured (a fabric whose switches reduce: --set fabric.sharp=true)";
      } else if ((a == Algo::NVLS || a == Algo::NVLSTree) && g.nChannels < 2) {
        na = s.nvls ? "NVLS graph has fewer than 2 channels"
                    : "NVLS needs NVSwitch with NVLink SHARP (nvls) on sm90 or newer; this node has none";
      }
      if (!na.empty()) {
        r.applicable = false;
        r.enabled = false;
        r.why_disabled = na;
        r.time_us = -1;
        rows.push_back(r);
        continue;
      }
      r.applicable = true;

      // --- bandwidth (ncclTopoTuneModel) ---
      const bool collnet = a == Algo::CollNetDirect || a == Algo::CollNetChain;
      double bw = (nNodes <= 2 || collnet) ? g.bwIntra : g.bwInter;
      if ((a == Algo::NVLS || a == Algo::NVLSTree) && !t.nvlsEfficiency) {
        // Before 2.27: NVLS at the slower of NVLink and the network, NVLSTree at half the network
        // beyond 2 nodes.
        if (a == Algo::NVLSTree) bw = std::min(g.bwIntra, nNodes <= 2 ? g.bwInter : g.bwInter / 2);
        else if (agrs && t.nvls_agrs_min_intra_share) bw = std::min(g.bwIntra * (ppn - 1) / ppn, g.bwInter * 0.9);
        else bw = std::min(g.bwIntra, g.bwInter);
      } else if (a == Algo::NVLS || a == Algo::NVLSTree) {
        double intraBw = g.bwIntra * t.nvlsEfficiency[ci] * (g.nChannels - 1) / g.nChannels;
        if (f == Func::AllReduce) intraBw *= 2.0;  // AllReduce pipelines two operations
        else intraBw *= (ppn - 1) / ppn;
        const double interBw = g.bwInter * ((nNodes <= 2 && a == Algo::NVLSTree) ? 2 : 1);
        bw = std::min({intraBw, interBw,
                       a == Algo::NVLSTree ? perChMaxNVLSTreeBw : std::numeric_limits<double>::max()});
      }
      double busBw = g.nChannels * bw;
      if (a == Algo::Ring && p == Proto::LL) {
        const double ll = t.ring_ll_half ? .5 : (nNodes > 1 || f == Func::AllReduce || f == Func::Reduce) ? 1.0 / 4.0 : 1.0 / 3.0;
        busBw = std::min(llMaxBw, busBw * ll);
      }
      if (a == Algo::Ring && p == Proto::LL128)
        busBw = std::min(busBw * (t.ring_ll128_one_ppn_discount && ppn < 2 ? 0.7 : 0.92), g.nChannels * perChMaxRingLL128Bw);
      if (a == Algo::Tree && f == Func::AllReduce)
        busBw = std::min(busBw * nccl230::kTreeAllReduceEfficiency, g.nChannels * perChMaxTreeBw);
      if (a == Algo::Tree && p == Proto::LL) busBw = std::min(busBw * 1.0 / 3.8, llMaxBw);
      if (a == Algo::Tree && p == Proto::LL128)
        busBw = std::min(busBw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), g.nChannels * perChMaxTreeLL128Bw);
      if (a == Algo::Tree && !s.tree.balancedTree) busBw *= .85;
      if (a == Algo::PAT) busBw *= .75;
      if (a == Algo::CollNetDirect && p == Proto::Simple) {
        if (agrs) {
          busBw = ppn * std::min(g.bwIntra, g.bwInter * 0.9);
        } else {
          double factor = ppn / (1.0 * g.nChannels);  // GPU/NIC ratio
          factor -= (factor - 1) / 2;
          busBw /= factor;
          if (s.compCap >= 90) busBw *= .85;
        }
      }
      std::string bw_zero_reason;
      if ((a == Algo::NVLS || a == Algo::CollNetDirect) && p == Proto::Simple && agrs && nNodes > 1) {
        // Needs the CollNet plugin's iallgather/ireducescatter and 1:1 GPU:NIC; ccsim assumes a SHARP
        // plugin without them.
        busBw = 0;
        bw_zero_reason = std::string(to_string(a)) + " " + to_string(f) +
                         " across nodes needs a CollNet plugin with iallgather/ireducescatter (not modelled)";
      }
      r.busbw_GBps = busBw;
      const bool keep_busbw = agrs && a != Algo::Ring && (t.non_ring_agrs_keep_busbw || a == Algo::CollNetDirect);
      if (!keep_busbw) {
        double ratio = 1.0;
        if (a == Algo::Ring) ratio *= (1.0 * nRanks) / nsteps;
        else if (a == Algo::NVLS || a == Algo::NVLSTree) ratio *= t.nvlsEfficiency ? (1.0 * nRanks) / nsteps : 5.0 / 6.0;
        else ratio *= .5;
        busBw *= ratio;
      }
      r.bw_GBps = busBw;

      // --- latency ---
      double lat = t.baseLat[ai][pi];
      const int intraHw = g.typeIntra == NcclPath::Nvl ? kHwNvlink : kHwPci;
      const int hw = nNodes == 1 ? intraHw : kHwNet;
      double intraLat = t.hwLat[intraHw][ai][pi];
      // With one GPU per node NCCL 2.23+ charges every algorithm Tree's network latency.
      const bool tree_net = t.one_ppn_tree_net_latency && ppn == 1;
      double interLat = t.hwLat[kHwNet][tree_net ? static_cast<int>(Algo::Tree) : ai][pi] + g.latencyInter;
      if (p == Proto::Simple) interLat += g.latencyInter;  // flush
      if (a == Algo::Ring) {
        double l = t.hwLat[hw][ai][pi];
        if (f == Func::Reduce || f == Func::Broadcast) {
          if (g.sameChannels) {
            lat += l;
          } else {
            if (p == Proto::Simple) l = t.hwLat[hw][static_cast<int>(Algo::Tree)][pi];
            lat += nsteps * l;
          }
        } else {
          double netOverhead = 0.0;
          if (nNodes > 1) {
            netOverhead = s.net_overhead_us;
            if (p == Proto::Simple) netOverhead *= 3;
          }
          intraLat = std::max(intraLat, netOverhead);
          const int arSteps = t.allreduce_inter_steps_2n ? 2 * nNodes : 2 * (nNodes - 1);
          const int nInterSteps = nNodes == 1 ? 0 : f == Func::AllReduce ? arSteps : nNodes - 1;
          lat += (nsteps - nInterSteps) * intraLat + nInterSteps * interLat;
        }
      } else if (a == Algo::Tree) {
        if (f == Func::AllReduce) lat += 2 * ((nRanks / nNodes - 1) * intraLat + nccl_log2i(nNodes) * interLat);
      } else if (a == Algo::CollNetDirect) {
        lat += 2 * (std::min(1, nRanks / nNodes - 1) * intraLat + (nRanks / nNodes - 1) * 0.4) + interLat;
      } else if (a == Algo::CollNetChain) {
        lat += 2 * (nRanks / nNodes - 1) * intraLat + interLat;
      } else if (a == Algo::NVLS) {
        lat = intraLat;  // baseLat not added
        if (nNodes > 1) lat += interLat;
      } else if (a == Algo::NVLSTree) {
        lat += intraLat + 2 * nccl_log2i(nNodes) * interLat;
      } else if (a == Algo::PAT) {
        if (agrs) lat += nccl_log2i(nNodes) * (interLat / 3.5) + nRanks * 2.8;
      }
      r.latency_us = lat;

      // --- enable rules (defaults; user filters are applied by the tuner) ---
      std::string why;
      if (!bw_zero_reason.empty()) why = bw_zero_reason;
      else if (a == Algo::NVLSTree && nNodes == 1) why = "NVLSTree is disabled on a single node";
      else if (collnet && !s.collnet) why = std::string(to_string(a)) + " needs a CollNet (SHARP) network; none configured (a fabric whose switches reduce: --set fabric.sharp=true)";
      else if (a == Algo::NVLS && nNodes > 1 && !s.collnet)
        why = "NVLS across nodes needs CollNet (SHARP); use NVLSTree";
      else if (a == Algo::CollNetChain && !s.collnet_chain) why = "CollNetChain not supported by the CollNet plugin";
      else if (a == Algo::CollNetDirect && !s.nvswitch) why = "CollNetDirect needs an NVSwitch node";
      else if (collnet && s.ppn > kMaxDirectArity + 1)
        why = std::string(to_string(a)) + " supports at most 8 local GPUs";
      else if ((a == Algo::NVLS || a == Algo::NVLSTree) && !s.nvls)
        why = "NVLS needs NVSwitch with NVLink SHARP on sm90 or newer";
      else if ((a == Algo::NVLS || a == Algo::NVLSTree) && f != Func::AllReduce && s.ppn > kMaxNvlsArity)
        why = "NVLS supports at most 32 local GPUs outside AllReduce";
      else if (p == Proto::LL128) why = ll128_disabled_reason(s, g);
      r.enabled = why.empty() && r.bw_GBps > 0;
      if (why.empty() && !r.enabled) why = "zero bandwidth in NCCL's model";
      r.why_disabled = why;

      // --- time for this size (ncclTopoGetAlgoTime) ---
      double ebw = r.bw_GBps;
      double elat = r.latency_us;
      const int logSize = nccl_log2i(bytes >> 6);
      if (a == Algo::Tree && f == Func::AllReduce && logSize >= 0 && logSize < 23) ebw *= treeCorrectionFactor[pi][logSize];
      if (a == Algo::NVLSTree && f == Func::AllReduce && logSize >= 0 && logSize < 24 && s.compCap >= 100 &&
          t.nvlstree_correction_sm100)
        ebw *= treeCorrectionFactor[pi][logSize];  // SM100 on x86 (ccsim assumes x86 hosts)
      if (a == Algo::Ring && p == Proto::Simple && nNodes > 1 && f == Func::AllReduce &&
          bytes / (static_cast<std::uint64_t>(s.coll_channels) * nRanks) >= 64)
        elat *= s.compCap < 80 ? 1.9 : 1.4;  // plateau effect of ring
      const int latCount = a == Algo::Ring ? numPipeOps : (numPipeOps + kMaxDevWorkBatchColls - 1) / kMaxDevWorkBatchColls;
      elat *= latCount;
      r.eff_latency_us = elat;
      r.eff_bw_GBps = ebw;
      r.time_us = ebw > 0 ? elat + static_cast<double>(bytes) / (1000.0 * ebw) : -1;
      nccl_channels_threads(s, a, p, bytes, &r.channels, &r.threads);
      rows.push_back(r);
    }
  }
  return rows;
}

}  // namespace ccsim
