#include "scenarios/log_gpu_preset.h"

#include <algorithm>
#include <cctype>
#include <map>

#include <nlohmann/json.hpp>

#include "common/text.h"
#include "scenarios/validate_log.h"

namespace ccsim {

namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

bool has(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

}  // namespace

std::string log_gpu_name(const NcclTestsRun& run) {
  std::string name;
  for (const std::string& line : run.devices) {
    DeviceLine d;
    if (!parse_device_line(line, &d) || d.gpu_name.empty()) return "";
    if (!name.empty() && d.gpu_name != name) return "";
    name = d.gpu_name;
  }
  return name;
}

int log_gpus_per_host(const NcclTestsRun& run, int* hosts) {
  std::map<std::string, int> per_host;
  if (hosts) *hosts = 0;
  // A cut list (scenarios/validate_log.h DeviceList): the hosts hold at least the highest local device
  // index + 1 GPUs each, and the ranks up to the highest one listed fill them.
  const DeviceList list = device_list_of(run);
  if (list.abbreviated()) {
    const int n = list.gpus_per_host;
    if (n < 1 || list.ranks % n != 0) return 0;
    if (hosts) *hosts = list.ranks / n;
    return n;
  }
  for (const std::string& line : run.devices) {
    DeviceLine d;
    if (!parse_device_line(line, &d)) return 0;
    ++per_host[d.host];
  }
  if (per_host.empty()) return 0;
  const int n = per_host.begin()->second;
  for (const auto& [host, count] : per_host)
    if (count != n) return 0;
  if (hosts) *hosts = static_cast<int>(per_host.size());
  return n;
}

std::string gpu_arch_from_name(const std::string& gpu_name) {
  const std::string n = upper(gpu_name);
  // Order matters: "A100" before "A10", and "T4" is not an RTX card's ("RTX 40" comes later).
  if (has(n, "V100")) return "sm70";
  if (has(n, "T4") && !has(n, "RTX")) return "sm75";
  if (has(n, "RTX 20") || has(n, "TITAN RTX") || has(n, "QUADRO RTX")) return "sm75";
  if (has(n, "A100") || has(n, "A800") || has(n, "A30")) return "sm80";
  if (has(n, "A10") || has(n, "A40") || has(n, "A6000") || has(n, "A5000") || has(n, "A4000") || has(n, "RTX 30") || has(n, "A16") ||
      has(n, "A2 "))
    return "sm86";
  if (has(n, "L40") || has(n, "L4") || has(n, "L20") || has(n, "RTX 40") || has(n, "ADA")) return "sm89";
  if (has(n, "H100") || has(n, "H200") || has(n, "H800") || has(n, "H20") || has(n, "GH200")) return "sm90";
  // Blackwell Ultra (B300, GB300) is compute capability 10.3; NCCL keys its Blackwell constants on
  // >= SM100, and so does ccsim: sm100.
  if (has(n, "B200") || has(n, "B100") || has(n, "B300")) return "sm100";
  if (has(n, "RTX 50") || has(n, "RTX PRO")) return "sm120";
  return "";
}

bool amd_gpu_name(const std::string& gpu_name) {
  const std::string n = upper(gpu_name);
  return has(n, "AMD") || has(n, "INSTINCT") || has(n, "RADEON");
}

namespace {

// "from the log's devices: 8 x NAME on one host" / "... per host on 2 hosts": the start of every guess's
// reason; `host` names the unit ("tray" for Grace Blackwell).
std::string devices_phrase(const std::string& gpu_name, int gpus_per_host, int hosts, const std::string& host = "host") {
  return "from the log's devices: " + std::to_string(gpus_per_host) + " x " + gpu_name +
         (hosts == 1 ? " on one " + host : " per " + host + " on " + std::to_string(hosts) + " " + host + "s");
}

// A board named as a PCIe card ("PCIe"), or as PCIe cards joined by bridges ("NVL", not GB200 NVL72).
bool pcie_marked(const std::string& n) { return has(n, "PCIE") || (has(n, "NVL") && !has(n, "NVL72")); }

// A model that only comes as a PCIe card (asked after the SXM boards' names: "A100-SXM4" holds "A10").
bool pcie_only_model(const std::string& n) {
  for (const char* card : {"L40", "L4", "L20", "A10", "A16", "A2 ", "A30", "A40", "A4000", "A5000", "A6000", "T4", "RTX", "TITAN", "QUADRO"})
    if (has(n, card)) return true;
  return false;
}

// PCIe generation of a card's slot: Gen5 for Hopper PCIe/NVL cards and Blackwell workstation cards,
// Gen3 for Volta and Turing, Gen4 for the rest (Ampere, Ada).
int pcie_generation_of_card(const std::string& arch) {
  if (arch == "sm90" || arch == "sm100" || arch == "sm120") return 5;
  if (arch == "sm70" || arch == "sm75") return 3;
  return 4;
}

LogHardware generic_pcie_host(const std::string& gpu_name, const std::string& arch, int gpus_per_host, int hosts) {
  LogHardware h;
  h.preset = "pcie-gen4-8gpu";
  if (gpus_per_host != 8) h.sets.push_back("node.gpu.count=" + std::to_string(gpus_per_host));
  if (arch != "sm89") h.sets.push_back("node.gpu.arch=" + arch);
  const int gen = pcie_generation_of_card(arch);
  if (gen != 4) h.sets.push_back("node.pcie.generation=" + std::to_string(gen));
  if (hosts == 1) h.sets.push_back("node.nic.count=0");
  h.why = devices_phrase(gpu_name, gpus_per_host, hosts) +
          ", PCIe cards: the generic PCIe server assumed (its switches, P2P and NICs), the cards' architecture and "
          "PCIe generation set";
  return h;
}

// GH200 superchips come one per node or four per node (gh200-quad: every pair joined by 6 NVLinks, one
// NIC per superchip). A run of g <= 4 per host is g superchips of such a node with their g NICs.
LogHardware gh200_host(const std::string& gpu_name, int gpus_per_host, int hosts) {
  if (gpus_per_host > 4) return {};
  LogHardware h;
  h.preset = "gh200-quad";
  const int g = gpus_per_host;
  if (g != 4) {
    h.sets.push_back("node.gpu.count=" + std::to_string(g));
    nlohmann::json peers = nullptr;  // one superchip joins nothing
    for (int a = 0; a < g; ++a)
      for (int b = a + 1; b < g; ++b) peers.push_back({a, b, 6});
    h.sets.push_back("node.nvlink.peers=" + peers.dump());
  }
  if (hosts == 1) h.sets.push_back("node.nic.count=0");
  else if (g != 4) h.sets.push_back("node.nic.count=" + std::to_string(g));
  h.why = devices_phrase(gpu_name, g, hosts) + ", superchips of a four-GH200 node (one NIC each)";
  if (hosts > 1)
    h.why += "; its NICs are JUPITER's InfiniBand: describe Slingshot-11 (Alps, Isambard-AI, Olivia) with "
             "--set node.nic.transport=roce, and a NCCL before 2.27 (GPU-NIC path PHB, not P2C) with --set node.gpu.c2c=false";
  return h;
}

// GB200 / GB300 trays (4 superchips each) on the NVLink switch fabric of an NVL72 rack: a run of 4 per host
// on up to 18 hosts is taken as one NVLink domain of its trays (MNNVL, as every public GB200/GB300 run here
// is: CoreWeave's racks, OCI's 1-16 trays), on whole racks of 18 when the hosts fill them; one host is one
// tray without NICs. Other layouts are not guessed (OCI's 2 racks of 16 trays each: docs/accuracy.md).
LogHardware grace_blackwell_trays(const std::string& gpu_name, bool ultra, int gpus_per_host, int hosts) {
  constexpr int kTraysPerRack = 18;
  if (gpus_per_host != 4 && !(hosts == 1 && gpus_per_host < 4)) return {};
  const int domain = hosts <= kTraysPerRack ? hosts : hosts % kTraysPerRack == 0 ? kTraysPerRack : 0;
  if (domain == 0) return {};
  LogHardware h;
  h.preset = "gb200-nvl72";
  if (gpus_per_host != 4) h.sets.push_back("node.gpu.count=" + std::to_string(gpus_per_host));
  if (domain != kTraysPerRack) h.sets.push_back("node.nvlink.domain_size=" + std::to_string(domain));
  if (hosts == 1) h.sets.push_back("node.nic.count=0");
  h.why = devices_phrase(gpu_name, gpus_per_host, hosts, "tray") +
          (hosts == 1 ? std::string() : ", taken as NVLink domains of " + std::to_string(domain) +
                                            " trays (MNNVL; without it: --set node.nvlink.domain_size=1)");
  if (ultra && hosts > 1)
    h.why += "; GB300 on gb200-nvl72's NVLink5, but not its NICs: describe them (DGX GB300: ConnectX-8, --set node.nic.Gbps=800)";
  return h;
}

// SXM GPUs four to a host on several hosts: NVIDIA's HGX 4-GPU boards, whose GPUs are joined pair by
// pair by NVLink without an NVSwitch (so no NVLS), each GPU's links split over its 3 peers: HGX A100
// 4-GPU 4 of A100's 12 NVLink3 links per pair (NERSC Perlmutter, ALCF Polaris, JUWELS Booster), HGX
// H100/H200 4-GPU 6 of 18 NVLink4 links (Lenovo SD665-N V3, Dell XE8640; SURF Snellius). Their hosts
// carry one to two NICs per GPU, of speeds that vary by system: one per GPU at the preset's speed is
// assumed and the hardware line asks for them. On one host four GPUs are as likely four of an 8-GPU
// NVSwitch node, which the rules of hardware_for_gpu take.
LogHardware four_gpu_board(const std::string& gpu_name, const std::string& preset, int links_per_pair, int hosts) {
  LogHardware h;
  h.preset = preset;
  const std::string l = std::to_string(links_per_pair);
  h.sets = {"node.gpu.count=4", "node.nvlink.nvswitch=false", "node.nvlink.nvls=false",
            "node.nvlink.peers=[[0,1," + l + "],[0,2," + l + "],[0,3," + l + "],[1,2," + l + "],[1,3," + l + "],[2,3," + l + "]]",
            "node.nic.count=4"};
  h.why = devices_phrase(gpu_name, 4, hosts) + ", an HGX 4-GPU board assumed: NVLink between every pair (" + l +
          " links), no NVSwitch, one NIC per GPU at " + preset +
          "'s speed and transport (describe others with --set node.nic.count=, node.nic.Gbps=, node.nic.transport=)";
  return h;
}

}  // namespace

LogHardware hardware_for_gpu(const std::string& gpu_name, int gpus_per_host, int hosts) {
  const std::string n = upper(gpu_name);
  if (n.empty() || gpus_per_host < 1 || hosts < 1) return {};
  // Cards hang off hosts their name does not describe: the generic PCIe server, if the architecture is
  // known. GH200 and the Grace Blackwell trays have nodes of their own (gh200_host, grace_blackwell_trays).
  const auto card = [&]() {
    const std::string arch = gpu_arch_from_name(gpu_name);
    return arch.empty() ? LogHardware{} : generic_pcie_host(gpu_name, arch, gpus_per_host, hosts);
  };
  if (pcie_marked(n)) return card();
  if (has(n, "GH200")) return gh200_host(gpu_name, gpus_per_host, hosts);
  if (has(n, "GB200") || has(n, "GB300")) return grace_blackwell_trays(gpu_name, has(n, "GB300"), gpus_per_host, hosts);
  if (gpus_per_host == 4 && hosts > 1) {
    if (has(n, "H100") || has(n, "H200")) return four_gpu_board(gpu_name, "dgx-h100", 6, hosts);
    if (has(n, "A100-SXM")) return four_gpu_board(gpu_name, "hgx-a100", 4, hosts);
  }
  struct Rule {
    const char* part;
    const char* preset;
    int gpus;
    bool nvswitch;
    // What the preset does not describe of this board's hosts, said when the run spans several.
    const char* hosts_note = nullptr;
    // The one key in which this board's node differs from the preset's.
    const char* set = nullptr;
  };
  static const Rule rules[] = {{"V100-SXM2", "dgx1-v100", 8, false}, {"V100-SXM3", "dgx2-v100", 16, true},
                               {"A100-SXM", "hgx-a100", 8, true},    {"H100 80GB HBM3", "dgx-h100", 8, true},
                               {"H100-SXM", "dgx-h100", 8, true},    {"H200", "dgx-h200", 8, true},
                               {"H800", "hgx-h800", 8, true},        {"B200", "dgx-b200", 8, true},
                               // Other SXM H100s ("H100 SXM5 64GB"; the cards were taken above).
                               {"H100", "dgx-h100", 8, true},
                               // HGX H20 (China's export Hopper; after "H200", which holds "H20"): H100's
                               // 18 NVLink4 links (900 GB/s) through NVSwitch, less compute; its hosts'
                               // NICs differ by vendor.
                               {"H20", "dgx-h100", 8, true,
                                "H20 nodes' NICs differ by vendor: dgx-h100's 8 x 400 Gb/s InfiniBand assumed (describe "
                                "others with --set node.nic.count=, node.nic.Gbps=, node.nic.transport=)"},
                               // A800 (A100's export variant): 8 of A100's 12 NVLink3 links (400 GB/s
                               // bidirectional) through NVSwitch.
                               {"A800-SXM", "hgx-a100", 8, true, nullptr, "node.nvlink.links_per_gpu=8"},
                               // HGX B300 moves data inside a node as HGX B200 does (NVLink5, 18 x 50
                               // GB/s, NVLS); its NICs (DGX B300: ConnectX-8, 800 Gb/s, PCIe Gen6) differ.
                               {"B300", "dgx-b200", 8, true,
                                "B300 on dgx-b200's NVLink5, but not its NICs: describe them (--set node.nic.Gbps=800 "
                                "--set node.nic.pcie_generation=6 --set node.pcie.generation=6 for DGX B300's ConnectX-8)"}};
  for (const Rule& r : rules) {
    if (!has(n, r.part)) continue;
    LogHardware h;
    h.why = devices_phrase(gpu_name, gpus_per_host, hosts);
    if (gpus_per_host == r.gpus) {
      h.preset = r.preset;
    } else if (hosts == 1 && r.nvswitch && gpus_per_host < r.gpus) {
      // Through an NVSwitch any subset of GPUs is a smaller node of the same links.
      h.preset = r.preset;
      h.sets = {"node.gpu.count=" + std::to_string(gpus_per_host), "node.nic.count=0"};
    } else if (hosts > 1 && r.nvswitch && gpus_per_host < r.gpus) {
      // A job on some of each host's GPUs (a pod of one GPU and one NIC, as GKE's and dranet's): the
      // same links through the NVSwitch, each GPU with the NIC nearest it, as NCCL picks them (a NIC of
      // its own assumed: so are these nodes' but the DGX-2's, which has one per two GPUs).
      h.preset = r.preset;
      const std::string k = std::to_string(gpus_per_host);
      h.sets = {"node.gpu.count=" + k, "node.nic.count=" + k};
      h.why += " (" + k + " of the node's " + std::to_string(r.gpus) + " GPUs, each with a NIC of its own assumed)";
    }
    if (!h.preset.empty() && r.set) h.sets.push_back(r.set);
    if (!h.preset.empty() && r.hosts_note && hosts > 1) h.why += std::string("; ") + r.hosts_note;
    return h.preset.empty() ? LogHardware{} : h;
  }
  return pcie_only_model(n) ? card() : LogHardware{};
}

LogHardware hardware_from_logs(const std::vector<NcclTestsFile>& files) {
  LogHardware agreed;
  for (const NcclTestsFile& file : files) {
    for (const NcclTestsRun& run : file.runs) {
      int hosts = 0;
      const int per_host = log_gpus_per_host(run, &hosts);
      const LogHardware h = hardware_for_gpu(log_gpu_name(run), per_host, hosts);
      if (h.preset.empty() || (!agreed.preset.empty() && (h.preset != agreed.preset || h.sets != agreed.sets))) return {};
      agreed = h;
    }
  }
  return agreed;
}

LogHardware nics_from_debug(const DebugFacts& debug, int gpus_per_host) {
  LogHardware h;
  if (debug.nics.empty()) return h;
  const int n = static_cast<int>(debug.nics.size());
  std::string layer;
  bool same_layer = true;
  for (const std::string& nic : debug.nics) {
    const std::size_t slash = nic.rfind('/');
    const std::string l = slash == std::string::npos ? std::string() : nic.substr(slash + 1);
    if (layer.empty()) layer = l;
    same_layer = same_layer && l == layer;
  }
  std::vector<std::string> said;
  if (gpus_per_host > 0 && (n % gpus_per_host == 0 || gpus_per_host % n == 0)) {
    h.sets.push_back("node.nic.count=" + std::to_string(n));
    said.push_back(std::to_string(n) + " NICs");
  }
  if (same_layer && (layer == "IB" || layer == "RoCE")) {
    h.sets.push_back(std::string("node.nic.transport=") + (layer == "IB" ? "ib" : "roce"));
    said.push_back(layer);
  }
  if (!said.empty()) h.why = "NICs from the log's NCCL lines: " + join(said) + " (not their speed)";
  return h;
}

}  // namespace ccsim
