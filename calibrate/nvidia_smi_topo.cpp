#include "calibrate/nvidia_smi_topo.h"

#include <algorithm>
#include <filesystem>
#include <cctype>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/error.h"
#include "common/input_file.h"
#include "common/line_limit.h"
#include "common/text.h"

namespace ccsim {
namespace {




// Hand-written matchers, no std::regex: its recursion per character overflowed the stack on long
// fields (a 40,000-character NIC name, a 20,000-entry CPU affinity list).
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool all_digits(const std::string& t, std::size_t from) {
  if (from >= t.size()) return false;
  for (std::size_t i = from; i < t.size(); ++i)
    if (!is_digit(t[i])) return false;
  return true;
}
bool starts_with(const std::string& t, const char* p) { return t.rfind(p, 0) == 0; }

// "GPU0", "NIC3", and the NIC names older drivers print as column names ("mlx5_0", "bnxt_re1", "irdma0",
// "efa0", "hfi1_0"): a lower-case letter, then [a-z0-9_] with a '_' somewhere, ending in a digit.
bool is_device_name(const std::string& t) {
  if ((starts_with(t, "GPU") || starts_with(t, "NIC")) && all_digits(t, 3)) return true;
  if (starts_with(t, "irdma") && all_digits(t, 5)) return true;
  if (starts_with(t, "efa") && all_digits(t, 3)) return true;
  if (t.size() < 3 || !(t[0] >= 'a' && t[0] <= 'z') || !is_digit(t.back()) || t.find('_') == std::string::npos) return false;
  for (char c : t)
    if (!((c >= 'a' && c <= 'z') || is_digit(c) || c == '_')) return false;
  return true;
}
bool is_gpu(const std::string& d) { return d.rfind("GPU", 0) == 0; }

bool is_cell(const std::string& t) {
  // NV# counts NVLinks between a pair: at most two digits (18 on H100/B200; ccsim allows 64 per GPU).
  static const std::set<std::string> kinds = {"X", "SYS", "SOC", "NODE", "PHB", "PXB", "PIX", "PSB"};
  if (kinds.count(t)) return true;
  return starts_with(t, "NV") && (t.size() == 3 || t.size() == 4) && all_digits(t, 2);
}

int nv_links(const std::string& c) {
  if (c.size() > 2 && c[0] == 'N' && c[1] == 'V' && std::isdigit(static_cast<unsigned char>(c[2]))) return std::stoi(c.substr(2));
  return 0;
}

// "N/A", or "0-55,112-167" (ranges and numbers separated by commas); GPU NUMA ID: one number.
bool valid_affinity(const std::string& column, const std::string& v) {
  if (v == "N/A") return true;
  if (column == "GPU NUMA ID") return all_digits(v, 0);
  std::size_t i = 0;
  auto number = [&]() {
    const std::size_t b = i;
    while (i < v.size() && is_digit(v[i])) ++i;
    return i > b;
  };
  while (true) {
    if (!number()) return false;
    if (i < v.size() && v[i] == '-') {
      ++i;
      if (!number()) return false;
    }
    if (i == v.size()) return true;
    if (v[i++] != ',') return false;
  }
}

// "  NIC0: mlx5_0": the NIC and its name, or false.
bool nic_legend_entry(const std::string& line, std::string& nic, std::string& name) {
  const std::size_t colon = line.find(':');
  if (colon == std::string::npos) return false;
  nic = trim(line.substr(0, colon));
  name = trim(line.substr(colon + 1));
  if (!starts_with(nic, "NIC") || !all_digits(nic, 3) || name.empty()) return false;
  for (char c : name)
    if (std::isspace(static_cast<unsigned char>(c))) return false;
  return true;
}

struct UnionFind {
  std::vector<int> p;
  explicit UnionFind(int n) : p(n) { std::iota(p.begin(), p.end(), 0); }
  int find(int x) { return p[x] == x ? x : p[x] = find(p[x]); }
  void unite(int a, int b) { p[find(a)] = find(b); }
};

}  // namespace

int NvidiaSmiTopo::num_gpus() const {
  return static_cast<int>(std::count_if(devices.begin(), devices.end(), [](const std::string& d) { return is_gpu(d); }));
}
int NvidiaSmiTopo::num_nics() const { return static_cast<int>(devices.size()) - num_gpus(); }
int NvidiaSmiTopo::index_of(const std::string& device) const {
  auto it = std::find(devices.begin(), devices.end(), device);
  return it == devices.end() ? -1 : static_cast<int>(it - devices.begin());
}
const std::string& NvidiaSmiTopo::cell(const std::string& a, const std::string& b) const {
  int i = index_of(a), j = index_of(b);
  if (i < 0 || j < 0) throw std::out_of_range("no device " + (i < 0 ? a : b));
  return matrix.at(i).at(j);
}

NvidiaSmiTopo parse_nvidia_smi_topo(std::istream& in, const std::string& filename) {
  auto fail = [&](int line, const std::string& msg) -> void {
    throw InputError(filename, "line " + std::to_string(line) + ": " + msg);
  };
  NvidiaSmiTopo topo;
  enum class State { BeforeHeader, Matrix, After } state = State::BeforeHeader;
  std::vector<int> row_line;
  std::size_t rows_seen = 0;
  std::string raw;
  int ln = 0;

  auto missing_rows = [&]() {
    std::string m;
    for (std::size_t i = 0; i < topo.devices.size(); ++i)
      if (row_line[i] == 0) m += (m.empty() ? "" : ", ") + topo.devices[i];
    return m;
  };

  while (std::getline(in, raw)) {
    ++ln;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (raw.size() > kMaxLineChars) fail(ln, line_too_long(raw.size()));
    if (is_provenance(raw)) continue;
    std::string t = trim(raw);
    auto toks = split_ws(t);

    if (state == State::BeforeHeader) {
      if (toks.size() < 2 || !is_device_name(toks[0])) continue;
      if (!(is_device_name(toks[1]) || toks[1] == "CPU" || toks[1] == "NUMA")) continue;
      // The column header.
      std::size_t i = 0;
      while (i < toks.size() && is_device_name(toks[i])) {
        if (std::find(topo.devices.begin(), topo.devices.end(), toks[i]) != topo.devices.end())
          fail(ln, "device '" + toks[i] + "' appears twice in the column header");
        topo.devices.push_back(toks[i++]);
      }
      std::string rest;
      for (; i < toks.size(); ++i) rest += (rest.empty() ? "" : " ") + toks[i];
      for (const char* col : {"CPU Affinity", "NUMA Affinity", "GPU NUMA ID"}) {
        std::string c = col;
        if (rest.rfind(c, 0) == 0) {
          topo.affinity_columns.push_back(c);
          rest = trim(rest.substr(c.size()));
        }
      }
      if (!rest.empty()) fail(ln, "unrecognized column '" + rest + "' in the nvidia-smi topo -m header");
      std::size_t n = topo.devices.size();
      topo.matrix.assign(n, std::vector<std::string>(n));
      topo.cpu_affinity.assign(n, "");
      topo.numa_affinity.assign(n, "");
      topo.gpu_numa_id.assign(n, "");
      row_line.assign(n, 0);
      topo.header_line = ln;
      state = State::Matrix;
      continue;
    }

    if (state == State::Matrix) {
      if (toks.empty() || t == "Legend:" || t == "NIC Legend:") {
        if (rows_seen < topo.devices.size())
          fail(ln, "the matrix ends before the rows of " + missing_rows() + " (truncated output?)");
        state = State::After;
        if (t == "Legend:") topo.has_legend = true;
        continue;
      }
      int r = topo.index_of(toks[0]);
      if (r < 0) {
        if (rows_seen < topo.devices.size())
          fail(ln, "expected a matrix row for one of " + missing_rows() + ", got '" + t.substr(0, 60) + "'");
        state = State::After;  // the matrix is complete; fall through to the legend handling below
      } else {
        if (row_line[r] != 0) fail(ln, "second row for " + toks[0] + " (first on line " + std::to_string(row_line[r]) + ")");
        std::size_t n = topo.devices.size();
        if (toks.size() < n + 1)
          fail(ln, "row " + toks[0] + " has " + std::to_string(toks.size() - 1) + " cells, the header has " + std::to_string(n) +
                       " devices (truncated row?)");
        for (std::size_t j = 0; j < n; ++j) {
          const std::string& c = toks[j + 1];
          if (!is_cell(c))
            fail(ln, "row " + toks[0] + ", column " + topo.devices[j] + ": unknown connection '" + c +
                         "' (expected X, NV#, PIX, PXB, PHB, NODE or SYS)");
          if ((j == static_cast<std::size_t>(r)) != (c == "X"))
            fail(ln, "row " + toks[0] + ", column " + topo.devices[j] + ": '" + c + "' " +
                         (c == "X" ? "marks a device other than itself as X" : "on the diagonal (expected X)"));
          topo.matrix[r][j] = c;
        }
        std::size_t extra = toks.size() - 1 - n;
        if (extra > topo.affinity_columns.size())
          fail(ln, "row " + toks[0] + " has " + std::to_string(extra) + " fields after the matrix cells, the header has " +
                       std::to_string(topo.affinity_columns.size()) + " affinity columns");
        for (std::size_t k = 0; k < extra; ++k) {
          const std::string& col = topo.affinity_columns[k];
          const std::string& v = toks[1 + n + k];
          if (!valid_affinity(col, v)) fail(ln, "row " + toks[0] + ": invalid " + col + " '" + v + "'");
          if (col == "CPU Affinity") topo.cpu_affinity[r] = v;
          else if (col == "NUMA Affinity") topo.numa_affinity[r] = v;
          else topo.gpu_numa_id[r] = v;
        }
        row_line[r] = ln;
        ++rows_seen;
        continue;
      }
    }

    // After the matrix: legend sections; anything else is ignored.
    if (t == "Legend:") topo.has_legend = true;
    std::string nic, name;
    if (nic_legend_entry(raw, nic, name)) {
      if (topo.index_of(nic) < 0) fail(ln, "NIC Legend names " + nic + ", which is not in the matrix");
      topo.nic_names[nic] = name;
    }
  }
  if (state == State::BeforeHeader)
    throw InputError(filename, "no nvidia-smi topo -m matrix found (expected a header line 'GPU0 GPU1 ... CPU Affinity')");
  if (rows_seen < topo.devices.size())
    fail(ln, "the matrix ends before the rows of " + missing_rows() + " (truncated output?)");
  // nvidia-smi's NIC Legend names every NIC of the matrix: one that names only some was cut short.
  if (!topo.nic_names.empty())
    for (const auto& d : topo.devices)
      if (!is_gpu(d) && !topo.nic_names.count(d))
        fail(ln, "the NIC Legend ends without naming " + d + " (truncated output?)");
  return topo;
}

NvidiaSmiTopo parse_nvidia_smi_topo_file(const std::string& path) {
  std::istringstream f(read_input_file(path, "nvidia-smi topo -m output"));
  return parse_nvidia_smi_topo(f, path);
}

nlohmann::json node_spec_from_nvidia_smi(const NvidiaSmiTopo& topo, const std::string& source) {
  const int n = static_cast<int>(topo.devices.size());
  std::vector<int> gpus, nics;
  for (int i = 0; i < n; ++i) (is_gpu(topo.devices[i]) ? gpus : nics).push_back(i);
  const int G = static_cast<int>(gpus.size());
  if (G == 0) throw InputError(source, "the nvidia-smi topo -m matrix has no GPU");
  std::vector<std::string> notes, guesses;

  // --- NVLink ---
  nlohmann::json nvlink = nullptr;
  bool all_nv = G >= 2, any_nv = false;
  int min_k = 1 << 30, max_k = 0;
  for (int a : gpus)
    for (int b : gpus) {
      if (a == b) continue;
      int k = nv_links(topo.matrix[a][b]);
      if (k > 0) any_nv = true;
      else all_nv = false;
      if (k > 0) min_k = std::min(min_k, k), max_k = std::max(max_k, k);
    }
  int nvlink_gen = 0;
  int links = 0;
  // GPUs joined pair by pair (no NVSwitch): a 2-GPU bridge, a 4-GPU board whose pairs all show the
  // same NV# (HGX A100 4-GPU: NV4), or only some pairs NVLink (DGX-1's hybrid cube-mesh). An NVSwitch
  // node shows every pair NV# = all of the GPU's links, more than pairs of one GPU's links add up to.
  const bool joined_pairs = any_nv && (!all_nv || G == 2 || (min_k == max_k && min_k * (G - 1) <= 18 && G <= 4));
  if (joined_pairs) {
    nlohmann::json peers = nlohmann::json::array();
    for (int i = 0; i < G; ++i) {
      int per_gpu = 0;
      for (int j = 0; j < G; ++j) {
        if (i == j) continue;
        const int k = nv_links(topo.matrix[gpus[i]][gpus[j]]);
        per_gpu += k;
        if (k > 0 && i < j) peers.push_back({i, j, k});
      }
      links = std::max(links, per_gpu);
    }
    // Generation from a GPU's links: 6 NVLink2 (V100), 12 NVLink3 (A100); 4 on two bridged GPUs is NVLink3 (A100 PCIe, A40).
    if (links == 6) nvlink_gen = 2;
    else if (links == 12 || (G == 2 && links == 4)) nvlink_gen = 3;
    nvlink = {{"generation", nvlink_gen}, {"links_per_gpu", links}, {"GBps_per_link", 25.0}, {"nvswitch", false}, {"nvls", false}};
    if (G > 2) nvlink["peers"] = peers;
    notes.push_back("GPUs joined pair by pair by NVLink (no NVSwitch): node.nvlink.peers lists the NV# pairs, " +
                    std::to_string(links) + " links on the GPU with the most" +
                    (all_nv ? std::string() : "; the other pairs use PCIe (or NVLink through a GPU joined to both)"));
    guesses.push_back("NVLink " + std::string(nvlink_gen ? "generation " + std::to_string(nvlink_gen) + ", " : "") + "25 GB/s per link");
  } else if (all_nv) {
    links = min_k;
    if (min_k != max_k) notes.push_back("GPU pairs have NV" + std::to_string(min_k) + " to NV" + std::to_string(max_k) + "; NV" + std::to_string(min_k) + " used");
    // Guess of the generation from the link count (18: NVLink4, H100/H200 - B200 also shows NV18 with NVLink5;
    // 12: NVLink3, A100; 6: NVLink2, V100 with NVSwitch).
    bool nvls = false;
    if (links == 18) nvlink_gen = 4, nvls = true;
    else if (links == 12) nvlink_gen = 3;
    else if (links == 6) nvlink_gen = 2;
    nvlink = {{"generation", nvlink_gen}, {"links_per_gpu", links}, {"GBps_per_link", 25.0}, {"nvswitch", true}, {"nvls", nvls}};
    guesses.push_back("NVLink " + std::string(nvlink_gen ? "generation " + std::to_string(nvlink_gen) + ", " : "") +
                      "25 GB/s per link" + (nvls ? ", NVLS" : ""));
  }

  // --- sockets: devices on the same NUMA node or joined by a non-SYS PCIe path share a socket ---
  UnionFind uf(n);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const std::string& c = topo.matrix[a][b];
      if (c == "PIX" || c == "PXB" || c == "PHB" || c == "NODE" || c == "PSB") uf.unite(a, b);
      const std::string& na = topo.numa_affinity[a];
      if (!na.empty() && na != "N/A" && na == topo.numa_affinity[b]) uf.unite(a, b);
      // Without a NUMA column the CPU affinity tells the socket: NVLink pairs print NV#, not their
      // PCIe path, so a hybrid cube-mesh's GPUs would otherwise be one group each.
      const std::string& ca = topo.cpu_affinity[a];
      if ((na.empty() || na == "N/A") && !ca.empty() && ca != "N/A" && ca == topo.cpu_affinity[b]) uf.unite(a, b);
    }
  std::set<int> roots;
  for (int i = 0; i < n; ++i) roots.insert(uf.find(i));
  int sockets = static_cast<int>(roots.size());
  if (sockets > 8) {
    notes.push_back(std::to_string(sockets) + " separate device groups found; capped at 8 sockets");
    sockets = 8;
  }

  // --- PCIe switches: groups of GPUs/NICs joined by PIX/PXB that hold a GPU ---
  UnionFind sw(n);
  bool pxb = false, gpu_pair_on_switch = false;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const std::string& c = topo.matrix[a][b];
      if (c == "PIX" || c == "PXB") {
        sw.unite(a, b);
        if (c == "PXB") pxb = true;
        if (is_gpu(topo.devices[a]) && is_gpu(topo.devices[b])) gpu_pair_on_switch = true;
      }
    }
  std::map<int, int> group_size;
  std::set<int> gpu_groups;
  for (int i = 0; i < n; ++i) group_size[sw.find(i)]++;
  for (int g : gpus)
    if (group_size[sw.find(g)] >= 2) gpu_groups.insert(sw.find(g));
  const int switches = static_cast<int>(gpu_groups.size());
  const int per_socket = switches == 0 ? 0 : std::max(1, (switches + sockets / 2) / sockets);
  std::string p2p = gpu_pair_on_switch || all_nv ? "switch" : "host";
  if (!gpu_pair_on_switch && !all_nv && G > 1)
    notes.push_back("no two GPUs share a PCIe switch: p2p 'host' (set node.pcie.p2p=none for GPUs without PCIe P2P, e.g. GeForce)");

  const int pcie_gen = nvlink_gen >= 4 ? 5 : 4;
  guesses.push_back("PCIe Gen" + std::to_string(pcie_gen) + " x16");

  nlohmann::json pcie = {{"generation", pcie_gen}, {"lanes", 16}, {"switches_per_socket", per_socket},
                         {"switch_levels", pxb && per_socket > 0 ? 2 : 1}, {"p2p", p2p}};

  // --- NICs ---
  nlohmann::json nic = nullptr;
  if (!nics.empty()) {
    const double gbps = nvlink_gen >= 4 ? 400 : nvlink_gen == 3 ? 200 : 100;
    nic = {{"count", static_cast<int>(nics.size())}, {"Gbps", gbps}, {"transport", "ib"}};
    guesses.push_back("NIC " + std::to_string(static_cast<int>(gbps)) + " Gb/s InfiniBand");
    std::string names;
    for (int i : nics) {
      auto it = topo.nic_names.find(topo.devices[i]);
      names += (names.empty() ? "" : ", ") + topo.devices[i] + (it != topo.nic_names.end() ? "=" + it->second : "");
    }
    notes.push_back("NICs " + names);
  }
  // GPU <-> NIC pairs on a common switch (the real NIC numbering; ccsim pairs GPU i with NIC i).
  std::string pairs;
  for (int g : gpus)
    for (int k : nics)
      if (topo.matrix[g][k] == "PIX" || topo.matrix[g][k] == "PXB")
        pairs += (pairs.empty() ? "" : ", ") + topo.devices[g] + "-" + topo.devices[k];
  if (!pairs.empty()) notes.push_back("GPU-NIC pairs sharing a PCIe switch: " + pairs);

  std::string desc = "Imported from " + source + " (nvidia-smi topo -m) by ccsim: " + std::to_string(G) + " GPUs, " +
                     std::to_string(nics.size()) + " NICs, " + std::to_string(sockets) + " socket(s), " +
                     std::to_string(switches) + " PCIe switch group(s) with GPUs. Not in the matrix, guessed: GPU model, " +
                     "CPU vendor and bandwidths";
  for (const auto& g : guesses) desc += "; " + g;
  desc += " (override with --set).";
  for (const auto& m : notes) desc += " " + m + ".";

  nlohmann::json node = {{"gpu", {{"model", "unknown"}, {"arch", "unknown"}, {"count", G}}},
                         {"nvlink", nvlink},
                         {"cpu", {{"sockets", sockets}}},
                         {"pcie", pcie},
                         {"nic", nic}};
  return {{"format", "ccsim-topology/1"},
          {"name", "nvidia-smi-" + std::filesystem::path(source).stem().string()},
          {"description", desc},
          {"nodes", 1},
          {"node", node}};
}

}  // namespace ccsim
