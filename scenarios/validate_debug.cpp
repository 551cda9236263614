#include "scenarios/validate_debug.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "calibrate/nccl_debug_log.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/line_limit.h"
#include "common/text.h"

namespace ccsim {

namespace {

// The digits at `at` of `line` as a count of network devices, -1 when there are none or more than a
// node description holds (node.nic.count is at most 64; p5's 32 EFA cards are the most of any host).
int count_at(const std::string& line, std::size_t at) {
  std::size_t end = at;
  while (end < line.size() && end - at < 5 && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
  const int n = end == at ? -1 : std::stoi(line.substr(at, end - at));
  return n <= 64 ? n : -1;
}

// aws-ofi-nccl's lines about the host (src/platform-aws.cpp, nccl_ofi_net.cpp): the instance, the
// provider and the devices it gives NCCL. True when the line was one of them.
bool read_net_plugin_line(const std::string& line, DebugFacts& d) {
  const std::size_t ofi = line.find("NET/OFI ");
  if (ofi == std::string::npos) return false;
  const std::string msg = line.substr(ofi + 8);
  static const std::string kRunning = "Running on ", kPlatform = " platform", kNicGroup = "NIC group ";
  if (msg.rfind(kRunning, 0) == 0) {
    const std::size_t end = msg.find(kPlatform, kRunning.size());
    if (end != std::string::npos && d.net_platform.empty())
      d.net_platform = cut_for_message(trim(msg.substr(kRunning.size(), end - kRunning.size())));
    return true;
  }
  // "Selected Provider is efa" (1.x), "Selected Provider is efa (found 32 nics)", "Selected provider is
  // efa, fabric is efa (found 1 nics)".
  static const std::string kProvider = "Selected Provider is ";
  if (msg.rfind(kProvider, 0) == 0 || msg.rfind("Selected provider is ", 0) == 0) {
    std::size_t end = kProvider.size();
    while (end < msg.size() && (std::isalnum(static_cast<unsigned char>(msg[end])) || msg[end] == '-' || msg[end] == '_'))
      ++end;
    if (d.net_provider.empty()) d.net_provider = msg.substr(kProvider.size(), end - kProvider.size());
    const std::size_t found = msg.find("(found ");
    if (const int n = found == std::string::npos ? -1 : count_at(msg, found + 7); n > 0 && d.net_nics_found == 0)
      d.net_nics_found = n;
    return true;
  }
  // "Internode latency set at 75.0 us": what the plugin reports to NCCL's tuner (props->latency).
  static const std::string kLatency = "Internode latency set at ";
  if (msg.rfind(kLatency, 0) == 0) {
    const std::string value = msg.substr(kLatency.size(), msg.find(' ', kLatency.size()) - kLatency.size());
    char* end = nullptr;
    const double us = std::strtod(value.c_str(), &end);
    if (end != value.c_str() && *end == '\0' && us > 0 && us <= 10000 && d.net_plugin_latency_us == 0)
      d.net_plugin_latency_us = us;
    return true;
  }
  // "NIC group 7 device #3 0000:c6:00.0": the RDMA protocol's logical device 7 (its rails follow).
  if (msg.rfind(kNicGroup, 0) == 0) {
    if (const int g = count_at(msg, kNicGroup.size()); g >= 0 && g < 64) d.net_nic_groups = std::max(d.net_nic_groups, g + 1);
    return true;
  }
  return false;
}

// The facts of a debug log's text (`path` names it in messages).
DebugFacts debug_facts_from_text(const std::string& text, const std::string& path) {
  std::istringstream for_importer(text);
  const NcclDebugInfo info = parse_nccl_debug_log(for_importer, path);
  if (info.long_lines > 0)
    std::cerr << "ccsim: warning: " << path << ": " << info.long_lines << " line(s) longer than " << kMaxLineChars
              << " characters (the first: line " << info.first_long_line
              << ") not matched against NCCL's message formats (only ring lines are read at any length)\n";

  DebugFacts d;
  d.present = true;
  d.file = path;
  d.channels = std::max(info.coll_channels, 0);
  d.nvls = info.nvls_enabled.value_or(false) || info.nvls_channels > 0;
  d.nics = info.nics;
  d.net_name = cut_for_message(info.transport);
  for (const auto& c : info.choices) {
    if (std::find(d.algorithms.begin(), d.algorithms.end(), c.algorithm) == d.algorithms.end())
      d.algorithms.push_back(c.algorithm);
    const auto same = [&c](const DebugFacts::Choice& k) { return k.collective == c.collective && k.bytes == c.bytes; };
    if (std::none_of(d.choices.begin(), d.choices.end(), same))
      d.choices.push_back({c.collective, c.bytes, c.algorithm, c.protocol});
  }
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("NCCL INFO") == std::string::npos) continue;
    const std::size_t via = line.find(" via ");
    if (via != std::string::npos && line.find("->") != std::string::npos) {
      const std::string transport = line.substr(via + 5);
      if (transport.rfind("P2P", 0) == 0) ++d.p2p_ipc_connections;
      else if (transport.rfind("SHM", 0) == 0) ++d.shm_connections;
      else if (transport.rfind("NET", 0) == 0) {
        if (transport.find("GDRDMA") != std::string::npos) ++d.net_gdr_connections;
        else ++d.net_connections;
      }
      continue;
    }
    // "NCCL INFO TUNER/Plugin: Using nccl_ofi_tuner (v3)", "... Using tuner plugin A3xTunerPlugin_v2"
    // (NCCL's plugin loader); "Using internal tuner plugin." is NCCL's own tuner.
    const std::size_t tuner = line.find("TUNER/Plugin: Using ");
    if (tuner != std::string::npos && line.find("internal tuner plugin") == std::string::npos) {
      std::string name = trim(line.substr(tuner + 20));
      if (name.rfind("tuner plugin ", 0) == 0) name = trim(name.substr(13));
      if (!name.empty() && d.tuner_plugin.empty()) d.tuner_plugin = cut_for_message(name);
      continue;
    }
    if (read_net_plugin_line(line, d)) continue;
    // "NCCL INFO NCCL_ALGO set by environment to Ring"
    const std::size_t env = line.find(" set by environment to ");
    const std::size_t name = line.find("NCCL_", line.find("NCCL INFO") + 9);
    if (env != std::string::npos && name != std::string::npos && name < env) {
      std::string value = trim(line.substr(env + 23));
      if (!value.empty() && value.back() == '.') value.pop_back();  // "NCCL_BUFFSIZE set by environment to 8388608."
      const std::string setting = line.substr(name, env - name) + "=" + value;
      if (std::find(d.env.begin(), d.env.end(), setting) == d.env.end()) d.env.push_back(setting);
    }
  }
  return d;
}

}  // namespace

DebugFacts read_debug_facts(const std::string& path) {
  return debug_facts_from_text(read_input_file(path, "NCCL debug log"), path);
}

std::optional<DebugFacts> debug_facts_in_log(const std::string& path) {
  const std::string text = read_input_file(path, "nccl-tests log");
  if (text.find("NCCL INFO") == std::string::npos) return std::nullopt;
  try {
    DebugFacts d = debug_facts_from_text(text, path);
    d.file = path + " (its own NCCL_DEBUG lines)";
    return d;
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace ccsim
