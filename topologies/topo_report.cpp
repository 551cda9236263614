#include "topologies/topo_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "common/units.h"
#include "topologies/nvlink_domain.h"
#include "topologies/nvlink_mesh.h"
#include "topologies/routing.h"
#include "topologies/spec.h"

namespace ccsim {

namespace {

std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }

std::string short_kind(VertexKind k) {
  switch (k) {
    case VertexKind::Gpu: return "GPU";
    case VertexKind::NvSwitch: return "NVSwitch";
    case VertexKind::PcieSwitch: return "PCIe switch";
    case VertexKind::Cpu: return "CPU";
    case VertexKind::HostMemory: return "host memory";
    case VertexKind::Nic: return "NIC";
    case VertexKind::LeafSwitch: return "leaf";
    case VertexKind::SpineSwitch: return "spine";
    case VertexKind::Reducer: return "switch reducer";
  }
  return "?";
}

}  // namespace

std::string topo_matrix_cell(const Topology& topo, VertexId a, VertexId b) {
  const PathClass c = path_class(topo, a, b);
  if (c == PathClass::Nvl) {
    // Number of NVLinks between the pair: the pair's own without an NVSwitch, else the GPU's.
    const Vertex& va = topo.vertex(a);
    const Vertex& vb = topo.vertex(b);
    if (!topo.nvlink_peer_links.empty() && va.kind == VertexKind::Gpu && vb.kind == VertexKind::Gpu)
      return "NV" + std::to_string(topo.nvlink_peer_links[static_cast<std::size_t>(va.index) * topo.gpus_per_node() + vb.index]);
    return "NV" + std::to_string(topo.nvlinks_per_gpu);
  }
  return to_string(c);
}

std::string format_topology_report(const Topology& topo, int node) {
  if (node < 0 || node >= topo.num_nodes())
    throw std::out_of_range("topology report: node " + std::to_string(node) + " out of range");
  const nlohmann::json& spec = topo.spec;
  const auto get = [&](const char* ptr) -> nlohmann::json {
    const nlohmann::json::json_pointer p(ptr);
    return spec.contains(p) ? spec.at(p) : nlohmann::json();
  };
  std::ostringstream os;
  const int G = topo.gpus_per_node(), N = topo.nics_per_node();
  os << "Topology:    " << topo.name << "\n";
  const auto desc = get("/description");
  if (desc.is_string()) os << "             " << desc.get<std::string>() << "\n";
  os << "Nodes:       " << topo.num_nodes() << " x " << G << " GPUs = " << topo.num_gpus() << " GPUs";
  // A node of the graph is an NVLink domain of several hosts (node.nvlink.domain_size).
  if (hosts_per_node(topo) > 1)
    os << " (each node an NVLink domain of " << hosts_per_node(topo) << " hosts x " << gpus_per_host(topo)
       << " GPUs, " << nics_per_host(topo) << " NICs per host)";
  os << "\n";
  os << "GPU:         " << topo.gpu_model << " (" << topo.gpu_arch << ")\n";
  if (topo.nvlinks_per_gpu > 0) {
    const double bw = gpu_nvlink_Bps(topo, topo.gpu(0));
    int peers = 0;
    for (std::size_t g = 1; g < topo.nvlink_peer_links.size() && g < static_cast<std::size_t>(topo.gpus_per_node()); ++g)
      peers += topo.nvlink_peer_links[g] > 0;  // GPU 0's row (kept with NCCL_P2P_DISABLE too)
    const std::string joined = peers > 1 ? ", no NVSwitch: GPU0 joined to " + std::to_string(peers) + " GPUs (node.nvlink.peers)"
                                         : ", direct bridge";
    os << "NVLink:      " << topo.nvlinks_per_gpu << " links/GPU, " << fixed(bw / kGB, 1)
       << " GB/s per direction per GPU" << (topo.has_nvswitch ? ", NVSwitch" : joined)
       << (topo.nvls_capable ? ", NVLS" : "") << "\n";
  } else {
    os << "NVLink:      none (GPU peer traffic over PCIe, P2P mode " << topo.pcie_p2p << ")\n";
  }
  const auto pcie = get("/node/pcie");
  const bool some_shm = nccl_any_shm_pair(topo);
  if (pcie.is_object())
    os << "PCIe:        Gen" << pcie.value("generation", 0) << " x" << pcie.value("lanes", 0) << ", "
       << pcie.value("switches_per_socket", 0) << " switch(es) per socket, P2P " << topo.pcie_p2p
       << (topo.pcie_p2p != "none" && topo.nccl_p2p && some_shm
               ? std::string(" up to ") + nccl_level_name(topo.pcie_p2p_level) + " (NCCL's P2P level; farther pairs: SHM)"
               : std::string())
       << (topo.pcie_p2p == "none" || !topo.nccl_p2p || some_shm
               ? (topo.shm_channel_Bps > 0 ? " (NCCL's SHM transport, " + fixed(topo.shm_channel_Bps / kGB, 2) + " GB/s per channel)"
                                           : std::string(" (NCCL's SHM transport at the links' rates: no node.pcie.shm_channel_GBps)"))
               : std::string())
       << "\n";
  const auto cpu = get("/node/cpu");
  if (cpu.is_object())
    os << "CPU:         " << cpu.value("sockets", 1) << " socket(s), " << cpu.value("vendor", std::string("unknown"))
       << "\n";
  if (N > 0) {
    // GPUDirect-TCPX/TCPXO are not RDMA: say what they are, payloads NIC<->GPU memory over TCP.
    const bool gpudirect_tcp =
        topo.network.transport == Transport::GpuDirectTcpx || topo.network.transport == Transport::GpuDirectTcpxo;
    os << "NICs:        " << N << " per node x " << fixed(topo.network.nic_bandwidth_Bps / kGbit, 0) << " Gb/s ("
       << fixed(topo.network.nic_bandwidth_Bps / kGB, 1) << " GB/s), transport " << to_string(topo.network.transport)
       << (gpudirect_tcp                   ? ", GPU-direct TCP (no host staging)"
           : topo.network.gpudirect_rdma ? ", GPUDirect RDMA yes"
                                         : ", GPUDirect RDMA no");
    // A card's ports fused by NCCL into one device (node.nic.ports_per_card, fuse_ports).
    const auto nic = get("/node/nic");
    const int ports = nic.is_object() ? nic.value("ports_per_card", kDefaultNicPortsPerCard) : kDefaultNicPortsPerCard;
    if (ports > 1)
      os << (nic.value("fuse_ports", kDefaultFuseNicPorts) ? "; each fuses a card's " + std::to_string(ports) + " ports (NCCL's NIC fusion)"
                                           : "; ports of " + std::to_string(ports) + "-port cards, not fused");
    os << "\n";
    const auto fabric = get("/fabric");
    if (fabric.is_object())
      os << "Fabric:      " << fabric.value("kind", std::string()) << ", " << topo.nodes_per_leaf()
         << (hosts_per_node(topo) > 1 ? " NVLink domain(s)" : " nodes") << " per leaf, oversubscription "
         << fabric.value("oversubscription", 1.0) << ":1\n";
  } else {
    os << "NICs:        none\n";
  }

  // --- matrix ---
  std::vector<std::pair<std::string, VertexId>> devs;
  for (int i = 0; i < G; ++i) devs.push_back({"GPU" + std::to_string(i), topo.gpu(node * G + i)});
  for (int j = 0; j < N; ++j) devs.push_back({"NIC" + std::to_string(j), topo.nic(node, j)});
  os << "\nNode " << node << " (nvidia-smi topo -m):\n";
  const std::size_t w = 7;
  os << pad("", w);
  for (const auto& d : devs) os << pad(d.first, w);
  os << "\n";
  for (const auto& r : devs) {
    os << pad(r.first, w);
    for (const auto& c : devs) os << pad(topo_matrix_cell(topo, r.second, c.second), w);
    os << "\n";
  }
  os << "\nLegend:\n"
        "  X    = Self\n"
        "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
        "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
        "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
        "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
        "  PIX  = Connection traversing at most a single PCIe bridge\n"
        "  NV#  = Connection traversing a bonded set of # NVLinks\n";
  if (N > 0) {
    os << "\nNIC Legend:\n";
    for (int j = 0; j < N; ++j)
      os << "  NIC" << j << ": " << topo.vertex(topo.nic(node, j)).name << " (rail " << j << ")\n";
    os << "\nGPU -> NIC affinity (NCCL):\n";
    for (int i = 0; i < G; ++i) {
      // Every NIC the GPU's channels use (topologies/nic_affinity.h), channel order.
      os << "  GPU" << i << " ->";
      const std::vector<int> nics = nics_of_gpu(topo, i);
      for (std::size_t k = 0; k < nics.size(); ++k)
        os << (k ? ", NIC" : " NIC") << nics[k] << " ("
           << topo_matrix_cell(topo, topo.gpu(node * G + i), topo.nic(node, nics[k])) << ")";
      os << "\n";
    }
  }

  // --- link kinds ---
  struct Row {
    std::string kind, between, label;
    double bw, lat;
    bool shared;
    int count;
  };
  std::vector<Row> rows;
  const Graph& g = topo.graph();
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    const Link& l = g[*it];
    const Vertex& a = g[boost::source(*it, g)];
    const Vertex& b = g[boost::target(*it, g)];
    if (!(l.node == node || (l.node < 0 && (a.node < 0 || a.node == node) && (b.node < 0 || b.node == node)))) continue;
    std::string ka = short_kind(a.kind), kb = short_kind(b.kind);
    if (static_cast<int>(a.kind) > static_cast<int>(b.kind)) std::swap(ka, kb);
    const std::string between = ka + " <-> " + kb;
    auto found = std::find_if(rows.begin(), rows.end(), [&](const Row& r) {
      return r.between == between && r.label == l.label && r.bw == l.bandwidth_Bps && r.lat == l.latency_s;
    });
    if (found != rows.end()) {
      ++found->count;
    } else {
      rows.push_back({to_string(l.kind), between, l.label, l.bandwidth_Bps, l.latency_s, l.shared_duplex, 1});
    }
  }
  os << "\nLinks (node " << node << " and fabric; bandwidth per direction):\n";
  os << "  " << pad("kind", 13) << pad("between", 27) << pad("label", 30) << pad("count", 6) << pad("GB/s", 9)
     << "latency us\n";
  for (const Row& r : rows)
    os << "  " << pad(r.kind, 13) << pad(r.between, 27) << pad(r.label, 30) << pad(std::to_string(r.count), 6)
       << pad(fixed(r.bw / kGB, 1) + (r.shared ? "*" : ""), 9) << fixed(r.lat / kMicro, 3) << "\n";
  if (std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.shared; }))
    os << "  * shared by both directions (reads and writes share one budget)\n";
  // The uplink of the first leaf (group 0, rail 0), shared by the nodes of its group: the figure the
  // ring sees per node (NIC link bandwidth / oversubscription).
  VertexId leaf;
  if (N > 0 && topo.find_vertex(VertexKind::LeafSwitch, -1, 0, 0, &leaf)) {
    const Graph& g = topo.graph();
    for (auto [e, end] = boost::out_edges(leaf, g); e != end; ++e) {
      if (topo.vertex(boost::target(*e, g)).kind != VertexKind::SpineSwitch) continue;
      const int in_group = std::min(topo.nodes_per_leaf(), topo.num_nodes());
      os << "  leaf <-> spine: " << fixed(topo.link(*e).bandwidth_Bps / in_group / kGB, 1)
         << " GB/s per node and rail (NIC link bandwidth / oversubscription)\n";
    }
  }
  return os.str();
}

}  // namespace ccsim
