// The NCCL releases whose tuner ccsim can restate (`--nccl-version X.Y[.Z]`): one table of version
// ranges, each with the constants and rules of NCCL's src/graph/tuning.cc that differ from NCCL
// 2.30.7's (algorithms/nccl_model.cpp, nccl230::). Every range names the file it was read from;
// docs/nccl-model.md "NCCL versions" lists what differs and what is not modelled.
//
// Only the tuner's cost model and enable rules are versioned (what NCCL picks, and the closed form's
// time of the pick), and the P2P channels per network peer, whose rule NCCL 2.29 changed
// (nccl_p2p_net_channels_by_bandwidth below). The topology search (channel counts, graph
// bandwidths: nccl_channels.h) and the engine's per-step constants (step_timing.h, nvls.h) stay
// 2.30's in every range.
#pragma once
#include <string>

namespace ccsim {

// One range of NCCL releases with the same tuner constants. Arrays are in NCCL order
// (nccl_model.h: 7 algorithms Tree..PAT x 3 protocols LL, LL128, Simple; hw NVLINK, PCI, NET;
// rows Volta, Ampere, Hopper, Blackwell x columns 1 node, 2 nodes, 4+ nodes).
struct NcclTunerConstants {
  int first_minor = 0, last_minor = 0;  // 2.first_minor .. 2.last_minor
  const char* source = "";              // where the numbers were read
  const double (*baseLat)[3] = nullptr;     // [algo][proto], us
  const double (*hwLat)[7][3] = nullptr;    // [hw][algo][proto], us
  const double (*llMaxBws)[3] = nullptr;    // [row][nodes], GB/s
  const double (*perChMaxRingLL128Bws)[3] = nullptr;
  const double (*perChMaxTreeLL128Bws)[3] = nullptr;
  const double (*perChMaxTreeBws)[3] = nullptr;
  const double (*perChMaxNVLSTreeBws)[3] = nullptr;  // nullptr: no NVLSTree ceiling in this range
  // NVLS/NVLSTree bandwidth. Non-null: 2.30's model (bwIntra x nvlsEfficiency x (nCh-1)/nCh, x2 for
  // AllReduce; NVLSTree's inter-node term x2 on 2 nodes; busBw x nRanks/nsteps). nullptr: the older
  // model (NVLS min(bwIntra, bwInter); NVLSTree min(bwIntra, 2 nodes ? bwInter : bwInter/2);
  // busBw x 5/6).
  const double* nvlsEfficiency = nullptr;
  bool blackwell_rows = true;             // sm100 reads its own table rows (else Hopper's)
  bool pat = true;                        // the PAT algorithm exists
  bool ring_ll_half = true;               // Ring LL busBw x 0.5; else x 1/4 (several nodes, AllReduce, Reduce) or x 1/3
  bool ring_ll128_one_ppn_discount = false;  // Ring LL128 x 0.7 instead of x 0.92 with one GPU per node
  bool allreduce_inter_steps_2n = false;  // Ring AllReduce pays 2 nNodes network steps (else 2 (nNodes - 1))
  bool one_ppn_tree_net_latency = true;   // one GPU per node: every algorithm's network latency is Tree's
  bool ll128_listed_archs_only = false;   // LL128 on by default only on exactly sm70, sm80, sm90
  bool nvls_agrs_min_intra_share = true;  // older NVLS model, AllGather/ReduceScatter: min(bwIntra (ppn-1)/ppn, bwInter x .9)
  bool non_ring_agrs_keep_busbw = true;   // AllGather/ReduceScatter off the ring keep busBw (no algBw ratio);
                                          // else only CollNetDirect does, and NVLS pays the x 5/6
  bool nvlstree_correction_sm100 = true;  // NVLSTree AllReduce gets the tree correction factor on sm100
  // A C2C-attached GPU's route to its NIC (GH200, GB200: node.gpu.c2c) counts as P2C, below PXN, in the
  // LL128 rule; else as PHB, which keeps LL128 off across nodes. NCCL enabled LL128 over it from 2.27.3
  // (NVIDIA/nccl#2001: wrong results on GH200 from 2.27.3, none with 2.26.6), when GPUDirect RDMA over C2C
  // became its default too (NVIDIA-NeMo PR #13621: NCCL_NET_GDR_C2C "becomes default after NCCL >= 2.27").
  bool ll128_over_p2c = true;
};

// A NCCL version as the user or a log gave it, with the tuner constants of its range.
struct NcclVersion {
  int major = 2, minor = 30, patch = 7;
  bool patch_given = true;
  const NcclTunerConstants* tuner = nullptr;
  // "NCCL 2.30.7", "NCCL 2.19": what reports print.
  std::string label() const;
  // "2.19-2.21" (or "2.22", a range of one minor): the range whose constants are used.
  std::string range() const;
};

// NCCL 2.30.7, ccsim's default (today's behaviour).
const NcclVersion& default_nccl_version();

// Whether `v` sizes a network peer's P2P channels by the GPU's NIC bandwidth (src/graph/paths.cc
// ncclTopoGetNchannels from v2.29.2-1: one channel per NCCL_P2P_PER_CHANNEL_NET_BW) rather than by the
// rank count (2, halved at scale, up to v2.28.9-1): algorithms/p2p.cpp.
bool nccl_p2p_net_channels_by_bandwidth(const NcclVersion& v);

// "2.19", "2.19.4" (a "+cuda12.2" suffix, as NCCL prints it, is accepted): InputError (where =
// `where`) for anything else and for versions outside the modelled range, naming the range.
NcclVersion parse_nccl_version(const std::string& text, const std::string& where);

// The modelled range, "2.19-2.30", for messages.
std::string supported_nccl_versions();

}  // namespace ccsim
