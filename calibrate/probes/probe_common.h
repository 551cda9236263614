// Helpers shared by the ccsim hardware probes (docs/probes.md): command-line sizes, statistics, the
// "machine" block (hostname, kernel, NVIDIA driver, RDMA NICs from /sys/class/infiniband) and JSON output.
// Header only, no CUDA: it is included by nvcc- and g++-compiled probes alike.
#pragma once
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <dirent.h>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <sys/utsname.h>
#include <unistd.h>
#include <vector>

#ifndef CCSIM_PROBE_VERSION
#define CCSIM_PROBE_VERSION "1"
#endif

namespace ccsim::probe {

using json = nlohmann::json;

struct ProbeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "8", "64K", "1M", "1G" (binary multiples, like nccl-tests), case-insensitive; optional trailing "B".
inline std::uint64_t parse_size(const std::string& text) {
  if (text.empty()) throw ProbeError("empty size");
  std::size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (...) {
    throw ProbeError("invalid size '" + text + "'");
  }
  std::string unit = text.substr(pos);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  double mult = 1;
  if (unit.empty()) mult = 1;
  else if (unit == "K" || unit == "k") mult = 1024.0;
  else if (unit == "M" || unit == "m") mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "g") mult = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "t") mult = 1024.0 * 1024 * 1024 * 1024;
  else throw ProbeError("invalid size unit in '" + text + "'");
  if (value < 0) throw ProbeError("negative size '" + text + "'");
  return static_cast<std::uint64_t>(std::llround(value * mult));
}

// Geometric sweep min_bytes, min_bytes*factor, ... <= max_bytes (like nccl-tests -b -e -f).
inline std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor) {
  if (min_bytes == 0) min_bytes = 1;
  if (factor <= 1.0) throw ProbeError("size factor (-f) must be > 1");
  if (max_bytes < min_bytes) throw ProbeError("max size (-e) is smaller than min size (-b)");
  std::vector<std::uint64_t> out;
  for (double s = static_cast<double>(min_bytes); s <= static_cast<double>(max_bytes) * (1 + 1e-12); s *= factor) {
    std::uint64_t v = static_cast<std::uint64_t>(std::llround(s));
    if (out.empty() || v != out.back()) out.push_back(v);
  }
  return out;
}

inline std::vector<std::string> split(const std::string& text, char sep = ',') {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

struct Stats {
  double min = 0, median = 0, mean = 0, max = 0, stdev = 0, p99 = 0, p999 = 0;
  std::size_t n = 0;
};

inline double percentile_sorted(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  double idx = q * static_cast<double>(v.size() - 1);
  std::size_t lo = static_cast<std::size_t>(std::floor(idx));
  std::size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = idx - static_cast<double>(lo);
  return v[lo] * (1 - frac) + v[hi] * frac;
}

inline Stats stats_of(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = percentile_sorted(v, 0.5);
  s.p99 = percentile_sorted(v, 0.99);
  s.p999 = percentile_sorted(v, 0.999);
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - s.mean) * (x - s.mean);
  s.stdev = v.size() > 1 ? std::sqrt(var / static_cast<double>(v.size() - 1)) : 0;
  return s;
}

// Rounds to a few significant digits so that the JSON stays readable.
inline double r6(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  double mag = std::pow(10.0, 6 - static_cast<int>(std::ceil(std::log10(std::fabs(x)))));
  return std::round(x * mag) / mag;
}

inline std::string read_text_file(const std::string& path, std::size_t max_bytes = 16u << 20) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string out;
  out.resize(max_bytes);
  in.read(out.data(), static_cast<std::streamsize>(max_bytes));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

inline std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

inline std::string read_sys(const std::string& path) { return trim(read_text_file(path, 4096)); }

inline std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = opendir(path.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

inline std::string utc_timestamp() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// "550.54.15" from /proc/driver/nvidia/version, "" when the NVIDIA kernel driver is not loaded.
inline std::string nvidia_driver_version() {
  std::string text = read_text_file("/proc/driver/nvidia/version", 4096);
  std::size_t k = text.find("Kernel Module");
  if (k == std::string::npos) return "";
  std::istringstream in(text.substr(k + 13));
  std::string tok;
  while (in >> tok)
    if (!tok.empty() && std::isdigit(static_cast<unsigned char>(tok[0])) && tok.find('.') != std::string::npos)
      return tok;
  return "";
}

// RDMA devices from sysfs: name, firmware, node GUID, PCI address, NUMA node, ports (state, rate,
// link layer). Empty when no device is visible (containers without /sys/class/infiniband).
inline json rdma_nics() {
  json nics = json::array();
  const std::string base = "/sys/class/infiniband/";
  for (const std::string& name : list_dir(base)) {
    json nic = {{"name", name}};
    nic["fw_ver"] = read_sys(base + name + "/fw_ver");
    nic["node_guid"] = read_sys(base + name + "/node_guid");
    nic["hca_type"] = read_sys(base + name + "/hca_type");
    nic["board_id"] = read_sys(base + name + "/board_id");
    char link[512] = {0};
    ssize_t n = readlink((base + name + "/device").c_str(), link, sizeof(link) - 1);
    if (n > 0) {
      std::string l(link, static_cast<std::size_t>(n));
      nic["pci_bus_id"] = l.substr(l.find_last_of('/') + 1);
    }
    std::string numa = read_sys(base + name + "/device/numa_node");
    if (!numa.empty()) nic["numa_node"] = std::atoi(numa.c_str());
    nic["netdevs"] = list_dir(base + name + "/device/net");
    json ports = json::array();
    for (const std::string& p : list_dir(base + name + "/ports")) {
      std::string pb = base + name + "/ports/" + p + "/";
      ports.push_back({{"port", std::atoi(p.c_str())},
                       {"state", read_sys(pb + "state")},
                       {"phys_state", read_sys(pb + "phys_state")},
                       {"rate", read_sys(pb + "rate")},
                       {"link_layer", read_sys(pb + "link_layer")}});
    }
    nic["ports"] = ports;
    // The first port's rate at top level, for convenience ("400 Gb/sec (4X NDR)").
    if (!ports.empty()) nic["rate"] = ports[0]["rate"];
    nics.push_back(nic);
  }
  return nics;
}

// The machine block without GPU facts (the CUDA probes add "gpus", "p2p", runtime versions).
inline json machine_base() {
  json m;
  m["hostname"] = hostname();
  utsname u{};
  if (uname(&u) == 0) m["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  m["cpu_count"] = sysconf(_SC_NPROCESSORS_ONLN);
  std::string cpuinfo = read_text_file("/proc/cpuinfo", 1 << 16);
  std::size_t mp = cpuinfo.find("model name");
  if (mp != std::string::npos) {
    std::size_t c = cpuinfo.find(':', mp), e = cpuinfo.find('\n', mp);
    if (c != std::string::npos && e != std::string::npos) m["cpu_model"] = trim(cpuinfo.substr(c + 1, e - c - 1));
  }
  std::string drv = nvidia_driver_version();
  m["driver_version"] = drv.empty() ? json(nullptr) : json(drv);
  m["cuda_driver_version"] = nullptr;
  m["cuda_runtime_version"] = nullptr;
  m["nccl_version"] = nullptr;
  m["gpus"] = json::array();
  m["nics"] = rdma_nics();
  return m;
}

// The document every probe writes: {"probe", "ccsim_probe_version", "created", "command_line",
// "machine", "parameters", "samples", "errors"}.
inline json new_document(const std::string& probe, int argc, char** argv) {
  json doc;
  doc["probe"] = probe;
  doc["ccsim_probe_version"] = CCSIM_PROBE_VERSION;
  doc["created"] = utc_timestamp();
  json cmd = json::array();
  for (int i = 0; i < argc; ++i) cmd.push_back(argv[i]);
  doc["command_line"] = cmd;
  doc["machine"] = machine_base();
  doc["parameters"] = json::object();
  doc["samples"] = json::array();
  doc["errors"] = json::array();
  return doc;
}

inline void add_error(json& doc, const std::string& test, const std::string& message, json extra = json::object()) {
  json e = extra.is_object() ? extra : json::object();
  e["test"] = test;
  e["message"] = message;
  doc["errors"].push_back(e);
}

// Writes the document to `path` ("" or "-" = stdout). Returns false (and says why on stderr) on failure.
inline bool write_document(const json& doc, const std::string& path) {
  std::string text = doc.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return true;
  }
  // Written beside the target and renamed into place, so a failed run leaves no half-written file.
  const std::string tmp = path + ".tmp-ccsim";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) {
      std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
      return false;
    }
    out << text;
    if (!out.flush()) {
      std::remove(tmp.c_str());
      std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

inline double now_us() {
  using namespace std::chrono;
  return static_cast<double>(duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count()) / 1e3;
}

// The shared tail of a probe's main(): runs the measurement, records a fatal error in the document
// instead of losing it, stamps the elapsed time and writes the document.
template <class Measure>
int run_probe(const char* program, json& doc, const std::string& output, Measure&& measure) {
  int rc = 0;
  const double t0 = now_us();
  try {
    rc = measure();
  } catch (const std::exception& e) {
    add_error(doc, "fatal", e.what());
    rc = 1;
  }
  doc["elapsed_s"] = r6((now_us() - t0) / 1e6);
  if (!write_document(doc, output)) return 1;
  if (rc != 0) std::fprintf(stderr, "%s: failed, see \"errors\" in the output\n", program);
  return rc;
}

// Small argv reader: `next(i)` returns argv[++i] or throws.
struct Args {
  int argc;
  char** argv;
  std::string value(int& i) const {
    if (i + 1 >= argc) throw ProbeError(std::string("option ") + argv[i] + " needs a value");
    return argv[++i];
  }
};

}  // namespace ccsim::probe
