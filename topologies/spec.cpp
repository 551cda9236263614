#include "topologies/spec.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include <unistd.h>

#include "common/error.h"
#include "common/input_file.h"
#include "common/json_input.h"
#include "common/text.h"
#include "common/units.h"
#include "topologies/gpu_copy_rate.h"
#include "topologies/nccl_hardware_figures.h"
#include "topologies/presets.h"
#include "topologies/routing.h"
#include "topologies/transports.h"

namespace ccsim {

using nlohmann::json;

namespace {

const std::map<std::string, std::vector<std::string>>& schema() {
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"", {"format", "name", "description", "nodes", "node", "fabric"}},
      {"/node", {"gpu", "nvlink", "cpu", "pcie", "nic"}},
      {"/node/gpu", {"model", "arch", "count", "c2c", "p2p_channel_GBps", "net_ring_channel_GBps", "nccl_min_channels", "nccl_max_channels", "nccl_min_ctas", "nccl_max_ctas", "nccl_buffsize_bytes", "nccl_ll_buffsize_bytes", "nccl_ll128_buffsize_bytes", "nccl_p2p_ll_threshold_bytes"}},
      {"/node/nvlink", {"generation", "links_per_gpu", "GBps_per_link", "efficiency", "latency_us", "nvswitch", "nvls", "nvls_reduce_GBps", "nvls_efficiency", "nvls_chunk_bytes", "nvls_tree_max_chunk_bytes", "nvls_channels", "nccl_p2p", "domain_size", "p2p_chunk_bytes", "peers"}},
      {"/node/cpu",
       {"sockets", "vendor", "inter_socket_GBps", "inter_socket_latency_us", "host_memory_GBps",
        "host_memory_latency_us", "launch_us", "launch_us_per_channel", "model_id", "family_id"}},
      {"/node/pcie", {"generation", "lanes", "uplink_lanes", "efficiency", "latency_us", "switches_per_socket", "switch_levels", "p2p", "nccl_p2p_level", "shm_channel_GBps", "shm_two_way_efficiency", "shm_step_us", "p2p_chunk_bytes"}},
      {"/node/nic", {"count", "ports_per_card", "fuse_ports", "Gbps", "efficiency", "transport", "gpudirect_rdma", "latency_us", "plugin_latency_us", "message_rate_Mps", "pcie_generation", "pcie_lanes", "p2p_chunk_bytes", "nccl_channels_per_net_peer"}},
      {"/fabric", {"kind", "nodes_per_leaf", "oversubscription", "switch_latency_us", "sharp", "sharp_reduce_GBps"}},
  };
  return keys;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string suggestion(const std::string& key, const std::vector<std::string>& valid) {
  std::string best;
  std::size_t best_d = 3;
  for (const auto& v : valid) {
    const std::size_t d = edit_distance(key, v);
    if (d < best_d) best_d = d, best = v;
  }
  return best.empty() ? "" : "did you mean '" + best + "'? ";
}

std::string fmt_num(double x) {
  std::ostringstream os;
  os << x;
  return os.str();
}

// A value as an error message quotes it: one short line however large the value.
// (Invalid UTF-8, possible in a --set string, is shown as U+FFFD rather than throwing.)
std::string describe(const json& j) { return cut_for_message(j.dump(-1, ' ', false, json::error_handler_t::replace)); }

// Validation context: one JSON object at `path` in `source`.
class Obj {
 public:
  Obj(const json& j, std::string path, const std::string& source, json& out)
      : j_(j), path_(std::move(path)), source_(source), out_(out) {
    if (!j_.is_object()) fail_here("must be an object (got " + describe(j_) + ")");
    const auto& valid = spec_keys(path_);
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (std::find(valid.begin(), valid.end(), it.key()) == valid.end())
        fail(cut_for_message(it.key()), "unknown key '" + cut_for_message(it.key()) + "' (" + suggestion(it.key(), valid) +
                           "valid keys at " + (path_.empty() ? std::string("/") : path_) + ": " + join(valid) + ")");
    }
    out_ = json::object();
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(source_ + ": " + path_ + "/" + key, what);
  }
  [[noreturn]] void fail_here(const std::string& what) const {
    throw InputError(source_ + ": " + (path_.empty() ? std::string("/") : path_), what);
  }

  bool has(const std::string& key) const { return j_.contains(key) && !j_.at(key).is_null(); }
  const json& at(const std::string& key) const { return j_.at(key); }
  std::string path(const std::string& key) const { return path_ + "/" + key; }
  json& out() { return out_; }

  void require(const std::string& key) const {
    if (!has(key)) fail(key, "missing required key");
  }

  double number(const std::string& key, const double* def = nullptr) {
    if (!has(key)) {
      if (!def) fail(key, "missing required key (a number)");
      out_[key] = *def;
      return *def;
    }
    const json& v = j_.at(key);
    if (!v.is_number()) fail(key, "must be a number (got " + describe(v) + ")");
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail(key, "must be finite");
    out_[key] = v;
    return x;
  }
  // A fraction in [0.01, 1], e.g. the achievable share of a link's nominal rate. Below 1% no link is
  // usable (0.5 meant as 50% is the likely typo), and multimem bytes scaled by 1/1e-10 exceeded
  // what the engine's solver resolves (a 2349 GB/s NVLS busbw on an H100 node).
  double fraction(const std::string& key, const double* def = nullptr) {
    const double x = number(key, def);
    if (!(x >= 0.01 && x <= 1)) fail(key, "must be a fraction in [0.01, 1] (got " + fmt_num(x) + ")");
    return x;
  }
  // `max` is a physical bound (docs/topology.md, "Limits"): beyond it the value is a typo, and
  // SimGrid's solver would see rates or delays it cannot represent.
  // A rate in [min, max]: below `min` (1 MB/s) a bandwidth made times of 1e300 us or inf.
  double positive(const std::string& key, double min, double max, const double* def = nullptr) {
    const bool given = has(key);  // defaults derived from other values (a "not limiting" rate) are not bounded
    const double x = number(key, def);
    if (!(x > 0)) fail(key, "must be > 0 (got " + fmt_num(x) + ")");
    if (given && x < min)
      fail(key, "must be at least " + fmt_num(min) + " (got " + fmt_num(x) + "; docs/topology.md, Limits)");
    if (given) at_most(key, x, max);
    return x;
  }
  double non_negative(const std::string& key, double max, const double* def = nullptr) {
    const double x = number(key, def);
    if (x < 0) fail(key, "must be >= 0 (got " + fmt_num(x) + ")");
    at_most(key, x, max);
    return x;
  }
  void at_most(const std::string& key, double x, double max) const {
    if (x > max) fail(key, "must be at most " + fmt_num(max) + " (got " + fmt_num(x) + "; docs/topology.md, Limits)");
  }
  int integer(const std::string& key, int lo, int hi, const int* def = nullptr) {
    if (!has(key)) {
      if (!def) fail(key, "missing required key (an integer)");
      out_[key] = *def;
      return *def;
    }
    const json& v = j_.at(key);
    if (!v.is_number() || (v.is_number_float() && std::floor(v.get<double>()) != v.get<double>()))
      fail(key, "must be an integer (got " + describe(v) + ")");
    const double x = v.get<double>();
    if (x < lo || x > hi)
      fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (got " + fmt_num(x) + ")");
    out_[key] = static_cast<int>(x);
    return static_cast<int>(x);
  }
  bool boolean(const std::string& key, bool def) {
    if (!has(key)) {
      out_[key] = def;
      return def;
    }
    const json& v = j_.at(key);
    if (!v.is_boolean()) fail(key, "must be true or false (got " + describe(v) + ")");
    out_[key] = v;
    return v.get<bool>();
  }
  std::string string(const std::string& key, const std::string* def = nullptr) {
    if (!has(key)) {
      if (!def) fail(key, "missing required key (a string)");
      out_[key] = *def;
      return *def;
    }
    const json& v = j_.at(key);
    if (!v.is_string()) fail(key, "must be a string (got " + describe(v) + ")");
    if (v.get<std::string>().empty()) fail(key, "must not be empty");
    // Names are printed into tables and headers: a newline would forge a row, a NUL cut the line.
    if (find_control_char(v.get<std::string>()) != std::string::npos)
      fail(key, "must not contain control characters, line separators or invalid UTF-8 (got \"" +
                    cut_for_message(v.get<std::string>()) + "\")");
    out_[key] = v;
    return v.get<std::string>();
  }
  std::string choice(const std::string& key, const std::vector<std::string>& options, const std::string* def = nullptr) {
    const std::string s = string(key, def);
    if (std::find(options.begin(), options.end(), s) == options.end())
      fail(key, "must be one of " + join(options) + " (got \"" + cut_for_message(s) + "\")");
    return s;
  }

 private:
  const json& j_;
  std::string path_;
  const std::string& source_;
  json& out_;
};

std::string stem(const std::string& path) {
  std::string s = path;
  const auto slash = s.find_last_of('/');
  if (slash != std::string::npos) s = s.substr(slash + 1);
  if (s.size() > 5 && s.substr(s.size() - 5) == ".json") s = s.substr(0, s.size() - 5);
  return s;
}

json parse_json_text(const std::string& text, const std::string& where) {
  return parse_user_json(text, where, /*allow_comments=*/true);
}

// Physical bounds of the topology's numbers (docs/topology.md, "Limits"), each far above today's
// hardware: NVLink5 is 50 GB/s per link and direction, the fastest NICs 800 Gb/s, HBM3e ~8 TB/s.
constexpr double kMaxLinkGBps = 1e4;        // per NVLink link
// NVIDIA: "NVLink Switch System ... up to 576 GPUs in a single NVLink domain" (GB200 NVL72 page).
constexpr int kMaxNvlinkDomainGpus = 576;
constexpr double kMaxAggregateGBps = 1e5;   // host memory, inter-socket, reduction engines
constexpr double kMaxNicGbps = 1e5;         // 100 Tb/s
constexpr double kMaxLatencyUs = 1e6;       // one second
constexpr double kMaxOversubscription = 1000;
constexpr double kMaxMessageRateMps = 1e5;  // 100 G messages/s per NIC
// Lower bounds: 1 MB/s for every bandwidth (GB/s keys: 0.001; NIC Gb/s: 0.008), 1000 messages/s.
// Slower links do not exist in a GPU cluster, and smaller rates made times of 1e300 us or inf.
constexpr double kMinGBps = 1e-3;
constexpr double kMinNicGbps = 8e-3;
constexpr double kMinMessageRateMps = 1e-3;
// GPUs joined pair by pair by NVLink (no NVSwitch): the largest such boards have 8 (DGX-1, HGX-1);
// the ring search over them (topologies/nvlink_mesh.h) is a depth-first search over the pairs.
constexpr int kMaxNvlinkMeshGpus = 16;

struct NvlinkPeer {
  int a = 0, b = 0, links = 0;
};

// node.nvlink.peers: [[gpu_a, gpu_b, links], ...], local GPU indices, each pair once, no GPU with
// more links than links_per_gpu.
std::vector<NvlinkPeer> parse_nvlink_peers(const json& v, int gpus, int links_per_gpu, const std::string& source,
                                           const std::string& where) {
  auto fail = [&](const std::string& what) { throw InputError(source + ": " + where, what); };
  if (!v.is_array() || v.empty()) fail("must be a non-empty array of [gpu_a, gpu_b, links] (got " + describe(v) + ")");
  if (gpus > kMaxNvlinkMeshGpus)
    fail("GPUs joined pair by pair: at most " + std::to_string(kMaxNvlinkMeshGpus) + " per node (got " + std::to_string(gpus) + ")");
  const std::size_t pairs = static_cast<std::size_t>(gpus) * static_cast<std::size_t>(gpus - 1) / 2;
  if (v.size() > pairs)
    fail("lists " + std::to_string(v.size()) + " pairs; " + std::to_string(gpus) + " GPUs have " + std::to_string(pairs));
  std::vector<NvlinkPeer> peers;
  std::vector<int> per_gpu(static_cast<std::size_t>(gpus), 0);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    const std::string at = "entry " + std::to_string(i) + ": ";
    if (!e.is_array() || e.size() != 3) fail(at + "must be [gpu_a, gpu_b, links] (got " + describe(e) + ")");
    int x[3];
    for (int k = 0; k < 3; ++k) {
      if (!e[k].is_number_integer()) fail(at + "must hold three integers (got " + describe(e) + ")");
      x[k] = static_cast<int>(std::max<long long>(-1, std::min<long long>(1 << 20, e[k].get<long long>())));
    }
    for (int k = 0; k < 2; ++k)
      if (x[k] < 0 || x[k] >= gpus)
        fail(at + "GPU " + std::to_string(x[k]) + " out of range (the node has " + std::to_string(gpus) + " GPUs, 0.." +
             std::to_string(gpus - 1) + ")");
    if (x[0] == x[1]) fail(at + "a GPU cannot be joined to itself");
    if (x[2] < 1 || x[2] > links_per_gpu)
      fail(at + "links must be between 1 and links_per_gpu " + std::to_string(links_per_gpu) + " (got " + std::to_string(x[2]) + ")");
    NvlinkPeer p{std::min(x[0], x[1]), std::max(x[0], x[1]), x[2]};
    for (const NvlinkPeer& q : peers)
      if (q.a == p.a && q.b == p.b) fail(at + "pair " + std::to_string(p.a) + "-" + std::to_string(p.b) + " listed twice");
    for (int g : {p.a, p.b}) {
      per_gpu[static_cast<std::size_t>(g)] += p.links;
      if (per_gpu[static_cast<std::size_t>(g)] > links_per_gpu)
        fail(at + "GPU " + std::to_string(g) + " would have " + std::to_string(per_gpu[static_cast<std::size_t>(g)]) +
             " NVLinks, more than links_per_gpu " + std::to_string(links_per_gpu));
    }
    peers.push_back(p);
  }
  return peers;
}

}  // namespace

const std::vector<std::string>& spec_keys(const std::string& path) {
  static const std::vector<std::string> none;
  const auto it = schema().find(path);
  return it == schema().end() ? none : it->second;
}

std::vector<std::string> known_presets() {
  std::vector<std::string> names;
  for (const auto& [name, text] : embedded_presets()) names.push_back(name);
  return names;
}

double pcie_bandwidth_Bps(int generation, int lanes) {
  double gts = 0;
  switch (generation) {
    case 3: gts = 8; break;
    case 4: gts = 16; break;
    case 5: gts = 32; break;
    case 6: gts = 64; break;
    default: throw std::invalid_argument("unsupported PCIe generation " + std::to_string(generation));
  }
  return gts * 1e9 * lanes * (128.0 / 130.0) / 8.0;
}

double default_transport_latency_s(Transport t) { return transport_info(t).latency_us * kMicro; }

json load_topology_spec(const std::string& preset_or_file) {
  const auto& presets = embedded_presets();
  const auto it = presets.find(preset_or_file);
  if (it != presets.end()) return parse_json_text(it->second, "preset " + preset_or_file);
  const bool looks_like_file =
      preset_or_file.find('/') != std::string::npos || preset_or_file.find('.') != std::string::npos;
  if (::access(preset_or_file.c_str(), F_OK) != 0)
    throw InputError(cut_for_message(preset_or_file),
                     std::string(looks_like_file ? "cannot open topology file (no such file)"
                                                 : "unknown topology preset and no such file") +
                         " (known presets: " + join(known_presets()) + ")");
  return parse_json_text(read_input_file(preset_or_file, "topology file"), preset_or_file);
}

void apply_override(json& spec, const std::string& assignment, const std::string& where) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(where, "expected KEY=VALUE (e.g. node.nic.Gbps=200), got '" + cut_for_message(assignment) + "'");
  const std::string key = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  if (find_control_char(key) != std::string::npos)
    throw InputError(where, "the key must not contain control characters, line separators or invalid UTF-8 (got '" +
                                cut_for_message(key) + "')");
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  if (key.back() == '.') parts.push_back("");
  if (!spec.is_object()) spec = json::object();

  json* cur = &spec;
  std::string path;  // JSON pointer of *cur
  std::string dotted;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const auto& valid = spec_keys(path);
    if (std::find(valid.begin(), valid.end(), part) == valid.end()) {
      const std::string level = dotted.empty() ? "the top level" : "'" + dotted + "'";
      throw InputError(where, "unknown key '" + cut_for_message(key) + "': '" + cut_for_message(part) + "' is not a key of " + level + " (" +
                                  suggestion(part, valid) + "valid keys: " + join(valid) + ")");
    }
    path += "/" + part;
    dotted += (dotted.empty() ? "" : ".") + part;
    if (i + 1 == parts.size()) {
      // JSON when it is JSON (numbers, true, arrays, objects, quoted strings), else the text as a
      // string (--set name=my-cluster). Arrays, objects and quoted strings must parse, with the
      // limits of a topology file; a number beyond a double's range is an error, not a string.
      json value;
      const std::size_t first = text.find_first_not_of(" \t");
      if (first != std::string::npos && (text[first] == '[' || text[first] == '{' || text[first] == '"')) {
        value = parse_user_json(text, where, /*allow_comments=*/false);
      } else {
        try {
          value = json::parse(text);
        } catch (const json::parse_error&) {
          value = text;
        } catch (const json::out_of_range&) {
          throw InputError(where, "number '" + cut_for_message(text) + "' is out of range (beyond a double's 1.8e308)");
        }
      }
      (*cur)[part] = value;
      return;
    }
    if (spec_keys(path).empty())
      throw InputError(where, "unknown key '" + cut_for_message(key) + "': '" + dotted + "' is a value, not an object");
    json& next = (*cur)[part];
    if (!next.is_object()) next = json::object();
    cur = &next;
  }
}

void set_node_count(json& spec, int nodes) {
  if (nodes < 1) throw InputError("--nodes", "must be >= 1 (got " + std::to_string(nodes) + ")");
  if (!spec.is_object()) spec = json::object();
  spec["nodes"] = nodes;
}

Topology build_topology(const json& spec, const std::string& source) {
  json resolved;
  Obj root(spec, "", source, resolved);
  const std::string fmt = "ccsim-topology/1";
  root.choice("format", {fmt}, &fmt);
  const std::string default_name = stem(source);
  const std::string name = root.string("name", &default_name);
  if (root.has("description")) root.string("description");
  const int one = 1;
  const int nodes = root.integer("nodes", 1, 1 << 16, &one);
  root.require("node");

  json node_out;
  Obj node(root.at("node"), "/node", source, node_out);

  // --- GPUs ---
  node.require("gpu");
  json gpu_out;
  Obj gpu(node.at("gpu"), "/node/gpu", source, gpu_out);
  const std::string gpu_model = gpu.string("model");
  const std::string unknown = "unknown";
  const std::string gpu_arch = gpu.string("arch", &unknown);
  const int gpus = gpu.integer("count", 1, 64);
  // A superchip's GPU (GH200, GB200) hangs off its own Grace CPU by NVLink-C2C, not PCIe: NCCL's path
  // from it to a NIC on that CPU's PCIe is P2C (src/graph/topo.h: "a GPU and a NIC using the C2C
  // connection to the CPU and the PCIe connection to the NIC"), not PHB, which keeps LL128 and the
  // balanced tree (algorithms/nccl_channels.cpp). The link itself stays the node.pcie description.
  const bool gpu_c2c = gpu.boolean("c2c", false);
  // The rate of one channel of NCCL's P2P transport (a thread block's copy to a peer GPU,
  // topologies/gpu_copy_rate.h): by default the arch's; 0 takes the cap off.
  const double d_p2p_channel_GBps = default_p2p_channel_Bps(gpu_arch) / kGB;
  const double p2p_channel_Bps = gpu.non_negative("p2p_channel_GBps", kMaxLinkGBps, &d_p2p_channel_GBps) * kGB;
  // The most one channel of a ring across nodes moves (a thread block's copy, as a P2P channel's):
  // by default the P2P channel rate of the archs where it was measured (gpu_copy_rate.h); 0: no cap.
  const double d_net_ring_channel_GBps = default_net_ring_channel_Bps(gpu_arch) / kGB;
  const double net_ring_channel_Bps =
      gpu.non_negative("net_ring_channel_GBps", kMaxLinkGBps, &d_net_ring_channel_GBps) * kGB;
  // NCCL's channel-count settings (NcclChannelSettings): read only where given, so that a
  // description without them resolves as before. NCCL's own range: 0 or 1 to MAXCHANNELS (64).
  NcclChannelSettings nccl_channels;
  if (gpu.has("nccl_min_channels")) nccl_channels.min_channels = gpu.integer("nccl_min_channels", 0, kNcclMaxChannels);
  if (gpu.has("nccl_max_channels")) nccl_channels.max_channels = gpu.integer("nccl_max_channels", 1, kNcclMaxChannels);
  if (gpu.has("nccl_min_ctas")) nccl_channels.min_ctas = gpu.integer("nccl_min_ctas", 1, kNcclMaxChannels);
  if (gpu.has("nccl_max_ctas")) nccl_channels.max_ctas = gpu.integer("nccl_max_ctas", 1, kNcclMaxChannels);
  // NCCL's protocol buffers (NcclBufferSizes), likewise only where given.
  NcclBufferSizes nccl_buffers;
  const std::pair<const char*, std::int64_t NcclBufferSizes::*> buffer_keys[] = {
      {"nccl_buffsize_bytes", &NcclBufferSizes::simple_bytes},
      {"nccl_ll_buffsize_bytes", &NcclBufferSizes::ll_bytes},
      {"nccl_ll128_buffsize_bytes", &NcclBufferSizes::ll128_bytes}};
  for (const auto& [key, member] : buffer_keys)
    if (gpu.has(key))
      nccl_buffers.*member = gpu.integer(key, static_cast<int>(kMinNcclBufferBytes), static_cast<int>(kMaxNcclBufferBytes));
  // NCCL_P2P_LL_THRESHOLD: 0 sends every P2P message by Simple; the bound is ccsim's sanity limit.
  int p2p_ll_threshold_bytes = kDefaultP2pLLThresholdBytes;
  if (gpu.has("nccl_p2p_ll_threshold_bytes"))
    p2p_ll_threshold_bytes = gpu.integer("nccl_p2p_ll_threshold_bytes", 0, kMaxP2pChunkBytes);
  node_out["gpu"] = gpu_out;

  // --- NVLink ---
  bool has_nvlink = false, nvswitch = false, nvls = false, nccl_p2p = true;
  // NCCL_P2P_{NVL,PCI,NET}_CHUNKSIZE, given per transport in the description; absent: NCCL's defaults.
  P2pChunkSizes p2p_chunks;
  int nvl_links = 0, nvl_gen = 0, domain_size = 1;
  double nvl_Bps = 0, nvl_latency_s = 0, nvls_reduce_Bps = 0, nvls_efficiency = 1.0;
  int nvls_chunk_bytes = kDefaultNvlsChunkBytes, nvls_tree_max_chunk_bytes = 0;
  std::vector<NvlinkPeer> nvlink_peers;  // without an NVSwitch: the joined GPU pairs
  if (node.has("nvlink")) {
    json out;
    Obj nv(node.at("nvlink"), "/node/nvlink", source, out);
    const int zero = 0;
    nvl_gen = nv.integer("generation", 0, 9, &zero);
    nvl_links = nv.integer("links_per_gpu", 1, 64);
    // Achievable fraction of the signalling rate (packet headers, flow control): NCCL's own per-link
    // figure for the generation's GPUs over NVIDIA's per-link rate (nccl_hardware_figures.h: 20.0 of
    // 25 GB/s for NVLink2/3, 20.6 of 25 for NVLink4, 40.1 of 50 for NVLink5; NVIDIA's NVLink page:
    // V100 raised the per-direction rate from 20 to 25 GB/s). The A40/A10 bridge (SM86 12.0 of 14.06
    // = 0.85) is NVLink3 at 0.8: within 6%.
    const double nvl_eff_default = nccl_nvlink_efficiency(nvl_gen);
    nvl_Bps = nv.positive("GBps_per_link", kMinGBps, kMaxLinkGBps) * kGB * nvl_links * nv.fraction("efficiency", &nvl_eff_default);
    // One-way GPU-to-GPU through the NVSwitch (each GPU<->switch link gets half). No vendor figure is
    // published. NCCL's own estimate of one NVLink step is hwLat[NVLINK][Ring][LL] = 0.6 us (NCCL
    // 2.30 src/graph/tuning.cc, the table algorithms/nccl_model.cpp copies); 0.5 is within 20% of it.
    // cudaMemcpy-based measurements (p2pBandwidthLatencyTest, "P2P=Enabled Latency": ~1.8-1.9 us on an
    // NVLink pair, NVIDIA/cuda-samples issue #230, 2023) include the copy's issue cost: an upper bound.
    const double lat = 0.5;
    nvl_latency_s = nv.non_negative("latency_us", kMaxLatencyUs, &lat) * kMicro;
    nvswitch = nv.boolean("nvswitch", true);
    nvls = nv.boolean("nvls", false);
    // Without an NVSwitch the GPUs are joined pair by pair (a bridge of 2 GPUs, DGX-1's hybrid
    // cube-mesh, 4 GPUs fully connected): `peers` lists [gpu_a, gpu_b, links] per joined pair; a
    // pair of GPUs needs none (the bridge carries every link of both), nor does one GPU (a GH200
    // node of one superchip, or one of a gh200-quad's: `--set node.nvlink.peers=null`).
    if (nv.has("peers") && nvswitch) nv.fail("peers", "NVLink peers describe GPUs joined without an NVSwitch: needs nvswitch: false");
    if (!nvswitch) {
      if (nv.has("peers")) {
        nvlink_peers = parse_nvlink_peers(nv.at("peers"), gpus, nvl_links, source, nv.path("peers"));
      } else if (gpus == 2) {
        nvlink_peers = {{0, 1, nvl_links}};
      } else if (gpus > 1) {
        nv.fail("nvswitch", "NVLink without NVSwitch needs `peers` ([gpu_a, gpu_b, links] per joined pair) unless the node has "
                            "exactly 2 GPUs (got " + std::to_string(gpus) + ")");
      }
      json peers_out = json::array();
      for (const NvlinkPeer& p : nvlink_peers) peers_out.push_back({p.a, p.b, p.links});
      nv.out()["peers"] = peers_out;
    }
    if (nvls && !nvswitch) nv.fail("nvls", "NVLink SHARP (nvls) requires nvswitch: true");
    // Nodes (hosts: GB200 compute trays) per NVLink domain, i.e. consecutive nodes whose GPUs hang
    // off one NVLink switch fabric (docs/topology.md, "NVLink domains"). The bound: NVIDIA's NVLink
    // Switch System joins at most 576 GPUs in one NVLink domain (GB200 NVL72 product page).
    domain_size = nv.integer("domain_size", 1, kMaxNvlinkDomainGpus, &one);
    if (domain_size > 1 && !nvswitch)
      nv.fail("domain_size", "an NVLink domain of several nodes needs the NVLink switch fabric (nvswitch: true)");
    if (domain_size * gpus > kMaxNvlinkDomainGpus)
      nv.fail("domain_size", std::to_string(domain_size) + " nodes x " + std::to_string(gpus) + " GPUs exceed " +
                                 std::to_string(kMaxNvlinkDomainGpus) + " GPUs, the largest NVLink domain");
    if (nodes % domain_size != 0)
      nv.fail("domain_size", "must divide the node count (got " + std::to_string(domain_size) + " nodes per NVLink domain for " +
                                 std::to_string(nodes) + " nodes; set --nodes to a multiple or domain_size to the nodes per rack the job uses)");
    // false: NCCL_P2P_DISABLE=1. The NVLink hardware stays (nvidia-smi still shows it) but NCCL's
    // P2P transport is off, so intra-node pairs use its SHM transport through host memory
    // (topologies/routing.cpp). Whether NCCL keeps NVLS then is not known to ccsim: refused.
    nccl_p2p = nv.boolean("nccl_p2p", true);
    if (nv.has("p2p_chunk_bytes"))
      p2p_chunks.nvl = nv.integer("p2p_chunk_bytes", kMinP2pChunkBytes, kMaxP2pChunkBytes);
    if (!nccl_p2p && nvls)
      nv.fail("nccl_p2p", "NCCL's P2P transport off with NVLS on is not modelled; set node.nvlink.nvls=false too");
    // The hosts of an NVLink domain share no host memory, so NCCL's SHM transport cannot join them.
    if (!nccl_p2p && domain_size > 1)
      nv.fail("nccl_p2p", "NCCL's P2P transport off across the hosts of an NVLink domain (domain_size " +
                              std::to_string(domain_size) + ") is not modelled: they share no host memory for SHM");
    // The rate at which the switch's reduction units consume operand bytes (all NVSwitch chips of the
    // node together). No public per-chip figure in bytes/s is known to ccsim, so the default is "not
    // limiting": every GPU port delivering operands at its full NVLink rate (docs/nvls.md).
    if (nv.has("nvls_reduce_GBps") && !nvls)
      nv.fail("nvls_reduce_GBps", "a reduction rate needs nvls: true");
    if (nv.has("nvls_efficiency") && !nvls) nv.fail("nvls_efficiency", "an NVLS efficiency needs nvls: true");
    for (const char* key : {"nvls_chunk_bytes", "nvls_tree_max_chunk_bytes"})
      if (nv.has(key) && !nvls) nv.fail(key, "an NVLS chunk size needs nvls: true");
    if (nv.has("nvls_channels") && !nvls) nv.fail("nvls_channels", "an NVLS channel count needs nvls: true");
    if (nv.has("nvls_channels")) nccl_channels.nvls_channels = nv.integer("nvls_channels", 1, kNcclMaxChannels);
    if (nvls) {
      const double not_limiting = domain_size * gpus * nvl_Bps / kGB;
      nvls_reduce_Bps = nv.positive("nvls_reduce_GBps", kMinGBps, kMaxAggregateGBps, &not_limiting) * kGB;
      // The NVLink data rate multimem operations (ld_reduce, st) reach, as a fraction of ordinary P2P
      // traffic's: NCCL 2.30's nvlsEfficiency, 0.85 on Hopper and 0.74 on Blackwell (sm100 and up).
      const double by_arch = nccl_nvls_efficiency(compcap_from_arch(gpu_arch));
      nvls_efficiency = nv.fraction("nvls_efficiency", &by_arch);
      // NCCL's NVLS chunk per channel and head (NCCL_NVLS_CHUNKSIZE, 128 KiB) and NVLSTree's cap on it
      // (NCCL_NVLSTREE_MAX_CHUNKSIZE; 0 here for NCCL's default -2: 64 KiB from 4 nodes on, else
      // none). Both in bytes, at least Simple's 512 B grain (algorithms/nvls.cpp).
      const int chunk_default = kDefaultNvlsChunkBytes, no_cap = 0;
      nvls_chunk_bytes = nv.integer("nvls_chunk_bytes", 512, kMaxNvlsChunkBytes, &chunk_default);
      nvls_tree_max_chunk_bytes = nv.integer("nvls_tree_max_chunk_bytes", 0, kMaxNvlsChunkBytes, &no_cap);
      if (nvls_tree_max_chunk_bytes > 0 && nvls_tree_max_chunk_bytes < 512)
        nv.fail("nvls_tree_max_chunk_bytes", "must be 0 (NCCL's default rule) or at least 512 bytes (Simple's grain)");
    }
    has_nvlink = true;
    node_out["nvlink"] = out;
  } else {
    node_out["nvlink"] = nullptr;
  }

  // --- CPU sockets and host memory ---
  json cpu_out;
  const json empty = json::object();
  Obj cpu(node.has("cpu") ? node.at("cpu") : empty, "/node/cpu", source, cpu_out);
  const int sockets = cpu.integer("sockets", 1, 8, &one);
  const std::string cpu_vendor = cpu.string("vendor", &unknown);
  // The CPUID model (lscpu's "Model", the "modelid" of NCCL's topology dump): NCCL's tuner takes its
  // inter-socket bandwidth from it on Intel (nccl_hardware_figures.h). Not stated: 0, and not recorded,
  // so that descriptions without it resolve as before.
  const int cpu_model_id = cpu.has("model_id") ? cpu.integer("model_id", 1, 255) : 0;
  // The CPUID family (lscpu's "CPU family"): NCCL 2.30.5+ takes AMD's inter-socket bandwidth from it
  // (nccl_hardware_figures.h). Likewise not recorded when not stated.
  const int cpu_family_id = cpu.has("family_id") ? cpu.integer("family_id", 1, 255) : 0;
  // Sources of these four defaults (docs/topology.md, "Sources of the defaults"):
  // inter_socket_GBps 64, per direction: a link rate. One UPI link carries 2 bytes per transfer per
  // direction (10.4 GT/s = 20.8 GB/s), so 64 = two UPI 2.0 links at 16 GT/s (Sapphire Rapids), or
  // three 10.4 GT/s links (Skylake/Cascade Lake Platinum, 62.4). DGX H100's Xeon 8480C has four UPI
  // 2.0 links = 128 (the dgx-h100 preset). What GPU traffic gets across sockets is far less: NCCL's
  // model uses SRP_QPI_BW 22 (Sapphire Rapids), ERP_QPI_BW 40 (Emerald Rapids), AMD 16-32 GB/s
  // (src/graph/topo.h). As a link rate the default agrees; as the rate of GPU P2P across sockets it
  // is 1.6-3x high. The link models the raw rate; NCCL's per-channel figure for it belongs to the
  // tuner's model (nccl_inter_cpu_bw in nccl_hardware_figures.h, by cpu.model_id), not to the
  // engine's links.
  // inter_socket_latency_us 0.3, one way: no public figure found for the link alone; an assumption.
  // Third-party NUMA figures put a UPI hop at ~40-50 ns of extra load latency (not authoritative),
  // so for the bare link 0.3 looks 3-6x high; it may stand for the root complex forwarding a
  // PCIe P2P transaction across sockets as well, which nobody publishes.
  // host_memory_GBps 100, per socket, reads + writes: below today's GPU hosts by 2-3x. Peak of 8
  // channels DDR5-4800 (Sapphire Rapids, DGX H100) = 307.2 GB/s, 12 channels (Genoa) = 460.8; STREAM
  // Triad reaches ~70-85% of peak (Microsoft Learn, Azure HPC STREAM page: HBv3, 2x Milan-X DDR4-3200
  // = 409.6 peak, 330-350 GB/s; HBv4, 2x Genoa-X DDR5-4800 = 921.6 peak, 650-780 GB/s). 100 fits a
  // 2017-19 six-channel DDR4-2666 Xeon (128 GB/s peak x ~0.8). A sourced
  // default would be ~240 (0.78 x 307.2); kept at 100 because every preset sets its own
  // host_memory_GBps and a changed default would move every hand-written description (docs/topology.md).
  // host_memory_latency_us 0.1: idle DRAM latency; AnandTech's EPYC 7742 review (2019) measured
  // ~113-134 ns full-random DRAM latency: agrees (within 25%).
  const double d_is = 64, d_is_lat = 0.3, d_mem = 100, d_mem_lat = 0.1;
  const double inter_Bps = cpu.positive("inter_socket_GBps", kMinGBps, kMaxAggregateGBps, &d_is) * kGB;
  const double inter_lat = cpu.non_negative("inter_socket_latency_us", kMaxLatencyUs, &d_is_lat) * kMicro;
  const double mem_Bps = cpu.positive("host_memory_GBps", kMinGBps, kMaxAggregateGBps, &d_mem) * kGB;
  const double mem_lat = cpu.non_negative("host_memory_latency_us", kMaxLatencyUs, &d_mem_lat) * kMicro;
  // Host CPU time of one NCCL collective's launch, paid once per GPU per iteration by a thread that
  // drives several GPUs (nccl-tests -g N, scenarios/launch_mode.h); its source: kDefaultHostLaunchUs.
  const double d_launch = kDefaultHostLaunchUs;
  const double launch_s = cpu.positive("launch_us", 0.01, kMaxLatencyUs, &d_launch) * kMicro;
  // Per channel of the collective, on top (docs/topology.md): none unless described.
  const double d_launch_per_channel = 0;
  const double launch_per_channel_s =
      cpu.non_negative("launch_us_per_channel", kMaxLatencyUs, &d_launch_per_channel) * kMicro;
  node_out["cpu"] = cpu_out;

  // --- PCIe ---
  bool has_pcie = false;
  int pcie_gen = 0, pcie_lanes = 0, uplink_lanes = 0, sps = 0, levels = 1;
  double pcie_lat = 0, pcie_eff = 1.0;
  std::string p2p = "switch";
  PathClass p2p_level = PathClass::Sys;
  double shm_channel_Bps = 0, shm_two_way = kDefaultShmTwoWayEfficiency, shm_step_s = kDefaultShmStepUs * kMicro;
  auto check_lanes = [](Obj& o, const std::string& key, int v) {
    if (v != 1 && v != 2 && v != 4 && v != 8 && v != 16)
      o.fail(key, "must be 1, 2, 4, 8 or 16 lanes (got " + std::to_string(v) + ")");
  };
  auto check_gen = [](Obj& o, const std::string& key, int v) {
    if (v < 3 || v > 6) o.fail(key, "must be a PCIe generation 3, 4, 5 or 6 (got " + std::to_string(v) + ")");
  };
  if (node.has("pcie")) {
    json out;
    Obj pcie(node.at("pcie"), "/node/pcie", source, out);
    pcie_gen = pcie.integer("generation", -1000, 1000);
    check_gen(pcie, "generation", pcie_gen);
    const int sixteen = 16;
    pcie_lanes = pcie.integer("lanes", -1000, 1000, &sixteen);
    check_lanes(pcie, "lanes", pcie_lanes);
    uplink_lanes = pcie.integer("uplink_lanes", -1000, 1000, &pcie_lanes);
    check_lanes(pcie, "uplink_lanes", uplink_lanes);
    // One way per PCIe link (one switch traversal): Broadcom's PEX88000 (Gen4) is quoted at 105 ns
    // cut-through between two x16 ports, 30% below its Gen3 PEX9700 (~150 ns) (Linley Newsletter,
    // "Broadcom Ships PCIe Gen4 Switches", 2019); PEX89000 (Gen5) ~115 ns (third-party listing).
    // 0.15 us = a switch traversal plus the link's PHYs: agrees.
    const double lat = 0.15;
    pcie_lat = pcie.non_negative("latency_us", kMaxLatencyUs, &lat) * kMicro;
    // TLP/DLLP overhead and DMA efficiency: about 80% of the raw rate is what DMA engines reach
    // (NCCL assumes 12 GB/s for Gen3 x16 = 76%). Measured on Gen5 x16 (raw 63.0 GB/s): H100
    // nvbandwidth host->device 57.1 GB/s (0.91, NVIDIA/nvbandwidth issue #6, 2023), device->host
    // 52.8 GB/s (0.84, issue #24, 2024); Gen4 x16 A6000 peer copies 26.3 of 31.5 (0.84, issue #50).
    // 0.8 is within 12% of these: agrees, on the low side.
    const double pcie_eff_default = 0.8;
    pcie_eff = pcie.fraction("efficiency", &pcie_eff_default);
    const int zero = 0;
    sps = pcie.integer("switches_per_socket", 0, 64, &zero);
    levels = pcie.integer("switch_levels", 1, 2, &one);
    if (levels == 2 && sps == 0)
      pcie.fail("switch_levels", "2 levels of PCIe switches need switches_per_socket >= 1");
    const std::string sw = "switch";
    p2p = pcie.choice("p2p", {"switch", "host", "none"}, &sw);
    // NCCL's default P2P level (src/graph/paths.cc ncclTopoCheckP2p without NCCL_P2P_LEVEL): PATH_SYS,
    // lowered to PATH_PXB on Intel (and Zhaoxin) x86 and on ARM CPUs (Grace: vendor "nvidia"). NCCL's
    // PHB covers nvidia-smi's PHB and NODE.
    const bool pxb_cpu = cpu_vendor == "intel" || cpu_vendor == "zhaoxin" || cpu_vendor == "nvidia" || cpu_vendor == "arm";
    const std::string default_level = pxb_cpu ? "PXB" : "SYS";
    const std::string level = pcie.choice("nccl_p2p_level", {"PIX", "PXB", "PHB", "SYS"}, &default_level);
    nccl_level_from_name(level, &p2p_level);  // one of the four choices above
    // The rate of one channel of NCCL's SHM transport: no public figure (it is the host's PCIe read
    // latency times what a thread block keeps in flight), so absent means "not limiting" and a
    // measured value (ccsim-probe-cuda --tests host_kernel, docs/probes.md) is given here.
    if (pcie.has("shm_channel_GBps")) shm_channel_Bps = pcie.positive("shm_channel_GBps", kMinGBps, kMaxLinkGBps) * kGB;
    shm_two_way = pcie.fraction("shm_two_way_efficiency", &kDefaultShmTwoWayEfficiency);
    shm_step_s = pcie.non_negative("shm_step_us", kMaxLatencyUs, &kDefaultShmStepUs) * kMicro;
    if (pcie.has("p2p_chunk_bytes"))
      p2p_chunks.pci = pcie.integer("p2p_chunk_bytes", kMinP2pChunkBytes, kMaxP2pChunkBytes);
    has_pcie = true;
    node_out["pcie"] = out;
  } else {
    node_out["pcie"] = nullptr;
  }
  if (!nccl_p2p && !has_pcie)
    throw InputError(source + ": /node/nvlink/nccl_p2p",
                     "NCCL's SHM transport goes through host memory over PCIe: describe /node/pcie");

  // --- NICs ---
  int nics = 0, nic_gen = 0, nic_lanes = 0;
  double nic_Bps = 0, nic_lat = 0, nic_gbps = 0;
  Transport transport = Transport::InfiniBand;
  bool gdr = false;
  double message_rate_per_s = 330e6;
  double plugin_latency_us = 0;
  if (node.has("nic")) {
    json out;
    Obj nic(node.at("nic"), "/node/nic", source, out);
    nics = nic.integer("count", 0, 64);
    const double zero = 0;
    nic_gbps = nics > 0 ? nic.positive("Gbps", kMinNicGbps, kMaxNicGbps) : nic.non_negative("Gbps", kMaxNicGbps, &zero);
    // `count` counts network ports, each a device of its own to the verbs library (OCI's BM.GPU.H100.8
    // lists 16 x 200 Gb/s: eight dual-port ConnectX-7 cards). NCCL fuses the ports of one card into one
    // network device of their summed speed (NCCL_IB_MERGE_NICS=1, NCCL_NET_MERGE_LEVEL=PORT by default:
    // src/graph/topo.cc ncclTopoAutoMerge; in use by 2024, NVIDIA/nccl#1422), so its topology search,
    // tuner and channels see `count / ports_per_card` NICs. `fuse_ports` false (NCCL_IB_MERGE_NICS=0)
    // keeps the ports apart.
    const int ports = nic.integer("ports_per_card", 1, 8, &kDefaultNicPortsPerCard);
    if (nic.boolean("fuse_ports", kDefaultFuseNicPorts) && ports > 1) {
      if (nics % ports != 0)
        nic.fail("ports_per_card", std::to_string(ports) + " ports per card do not divide node.nic.count " +
                                       std::to_string(nics));
      nics /= ports;
      nic_gbps *= ports;
    }
    const std::string ib = "ib";
    const TransportInfo& info = *find_transport(nic.choice("transport", transport_names(), &ib));
    transport = info.transport;
    // Defaults per transport, each with its source: topologies/transports.cpp.
    nic_Bps = nic_gbps * kGbit * nic.fraction("efficiency", &info.efficiency);
    gdr = nic.boolean("gpudirect_rdma", info.gpudirect_default);
    if ((gdr && !info.gpudirect_allowed) || (!gdr && !info.host_staging_allowed))
      nic.fail("gpudirect_rdma", std::string(gdr ? "true" : "false") + " does not fit transport " + info.name + ": " +
                                     info.why_not);
    const double lat = default_transport_latency_s(transport) / kMicro;
    nic_lat = nic.non_negative("latency_us", kMaxLatencyUs, &lat) * kMicro;
    plugin_latency_us = nic.non_negative("plugin_latency_us", kMaxLatencyUs, &info.plugin_latency_us);
    // Messages per second one NIC accepts from GPU-initiated puts: ConnectX-7's product brief gives
    // "up to 330-370 million messages per second"; the lower figure (docs/moe.md "Costs"). A vendor
    // peak: what DeepEP's puts reach has no public figure.
    const double rate = 330;
    message_rate_per_s = nic.positive("message_rate_Mps", kMinMessageRateMps, kMaxMessageRateMps, &rate) * 1e6;
    if (nics > 0 && !has_pcie) nic.fail("count", "NICs need a PCIe configuration (/node/pcie is missing)");
    if (nic.has("p2p_chunk_bytes"))
      p2p_chunks.net = nic.integer("p2p_chunk_bytes", kMinP2pChunkBytes, kMaxP2pChunkBytes);
    if (nic.has("nccl_channels_per_net_peer"))
      nccl_channels.channels_per_net_peer = nic.integer("nccl_channels_per_net_peer", 1, kNcclMaxChannels);
    // NICs and GPUs are spread over the PCIe switches in order, and NCCL splits each GPU's closest
    // NICs among the GPUs that share them (topologies/nic_affinity.h). A count that is neither a
    // whole number of NICs per GPU (OCI BM.GPU4.8: 2, AWS p5: 4) nor of GPUs per NIC (AWS p4d: 2)
    // gives GPUs of one node different NIC shares: no PCIe layout of a GPU server looks like that.
    if (nics > 0 && nics % gpus != 0 && gpus % nics != 0)
      nic.fail("count", std::to_string(nics) + " NICs for " + std::to_string(gpus) +
                            " GPUs fit no PCIe layout: the count must be a multiple or a divisor of node.gpu.count");
    if (has_pcie) {
      nic_gen = nic.integer("pcie_generation", -1000, 1000, &pcie_gen);
      check_gen(nic, "pcie_generation", nic_gen);
      nic_lanes = nic.integer("pcie_lanes", -1000, 1000, &pcie_lanes);
      check_lanes(nic, "pcie_lanes", nic_lanes);
    }
    node_out["nic"] = out;
  } else {
    node_out["nic"] = nullptr;
  }
  if (nodes > 1 && nics == 0)
    throw InputError(source + ": /node/nic", "a cluster of " + std::to_string(nodes) +
                                                 " nodes needs NICs, but the GPUs have no NIC to reach other "
                                                 "nodes (set node.nic.count >= 1)");
  resolved["node"] = node_out;

  // --- fabric ---
  json fabric_out;
  Obj fabric(root.has("fabric") ? root.at("fabric") : empty, "/fabric", source, fabric_out);
  const std::string kind = "rail-optimized-fat-tree";
  fabric.choice("kind", {kind}, &kind);
  // 32: a DGX SuperPOD scalable unit of 32 DGX H100 (or B200) nodes, one leaf switch per rail (NVIDIA
  // DGX SuperPOD reference architectures: H100 RA-11333-001, 2023; the B200 RA's table, 2 SUs = 64
  // nodes on 16 leaves). The B300 RA's unit is 64 nodes; DGX A100's was 20 (presets set their own).
  const int d_npl = 32;
  const int npl = fabric.integer("nodes_per_leaf", 1, 1 << 16, &d_npl);
  // switch_latency_us 0.5, one way per leaf<->spine link: one switch traversal, the link's FEC and
  // the cable. NVIDIA publishes no Quantum-2 port-to-port figure in the documents searched (third-
  // party pages say 130-400 ns, inconsistent); Sella, Moore, Zilberman, "FEC Killed the Cut-Through
  // Switch" (NEAT'18, SIGCOMM 2018 workshop) put state-of-the-art switch traversal at ~300 ns and the
  // RS-FEC of >=100G links at ~100 ns per hop; fibre adds 5 ns/m (20-40 m: 0.1-0.2 us). Sum 0.4-0.6
  // us: agrees, but a derivation, not a measurement.
  const double d_over = 1.0, d_sw_lat = 0.5;
  const double oversub = fabric.number("oversubscription", &d_over);
  if (!(oversub >= 1)) fabric.fail("oversubscription", "must be >= 1 (got " + fmt_num(oversub) + ")");
  fabric.at_most("oversubscription", oversub, kMaxOversubscription);
  const double sw_lat = fabric.non_negative("switch_latency_us", kMaxLatencyUs, &d_sw_lat) * kMicro;
  // In-network reduction (InfiniBand SHARP, NCCL's CollNet): every leaf switch gets reduction units.
  // Default rate "not limiting": all its NIC ports delivering operands at full rate (docs/collnet.md).
  const bool sharp = fabric.boolean("sharp", false);
  double sharp_reduce_Bps = 0;
  if (fabric.has("sharp_reduce_GBps") && !sharp) fabric.fail("sharp_reduce_GBps", "a reduction rate needs sharp: true");
  if (sharp) {
    if (nics == 0) fabric.fail("sharp", "in-network reduction needs NICs (node.nic.count >= 1)");
    const double not_limiting = std::min(std::max(1, npl / domain_size), nodes / domain_size) * nic_Bps / kGB;
    sharp_reduce_Bps = fabric.positive("sharp_reduce_GBps", kMinGBps, kMaxAggregateGBps, &not_limiting) * kGB;
  }
  resolved["fabric"] = fabric_out;

  // --- build the graph ---
  Topology topo;
  topo.name = name;
  topo.gpu_model = gpu_model;
  topo.gpu_arch = gpu_arch;
  topo.gpu_c2c = gpu_c2c;
  topo.cpu_vendor = cpu_vendor;
  topo.cpu_model_id = cpu_model_id;
  topo.cpu_family_id = cpu_family_id;
  topo.has_nvswitch = has_nvlink && nvswitch;
  topo.nvls_capable = nvls;
  topo.nvls_efficiency = nvls_efficiency;
  topo.nvls_chunk_bytes = nvls_chunk_bytes;
  topo.nvls_tree_max_chunk_bytes = nvls_tree_max_chunk_bytes;
  topo.nvlinks_per_gpu = nvl_links;
  if (!nvlink_peers.empty()) {
    topo.nvlink_peer_links.assign(static_cast<std::size_t>(gpus) * gpus, 0);
    for (const NvlinkPeer& p : nvlink_peers) {
      topo.nvlink_peer_links[static_cast<std::size_t>(p.a) * gpus + p.b] = p.links;
      topo.nvlink_peer_links[static_cast<std::size_t>(p.b) * gpus + p.a] = p.links;
    }
  }
  topo.pcie_p2p = p2p;
  topo.pcie_p2p_level = p2p_level;
  topo.host_launch_s = launch_s;
  topo.host_launch_per_channel_s = launch_per_channel_s;
  topo.nccl_p2p = nccl_p2p;
  topo.shm_channel_Bps = shm_channel_Bps;
  topo.p2p_channel_Bps = p2p_channel_Bps;
  topo.net_ring_channel_Bps = net_ring_channel_Bps;
  topo.shm_two_way_efficiency = shm_two_way;
  topo.shm_step_s = shm_step_s;
  topo.p2p_chunks = p2p_chunks;
  topo.nccl_channels = nccl_channels;
  topo.nccl_buffers = nccl_buffers;
  topo.p2p_ll_threshold_bytes = p2p_ll_threshold_bytes;
  topo.network.transport = transport;
  topo.network.plugin_latency_us = plugin_latency_us;
  topo.network.gpudirect_rdma = gdr;
  topo.network.message_rate_per_s = message_rate_per_s;
  topo.network.nic_bandwidth_Bps = nic_gbps * kGbit;  // line rate; the links carry nic_Bps (x efficiency)
  topo.spec = resolved;

  const std::string nvl_label = (nvl_gen > 0 ? "NVLink" + std::to_string(nvl_gen) : std::string("NVLink")) + " x" +
                                std::to_string(nvl_links);
  const std::string socket_label = cpu_vendor == "intel" ? "UPI" : cpu_vendor == "amd" ? "xGMI" : "inter-socket";
  auto pcie_label = [](int gen, int lanes) { return "PCIe Gen" + std::to_string(gen) + " x" + std::to_string(lanes); };
  auto gbps_text = [](double g) { return fmt_num(g) + "Gb/s"; };

  // A graph node is one NVLink domain: `domain_size` hosts (trays) whose GPUs share one NVSwitch
  // vertex, each host with its own CPU sockets, host memory, PCIe switches and NICs (no link
  // between hosts but NVLink). With domain_size 1 this is the node template itself. NCCL with
  // MNNVL fuses the topology of every rank of the NVLink domain (clique) into one system and runs
  // its graphs over it, so the algorithms see the domain as the node (docs/topology.md).
  const int switches = sockets * sps;
  const int graph_nodes = nodes / domain_size;
  const int domain_gpus = gpus * domain_size, domain_nics = nics * domain_size;
  for (int n = 0; n < graph_nodes; ++n) {
    const std::string p = "n" + std::to_string(n) + ".";
    auto V = [&](VertexKind k, const std::string& nm, int index) {
      Vertex v;
      v.kind = k;
      v.name = p + nm;
      v.node = n;
      v.index = index;
      return topo.add_vertex(v);
    };
    auto L = [&](VertexId a, VertexId b, LinkKind k, double bw, double lat, const std::string& label,
                 bool shared = false) {
      Link l;
      l.kind = k;
      l.bandwidth_Bps = bw;
      l.latency_s = lat;
      l.shared_duplex = shared;
      l.label = label;
      l.node = n;
      topo.add_link(a, b, l);
    };
    std::vector<VertexId> gpu_v, nic_v, cpu_v, mem_v, sw_v;
    for (int i = 0; i < domain_gpus; ++i) gpu_v.push_back(V(VertexKind::Gpu, "gpu" + std::to_string(i), i));
    VertexId nvsw{};
    if (has_nvlink && nvswitch) nvsw = V(VertexKind::NvSwitch, "nvswitch", 0);
    if (has_pcie)
      for (int k = 0; k < switches * domain_size; ++k) sw_v.push_back(V(VertexKind::PcieSwitch, "pcisw" + std::to_string(k), k));
    for (int s = 0; s < sockets * domain_size; ++s) cpu_v.push_back(V(VertexKind::Cpu, "cpu" + std::to_string(s), s));
    for (int s = 0; s < sockets * domain_size; ++s) mem_v.push_back(V(VertexKind::HostMemory, "mem" + std::to_string(s), s));
    for (int j = 0; j < domain_nics; ++j) nic_v.push_back(V(VertexKind::Nic, "nic" + std::to_string(j), j));

    if (has_nvlink) {
      if (nvswitch) {
        for (int i = 0; i < domain_gpus; ++i) L(gpu_v[i], nvsw, LinkKind::NvLink, nvl_Bps, nvl_latency_s / 2, nvl_label);
        if (nvls) {
          // NVLink SHARP: the switch's reduction units as a vertex behind a link of the reduction rate;
          // the reduction happens inside the switch, so the link adds no latency.
          const VertexId red = V(VertexKind::Reducer, "nvswitch.sharp", 0);
          L(nvsw, red, LinkKind::Reduction, nvls_reduce_Bps, 0.0, "NVLink SHARP reduction");
        }
      } else {
        // A pair's links at the per-link rate (nvl_Bps is all of a GPU's links).
        const std::string gen = nvl_gen > 0 ? "NVLink" + std::to_string(nvl_gen) : std::string("NVLink");
        for (const NvlinkPeer& p : nvlink_peers)
          L(gpu_v[p.a], gpu_v[p.b], LinkKind::NvLink, nvl_Bps * p.links / nvl_links, nvl_latency_s,
            gen + " x" + std::to_string(p.links) + (nvlink_peers.size() == 1 ? " bridge" : ""));
      }
    }
    int next_switch = switches * domain_size;
    for (int h = 0; h < domain_size; ++h) {
      // Host h of the domain: its sockets, switches, GPUs and NICs are entries [h * count, (h+1) * count).
      const int cs = h * sockets, ks = h * switches;
      for (int s = 0; s < sockets; ++s)
        L(cpu_v[cs + s], mem_v[cs + s], LinkKind::Memory, mem_Bps, mem_lat, "host memory", /*shared=*/true);
      for (int s = 0; s < sockets; ++s)
        for (int t = s + 1; t < sockets; ++t)
          L(cpu_v[cs + s], cpu_v[cs + t], LinkKind::InterSocket, inter_Bps, inter_lat, socket_label);
      if (has_pcie) {
        const double up_Bps = pcie_eff * pcie_bandwidth_Bps(pcie_gen, uplink_lanes);
        for (int k = 0; k < switches; ++k)
          L(sw_v[ks + k], cpu_v[cs + k / sps], LinkKind::Pcie, up_Bps, pcie_lat, pcie_label(pcie_gen, uplink_lanes));
        // Device i of `count` hangs off switch i*S/count (or root port of socket i*sockets/count); with
        // two switch levels, behind its own second-level switch.
        auto attach = [&](VertexId dev, int i, int count, int gen, int lanes) {
          VertexId parent = switches > 0 ? sw_v[ks + i * switches / count] : cpu_v[cs + i * sockets / count];
          if (levels == 2) {
            const VertexId sub = V(VertexKind::PcieSwitch, "pcisw" + std::to_string(next_switch), next_switch);
            ++next_switch;
            L(sub, parent, LinkKind::Pcie, pcie_eff * pcie_bandwidth_Bps(pcie_gen, uplink_lanes), pcie_lat,
              pcie_label(pcie_gen, uplink_lanes));
            parent = sub;
          }
          L(dev, parent, LinkKind::Pcie, pcie_eff * pcie_bandwidth_Bps(gen, lanes), pcie_lat, pcie_label(gen, lanes));
        };
        for (int i = 0; i < gpus; ++i) attach(gpu_v[h * gpus + i], i, gpus, pcie_gen, pcie_lanes);
        for (int j = 0; j < nics; ++j) attach(nic_v[h * nics + j], j, nics, nic_gen, nic_lanes);
      }
    }
  }

  // Leaf groups hold whole NVLink domains: fabric.nodes_per_leaf counts nodes (hosts), so a group
  // holds floor(nodes_per_leaf / domain_size) domains, at least one.
  const int domains_per_leaf = std::max(1, npl / domain_size);
  if (nics > 0) {
    const int groups = (graph_nodes + domains_per_leaf - 1) / domains_per_leaf;
    Vertex spine_v;
    spine_v.kind = VertexKind::SpineSwitch;
    spine_v.name = "spine";
    const VertexId spine = topo.add_vertex(spine_v);
    const std::string net_label = gbps_text(nic_gbps) + " " + transport_info(transport).label;
    for (int g = 0; g < groups; ++g) {
      const int in_group = std::min(domains_per_leaf, graph_nodes - g * domains_per_leaf);
      for (int r = 0; r < domain_nics; ++r) {
        Vertex lv;
        lv.kind = VertexKind::LeafSwitch;
        lv.name = "leaf.g" + std::to_string(g) + ".r" + std::to_string(r);
        lv.index = r;
        lv.group = g;
        const VertexId leaf = topo.add_vertex(lv);
        Link up;
        up.kind = LinkKind::Network;
        up.bandwidth_Bps = in_group * nic_Bps / oversub;
        up.latency_s = sw_lat;
        up.label = "leaf-spine " + std::to_string(in_group) + " x " + gbps_text(nic_gbps) + " / " + fmt_num(oversub);
        topo.add_link(leaf, spine, up);
        if (sharp) {
          Vertex rv;
          rv.kind = VertexKind::Reducer;
          rv.name = lv.name + ".sharp";
          rv.index = r;
          rv.group = g;
          const VertexId red = topo.add_vertex(rv);
          Link rl;
          rl.kind = LinkKind::Reduction;
          rl.bandwidth_Bps = sharp_reduce_Bps;
          rl.latency_s = 0;
          rl.label = "SHARP reduction";
          topo.add_link(leaf, red, rl);
        }
        for (int n = g * domains_per_leaf; n < g * domains_per_leaf + in_group; ++n) {
          VertexId nic_vx;
          topo.find_vertex(VertexKind::Nic, n, r, -1, &nic_vx);
          Link l;
          l.kind = LinkKind::Network;
          l.bandwidth_Bps = nic_Bps;
          l.latency_s = nic_lat / 2;
          l.label = net_label;
          l.node = -1;
          topo.add_link(nic_vx, leaf, l);
        }
      }
    }
  }

  try {
    topo.finalize(graph_nodes, domain_gpus, domains_per_leaf);
  } catch (const InputError& e) {
    throw InputError(source + (e.where().empty() ? "" : ": " + e.where()), e.detail());
  }
  NicAffinity affinity = compute_nic_affinities(topo);
  topo.nic_affinity.assign(domain_gpus, -1);
  for (int g = 0; g < domain_gpus; ++g)
    if (!affinity.gpu_nics[g].empty()) topo.nic_affinity[g] = affinity.gpu_nics[g][0];
  topo.gpu_nics = std::move(affinity.gpu_nics);
  topo.nic_gpu = std::move(affinity.nic_gpu);
  return topo;
}

}  // namespace ccsim
