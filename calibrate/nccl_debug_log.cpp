#include "calibrate/nccl_debug_log.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>
#include <set>
#include <sstream>
#include <string_view>

#include "common/error.h"
#include "common/input_file.h"
#include "common/line_limit.h"
#include "common/text.h"

namespace ccsim {
namespace {




bool parse_number(const std::string& t, double& v) {
  std::string s = trim(t);
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// NCCL's algorithm ids (nccl_common.h, NCCL >= 2.19) and names as the logs print them.
std::string canonical_algo(const std::string& a) {
  static const char* by_id[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
  if (!a.empty() && std::all_of(a.begin(), a.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    int i = std::atoi(a.c_str());
    return i >= 0 && i < 7 ? by_id[i] : "algo" + a;
  }
  std::string l = lower(a);
  l.erase(std::remove(l.begin(), l.end(), '_'), l.end());
  if (l == "tree") return "Tree";
  if (l == "ring") return "Ring";
  if (l == "collnetdirect") return "CollNetDirect";
  if (l == "collnetchain") return "CollNetChain";
  if (l == "collnet") return "CollNet";
  if (l == "nvls") return "NVLS";
  if (l == "nvlstree") return "NVLSTree";
  if (l == "pat") return "PAT";
  return a;
}

std::string canonical_proto(const std::string& p) {
  if (p == "0") return "LL";
  if (p == "1") return "LL128";
  if (p == "2") return "Simple";
  std::string l = lower(p);
  if (l == "ll") return "LL";
  if (l == "ll128") return "LL128";
  if (l == "simple") return "Simple";
  return p;
}

bool is_collective_label(const std::string& s) {
  static const std::set<std::string> names = {"Broadcast", "Reduce",   "AllGather", "ReduceScatter", "AllReduce",
                                              "AllToAll",  "SendRecv", "Send",      "Recv",          "Gather", "Scatter"};
  return names.count(s) > 0;
}

std::vector<std::string> split_bars(const std::string& msg) {
  std::vector<std::string> cells;
  std::string cur;
  for (char c : msg) {
    if (c == '|') {
      cells.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) cells.push_back(trim(cur));
  return cells;
}

int datatype_size(int dt) {
  // ncclInt8, Uint8, Int32, Uint32, Int64, Uint64, Float16, Float32, Float64, Bfloat16, Float8e4m3, Float8e5m2
  static const int sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return dt >= 0 && dt < 12 ? sizes[dt] : 0;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "Channel 00/32 :    0   1   2 ..." or "Ring 00 : 0 1 2" (trimmed): the channel index as printed and the
// ranks as printed, or false. Hand-written, no std::regex: these lines hold one number per rank (tens of
// KB on large jobs), and std::regex's recursion per character overflowed the stack on them.
bool ring_line(const std::string& tmsg, std::string& channel, std::vector<std::string>& ranks) {
  std::size_t i;
  if (tmsg.rfind("Channel ", 0) == 0) i = 8;
  else if (tmsg.rfind("Ring ", 0) == 0) i = 5;
  else return false;
  const std::size_t colon = tmsg.find(" :", i);
  if (colon == std::string::npos) return false;
  const std::string head = tmsg.substr(i, colon - i);  // "00" or "00/32"
  const std::size_t slash = head.find('/');
  channel = head.substr(0, slash);
  if (!all_digits(channel) || (slash != std::string::npos && !all_digits(head.substr(slash + 1)))) return false;
  const std::string rest = tmsg.substr(colon + 2);
  if (rest.empty() || !std::isspace(static_cast<unsigned char>(rest[0]))) return false;
  ranks = split_ws(rest);
  if (ranks.empty()) return false;
  for (const auto& r : ranks)
    if (!all_digits(r)) return false;
  return true;
}

constexpr std::string_view kLoadedNetPlugin = "Loaded net plugin ";

}  // namespace

NcclDebugInfo parse_nccl_debug_log(std::istream& in, const std::string& filename) {
  auto fail = [&](int line, const std::string& msg) -> void {
    throw InputError(filename, "line " + std::to_string(line) + ": " + msg);
  };
  static const std::regex version_re(R"(NCCL version (\d+\.\d+\.\d+\S*))");
  static const std::regex comm_new_re(R"(comm (0x[0-9a-fA-F]+) rank (\d+) nRanks (\d+) nNodes (\d+) localRanks (\d+) localRank (\d+))");
  static const std::regex comm_old_re(R"(comm (0x[0-9a-fA-F]+) rank (\d+) nranks (\d+) .*Init (START|COMPLETE))");
  static const std::regex comm_id_re(R"(commId (0x[0-9a-fA-F]+))");
  static const std::regex chan_re(R"((\d+) (coll|collnet|nvls|p2p) channels( per peer)?)");
  static const std::regex gdr_hca_re(R"(GPU Direct RDMA (Enabled|Disabled) for (?:GPU \S+ / )?HCA (\d+)(?: '([^']+)')?)");
  static const std::regex via_net_re(R"(via NET/([^/]+)/(\d+)(/GDRDMA)?)");
  static const std::regex ib_using_re(R"(\[(\d+)\]([A-Za-z0-9_.\-]+):(\d+)/(\w+))");
  static const std::regex choice_new_re(R"(^(?:(\w+): )?(\d+) Bytes -> Algo (\S+) proto (\S+)(.*)$)");
  static const std::regex lohi_re(R"(channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\})");
  static const std::regex time_re(R"(\btime (\S+))");
  static const std::regex nch_re(R"(\bnchannels (\d+))");
  static const std::regex opcount_re(R"(^(\w+): opCount \S+ .*\bcount (\d+) datatype (\d+))");
  static const std::regex opcount_algo_re(R"(\balgo (\S+) proto (\S+))");
  static const std::regex tuner_re(R"(Using tuner plugin:?\s*'?([^'\s]+)'?)");
  static const std::regex ofi_re(R"(NET/OFI Initializing (aws-ofi-nccl \S+))");

  NcclDebugInfo info;
  std::set<std::string> comm_ids;
  std::map<int, std::string> nic_by_index;
  std::map<std::string, bool> gdr_conn, gdr_explicit;
  std::map<std::string, std::string> last_coll;  // line prefix (host:pid:tid [dev]) -> collective of its last COLL line
  bool have_channels = false, nvls_avail = false, nvls_unavail = false;
  bool tuning_done = false, in_tuning = false;
  std::vector<std::string> algos, protos;
  std::set<std::tuple<std::string, std::string, std::string>> tuning_keys;
  int nccl_lines = 0;

  std::string raw;
  int ln = 0;
  while (std::getline(in, raw)) {
    ++ln;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (is_provenance(raw)) continue;
    std::smatch m;
    std::size_t mark = raw.find("NCCL INFO");
    if (mark == std::string::npos) {
      if (raw.find("NCCL WARN") != std::string::npos) ++nccl_lines;
      if (raw.find("NCCL version") != std::string::npos && raw.size() > kMaxLineChars) {
        ++nccl_lines;
        if (info.long_lines++ == 0) info.first_long_line = ln;
      } else if (raw.find("NCCL version") != std::string::npos && std::regex_search(raw, m, version_re)) {
        ++nccl_lines;
        if (info.nccl_version.empty()) info.nccl_version = m[1].str();
      }
      continue;
    }
    ++nccl_lines;
    ++info.info_lines;
    const std::string prefix = raw.substr(0, mark);
    std::string msg = raw.substr(mark + 9);
    if (!msg.empty() && msg[0] == ' ') msg.erase(0, 1);
    const std::string tmsg = trim(msg);

    // --- TUNING table ---
    if (msg.find('|') != std::string::npos) {
      auto cells = split_bars(msg);
      const std::string label = cells.empty() ? "" : cells[0];
      if (label == "Algorithm") {
        in_tuning = !tuning_done;
        algos.assign(cells.begin() + 1, cells.end());
        protos.clear();
        continue;
      }
      if (in_tuning && label == "Protocol") {
        protos.clear();
        for (std::size_t i = 1; i < cells.size(); ++i) {
          if (!protos.empty() && cells[i] == protos[0]) break;
          protos.push_back(cells[i]);
        }
        continue;
      }
      if (in_tuning && label == "Max NThreads") continue;
      if (in_tuning && is_collective_label(label)) {
        if (protos.empty()) fail(ln, "TUNING table row '" + label + "' before its 'Protocol' row");
        std::size_t want = algos.size() * protos.size();
        if (cells.size() - 1 != want)
          fail(ln, "TUNING table row '" + label + "' has " + std::to_string(cells.size() - 1) + " cells, expected " +
                       std::to_string(want) + " (" + std::to_string(algos.size()) + " algorithms x " +
                       std::to_string(protos.size()) + " protocols; truncated line?)");
        for (std::size_t i = 0; i < want; ++i) {
          const std::string& c = cells[i + 1];
          std::size_t slash = c.find('/');
          double lat = 0, bw = 0;
          if (slash == std::string::npos || !parse_number(c.substr(0, slash), lat) || !parse_number(c.substr(slash + 1), bw))
            fail(ln, "TUNING table row '" + label + "': expected 'latency/ bandwidth', got '" + c + "'");
          NcclDebugInfo::TuningEntry e{label, canonical_algo(algos[i / protos.size()]), canonical_proto(protos[i % protos.size()]), lat, bw};
          if (tuning_keys.insert({e.collective, e.algorithm, e.protocol}).second) info.tuning.push_back(e);
        }
        continue;
      }
      if (in_tuning && !info.tuning.empty()) {
        in_tuning = false;
        tuning_done = true;
      }
    } else if (in_tuning && !info.tuning.empty()) {
      in_tuning = false;
      tuning_done = true;
    }

    // --- rings (before the long-line cut: one number per rank, long on large jobs) ---
    std::string ring_channel;
    std::vector<std::string> ring_tokens;
    if (ring_line(tmsg, ring_channel, ring_tokens)) {
      if (ring_channel.size() > 4 || std::stoul(ring_channel) > 4096) fail(ln, "channel index " + cut_for_message(ring_channel) + " out of range");
      const std::size_t c = std::stoul(ring_channel);
      if (info.rings.size() <= c) {
        info.rings.resize(c + 1);
        info.ring_ranks.resize(c + 1);
      }
      if (info.rings[c].empty()) {
        std::string text;
        for (const auto& tok : ring_tokens) {
          int r = 0;
          if (!parse_int(tok, r)) fail(ln, "rank " + cut_for_message(tok) + " out of range");
          info.ring_ranks[c].push_back(r);
          if (!text.empty()) text += ' ';
          text += std::to_string(r);
        }
        info.rings[c] = text;
      }
      continue;
    }
    // Every other format is matched with std::regex, which recurses once per character: an over-long
    // line is counted (the caller warns) and not matched.
    if (msg.size() > kMaxLineChars) {
      if (info.long_lines++ == 0) info.first_long_line = ln;
      continue;
    }

    if (info.nccl_version.empty() && std::regex_search(msg, m, version_re)) info.nccl_version = m[1].str();

    // --- communicators ---
    if (std::regex_search(msg, m, comm_id_re)) comm_ids.insert(m[1].str());
    if (std::regex_search(msg, m, comm_new_re)) {
      int nr = std::stoi(m[3].str());
      if (nr > info.nranks || info.nnodes < 0) {
        if (nr >= info.nranks) {
          info.nranks = nr;
          info.nnodes = std::stoi(m[4].str());
          info.local_ranks = std::stoi(m[5].str());
        }
      }
      continue;
    }
    if (std::regex_search(msg, m, comm_old_re)) {
      int nr = std::stoi(m[3].str());
      if (nr > info.nranks) {
        info.nranks = nr;
        info.nnodes = -1;
        info.local_ranks = -1;
      }
      continue;
    }

    // --- channel counts ---
    if (!have_channels && msg.find(" channels") != std::string::npos && msg.find("coll channels") != std::string::npos) {
      for (auto it = std::sregex_iterator(msg.begin(), msg.end(), chan_re); it != std::sregex_iterator(); ++it) {
        int v = std::stoi((*it)[1].str());
        std::string kind = (*it)[2].str();
        bool per_peer = (*it)[3].matched;
        if (kind == "coll") info.coll_channels = v;
        else if (kind == "collnet") info.collnet_channels = v;
        else if (kind == "nvls") info.nvls_channels = v;
        else if (per_peer) info.p2p_channels_per_peer = v;
        else info.p2p_channels = v;
      }
      have_channels = true;
      continue;
    }
    if (msg.find("NVLS multicast support is not available") != std::string::npos) nvls_unavail = true;
    else if (msg.find("NVLS multicast support is available") != std::string::npos) nvls_avail = true;

    // --- trees ---
    if (tmsg.rfind("Trees ", 0) == 0) {
      info.trees.push_back(trim(tmsg.substr(6)));
      continue;
    }
    if (tmsg.rfind("Tree ", 0) == 0 && tmsg.find(" -> ") != std::string::npos) {
      info.trees.push_back(trim(tmsg.substr(5)));
      continue;
    }

    // --- network ---
    if (msg.find("NET/IB : Using") != std::string::npos || msg.find("NET/IB: Using") != std::string::npos) {
      if (info.nics.empty())
        for (auto it = std::sregex_iterator(msg.begin(), msg.end(), ib_using_re); it != std::sregex_iterator(); ++it) {
          nic_by_index[std::stoi((*it)[1].str())] = (*it)[2].str();
          info.nics.push_back((*it)[2].str() + ":" + (*it)[3].str() + "/" + (*it)[4].str());
        }
      continue;
    }
    if (std::regex_search(msg, m, gdr_hca_re)) {
      int idx = std::stoi(m[2].str());
      std::string name = m[3].matched ? m[3].str() : nic_by_index.count(idx) ? nic_by_index[idx] : "HCA " + m[2].str();
      bool on = m[1].str() == "Enabled";
      auto it = gdr_explicit.find(name);
      gdr_explicit[name] = it == gdr_explicit.end() ? on : (it->second || on);
      continue;
    }
    if (msg.find("via NET/") != std::string::npos && std::regex_search(msg, m, via_net_re)) {
      std::string net = m[1].str();
      int dev = std::stoi(m[2].str());
      std::string key = (net == "IB" && nic_by_index.count(dev)) ? nic_by_index[dev] : net + "/" + m[2].str();
      bool on = m[3].matched;
      gdr_conn[key] = gdr_conn.count(key) ? (gdr_conn[key] || on) : on;
      continue;
    }
    if (info.transport.empty() && tmsg.rfind("Using network ", 0) == 0) {
      info.transport = trim(tmsg.substr(14));
      continue;
    }
    if (info.net_plugin.empty() && std::regex_search(msg, m, ofi_re)) {
      info.net_plugin = m[1].str();
      continue;
    }
    // "Loaded net plugin NAME": found and trimmed, not by std::regex "Loaded net plugin (.+?)\s*$",
    // whose lazy group retried the blanks to the line's end from every character: one 4 KB line
    // of blanks took 21 s (found checking every parser's regexes after fuzz_perftest_log's finding).
    if (const auto at = tmsg.find(kLoadedNetPlugin); info.net_plugin.empty() && at != std::string::npos) {
      if (std::string name = trim(tmsg.substr(at + kLoadedNetPlugin.size())); !name.empty()) {
        info.net_plugin = std::move(name);
        continue;
      }
    }
    if (info.tuner_plugin.empty() && std::regex_search(msg, m, tuner_re)) {
      info.tuner_plugin = m[1].str();
      continue;
    }

    // --- algorithm / protocol decisions ---
    if (msg.find("Bytes -> Algo") != std::string::npos) {
      if (!std::regex_match(tmsg, m, choice_new_re))
        fail(ln, "malformed algorithm choice line (expected '[Coll: ]N Bytes -> Algo A proto P ...'): '" + tmsg.substr(0, 80) + "'");
      NcclDebugInfo::Choice c;
      c.collective = m[1].matched ? m[1].str() : (last_coll.count(prefix) ? last_coll[prefix] : "");
      try {
        c.bytes = std::stoull(m[2].str());
      } catch (const std::exception&) {
        fail(ln, "malformed byte count '" + m[2].str() + "'");
      }
      c.algorithm = canonical_algo(m[3].str());
      c.protocol = canonical_proto(m[4].str());
      const std::string rest = m[5].str();
      std::smatch r;
      if (std::regex_search(rest, r, lohi_re)) {
        int lo = std::stoi(r[1].str()), hi = std::stoi(r[2].str());
        if (hi < lo) fail(ln, "channel range {" + r[1].str() + ".." + r[2].str() + "} is empty");
        c.channels = hi - lo + 1;
      } else if (std::regex_search(rest, r, nch_re)) {
        c.channels = std::stoi(r[1].str());
      }
      if (std::regex_search(rest, r, time_re)) {
        double t = 0;
        if (!parse_number(r[1].str(), t)) fail(ln, "malformed time '" + r[1].str() + "'");
        c.time_us = t;
      }
      c.line = ln;
      info.choices.push_back(c);
      continue;
    }
    if (msg.find(" opCount ") != std::string::npos && std::regex_search(tmsg, m, opcount_re)) {
      last_coll[prefix] = m[1].str();
      std::smatch a;
      if (std::regex_search(tmsg, a, opcount_algo_re)) {
        NcclDebugInfo::Choice c;
        c.collective = m[1].str();
        c.bytes = std::stoull(m[2].str()) * static_cast<std::uint64_t>(datatype_size(std::stoi(m[3].str())));
        c.algorithm = canonical_algo(a[1].str());
        c.protocol = canonical_proto(a[2].str());
        std::smatch r;
        if (std::regex_search(tmsg, r, nch_re)) c.channels = std::stoi(r[1].str());
        c.line = ln;
        info.choices.push_back(c);
      }
      continue;
    }
  }

  if (nccl_lines == 0)
    throw InputError(filename, "no NCCL log lines found (expected lines containing 'NCCL INFO'; was NCCL_DEBUG=INFO set?)");
  info.num_comms = static_cast<int>(comm_ids.size());
  if (info.nvls_channels >= 0) info.nvls_enabled = info.nvls_channels > 0;  // what the communicator uses
  else if (nvls_avail) info.nvls_enabled = true;
  else if (nvls_unavail) info.nvls_enabled = false;
  if (info.collnet_channels >= 0) info.collnet_enabled = info.collnet_channels > 0;
  info.gdr_by_nic = gdr_conn;
  for (const auto& [k, v] : gdr_explicit) info.gdr_by_nic[k] = v;
  return info;
}

NcclDebugInfo parse_nccl_debug_file(const std::string& path) {
  std::istringstream f(read_input_file(path, "NCCL debug log"));
  return parse_nccl_debug_log(f, path);
}

}  // namespace ccsim
