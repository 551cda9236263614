#include "algorithms/nccl_channels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <vector>

#include "algorithms/collnet.h"
#include "topologies/nccl_hardware_figures.h"
#include "topologies/nvlink_mesh.h"
#include "topologies/routing.h"
#include "topologies/transports.h"

namespace ccsim {

namespace {

// A GPU pair without P2P: NCCL diverts it through the CPU (paths.cc, addInterStep), so its path type
// is PHB, or SYS when the SHM route crosses the inter-socket link.
PathClass shm_path_class(const Topology& topo, int a, int b) {
  for (const Hop& h : route_between_gpus(topo, a, b))
    if (topo.link(h.edge).kind == LinkKind::InterSocket) return PathClass::Sys;
  return PathClass::Phb;
}

const std::vector<double> kSpeedIntra = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0};
const std::vector<double> kSpeedInter = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                         7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
const std::vector<double> kSm90SpeedIntra = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
const std::vector<double> kSm90SpeedInter = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                             15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
const std::vector<double> kSm100SpeedIntra = {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
const std::vector<double> kSm100SpeedInter = {96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0,
                                              17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

const std::vector<double>& speeds(int cc, bool inter) {
  if (cc >= 100) return inter ? kSm100SpeedInter : kSm100SpeedIntra;
  if (cc >= 90) return inter ? kSm90SpeedInter : kSm90SpeedIntra;
  return inter ? kSpeedInter : kSpeedIntra;
}

constexpr double kEps = 1e-6;

struct Found {
  int n = 0;
  double bw = 0;
};

// Pass 1 of ncclTopoCompute as described in nccl_channels.h. `capacity(s)` = channels the links
// carry at speed s (already capped by maxChannels); channel sets below minChannels don't count.
Found search_pass1(const std::vector<double>& sp, double maxBw, double totalBw, int minCh,
                   const std::function<int(double)>& capacity, bool nvls) {
  std::size_t i = 0;
  while ((sp[i] > maxBw + kEps || sp[i] * minCh > totalBw + kEps) && i + 1 < sp.size()) ++i;
  Found best;
  for (; i < sp.size(); ++i) {
    const double s = sp[i];
    if (best.n > 0 && !(s / best.bw > .49)) break;
    int n = capacity(s);
    if (n < minCh) n = 0;
    if (n > 0) {
      const bool better = nvls ? (n > best.n || n * s > best.n * best.bw + kEps) : (n * s > best.n * best.bw + kEps);
      if (better) best = {n, s};
      if (n * s >= totalBw - kEps) break;  // optimal: channels x speed reach the GPU's total bandwidth
    }
  }
  return best;
}

std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

NcclPath from_path_class(PathClass c) {
  switch (c) {
    case PathClass::Loc: return NcclPath::Loc;
    case PathClass::Nvl: return NcclPath::Nvl;
    case PathClass::Pix: return NcclPath::Pix;
    case PathClass::Pxb: return NcclPath::Pxb;
    case PathClass::Phb: return NcclPath::Phb;
    case PathClass::Node: return NcclPath::Phb;
    case PathClass::Sys: return NcclPath::Sys;
    case PathClass::Net: return NcclPath::Net;
  }
  return NcclPath::Sys;
}

// NCCL's path type from local GPU l to NIC r of its node. A route through the GPU's own CPU is PHB,
// except from a GPU attached to that CPU by NVLink-C2C (node.gpu.c2c: GH200, GB200), where NCCL
// names it P2C, below PXN (src/graph/topo.h). A route path_class names NVL counts as PIX, NCCL's
// starting minTypeInter.
NcclPath gpu_nic_path(const Topology& topo, int l, int r) {
  const PathClass c = path_class(topo, topo.gpu(l), topo.nic(0, r));
  if (c == PathClass::Nvl) return NcclPath::Pix;
  if (c == PathClass::Phb && topo.gpu_c2c) return NcclPath::P2c;
  return from_path_class(c);
}

// NCCL bandwidth of the first link of `kind` at vertex v (0 if none).
// NCCL derives PCIe speeds from the link's generation and width, not from what DMA achieves: undo
// the topology's achievable-fraction factor (node.pcie.efficiency) to get the nominal rate back.
double pcie_nominal_Bps(const Topology& topo, double bandwidth_Bps) {
  const auto& node = topo.spec.contains("node") ? topo.spec.at("node") : nlohmann::json::object();
  double eff = 1.0;
  if (node.contains("pcie") && node.at("pcie").is_object() && node.at("pcie").contains("efficiency"))
    eff = node.at("pcie").at("efficiency").get<double>();
  return bandwidth_Bps / eff;
}

double first_link_bw(const Topology& topo, VertexId v, LinkKind kind) {
  auto [b, e] = boost::out_edges(v, topo.graph());
  for (; b != e; ++b) {
    const Link& l = topo.link(*b);
    if (l.kind == kind) return kind == LinkKind::Pcie ? pcie_nominal_Bps(topo, l.bandwidth_Bps) : l.bandwidth_Bps;
  }
  return 0;
}

// NCCL's tree graph starts as BALANCED_TREE: a channel's parent and first child go through the NIC
// of the chain's first GPU, the second child through the same NIC from the chain's second GPU, each at
// bwInter / 2, and both GPUs must reach that NIC within the search's path type (search.cc,
// ncclTopoSearchRecGpu "Balanced Tree : count half of the bandwidth on first two GPUs"). Where no NIC
// has two GPUs that close (one NIC per GPU, each behind its own PCIe switch: DGX H100, B200, p5),
// the balanced search finds nothing, and on sm90 and later NCCL falls back to TREE at the same speed
// ("Try a simpler tree", ccMin >= 90), whose channels the tuner discounts (busBw x 0.85 for
// NCCL_TOPO_PATTERN_TREE, tuning.cc). Older GPUs keep the balanced pattern and relax the path type.
// One node has no NIC in the tree, and one GPU per node no second GPU to share it: balanced.
bool balanced_tree_found(const Topology& topo, bool multi, int compCap, NcclPath typeInter) {
  const int ppn = topo.gpus_per_node(), nics = topo.nics_per_node();
  if (!multi || ppn < 2 || nics < 1 || compCap < 90) return true;
  for (int r = 0; r < nics; ++r) {
    int close = 0;
    for (int l = 0; l < ppn; ++l) {
      if (static_cast<int>(gpu_nic_path(topo, l, r)) <= static_cast<int>(typeInter)) ++close;
    }
    if (close >= 2) return true;
  }
  return false;
}

}  // namespace

NcclTopoSummary summarize_for_nccl(const Topology& topo, bool collnet_fabric) {
  NcclTopoSummary s;
  s.name = topo.name;
  s.nnodes = topo.num_nodes();
  s.ppn = topo.gpus_per_node();
  s.nranks = topo.num_gpus();
  const int cc0 = compcap_from_arch(topo.gpu_arch);
  s.compCap = cc0 > 0 ? cc0 : 90;
  if (cc0 <= 0) s.notes.push_back("GPU arch \"" + topo.gpu_arch + "\" unknown: assuming sm90 (Hopper)");
  s.arch = s.compCap >= 100 ? ArchIndex::Blackwell
           : s.compCap >= 90 ? ArchIndex::Hopper
           : s.compCap >= 80 ? ArchIndex::Ampere
                             : ArchIndex::Volta;
  s.cpu_vendor = topo.cpu_vendor;
  s.net_overhead_us = nccl_net_overhead_us(s.cpu_vendor);
  // NCCL_P2P_DISABLE (node.nvlink.nccl_p2p false): NCCL's search sees GPU pairs through the CPU.
  // GPUs joined pair by pair (node.nvlink.peers): NCCL's topology holds the links between the GPUs it
  // runs on, so a GPU's usable links are those to the described peers (two GPUs of a 4-GPU board
  // joined by NV4: 4, not the GPU's 12; NVIDIA/nccl-tests#331 prints 8 coll channels for such a pair,
  // 4 rings of 20 GB/s doubled).
  int visible_nvlinks = topo.nvlinks_per_gpu;
  if (nvlink_mesh(topo))
    for (int a = 0; a < topo.gpus_per_node(); ++a) {
      int links = 0;
      for (int b = 0; b < topo.gpus_per_node(); ++b) links += nvlink_links(topo, a, b);
      visible_nvlinks = std::min(visible_nvlinks, links);
    }
  const int p2p_nvlinks = topo.nccl_p2p ? visible_nvlinks : 0;
  s.nvswitch = topo.has_nvswitch && p2p_nvlinks > 0;
  s.nvls = s.nvswitch && topo.nvls_capable && s.compCap >= 90;
  // A fabric whose switches reduce (fabric.sharp) stands for a CollNet (SHARP) plugin that is loaded.
  s.collnet = (collnet_fabric || collnet_supported(topo)) && s.nnodes > 1;
  const int cc = s.compCap;
  const int ppn = s.ppn;
  const bool multi = s.nnodes > 1;

  // --- per-GPU bandwidths in NCCL units ---
  const VertexId g0 = topo.gpu(0);
  const double gpuPci = nccl_pci_bw_from_link(first_link_bw(topo, g0, LinkKind::Pcie));
  const double nvl = p2p_nvlinks > 0 ? p2p_nvlinks * nccl_nvlink_bw_per_link(cc) : 0.0;
  // GPUs joined pair by pair (node.nvlink.peers): a channel at speed s takes s on every link its
  // ring steps over, so the channels are the rings the pairs hold at that speed (NCCL's search over
  // the same links), not the GPU's links over s. Pairs that hold no ring (bridged pairs) leave the
  // ring PCIe hops, which bound it as on a PCIe-only node.
  const double per_link = nccl_nvlink_bw_per_link(cc);
  auto mesh_channels = [&](double s_) {
    return static_cast<int>(nvlink_mesh_rings(topo, per_link / s_, nccl230::kMaxChannels / 2).size());
  };
  const bool joined_pairs = ppn > 2 && p2p_nvlinks > 0 && nvlink_mesh(topo);
  const bool mesh = joined_pairs && mesh_channels(per_link) > 0;
  const bool pcie_bound = nvl <= 0 || (joined_pairs && !mesh);
  if (mesh) s.notes.push_back("NVLink without NVSwitch: rings step between joined GPUs only (node.nvlink.peers)");
  if (joined_pairs && !mesh)
    s.notes.push_back("NVLink without NVSwitch: the joined pairs hold no ring, so rings cross PCIe between them (node.nvlink.peers)");
  double B = nvl;  // what one GPU can push into the node per direction, for channels
  NcclPath typeIntra = NcclPath::Nvl;
  if (ppn == 1) {
    typeIntra = NcclPath::Loc;
    B = 0;
  } else if (pcie_bound) {
    // PCIe-only node: the worst GPU pair sets the ring's path type; uplinks and the inter-socket
    // link bound the per-channel speed (approximation of the search).
    PathClass worst = PathClass::Pix;
    double uplink = 0, socket = 0;
    bool any_phb = false;  // a GPU pair through one CPU's host bridge (ring hops inside a socket)
    for (int l = 1; l < ppn; ++l) {
      // SHM pairs (no P2P, or farther than NCCL's P2P level) as NCCL's search sees them.
      const PathClass c = nccl_shm_pair(topo, 0, l) ? shm_path_class(topo, 0, l) : path_class(topo, g0, topo.gpu(l));
      worst = std::max(worst, c);
      any_phb = any_phb || c == PathClass::Phb || c == PathClass::Node;
    }
    auto [eb, ee] = boost::edges(topo.graph());
    for (; eb != ee; ++eb) {
      const Link& lk = topo.link(*eb);
      if (lk.node != 0) continue;
      const Vertex& va = topo.vertex(boost::source(*eb, topo.graph()));
      const Vertex& vb = topo.vertex(boost::target(*eb, topo.graph()));
      if (lk.kind == LinkKind::Pcie && (va.kind == VertexKind::PcieSwitch || vb.kind == VertexKind::PcieSwitch) &&
          va.kind != VertexKind::Gpu && vb.kind != VertexKind::Gpu && va.kind != VertexKind::Nic && vb.kind != VertexKind::Nic)
        uplink = uplink == 0 ? nccl_pci_bw_from_link(pcie_nominal_Bps(topo, lk.bandwidth_Bps))
                             : std::min(uplink, nccl_pci_bw_from_link(pcie_nominal_Bps(topo, lk.bandwidth_Bps)));
      if (lk.kind == LinkKind::InterSocket) socket = nccl_inter_cpu_bw(s.cpu_vendor, topo.cpu_model_id, topo.cpu_family_id);
    }
    B = gpuPci;
    if (worst >= PathClass::Pxb && uplink > 0) B = std::min(B, uplink);
    const bool intel_phb = any_phb && topo.cpu_vendor == "intel";
    if (intel_phb) B /= kNcclIntelP2pOverhead;  // on the PCIe links only, not on the socket link
    if (worst == PathClass::Sys && socket > 0) B = std::min(B, socket);
    typeIntra = from_path_class(worst);
    s.notes.push_back(std::string(nvl <= 0 ? "PCIe-only node" : "rings' PCIe hops") +
                      fmt(": per-GPU channel bandwidth %.1f GB/s (GPU PCIe %.1f), intra path ", B, gpuPci) +
                      to_string(typeIntra) + " (approximation of NCCL's search)");
    if (worst == PathClass::Sys && socket > 0) {
      // NCCL keys AMD's figure on the CPUID family, the others' on the model.
      const bool amd = topo.cpu_vendor == "amd";
      const char* key = amd ? "family" : "model";
      const int id = amd ? topo.cpu_family_id : topo.cpu_model_id;
      s.notes.push_back(fmt("inter-socket: %.0f GB/s, NCCL 2.30's figure for CPU ", socket) + topo.cpu_vendor +
                        (id > 0 ? std::string(" ") + key + " " + std::to_string(id) : std::string(" (") + key + " not stated)"));
    }
    if (intel_phb) s.notes.push_back("Intel root complex on the PHB path: each channel takes 6/5 of its speed on the PCIe links (INTEL_P2P_OVERHEAD)");
  }

  // --- network ---
  double netBw = 0;
  NcclPath typeInter = NcclPath::Pix;  // NCCL's initial minTypeInter (also for a single node)
  const int nics = topo.nics_per_node();
  if (multi && nics > 0) {
    const double nic = topo.network.nic_bandwidth_Bps / 1e9;
    const double nicPci = nccl_pci_bw_from_link(first_link_bw(topo, topo.nic(0, 0), LinkKind::Pcie));
    netBw = nic;
    if (gpuPci > 0) netBw = std::min(netBw, gpuPci);
    if (nicPci > 0) netBw = std::min(netBw, nicPci);
    typeInter = NcclPath::Sys;
    for (int l = 0; l < ppn; ++l) {
      const int n = nic_for_gpu(topo, l);
      if (n >= 0) typeInter = std::min(typeInter, gpu_nic_path(topo, l, n));
    }
    // ncclTopoGetLocalNetCountByBw: GPU 0's NICs in channel order until their path bandwidth reaches
    // the GPU's path to its CPU (its PCIe link; a C2C-attached GPU's, far wider, takes them all).
    const std::vector<int> own = nics_of_gpu(topo, 0);
    const double gpu_cpu = topo.gpu_c2c || gpuPci <= 0 ? std::numeric_limits<double>::max() : gpuPci;
    for (std::size_t k = 0; k < own.size() && s.net_bw_by_count < gpu_cpu; ++k) {
      s.net_bw_by_count += netBw;
      ++s.net_count_by_bw;
    }
    s.notes.push_back(fmt("NET: %.0f NICs x %.1f GB/s per node; GPU->NET path bw %.1f GB/s = min(NIC %.1f, ", nics, nic, netBw, nic) +
                      fmt("GPU PCIe %.1f, NIC PCIe %.1f) in NCCL units; GPU-NIC path ", gpuPci, nicPci) + to_string(typeInter));
    if (!topo.network.gpudirect_rdma) s.notes.push_back("no GPUDirect RDMA: NCCL stages through host memory (not reflected in graph bandwidths)");
  }

  // Channels one GPU's intra-node links carry at speed s on a multi-node graph (ring and tree alike).
  auto intra_channels = [&](double s_) {
    if (mesh) return mesh_channels(s_);
    return static_cast<int>(std::floor(B * ppn / ((ppn - 1) * s_) + kEps));
  };

  // --- ring graph (tree shares it: NCCL forces the same channel count) ---
  NcclGraphInfo ring;
  ring.typeIntra = typeIntra;
  ring.typeInter = typeInter;
  const int maxCh = nccl230::kMaxChannels / 2;
  if (ppn == 1 && !multi) {
    ring.nChannels = 1;
    ring.bwIntra = ring.bwInter = 0;
    ring.derivation = "single rank: no search";
  } else {
    const bool inter = multi;
    const auto& sp = speeds(cc, inter);
    double maxBw, totalBw;
    std::function<int(double)> cap;
    if (!inter) {
      maxBw = B;
      totalBw = std::max(B, gpuPci);
      cap = [&](double sp_) {
        if (mesh) return std::min(maxCh, mesh_channels(sp_));
        return std::min(maxCh, static_cast<int>(std::floor(B / sp_ + kEps)));
      };
    } else {
      maxBw = netBw;
      totalBw = std::max(nvl, gpuPci);
      // Every ring channel enters and leaves the node once, through one NIC and the PCIe link of the
      // GPU that NIC's channels run on (first_gpu_on_rail: NCCL's ncclTopoGetLocalGpu). So each NIC
      // carries floor(netBw / s) channels and each GPU's PCIe link floor(gpuPci / s) of those of the
      // NICs it drives: two 100 Gb/s NICs per GPU double the GPU's channels, four on a Gen4 x16 GPU
      // link (24 GB/s in NCCL units) do not quadruple them.
      std::vector<int> nics_on_gpu(ppn, 0);
      int unowned = 0;
      for (int r = 0; r < nics; ++r) {
        const int g = first_gpu_on_rail(topo, r);
        if (g >= 0) ++nics_on_gpu[g]; else ++unowned;
      }
      cap = [&, nics_on_gpu, unowned](double sp_) {
        const int per_nic = static_cast<int>(std::floor(netBw / sp_ + kEps));
        const int per_gpu_link = gpuPci > 0 ? static_cast<int>(std::floor(gpuPci / sp_ + kEps)) : per_nic * nics;
        int n = unowned * per_nic;
        for (int k : nics_on_gpu) n += std::min(per_gpu_link, k * per_nic);
        if (ppn > 1) n = std::min(n, intra_channels(sp_));
        return std::min(maxCh, n);
      };
    }
    Found f = search_pass1(sp, maxBw, totalBw, 1, cap, false);
    if (f.n == 0) {
      ring.nChannels = 1;
      ring.bwIntra = ring.bwInter = 0.1;
      ring.typeIntra = ring.typeInter = NcclPath::Sys;
      ring.searchFallback = true;
      ring.derivation = fmt("no path found (no speed of NCCL's array, down to %.1f GB/s, fits the links' %.1f GB/s per channel): "
                            "NCCL falls back to 1 channel at 0.1 GB/s, a figure for its tuner; the closed form times this "
                            "graph by the ring's alpha-beta over the links",
                            sp.back(), maxBw);
    } else {
      std::string d = fmt("search: %.0f ch x %.1f GB/s", f.n, f.bw);
      int n = f.n;
      double bw = f.bw;
      // ncclTopoDupChannels
      if (bw >= 25.0 && !(cc > 80 && bw < 50.0 && n > 4)) {
        const int dup = std::min(n * 2, maxCh);
        bw /= (dup + n - 1) / n;
        n = dup;
        d += fmt(" -> dup %.0f ch x %.1f", n, bw);
      }
      // pass 2: raise the speed while the channels still fit
      std::size_t idx = 0;
      while (sp[idx] > bw + kEps && idx + 1 < sp.size()) ++idx;
      while (idx > 0 && cap(sp[idx - 1]) >= n && sp[idx - 1] <= maxBw + kEps) {
        bw = sp[--idx];
        d += fmt(" -> pass2 %.1f", bw);
      }
      ring.nChannels = n;
      ring.bwIntra = ring.bwInter = bw;
      ring.derivation = d + (inter ? " (inter-node speed array)" : " (intra-node speed array)");
    }
  }
  s.ring = ring;
  s.tree = ring;
  s.tree.balancedTree = balanced_tree_found(topo, multi, cc, typeInter);
  s.tree.derivation = std::string("same channels as the ring (NCCL keeps ring and tree channel counts equal); ") +
                      (s.tree.balancedTree ? "balanced tree pattern"
                                           : std::string("tree pattern (no NIC has two GPUs at ") + to_string(typeInter) +
                                                 " for a balanced tree: the tuner takes 0.85 of Tree's bandwidth)");
  // NCCL's search runs the tree graph as the ring's, then its pass 2 raises the tree's bwIntra alone,
  // with bwInter fixed, while the channels still fit inside the node and bwIntra < 2 x bwInter ("increase
  // bwIntra for trees (2 nodes or collnet)", search.cc). The tuner reads bwIntra on 2 nodes, where
  // each byte crosses the network once per direction instead of the ring's 2(n-1)/n times.
  if (multi && ppn > 1 && ring.nChannels > 0 && ring.bwInter > 0.1) {
    const auto& sp = speeds(cc, true);
    const int n = ring.nChannels;
    std::size_t idx = 0;
    while (idx + 1 < sp.size() && sp[idx] > s.tree.bwIntra + kEps) ++idx;
    std::string d;
    while (idx > 0 && s.tree.bwIntra < 2 * s.tree.bwInter - kEps && intra_channels(sp[idx - 1]) >= n) {
      s.tree.bwIntra = sp[--idx];
      d += fmt(" -> %.1f", s.tree.bwIntra);
    }
    if (!d.empty()) s.tree.derivation += "; pass 2 raises bwIntra (bwInter fixed, up to 2x)" + d;
  }

  // --- NVLS graph ---
  if (s.nvls && ppn > 1) {
    NcclGraphInfo g;
    g.typeIntra = NcclPath::Nvl;
    g.typeInter = typeInter;
    g.sameChannels = false;
    const bool inter = multi && nics > 0;
    const auto& sp = speeds(cc, inter);
    const int maxNv = std::min(nccl230::kMaxNvlsArity, ppn);
    const int minNv = inter ? 1 : maxNv;  // one node: all GPUs pull evenly
    const double totalBw = nvl * ppn / (ppn - 1.0);
    const double maxBw = inter ? netBw : nvl;
    auto cap = [&](double s_) {
      int n = std::min(maxNv, static_cast<int>(std::floor(nvl / s_ + kEps)) - 1);
      if (inter) n = std::min(n, nics * static_cast<int>(std::floor(netBw / s_ + kEps)));
      return n;
    };
    Found f = search_pass1(sp, maxBw, totalBw, minNv, cap, true);
    if (f.n >= 1) {
      g.nChannels = f.n;
      g.bwIntra = g.bwInter = f.bw;
      std::string d = fmt("NVLS search: %.0f ch x %.1f GB/s", f.n, f.bw);
      // pass 2 (NVLS): raise bwInter with the channel count fixed, up to 2 x bwIntra.
      std::size_t idx = 0;
      while (sp[idx] > g.bwInter + kEps && idx + 1 < sp.size()) ++idx;
      while (idx > 0 && g.bwInter < 2 * g.bwIntra) {
        const double next = sp[idx - 1];
        if (inter && (next > netBw + kEps || nics * static_cast<int>(std::floor(netBw / next + kEps)) < g.nChannels)) break;
        g.bwInter = next;
        --idx;
      }
      d += fmt(" -> bwInter %.1f", g.bwInter);
      g.derivation = d;
      s.nvls_graph = g;
    }
    s.nvls_channels = nccl230::nvls_channels(cc, multi);
  }

  // --- CollNet graph (estimate) ---
  if (s.collnet) {
    NcclGraphInfo g;
    g.typeIntra = typeIntra;
    g.typeInter = typeInter;
    g.nChannels = std::max(1, std::min({nics, ppn, nccl230::kMaxDirectArity + 1}));
    double bw = 0;
    for (double v : speeds(cc, true))
      if (v <= netBw + kEps) { bw = v; break; }
    g.bwIntra = g.bwInter = bw;
    g.derivation = fmt("estimate: one head per NIC, %.0f ch x %.1f GB/s (first inter speed <= NIC path)", g.nChannels, bw);
    s.collnet_graph = g;
  }

  // The net plugin's reported latency: search.cc copies net->net.latency into the latencyInter of
  // every graph whose channels cross the network, and the tuner adds it to each network step.
  if (multi && nics > 0 && topo.network.plugin_latency_us > 0) {
    for (NcclGraphInfo* g : {&s.ring, &s.tree, &s.nvls_graph, &s.collnet_graph}) g->latencyInter = topo.network.plugin_latency_us;
    s.notes.push_back(fmt("NET latency reported by the net plugin: %.0f us per network step (node.nic.plugin_latency_us)",
                          topo.network.plugin_latency_us));
  }

  // --- comm->nChannels (connect.cc) ---
  int nc = std::min(nccl230::kMaxChannels, s.ring.nChannels * 2);
  std::string cd = fmt("coll channels: 2 x %.0f ring channels", s.ring.nChannels);
  if (s.collnet && s.collnet_graph.bwIntra > s.collnet_graph.bwInter && s.nranks > s.nnodes) nc = std::min(nccl230::kMaxChannels, nc + nc / 2);
  // NCCL doubles below 16 channels only ("nChannels < 16"; RCCL's connect.cc has "2*nChannels <=
  // maxChannels" instead, which doubles 16 to 32: NCCL 2.20's 2-node p5 run prints 16 coll channels).
  if (cc >= 90 && multi && s.ring.bwIntra > 45.0 && nc < 16) {
    nc *= 2;
    cd += " x 2 (sm90+ multi-node, ring bwIntra > 45, below 16)";
  }
  // A net plugin whose receives land in GPU bounce buffers that NCCL's kernel unpacks
  // (NCCL_NET_DEVICE_UNPACK: GPUDirect-TCPX) doubles once more below 16 channels
  // (NCCL_UNPACK_DOUBLE_NCHANNELS, default 1).
  if (transport_info(topo.network.transport).unpack_device && multi && nics > 0 && nc < 16) {
    nc *= 2;
    cd += " x 2 (net device unpack, below 16)";
  }
  if (ppn == 1 && !multi) nc = 1;
  s.notes.push_back(cd + fmt(" = %.0f", nc));

  // The user's channel settings (NcclChannelSettings), after the doublings: connect.cc keeps
  // min(NCCL_MAX_NCHANNELS, channels, maxCTAs), then duplicates the first channels up to
  // max(NCCL_MIN_NCHANNELS, minCTAs); nvls.cc keeps max(minCTAs, min(maxCTAs, NVLS channels)).
  // config.minCTAs above maxCTAs is lowered to it (init.cc's config check).
  static_assert(kNcclMaxChannels == nccl230::kMaxChannels, "one MAXCHANNELS");
  const NcclChannelSettings& set = topo.nccl_channels;
  const int max_ctas = set.max_ctas > 0 ? set.max_ctas : nccl230::kMaxChannels;
  const int min_ctas = std::min(set.min_ctas > 0 ? set.min_ctas : 1, max_ctas);
  const int max_channels = set.max_channels > 0 ? set.max_channels : nccl230::kMaxChannels;
  if (s.nranks > 1) {
    const int kept = std::max(std::min({max_channels, nc, max_ctas}), std::max(set.min_channels, min_ctas));
    if (kept != nc)
      s.notes.push_back(fmt("coll channels: %.0f -> %.0f (NCCL_MAX_NCHANNELS and NCCL_MAX_CTAS keep min(%.0f, n, %.0f), ",
                            nc, kept, max_channels, max_ctas) +
                        fmt("NCCL_MIN_NCHANNELS and NCCL_MIN_CTAS raise it to max(%.0f, %.0f) by duplicating channels)",
                            set.min_channels, min_ctas));
    nc = kept;
  }
  s.coll_channels = nc;
  if (s.nvls) {
    const int wanted = set.nvls_channels > 0 ? set.nvls_channels : s.nvls_channels;
    s.nvls_channels = std::max(min_ctas, std::min(max_ctas, wanted));
    s.notes.push_back(fmt("nvls channels: %.0f", s.nvls_channels) +
                      (set.nvls_channels > 0 ? fmt(" (NCCL_NVLS_NCHANNELS %.0f", set.nvls_channels)
                                             : std::string(" (NCCL_NVLS_NCHANNELS default")) +
                      (s.nvls_channels != wanted ? fmt(", held within NCCL_MIN/MAX_CTAS %.0f..%.0f)", min_ctas, max_ctas)
                                                 : std::string(")")));
  }
  if (topo.num_nodes() > 1 && topo.net_ring_channel_Bps > 0)
    s.notes.push_back(fmt("the replay's Simple rings across nodes: at most %.1f GB/s per channel", topo.net_ring_channel_Bps / 1e9) +
                      fmt(" (node.gpu.net_ring_channel_GBps, one thread block's copy), %.0f coll channels", s.coll_channels) +
                      fmt(" = %.1f GB/s busbw; not in NCCL's model above", s.coll_channels * topo.net_ring_channel_Bps / 1e9));
  return s;
}

}  // namespace ccsim
