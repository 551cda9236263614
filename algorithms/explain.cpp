#include "algorithms/explain.h"

#include <cstdio>
#include <sstream>

namespace ccsim {

namespace {

std::string f(const char* fmt, double a) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, a);
  return b;
}

std::string graph_line(const char* name, const NcclGraphInfo& g) {
  char b[256];
  std::snprintf(b, sizeof b, "  %-8s %2d ch x %6.2f/%6.2f GB/s (intra/inter), type %s/%s", name, g.nChannels, g.bwIntra,
                g.bwInter, to_string(g.typeIntra), to_string(g.typeInter));
  std::string s = b;
  if (!g.derivation.empty()) s += "  [" + g.derivation + "]";
  return s + "\n";
}

}  // namespace

std::string explain_report(const NcclTopoSummary& s, Func fn, std::uint64_t bytes, const AlgoProtoFilter& filter,
                           const ReduceOperand& operand) {
  const TunerChoice choice = choose(s, fn, bytes, filter, operand);
  std::ostringstream o;
  o << "NCCL tuning model: " << s.nccl_version.label() << " constants (src/graph/tuning.cc, enqueue.cc), as ccsim restates them\n";
  if (s.nccl_version.tuner != default_nccl_version().tuner)
    o << "  (tuner constants of NCCL " << s.nccl_version.range() << ": " << s.nccl_version.tuner->source
      << "; topology search and channel counts as NCCL 2.30's)\n";
  o << "Topology: " << s.name << ", " << s.nnodes << " node(s) x " << s.ppn << " GPU(s) = " << s.nranks << " ranks, sm"
    << s.compCap << " (" << to_string(s.arch) << "), CPU " << (s.cpu_vendor.empty() ? "unknown" : s.cpu_vendor)
    << ", NVLS " << (s.nvls ? "yes" : "no") << ", CollNet " << (s.collnet ? "yes" : "no") << "\n";
  o << "Graphs (per-channel bandwidths as NCCL's topology search would find them; ccsim estimate):\n";
  o << graph_line("Ring", s.ring) << graph_line("Tree", s.tree);
  if (s.nvls_graph.nChannels > 0) o << graph_line("NVLS", s.nvls_graph);
  if (s.collnet) o << graph_line("CollNet", s.collnet_graph);
  o << "  " << s.coll_channels << " coll channels, " << s.nvls_channels << " nvls channels\n";
  for (const auto& n : s.notes) o << "  note: " << n << "\n";

  // NCCL's Latency/AlgBw table, 3 algorithms per block like NCCL 2.30.
  o << "\nLatency (us) / AlgBw (GB/s), 0/0 = not computed or disabled by default:\n";
  for (int block = 0; block < (kNumAlgos + 2) / 3; ++block) {
    char line[1024];
    int off = std::snprintf(line, sizeof line, "  Algorithm   |");
    for (int ba = 0; ba < 3; ++ba) {
      const int a = block * 3 + ba;
      if (a >= kNumAlgos) continue;
      off += std::snprintf(line + off, sizeof line - off, " %14s   %14s   %14s |", "", to_string(static_cast<Algo>(a)), "");
    }
    o << line << "\n";
    off = std::snprintf(line, sizeof line, "  Protocol    |");
    for (int ba = 0; ba < 3; ++ba) {
      if (block * 3 + ba >= kNumAlgos) continue;
      for (int p = 0; p < kNumProtos; ++p)
        off += std::snprintf(line + off, sizeof line - off, " %14s |", to_string(static_cast<Proto>(p)));
    }
    o << line << "\n";
    for (int c = 0; c < kNumFuncs; ++c) {
      const auto rows = nccl_costs(s, static_cast<Func>(c), bytes);
      off = std::snprintf(line, sizeof line, " %13s |", to_string(static_cast<Func>(c)));
      for (int ba = 0; ba < 3; ++ba) {
        const int a = block * 3 + ba;
        if (a >= kNumAlgos) continue;
        for (int p = 0; p < kNumProtos; ++p) {
          const auto& r = rows[cost_index(static_cast<Algo>(a), static_cast<Proto>(p))];
          const bool shown = r.enabled;
          off += std::snprintf(line + off, sizeof line - off, "%8.1f/%6.1f |", shown ? r.latency_us : 0.0,
                               shown ? r.bw_GBps : 0.0);
        }
      }
      o << line << "\n";
    }
  }

  // Enabled mask for the function asked about (defaults narrowed by the filter).
  o << "\nEnabled (" << to_string(fn) << "), after NCCL_ALGO=" << (filter.algo_text.empty() ? "(unset)" : filter.algo_text)
    << " NCCL_PROTO=" << (filter.proto_text.empty() ? "(unset)" : filter.proto_text) << ":\n";
  {
    char line[256];
    std::snprintf(line, sizeof line, "  %-14s %4s %6s %7s\n", "Algorithm", "LL", "LL128", "Simple");
    o << line;
    for (int a = 0; a < kNumAlgos; ++a) {
      std::snprintf(line, sizeof line, "  %-14s %4d %6d %7d\n", to_string(static_cast<Algo>(a)),
                    choice.table[cost_index(static_cast<Algo>(a), Proto::LL)].enabled ? 1 : 0,
                    choice.table[cost_index(static_cast<Algo>(a), Proto::LL128)].enabled ? 1 : 0,
                    choice.table[cost_index(static_cast<Algo>(a), Proto::Simple)].enabled ? 1 : 0);
      o << line;
    }
  }

  o << "\nPrediction for " << to_string(fn) << ", nBytes = " << bytes << " (max(send, recv) bytes per rank):\n";
  {
    char line[512];
    std::snprintf(line, sizeof line, "  %-14s %-7s %10s %10s %12s %4s %5s  %s\n", "Algorithm", "Proto", "lat(us)",
                  "algBw", "time(us)", "ch", "thr", "status");
    o << line;
    for (const auto& r : choice.table) {
      if (!r.applicable) continue;
      const bool chosen = r.algo == choice.algo && r.proto == choice.proto;
      const std::string status = chosen ? "<== chosen" : r.enabled ? "" : "disabled: " + r.why_disabled;
      std::snprintf(line, sizeof line, "  %-14s %-7s %10.2f %10.2f %12.2f %4d %5d  %s\n", to_string(r.algo),
                    to_string(r.proto), r.eff_latency_us, r.eff_bw_GBps, r.time_us, r.channels, r.threads,
                    status.c_str());
      o << line;
    }
  }
  o << "  (lat includes the Ring Simple multi-node plateau factor; algBw includes the tree correction factor)\n";
  o << "\nChoice: " << to_string(choice.algo) << "/" << to_string(choice.proto) << ", " << f("%.2f", choice.time_us)
    << " us, " << choice.channels << " channels x " << choice.threads << " threads (" << s.nccl_version.label()
    << " constants)\n";
  return o.str();
}

}  // namespace ccsim
