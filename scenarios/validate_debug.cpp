#include "scenarios/validate_debug.h"

#include <algorithm>
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
