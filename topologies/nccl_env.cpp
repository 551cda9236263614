#include "topologies/nccl_env.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "common/error.h"
#include "common/text.h"
#include "topologies/nic_affinity.h"
#include "topologies/routing.h"
#include "topologies/spec.h"
#include "topologies/transports.h"

namespace ccsim {

using nlohmann::json;

namespace {

// Settings NCCL reads that change what a run costs but that ccsim does not model: the prediction is
// NCCL's default for each, and the report says so.
const std::vector<std::string>& known_unmodelled() {
  static const std::vector<std::string> names = {
      "NCCL_NTHREADS",
      "NCCL_LL128_NTHREADS", "NCCL_SHM_DISABLE", "NCCL_SHM_USE_CUDA_MEMCPY", "NCCL_NET_GDR_READ",
      "NCCL_NET_GDR_C2C", "NCCL_PXN_DISABLE", "NCCL_P2P_PXN_LEVEL", "NCCL_NVB_DISABLE", "NCCL_CROSS_NIC",
      "NCCL_IB_HCA", "NCCL_NETDEVS_POLICY",
      "NCCL_IB_QPS_PER_CONNECTION", "NCCL_IB_SPLIT_DATA_ON_QPS", "NCCL_IB_AR_THRESHOLD",
      "NCCL_IB_ADAPTIVE_ROUTING", "NCCL_SOCKET_NTHREADS", "NCCL_NSOCKS_PERTHREAD", "NCCL_NET_OVERHEAD",
      "NCCL_CTA_POLICY", "NCCL_TUNER_PLUGIN", "NCCL_NET_PLUGIN", "NCCL_COLLNET_NODE_THRESHOLD",
      "NCCL_GRAPH_FILE", "NCCL_TOPO_FILE", "NCCL_NVLS_ENABLE_TREE", "NCCL_PAT_ENABLE", "NCCL_RUNTIME_CONNECT",
  };
  return names;
}

// NCCL reads its integer settings with strtoll (base 0); ccsim refuses what it would not parse whole.
long long integer_value(const std::string& value, const std::string& where) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(value.c_str(), &end, 0);
  if (value.empty() || errno != 0 || end == nullptr || *end != '\0')
    throw InputError(where, "expected an integer, as NCCL reads it (got '" + cut_for_message(value) + "')");
  return v;
}

// NCCL_P2P_LEVEL / NCCL_NET_GDR_LEVEL: a path type (LOC, NVL, PIX, PXB, PHB, SYS) or its legacy
// integer (0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and above SYS; NVL has none), as the farthest path class
// the transport may use. NCCL's PHB (through the CPU, one NUMA node) covers nvidia-smi's PHB and NODE.
PathClass level_value(const std::string& value, bool nvl_allowed, const std::string& where) {
  std::string v = trim(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  PathClass named;
  if (nccl_level_from_name(v, &named) && (named != PathClass::Nvl || nvl_allowed)) return named;
  if (!v.empty() && std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const long long n = integer_value(v, where);
    static const PathClass legacy[] = {PathClass::Loc, PathClass::Pix, PathClass::Pxb, PathClass::Node};
    return n < 4 ? legacy[n] : PathClass::Sys;
  }
  throw InputError(where, "expected a path type (LOC, " + std::string(nvl_allowed ? "NVL, " : "") +
                              "PIX, PXB, PHB, SYS) or its legacy integer 0-4");
}

json* find_object(json& spec, std::initializer_list<const char*> path) {
  json* cur = &spec;
  for (const char* key : path) {
    if (!cur->is_object() || !cur->contains(key) || !(*cur)[key].is_object()) return nullptr;
    cur = &(*cur)[key];
  }
  return cur;
}

bool flag(const json* obj, const char* key, bool fallback) {
  return obj && obj->contains(key) && (*obj)[key].is_boolean() ? (*obj)[key].get<bool>() : fallback;
}

// Sets `key` of the object at `path`, creating the objects, and records "dotted=value" in `effects`.
void set_key(json& spec, std::initializer_list<const char*> path, const char* key, const json& value,
             std::vector<std::string>& effects) {
  json* cur = &spec;
  std::string dotted;
  for (const char* p : path) {
    if (!cur->contains(p) || !(*cur)[p].is_object()) (*cur)[p] = json::object();
    cur = &(*cur)[p];
    dotted += std::string(p) + ".";
  }
  (*cur)[key] = value;
  effects.push_back(dotted + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
}

// The farthest path class between two GPUs of one node (NVLink pairs are NVL), built from the spec
// as it stands.
PathClass farthest_gpu_pair(const Topology& topo) {
  PathClass worst = PathClass::Loc;
  for (int a = 0; a < topo.gpus_per_node(); ++a)
    for (int b = a + 1; b < topo.gpus_per_node(); ++b)
      worst = std::max(worst, path_class(topo, topo.gpu(a), topo.gpu(b)));
  return worst;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

void disable_p2p(json& spec, std::vector<std::string>& effects) {
  if (find_object(spec, {"node", "pcie"})) set_key(spec, {"node", "pcie"}, "p2p", "none", effects);
  if (const json* nv = find_object(spec, {"node", "nvlink"})) {
    // ccsim does not model NVLS without NCCL's P2P transport (spec.cpp refuses the pair).
    if (flag(nv, "nvls", false)) set_key(spec, {"node", "nvlink"}, "nvls", false, effects);
    set_key(spec, {"node", "nvlink"}, "nccl_p2p", false, effects);
  }
}

}  // namespace

bool nccl_env_modelled(const std::string& name) {
  static const std::vector<std::string> names = {
      "NCCL_ALGO",          "NCCL_PROTO",          "NCCL_P2P_DISABLE",    "NCCL_P2P_LEVEL",      "NCCL_NVLS_ENABLE",
      "NCCL_NET_GDR_LEVEL", "NCCL_IB_GDR_LEVEL",   "NCCL_IB_DISABLE",     "NCCL_COLLNET_ENABLE", "NCCL_MNNVL_ENABLE",
      "NCCL_NVLS_CHUNKSIZE", "NCCL_NVLSTREE_MAX_CHUNKSIZE", "NCCL_P2P_NET_CHUNKSIZE", "NCCL_P2P_NVL_CHUNKSIZE",
      "NCCL_P2P_PCI_CHUNKSIZE", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_NRINGS", "NCCL_MAX_NRINGS",
      "NCCL_MIN_CTAS", "NCCL_MAX_CTAS", "NCCL_NVLS_NCHANNELS", "NCCL_BUFFSIZE", "NCCL_LL_BUFFSIZE",
      "NCCL_LL128_BUFFSIZE", "NCCL_NCHANNELS_PER_NET_PEER", "NCCL_P2P_LL_THRESHOLD"};
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string nccl_env_value(const std::vector<std::string>& settings, const std::string& name) {
  std::string value;
  for (const auto& s : settings)
    if (s.size() > name.size() && s.compare(0, name.size(), name) == 0 && s[name.size()] == '=')
      value = s.substr(name.size() + 1);
  return value;
}

NcclEnvNote apply_nccl_env(json& spec, const std::string& assignment, const std::string& where,
                           const std::string& source) {
  const std::size_t eq = assignment.find('=');
  const std::string name = eq == std::string::npos ? assignment : assignment.substr(0, eq);
  const bool name_ok = name.size() > 5 && name.compare(0, 5, "NCCL_") == 0 &&
                       std::all_of(name.begin(), name.end(), [](unsigned char c) {
                         return std::isupper(c) || std::isdigit(c) || c == '_';
                       });
  if (eq == std::string::npos || !name_ok)
    throw InputError(where, "expected NCCL_NAME=VALUE (an NCCL environment variable, e.g. NCCL_P2P_DISABLE=1), got '" +
                                cut_for_message(assignment) + "'");
  const std::string value = trim(assignment.substr(eq + 1));
  NcclEnvNote note;
  note.setting = name + "=" + value;
  if (value.empty()) {
    // NCCL treats a variable set to nothing as unset.
    note.effect = "empty: NCCL's default";
    note.modelled = false;
    return note;
  }
  std::vector<std::string> effects;
  auto probe = [&]() { return build_topology(spec, source); };

  if (name == "NCCL_ALGO" || name == "NCCL_PROTO") {
    note.effect = std::string("the tuner's ") + (name == "NCCL_ALGO" ? "algorithms" : "protocols") +
                  " (as --" + (name == "NCCL_ALGO" ? "algo" : "proto") + "; the flag wins when both are given)";
    return note;
  }
  if (name == "NCCL_P2P_DISABLE") {
    if (integer_value(value, where) == 0) {
      note.effect = "0: P2P on, NCCL's default";
      return note;
    }
    disable_p2p(spec, effects);
    note.effect = joined(effects) + " (GPU pairs use NCCL's SHM transport through host memory)";
    return note;
  }
  if (name == "NCCL_P2P_LEVEL") {
    const PathClass level = level_value(value, /*nvl_allowed=*/true, where);
    if (level == PathClass::Loc) {
      disable_p2p(spec, effects);
      note.effect = joined(effects) + " (LOC: P2P never used; NCCL's SHM transport)";
      return note;
    }
    const Topology topo = probe();
    const PathClass worst = farthest_gpu_pair(topo);
    if (topo.gpus_per_node() < 2 || worst <= PathClass::Nvl) {
      note.effect = std::string("every GPU pair of a node is NVLink, within ") + nccl_level_name(level) + ": no change";
      return note;
    }
    if (level == PathClass::Nvl) {
      // NVLink pairs keep P2P; every PCIe pair uses SHM.
      set_key(spec, {"node", "pcie"}, "p2p", "none", effects);
      note.effect = joined(effects) + " (PCIe pairs use NCCL's SHM transport; NVLink pairs keep P2P)";
      return note;
    }
    // A PCIe level: pairs up to it use P2P, farther ones SHM (NVLink pairs are NVL, within any of them).
    set_key(spec, {"node", "pcie"}, "nccl_p2p_level", std::string(nccl_level_name(level)), effects);
    note.effect = joined(effects) + " (PCIe GPU pairs farther than " + nccl_level_name(level) +
                  " use NCCL's SHM transport; NCCL's default is PXB on Intel and ARM hosts, SYS on others)";
    return note;
  }
  if (name == "NCCL_NVLS_ENABLE") {
    const long long v = integer_value(value, where);
    const json* nv = find_object(spec, {"node", "nvlink"});
    if (v != 0) {
      note.effect = flag(nv, "nvls", false) ? "NVLS on where supported, NCCL's default"
                                            : "no effect: the node has no NVLS (node.nvlink.nvls)";
      return note;
    }
    if (!flag(nv, "nvls", false)) {
      note.effect = "no effect: the node has no NVLS (node.nvlink.nvls)";
      return note;
    }
    set_key(spec, {"node", "nvlink"}, "nvls", false, effects);
    note.effect = joined(effects) + " (NVLS and NVLSTree off; the switch hardware stays)";
    return note;
  }
  if (name == "NCCL_NET_GDR_LEVEL" || name == "NCCL_IB_GDR_LEVEL") {
    const PathClass level = level_value(value, /*nvl_allowed=*/false, where);
    const Topology topo = probe();
    // Not the node count: validate sets it from the log after the settings are applied.
    if (topo.nics_per_node() == 0 || !topo.network.gpudirect_rdma) {
      note.effect = std::string("no effect: ") + (topo.nics_per_node() == 0 ? "no NICs"
                                                    : "GPUDirect RDMA is already off (node.nic.gpudirect_rdma)");
      return note;
    }
    PathClass worst = PathClass::Loc, nearest = PathClass::Sys;
    for (int g = 0; g < topo.gpus_per_node(); ++g) {
      const int nic = nic_for_gpu(topo, g);
      if (nic < 0) continue;
      const PathClass c = path_class(topo, topo.gpu(g), topo.nic(0, nic));
      worst = std::max(worst, c);
      nearest = std::min(nearest, c);
    }
    if (worst <= level) {
      note.effect = std::string("every GPU's NIC is within ") + nccl_level_name(level) + ": GPUDirect RDMA stays on";
      return note;
    }
    if (nearest <= level)
      throw InputError(where, std::string("splits this node's GPUs (their NICs are ") + nccl_level_name(nearest) +
                                  " to " + nccl_level_name(worst) +
                                  " away): ccsim's GPUDirect RDMA is one setting per node (node.nic.gpudirect_rdma)");
    const TransportInfo& t = transport_info(topo.network.transport);
    if (!t.host_staging_allowed)
      throw InputError(where, std::string("transport ") + t.name + " has no host-staged path in ccsim (" +
                                  t.why_not + ")");
    set_key(spec, {"node", "nic"}, "gpudirect_rdma", false, effects);
    note.effect = joined(effects) + " (GPU<->NIC traffic staged through host memory)";
    return note;
  }
  // NCCL's fusion of a card's ports into one network device (node.nic.fuse_ports, topologies/spec.cpp).
  if (name == "NCCL_IB_MERGE_NICS" || name == "NCCL_NET_MERGE_LEVEL") {
    bool fuse = true;
    if (name == "NCCL_IB_MERGE_NICS") {
      fuse = integer_value(value, where) != 0;
    } else {
      std::string v = value;
      std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
      if (v != "LOC" && v != "PORT") {
        note.effect = "merges NICs farther apart than a card's ports: not modelled (ports of one card fused, NCCL's PORT default)";
        note.modelled = false;
        return note;
      }
      fuse = v == "PORT";
    }
    const json* nic = find_object(spec, {"node", "nic"});
    const int ports = nic && nic->contains("ports_per_card") && (*nic)["ports_per_card"].is_number_integer()
                          ? (*nic)["ports_per_card"].get<int>()
                          : kDefaultNicPortsPerCard;
    if (ports < 2) {
      note.effect = "no effect: one port per NIC card (node.nic.ports_per_card)";
      return note;
    }
    set_key(spec, {"node", "nic"}, "fuse_ports", fuse, effects);
    note.effect = joined(effects) + (fuse ? " (each card's ports one network device, NCCL's default)"
                                          : " (every port its own network device)");
    return note;
  }
  if (name == "NCCL_IB_DISABLE") {
    if (integer_value(value, where) == 0) {
      note.effect = "0: IB verbs on, NCCL's default";
      return note;
    }
    const Topology topo = probe();
    const Transport tr = topo.network.transport;
    if (topo.nics_per_node() == 0 || (tr != Transport::InfiniBand && tr != Transport::RoCE)) {
      note.effect = topo.nics_per_node() == 0 ? "no effect: no NICs"
                                              : std::string("no effect: transport ") + transport_info(tr).name +
                                                    " is not NCCL's IB verbs transport";
      return note;
    }
    // NCCL falls back to its socket transport over the same NICs (IP over the ports). The IB figures
    // the spec may carry (efficiency, latency) are the verbs path's: the socket transport's defaults apply.
    json* nic = find_object(spec, {"node", "nic"});
    for (const char* key : {"efficiency", "latency_us", "plugin_latency_us"})
      if (nic && nic->contains(key)) {
        nic->erase(key);
        effects.push_back(std::string("node.nic.") + key + " back to tcp's default");
      }
    set_key(spec, {"node", "nic"}, "transport", "tcp", effects);
    set_key(spec, {"node", "nic"}, "gpudirect_rdma", false, effects);
    note.effect = joined(effects) + " (NCCL's socket transport, host-staged)";
    return note;
  }
  if (name == "NCCL_COLLNET_ENABLE") {
    const long long v = integer_value(value, where);
    const json* fabric = find_object(spec, {"fabric"});
    if (v != 0 || !flag(fabric, "sharp", false)) {
      note.effect = flag(fabric, "sharp", false) ? "CollNet on (fabric.sharp)"
                                                 : "no effect: the fabric has no SHARP (fabric.sharp)";
      return note;
    }
    set_key(spec, {"fabric"}, "sharp", false, effects);
    note.effect = joined(effects) + " (CollNet off; the switches' reduction is not used)";
    return note;
  }
  if (name == "NCCL_MNNVL_ENABLE") {
    const long long v = integer_value(value, where);
    const json* nv = find_object(spec, {"node", "nvlink"});
    const bool domain = nv && nv->contains("domain_size") && (*nv)["domain_size"].is_number_integer() &&
                        (*nv)["domain_size"].get<int>() > 1;
    if (v != 0 || !domain) {
      note.effect = domain ? "multi-node NVLink on (node.nvlink.domain_size)"
                           : "no effect: one host per NVLink domain (node.nvlink.domain_size)";
      return note;
    }
    set_key(spec, {"node", "nvlink"}, "domain_size", 1, effects);
    note.effect = joined(effects) + " (each host's GPUs alone on NVLink; the hosts talk over the network)";
    return note;
  }
  if (name == "NCCL_NVLS_CHUNKSIZE" || name == "NCCL_NVLSTREE_MAX_CHUNKSIZE") {
    const bool tree_cap = name == "NCCL_NVLSTREE_MAX_CHUNKSIZE";
    long long v = integer_value(value, where);
    // NCCL_NVLSTREE_MAX_CHUNKSIZE's default, -2, is NCCL's own rule: 0 in the description (a preset's
    // value, such as aws-p5's from its plugin, gives way to it, as the plugin's does to the user's).
    const bool default_rule = tree_cap && v == -2;
    if (default_rule) v = 0;
    if (!default_rule && (v < 512 || v > kMaxNvlsChunkBytes))
      throw InputError(where, std::string("expected a chunk size in bytes from 512 (Simple's grain) to ") +
                                  std::to_string(kMaxNvlsChunkBytes) + (tree_cap ? ", or -2 for NCCL's default" : "") +
                                  " (got " + std::to_string(v) + ")");
    const json* nv = find_object(spec, {"node", "nvlink"});
    if (!flag(nv, "nvls", false)) {
      note.effect = "no effect: the node has no NVLS (node.nvlink.nvls)";
      return note;
    }
    set_key(spec, {"node", "nvlink"}, tree_cap ? "nvls_tree_max_chunk_bytes" : "nvls_chunk_bytes", static_cast<int>(v),
            effects);
    note.effect = joined(effects) + (default_rule ? " (NCCL's rule: 64 KiB from 4 nodes on, else the NVLS chunk)"
                                     : tree_cap   ? " (NVLSTree's chunk cap)"
                                                  : " (the NVLS chunk per channel and head; NVLSTree's chunking follows it)");
    return note;
  }
  // comm->p2pChunkSize: the one NCCL uses is the NET one on several nodes, the NVL one where every
  // GPU pair is NVLink, else the PCI one (src/init.cc); each is kept with its transport's section.
  struct P2pChunkSetting {
    const char* name;
    const char* section;
    const char* when;
  };
  static const P2pChunkSetting p2p_chunk_settings[] = {
      {"NCCL_P2P_NET_CHUNKSIZE", "nic", "when the job spans several nodes"},
      {"NCCL_P2P_NVL_CHUNKSIZE", "nvlink", "in one node whose GPUs all pair over NVLink"},
      {"NCCL_P2P_PCI_CHUNKSIZE", "pcie", "in one node without all-NVLink pairs"}};
  for (const P2pChunkSetting& c : p2p_chunk_settings) {
    if (name != c.name) continue;
    const long long v = integer_value(value, where);
    if (v < kMinP2pChunkBytes || v > kMaxP2pChunkBytes)
      throw InputError(where, "expected a chunk size in bytes from " + std::to_string(kMinP2pChunkBytes) + " to " +
                                  std::to_string(kMaxP2pChunkBytes) + " (got " + std::to_string(v) + ")");
    if (!find_object(spec, {"node", c.section})) {
      note.effect = std::string("no effect: the node has no node.") + c.section;
      return note;
    }
    set_key(spec, {"node", c.section}, "p2p_chunk_bytes", static_cast<int>(v), effects);
    note.effect = joined(effects) + " (the Simple chunk of sendrecv / alltoall messages " + c.when + ")";
    return note;
  }
  // Channel counts (NcclChannelSettings). NCCL takes any integer and clamps it (connect.cc
  // ncclMinNchannels / ncclMaxNchannels: 0..64 and 1..64; init.cc's config check caps the CTAs at 64),
  // so ccsim clamps too and says so. NCCL_MIN/MAX_NRINGS are the legacy names of the channel counts
  // (NCCL prefers the NCHANNELS name when both are set; here the last setting wins).
  struct ChannelSetting {
    const char* name;
    const char* section;
    const char* key;
    int lo;
    const char* what;
  };
  static const ChannelSetting channel_settings[] = {
      {"NCCL_MIN_NCHANNELS", "gpu", "nccl_min_channels", 0, "collective channels duplicated up to at least this"},
      {"NCCL_MIN_NRINGS", "gpu", "nccl_min_channels", 0, "collective channels duplicated up to at least this"},
      {"NCCL_MAX_NCHANNELS", "gpu", "nccl_max_channels", 1, "collective channels kept at most"},
      {"NCCL_MAX_NRINGS", "gpu", "nccl_max_channels", 1, "collective channels kept at most"},
      {"NCCL_MIN_CTAS", "gpu", "nccl_min_ctas", 1, "collective and NVLS channels at least"},
      {"NCCL_MAX_CTAS", "gpu", "nccl_max_ctas", 1, "collective and NVLS channels at most"},
      {"NCCL_NVLS_NCHANNELS", "nvlink", "nvls_channels", 1, "NVLS channels"},
      {"NCCL_NCHANNELS_PER_NET_PEER", "nic", "nccl_channels_per_net_peer", 1,
       "P2P channels to a peer across the network, instead of NCCL's 2 halved at scale"}};
  for (const ChannelSetting& c : channel_settings) {
    if (name != c.name) continue;
    const long long v = integer_value(value, where);
    const long long kept = std::clamp<long long>(v, c.lo, kNcclMaxChannels);
    if (std::string(c.section) == "nvlink" && !flag(find_object(spec, {"node", "nvlink"}), "nvls", false)) {
      note.effect = "no effect: the node has no NVLS (node.nvlink.nvls)";
      return note;
    }
    if (std::string(c.section) == "nic" && !find_object(spec, {"node", "nic"})) {
      note.effect = "no effect: the node has no node.nic";
      return note;
    }
    set_key(spec, {"node", c.section}, c.key, static_cast<int>(kept), effects);
    note.effect = joined(effects) + " (" + c.what + (kept != v ? "; NCCL clamps " + std::to_string(v) + " to " +
                                                                     std::to_string(kept)
                                                               : std::string()) + ")";
    return note;
  }
  // Protocol buffers (NcclBufferSizes): bytes per connection, -2 for NCCL's default (init.cc
  // computeBuffSizes), which takes a description's value back out (a preset's, such as aws-p5's).
  static const std::pair<const char*, const char*> buffer_settings[] = {
      {"NCCL_BUFFSIZE", "nccl_buffsize_bytes"},
      {"NCCL_LL_BUFFSIZE", "nccl_ll_buffsize_bytes"},
      {"NCCL_LL128_BUFFSIZE", "nccl_ll128_buffsize_bytes"}};
  for (const auto& [setting, key] : buffer_settings) {
    if (name != setting) continue;
    const long long v = integer_value(value, where);
    if (v == -2) {
      if (json* gpu = find_object(spec, {"node", "gpu"})) gpu->erase(key);
      note.effect = std::string("node.gpu.") + key + " removed (NCCL's default buffer)";
      return note;
    }
    if (v < kMinNcclBufferBytes || v > kMaxNcclBufferBytes)
      throw InputError(where, "expected a buffer size in bytes from " + std::to_string(kMinNcclBufferBytes) + " to " +
                                  std::to_string(kMaxNcclBufferBytes) + ", or -2 for NCCL's default (got " +
                                  std::to_string(v) + ")");
    set_key(spec, {"node", "gpu"}, key, static_cast<long long>(v), effects);
    note.effect = joined(effects) + " (the protocol's buffer per connection; a step is an eighth of it: the chunk of "
                                    "trees, chains and CollNet" +
                  (name == "NCCL_BUFFSIZE" ? std::string(", and the bound of the P2P chunk)") : std::string(")"));
    return note;
  }
  if (name == "NCCL_P2P_LL_THRESHOLD") {
    const long long v = integer_value(value, where);
    if (v < 0 || v > kMaxP2pChunkBytes)
      throw InputError(where, "expected bytes per channel from 0 (never LL) to " + std::to_string(kMaxP2pChunkBytes) +
                                  " (got " + std::to_string(v) + ")");
    set_key(spec, {"node", "gpu"}, "nccl_p2p_ll_threshold_bytes", static_cast<int>(v), effects);
    note.effect = joined(effects) + " (sendrecv / alltoall messages of at most this many bytes per channel go by LL)";
    return note;
  }
  note.modelled = false;
  note.effect = std::find(known_unmodelled().begin(), known_unmodelled().end(), name) != known_unmodelled().end()
                    ? "not modelled: predicted with NCCL's default for it"
                    : "no effect on the model";
  return note;
}

}  // namespace ccsim
