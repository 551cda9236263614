#include "algorithms/tuner.h"

#include <cctype>
#include <sstream>

#include "common/error.h"
#include "common/text.h"

namespace ccsim {

namespace {

bool iequals(const std::string& a, const char* b) {
  std::size_t i = 0;
  for (; i < a.size() && b[i]; ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return i == a.size() && b[i] == 0;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

template <int N, typename E>
void parse_one(const std::string& text, const std::string& var, const std::string& where, const char* kind,
               std::array<std::array<bool, N>, kNumFuncs>& allowed,
               std::array<std::array<bool, N>, kNumFuncs>& requested) {
  if (trim(text).empty()) return;
  auto valid_names = [] {
    std::string v;
    for (int i = 0; i < N; ++i) v += std::string(i ? ", " : "") + to_string(static_cast<E>(i));
    return v;
  };
  const std::string loc = where.empty() ? var : where;
  const auto entries = split(text, ';');
  for (std::size_t k = 0; k < entries.size(); ++k) {
    std::string entry = trim(entries[k]);
    if (entry.empty()) {
      if (entries.size() == 1) return;
      throw InputError(loc, "empty entry in \"" + cut_for_message(text) + "\"");
    }
    std::string prefix, list = entry;
    const auto colon = entry.find(':');
    if (colon != std::string::npos) {
      prefix = trim(entry.substr(0, colon));
      list = trim(entry.substr(colon + 1));
    } else if (k != 0) {
      throw InputError(loc, "all entries except the first must have a function prefix (\"AllReduce:...\") in \"" + cut_for_message(text) + "\"");
    }
    int func = -1;
    if (!prefix.empty()) {
      for (int f = 0; f < kNumFuncs; ++f)
        if (iequals(prefix, to_string(static_cast<Func>(f)))) func = f;
      if (func < 0)
        throw InputError(loc, "unknown function prefix \"" + cut_for_message(prefix) +
                                  "\" (valid: Broadcast, Reduce, AllGather, ReduceScatter, AllReduce)");
    }
    bool exclude = false;
    if (!list.empty() && list[0] == '^') {
      exclude = true;
      list = trim(list.substr(1));
    }
    std::array<bool, N> named{};
    for (const std::string& raw : split(list, ',')) {
      const std::string tok = trim(raw);
      if (tok.empty())
        throw InputError(loc, std::string("empty ") + kind + " name in \"" + cut_for_message(text) + "\" (valid: " + valid_names() + ")");
      int found = -1;
      for (int i = 0; i < N; ++i)
        if (iequals(tok, to_string(static_cast<E>(i)))) found = i;
      if (found < 0)
        throw InputError(loc, std::string("unknown ") + kind + " \"" + cut_for_message(tok) + "\"" +
                                  (tok == trim(text) ? "" : " in \"" + cut_for_message(text) + "\"") + " (valid: " + valid_names() +
                                  "; \"^\" prefix excludes)");
      named[found] = true;
    }
    for (int f = 0; f < kNumFuncs; ++f) {
      if (func >= 0 && f != func) continue;
      for (int i = 0; i < N; ++i) {
        allowed[f][i] = exclude ? !named[i] : named[i];
        requested[f][i] = !exclude && named[i];
      }
    }
  }
}

}  // namespace

AlgoProtoFilter::AlgoProtoFilter() {
  for (auto& r : algo) r.fill(true);
  for (auto& r : proto) r.fill(true);
  for (auto& r : algo_requested) r.fill(false);
  for (auto& r : proto_requested) r.fill(false);
}

bool AlgoProtoFilter::allows(Func f, Algo a, Proto p) const {
  return algo[static_cast<int>(f)][static_cast<int>(a)] && proto[static_cast<int>(f)][static_cast<int>(p)];
}

AlgoProtoFilter parse_algo_filter(const std::string& nccl_algo, const std::string& nccl_proto, const std::string& where) {
  AlgoProtoFilter f;
  f.algo_text = nccl_algo;
  f.proto_text = nccl_proto;
  f.where = where;
  parse_one<kNumAlgos, Algo>(nccl_algo, "NCCL_ALGO", where, "algorithm", f.algo, f.algo_requested);
  parse_one<kNumProtos, Proto>(nccl_proto, "NCCL_PROTO", where, "protocol", f.proto, f.proto_requested);
  return f;
}

TunerChoice choose(const NcclTopoSummary& s, Func f, std::uint64_t bytes, const AlgoProtoFilter& filter,
                   const ReduceOperand& operand) {
  TunerChoice c;
  c.table = nccl_costs(s, f, bytes);
  if (f == Func::AllReduce || f == Func::ReduceScatter) {
    const std::string no_nvls = nvls_reduction_unsupported(operand);
    for (AlgoProtoCost& r : c.table)
      if ((r.algo == Algo::NVLS || r.algo == Algo::NVLSTree) && r.enabled && !no_nvls.empty()) {
        r.enabled = false;
        r.why_disabled = no_nvls;
      }
  }
  const int fi = static_cast<int>(f);
  const std::string where = filter.where.empty() ? "NCCL_ALGO/NCCL_PROTO" : filter.where;

  // A positive request for LL128 where NCCL's default rule disables it: refuse, with the reason.
  if (filter.proto_requested[fi][static_cast<int>(Proto::LL128)]) {
    bool any_other = false;
    for (int p = 0; p < kNumProtos; ++p)
      if (p != static_cast<int>(Proto::LL128) && filter.proto[fi][p]) any_other = true;
    std::string reason;
    for (const auto& r : c.table)
      if (r.proto == Proto::LL128 && r.applicable && filter.algo[fi][static_cast<int>(r.algo)] &&
          r.why_disabled.rfind("LL128", 0) == 0)
        reason = r.why_disabled;
    bool ll128_usable = false;
    for (const auto& r : c.table)
      if (r.proto == Proto::LL128 && r.enabled && filter.algo[fi][static_cast<int>(r.algo)]) ll128_usable = true;
    if (!ll128_usable && !reason.empty() && !any_other)
      throw InputError(where, "LL128 requested but " + reason + " on " + s.name +
                                  " (NCCL would only run it forced, at the risk of silent data corruption)");
  }

  int best = -1;
  for (std::size_t i = 0; i < c.table.size(); ++i) {
    AlgoProtoCost& r = c.table[i];
    if (r.enabled && !filter.allows(f, r.algo, r.proto)) {
      r.enabled = false;
      r.why_disabled = !filter.algo[fi][static_cast<int>(r.algo)] ? "excluded by NCCL_ALGO" : "excluded by NCCL_PROTO";
    }
    if (!r.enabled || r.time_us < 0) continue;
    if (best < 0 || r.time_us < c.table[best].time_us) best = static_cast<int>(i);
  }
  if (best < 0) {
    // Blame NCCL_ALGO/NCCL_PROTO only when the user set one; otherwise the topology left nothing.
    if (s.nranks < 2 && filter.algo_text.empty() && filter.proto_text.empty())
      throw InputError(s.name, std::string(to_string(f)) + " on 1 GPU: a collective needs at least 2 ranks "
                                                           "(raise node.gpu.count or --nodes)");
    std::ostringstream msg;
    msg << "no algorithm/protocol left for " << to_string(f) << " on " << s.name;
    if (!filter.algo_text.empty()) msg << " with NCCL_ALGO=" << filter.algo_text;
    if (!filter.proto_text.empty()) msg << " with NCCL_PROTO=" << filter.proto_text;
    msg << ":";
    bool first = true;
    std::vector<std::string> seen;
    for (const auto& r : c.table) {
      if (!filter.allows(f, r.algo, r.proto)) continue;
      // Explain the candidates the user left in (all of them when there is no filter), once per
      // distinct reason; protocol-specific reasons name the protocol.
      const bool proto_specific = r.why_disabled.rfind("LL128", 0) == 0 || r.why_disabled.rfind("excluded", 0) == 0;
      const std::string key = std::string(to_string(r.algo)) + (proto_specific ? std::string("/") + to_string(r.proto) : "");
      const std::string item = key + ": " + r.why_disabled;
      bool dup = false;
      for (const auto& x : seen) dup = dup || x == item;
      if (dup) continue;
      seen.push_back(item);
      msg << (first ? " " : "; ") << item;
      first = false;
    }
    if (first) msg << " the filter excludes every algorithm/protocol";
    throw InputError(where, msg.str());
  }
  const AlgoProtoCost& b = c.table[best];
  c.algo = b.algo;
  c.proto = b.proto;
  c.time_us = b.time_us;
  c.channels = b.channels;
  c.threads = b.threads;
  return c;
}

}  // namespace ccsim
