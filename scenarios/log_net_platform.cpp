#include "scenarios/log_net_platform.h"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include "common/text.h"
#include "topologies/transports.h"

namespace ccsim {

namespace {

// One EC2 instance family as aws-ofi-nccl's platform table (src/platform-aws.cpp, platform_data_map),
// its tuner model (src/tuner/nccl_ofi_model.cpp) and AWS's instance pages describe it: the NICs NCCL
// sees, each network step's latency, the latency the plugin reports to NCCL's tuner
// (node.nic.plugin_latency_us; the `efa` default is p4d's and p5's 75 us) and the NCCL settings it
// exports when the user has not set them.
struct Ec2Family {
  const char* label;                  // as the hardware line names it
  int gpus;                           // GPUs of the instance, 0: not known
  const char* preset;                 // ccsim's preset of the whole instance, or nullptr
  std::vector<const char*> nics;      // --set of its NICs as NCCL sees them (only for a run on all its GPUs)
  std::vector<const char*> settings;  // --set of the transport, the plugin's latency and its NCCL exports
};

const Ec2Family* family_of(const std::string& platform) {
  const std::string p = lower(platform);
  // `efa`'s reported latency is p4d's and p5's 75 us.
  // p4d.24xlarge and p4de.24xlarge (older plugins print "P4d"): 8 A100 and 4 x 100 Gb/s EFA with
  // GPUDirect RDMA, one per PCIe switch of two GPUs (AWS EC2 P4 instance page; the plugin's
  // p4d-24xl-topo.xml: "Each group has 2 GPUs and 1 NIC behind a PCIe switch"). Its SENDRECV protocol
  // does not group them: NCCL sees the 4 cards. Each network step takes the 75 us the plugin reports as
  // p4d's internode latency (docs/topology.md "Transports", `efa`: two p4d logs' floors are Tree/LL over
  // 2 nodes with it, where the plugin tuner's 20 us of p5 is a third of them). The plugin's exports for
  // p4d changed between its releases (1.13.2 exported none that matter to A100; the current table
  // NCCL_BUFFSIZE and NCCL_P2P_NET_CHUNKSIZE), so none is assumed.
  static const Ec2Family p4d{"p4d/p4de (8 A100, 4 x 100 Gb/s EFA)", 8, nullptr,
                             {"node.nic.count=4", "node.nic.Gbps=100"},
                             {"node.nic.transport=efa", "node.nic.latency_us=75"}};
  // What the plugin exports from p5 on when the user has not set it (NCCL_BUFFSIZE 8 MiB,
  // NCCL_P2P_NET_CHUNKSIZE, NCCL_NVLS_CHUNKSIZE and NCCL_NVLSTREE_MAX_CHUNKSIZE 512 KiB), after each
  // family's transport and latencies.
  const auto with_exports = [](std::vector<const char*> v) {
    for (const char* e : {"node.gpu.nccl_buffsize_bytes=8388608", "node.nic.p2p_chunk_bytes=524288",
                          "node.nvlink.nvls_chunk_bytes=524288", "node.nvlink.nvls_tree_max_chunk_bytes=524288"})
      v.push_back(e);
    return v;
  };
  // p5.48xlarge and p5e.48xlarge (the plugin's block "p5/p5e"): the aws-p5 preset, which carries the
  // block's latency and exports (its description gives the sources).
  static const Ec2Family p5{"p5/p5e (aws-p5)", 8, "aws-p5", {}, with_exports({"node.nic.transport=efa"})};
  // p5en.48xlarge, p6 and later (the plugin's block "p-series", regex "^(p5en\.48xlarge)|(^p([6-9]|
  // [0-9]{2,}).*)"): reported latency 35 us, the RDMA protocol grouping each GPU's EFA devices into one
  // NCCL device, p5's exports. p5en (H200) and p6-b200 (B200) have 3200 Gb/s of EFA per 8 GPUs (AWS EC2
  // P5 and P6 instance pages): 8 devices of 400 Gb/s to NCCL.
  static const std::vector<const char*> p_series = with_exports({"node.nic.transport=efa", "node.nic.plugin_latency_us=35"});
  static const Ec2Family p6b200{"p6-b200 (8 B200, 3200 Gb/s EFA)", 8, nullptr, {"node.nic.count=8", "node.nic.Gbps=400"},
                                p_series};
  // p5en: the plugin's tuner model takes 18 us per network step there (src/tuner/nccl_ofi_model.cpp,
  // the P5en platform's net_lat; 20 on p5 and p5e, `efa`'s default), with 2 rails of 25 GiB/s per GPU.
  static const Ec2Family p5en{"p5en (8 H200, 3200 Gb/s EFA)", 8, nullptr, {"node.nic.count=8", "node.nic.Gbps=400"},
                              with_exports({"node.nic.transport=efa", "node.nic.latency_us=18",
                                            "node.nic.plugin_latency_us=35"})};
  static const Ec2Family p_later{"p6 or later (EFA; its NICs not known to ccsim)", 0, nullptr, {}, p_series};
  // p3dn.24xlarge: 8 V100 and one 100 Gb/s EFA without GPUDirect RDMA (the plugin's block: GDR not
  // required, latency 150 us, the SENDRECV protocol as p4d's; AWS EC2 P3 instance page).
  static const Ec2Family p3dn{"p3dn (8 V100, 1 x 100 Gb/s EFA, no GPUDirect RDMA)", 8, nullptr,
                              {"node.nic.count=1", "node.nic.Gbps=100"},
                              {"node.nic.transport=efa", "node.nic.gpudirect_rdma=false", "node.nic.latency_us=150",
                               "node.nic.plugin_latency_us=150"}};
  const auto digit = [&p](std::size_t i) { return i < p.size() && std::isdigit(static_cast<unsigned char>(p[i])); };
  if (p == "p4d" || p == "p4d.24xlarge" || p == "p4de.24xlarge") return &p4d;
  if (p == "p5.48xlarge" || p == "p5e.48xlarge") return &p5;
  if (p == "p5en.48xlarge") return &p5en;
  if (p == "p6-b200.48xlarge") return &p6b200;
  if (p == "p3dn.24xlarge") return &p3dn;
  if (!p.empty() && p[0] == 'p' && digit(1) && (p[1] >= '6' || digit(2))) return &p_later;
  return nullptr;
}

// The network NCCL said it used ("Using network X"), where it is not InfiniBand's verbs transport:
// Google's GPUDirect-TCPX plugin ("GPUDirectTCPX_v7") exists only on A3 High and its TCPXO plugin
// ("FasTrak") only on A3 Mega (8 H100 each: the gcp-a3-high and gcp-a3-mega presets); gIB, Google's
// verbs plugin for the RDMA NICs of A3 Ultra and A4, runs over RoCE. NCCL's sockets ("Using network
// Socket") are not taken: on these hosts they are NCCL's fallback when the RDMA or plugin path failed, a
// cause validate names (nic-missing-or-slow), not the hardware.
LogHardware network_named(const std::string& name, int gpus_per_host) {
  struct Named {
    bool (*is)(const std::string&);
    const char* preset;     // the only machine that network runs on, 8 GPUs per host; nullptr: none
    const char* transport;  // ccsim's transport otherwise
    const char* what;
  };
  static const Named networks[] = {
      {[](const std::string& n) { return n.rfind("GPUDirectTCPX", 0) == 0; }, "gcp-a3-high", "tcpx", "GPUDirect-TCPX"},
      {[](const std::string& n) { return n.rfind("FasTrak", 0) == 0; }, "gcp-a3-mega", "tcpxo", "GPUDirect-TCPXO"},
      {[](const std::string& n) { return n == "gIB"; }, nullptr, "roce", "Google's gIB over RoCE"}};
  LogHardware h;
  for (const Named& n : networks) {
    if (!n.is(name)) continue;
    if (n.preset && gpus_per_host == 8) h.preset = n.preset;
    else h.sets.push_back(std::string("node.nic.transport=") + n.transport);
    h.why = "the network from the log's NCCL lines: " + name + ", " + n.what;
    if (n.preset && h.preset.empty()) h.why += " (its NICs not taken for " + std::to_string(gpus_per_host) + " GPUs per host)";
    break;
  }
  return h;
}

// The latency the plugin printed that it reports to NCCL, where it differs from what `h` describes
// (its node.nic.plugin_latency_us, else the `efa` transport's default): the log's own figure, for plugin
// releases and instances whose table ccsim does not restate.
void take_printed_plugin_latency(const DebugFacts& debug, LogHardware& h) {
  if (debug.net_plugin_latency_us <= 0) return;
  static const std::string kKey = "node.nic.plugin_latency_us=";
  double described = find_transport("efa")->plugin_latency_us;
  auto at = std::find_if(h.sets.begin(), h.sets.end(), [](const std::string& s) { return s.rfind(kKey, 0) == 0; });
  if (at != h.sets.end()) described = std::stod(at->substr(kKey.size()));
  if (debug.net_plugin_latency_us == described) return;
  std::ostringstream v;
  v << kKey << debug.net_plugin_latency_us;
  if (at != h.sets.end()) *at = v.str();
  else h.sets.push_back(v.str());
  h.why += " (the plugin's printed internode latency, " + v.str().substr(kKey.size()) + " us)";
}

}  // namespace

LogHardware network_from_plugin(const DebugFacts& debug, int gpus_per_host) {
  LogHardware h;
  const Ec2Family* family = debug.net_platform.empty() ? nullptr : family_of(debug.net_platform);
  if (family) {
    const bool whole = gpus_per_host > 0 && gpus_per_host == family->gpus;
    if (family->preset && whole) {
      h.preset = family->preset;
    } else {
      if (whole) h.sets.assign(family->nics.begin(), family->nics.end());
      h.sets.insert(h.sets.end(), family->settings.begin(), family->settings.end());
    }
    h.why = "the network from aws-ofi-nccl's lines: " + debug.net_platform + ", " + family->label;
    if (!whole && family->gpus > 0)
      h.why += " (its NICs not taken for " + std::to_string(gpus_per_host) + " GPUs per host)";
    take_printed_plugin_latency(debug, h);
    return h;
  }
  if (const LogHardware named = network_named(debug.net_name, gpus_per_host); !named.why.empty()) return named;
  if (lower(debug.net_provider) != "efa") return h;
  // EFA without an instance ccsim knows: the transport, and the plugin's devices where they fit the GPUs.
  std::vector<std::string> said{"EFA"};
  const int n = debug.net_devices();
  if (n > 0 && gpus_per_host > 0 && (n % gpus_per_host == 0 || gpus_per_host % n == 0)) {
    h.sets.push_back("node.nic.count=" + std::to_string(n));
    said.push_back(std::to_string(n) + " devices");
  }
  h.sets.emplace_back("node.nic.transport=efa");
  h.why = "the network from aws-ofi-nccl's lines: " + join(said) + " (not their speed)";
  take_printed_plugin_latency(debug, h);
  return h;
}

}  // namespace ccsim
