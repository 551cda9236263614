#include "scenarios/validate_log.h"

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <set>

#include "algorithms/collectives.h"
#include "common/error.h"
#include "common/text.h"
#include "scenarios/nccl_types.h"

namespace ccsim {

bool parse_device_line(const std::string& text, DeviceLine* out) {
  // nccl-tests >= 2.10: "Rank  0 Group  0 Pid  31706 on host device  0 [0000:b4:00] NAME";
  // older: "Rank  0 Pid 112372 on localhost device  0 [0x00] NAME".
  const auto t = split_ws(text);
  DeviceLine d;
  std::size_t i = 0;
  if (t.size() < 2 || t[0] != "Rank" || !parse_int(t[1], d.rank)) return false;
  for (i = 2; i + 1 < t.size(); ++i) {
    if (t[i] == "Pid") d.pid = t[i + 1];
    else if (t[i] == "on") d.host = t[i + 1];
    else if (t[i] == "device" && parse_int(t[i + 1], d.device)) {
      // The bus id in brackets, then the GPU name.
      std::size_t k = i + 2;
      if (k < t.size() && !t[k].empty() && t[k][0] == '[') ++k;
      for (; k < t.size(); ++k) d.gpu_name += (d.gpu_name.empty() ? "" : " ") + t[k];
      break;
    }
  }
  if (d.host.empty() || d.device < 0) return false;
  *out = d;
  return true;
}

namespace {

// The ratio's relative precision: algbw and busbw print with 2 decimals, so a row with algbw A carries
// up to 0.005 / A of rounding in each.
struct Ratio {
  double value = 0;
  double tolerance = 0;  // relative
};

Ratio measured_ratio(const NcclTestsRun& run) {
  for (double floor_GBps : {10.0, 1.0}) {
    std::vector<double> r;
    for (const auto& row : run.rows) {
      if (row.oop_algbw_GBps >= floor_GBps) r.push_back(row.oop_busbw_GBps / row.oop_algbw_GBps);
      if (row.ip_algbw_GBps >= floor_GBps) r.push_back(row.ip_busbw_GBps / row.ip_algbw_GBps);
    }
    if (r.empty()) continue;
    std::sort(r.begin(), r.end());
    return {r[r.size() / 2], 2 * 0.005 / floor_GBps + 1e-4};
  }
  return {};
}

bool close_to(double a, double b, double rel) { return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)); }

// The rank counts n >= 2 for which `info`'s busbw factor matches the ratio (empty: none; the factor 1
// collectives match any n, reported as {0}).
std::vector<int> ranks_fitting(const CollectiveInfo& info, const Ratio& r, int known_ranks) {
  if (known_ranks > 0) {
    if (close_to(collective_busbw_factor(info, known_ranks), r.value, r.tolerance)) return {known_ranks};
    return {};
  }
  std::vector<int> fits;
  if (info.busbw == BusbwRule::One) {
    if (close_to(1.0, r.value, r.tolerance)) fits.push_back(0);
    return fits;
  }
  for (int n = 2; n <= 1 << 16; ++n) {
    const double f = collective_busbw_factor(info, n);
    if (close_to(f, r.value, r.tolerance)) fits.push_back(n);
    if (f > r.value * (1 + r.tolerance)) break;  // factors grow with n
    if (fits.size() > 3) break;                  // too close together to tell apart
  }
  return fits;
}

std::string ratio_text(const Ratio& r) { return strprintf("%.4f", r.value); }

// What the count column says: size / (count x element size), the same on every row with a count
// (1: the count is the whole buffer; n: per rank or per peer), and whether every count is a multiple
// of 16 bytes' worth of elements (nccl-tests' alltoall / gather / scatter rounding). multiple 0:
// not known (no datatype, no counts, or rows disagreeing).
struct CountEvidence {
  std::uint64_t multiple = 0;
  bool aligned16 = true;
};

CountEvidence count_evidence(const NcclTestsRun& run) {
  CountEvidence e;
  if (!run.has_type || run.rows.empty() || !is_nccl_datatype(run.rows.front().type)) return e;
  const std::uint64_t ts = static_cast<std::uint64_t>(datatype_size(run.rows.front().type));
  const std::uint64_t align = std::max<std::uint64_t>(1, 16 / ts);
  for (const auto& row : run.rows) {
    if (row.count == 0) continue;
    if (row.count % align != 0) e.aligned16 = false;
    const std::uint64_t elements = row.count * ts;
    if (row.size_bytes % elements != 0) return {0, e.aligned16};
    const std::uint64_t m = row.size_bytes / elements;
    if (e.multiple != 0 && e.multiple != m) return {0, e.aligned16};
    e.multiple = m;
  }
  return e;
}

// Whether `info`'s count rule fits the count column (with n ranks, 0 when not known).
bool count_fits(const CollectiveInfo& info, const CountEvidence& e, int n) {
  if (e.multiple == 0) return true;
  if (info.count_rule == CountRule::Whole) return e.multiple == 1;
  if (info.count_rule == CountRule::PerPeerAligned16 && !e.aligned16) return false;
  return n > 0 ? e.multiple == static_cast<std::uint64_t>(n) : e.multiple >= 2;
}

}  // namespace

double busbw_ratio(const NcclTestsRun& run) { return measured_ratio(run).value; }

LogFacts infer_log_facts(const NcclTestsRun& run, const std::string& file, int run_index, const LogOverrides& ov) {
  LogFacts f;
  f.file = file;
  f.run_index = run_index;
  f.nccl_version = run.nccl_version;
  f.nccl_tests_version = run.nccl_tests_version;
  const auto fail = [&](const std::string& what) {
    throw InputError(file, (run_index > 0 ? "run " + std::to_string(run_index + 1) + ": " : std::string()) + what);
  };
  if (run.rows.empty()) fail("no result rows");
  // A log cut at a line boundary: the sweep stops before maxBytes and the closing "Avg bus bandwidth"
  // line is missing (nccl-tests prints it after the last size).
  const std::uint64_t last = run.rows.back().size_bytes;
  if (run.max_bytes > 0 && !run.has_avg_busbw && last < run.max_bytes && run.step.find("factor") != std::string::npos &&
      static_cast<double>(last) * std::atof(run.step.c_str()) <= static_cast<double>(run.max_bytes))
    fail("line " + std::to_string(run.rows.back().line) + ": truncated: the table stops at " + std::to_string(last) +
         " bytes before maxBytes " + std::to_string(run.max_bytes) + " and has no 'Avg bus bandwidth' line");
  const NcclTestsRow& first = run.rows.front();

  // The device list: ranks, processes, hosts.
  std::set<std::string> processes, hosts;
  for (const auto& line : run.devices) {
    DeviceLine d;
    if (!parse_device_line(line, &d)) continue;
    processes.insert(d.host + ":" + d.pid);
    hosts.insert(d.host);
  }
  const int device_ranks = static_cast<int>(run.devices.size());
  f.processes = static_cast<int>(processes.size());
  f.hosts = static_cast<int>(hosts.size());
  f.threads_per_process = run.nthread;

  // Table evidence for the collective.
  const Ratio ratio = measured_ratio(run);
  const CountEvidence counts = count_evidence(run);
  const bool redop_known = run.has_redop && !first.redop.empty();
  const bool reduces = run.has_redop ? first.redop != "none" : false;  // old nccl-tests printed redop only for reductions
  const bool rooted = run.has_root ? first.root >= 0 : false;          // ... and root only for rooted ones
  std::string table_evidence;
  std::vector<std::pair<const CollectiveInfo*, std::vector<int>>> fitting;
  for (const auto& c : collectives()) {
    if (c.busbw == BusbwRule::Unknown) continue;
    if ((redop_known || !run.has_redop) && c.reduces != reduces) continue;
    if (c.has_root != rooted) continue;
    const int known = device_ranks > 0 ? device_ranks : ov.ranks;
    // Per-rank counts tell n where the device list does not.
    const int from_counts = c.count_rule != CountRule::Whole && counts.multiple >= 2 ? static_cast<int>(counts.multiple) : 0;
    if (!count_fits(c, counts, known)) continue;
    std::vector<int> n;
    if (ratio.value > 0) {
      n = ranks_fitting(c, ratio, known > 0 ? known : from_counts);
      if (n.empty()) continue;
    } else if (from_counts > 0) {
      n = {from_counts};
    }
    fitting.emplace_back(&c, n);
  }
  {
    std::string cols = run.has_redop ? "redop '" + first.redop + "'" : "no redop column";
    cols += run.has_root ? ", root " + std::to_string(first.root) : ", no root column";
    table_evidence = "table: " + cols + (ratio.value > 0 ? ", busbw/algbw " + ratio_text(ratio) : ", no busbw/algbw ratio");
    if (counts.multiple > 0) table_evidence += ", size = " + std::to_string(counts.multiple) + " x count x element";
  }

  const CollectiveInfo* chosen = nullptr;
  std::vector<int> chosen_ranks;
  const auto fits = [&](const CollectiveInfo* c) {
    for (const auto& [k, n] : fitting)
      if (k == c) return true;
    return false;
  };
  const auto ranks_of = [&](const CollectiveInfo* c) {
    for (const auto& [k, n] : fitting)
      if (k == c) return n;
    return std::vector<int>{};
  };
  if (!ov.collective.empty()) {
    chosen = find_collective_spelled(ov.collective);
    if (!chosen) fail("--collective '" + ov.collective + "' is not an nccl-tests collective");
    f.collective_source = "--collective";
    if (!fits(chosen)) f.notes.push_back("--collective " + std::string(chosen->name) + " does not fit the " + table_evidence);
  } else if (const CollectiveInfo* named = find_collective(run.collective)) {
    chosen = named;
    f.collective_source = "named in the log (test header or echoed command)";
    if (!fits(chosen)) f.notes.push_back("the log names " + run.collective + " but the " + table_evidence + " does not fit it");
  } else {
    if (fitting.empty())
      fail("cannot tell the collective: no nccl-tests collective fits the " + table_evidence + "; pass --collective");
    if (fitting.size() > 1) {
      std::string names;
      for (const auto& [c, n] : fitting) names += (names.empty() ? "" : ", ") + std::string(c->name);
      fail("cannot tell the collective: " + names + " all fit the " + table_evidence +
           " and the log names none; pass --collective");
    }
    chosen = fitting.front().first;
    f.collective_source = table_evidence;
  }
  chosen_ranks = ranks_of(chosen);
  if (chosen->shape == CollectiveShape::None)
    fail(std::string("ccsim does not predict ") + chosen->name + " (it predicts " + predicted_collective_names() + ")");
  f.collective = chosen->name;

  // Ranks: the device list, else --ranks, else the busbw factor when it tells n.
  if (ov.ranks > 0) {
    f.ranks = ov.ranks;
    f.ranks_source = "--ranks";
    if (device_ranks > 0 && device_ranks != ov.ranks)
      f.notes.push_back("--ranks " + std::to_string(ov.ranks) + " overrides the device list's " + std::to_string(device_ranks));
  } else if (device_ranks > 0) {
    f.ranks = device_ranks;
    f.ranks_source = "device list";
  } else if (chosen_ranks.size() == 1 && chosen_ranks.front() > 0) {
    f.ranks = chosen_ranks.front();
    f.ranks_source = chosen->count_rule != CountRule::Whole && counts.multiple >= 2
                         ? "count column: size = " + std::to_string(counts.multiple) + " x count x element"
                         : "busbw/algbw " + ratio_text(ratio) + " = " +
                               (chosen->busbw == BusbwRule::AllReduce ? "2(n-1)/n" : "(n-1)/n") + " with n = " +
                               std::to_string(f.ranks);
  } else {
    fail("cannot tell the rank count: the log has no device list ('#  Rank  0 Group  0 Pid ...') and " +
         std::string(chosen->busbw == BusbwRule::One ? "busbw = algbw for " + std::string(chosen->name)
                                                     : "busbw/algbw does not single out one n") +
         "; pass --ranks");
  }
  if (f.ranks < 1) fail("rank count must be positive");

  // Processes and GPUs per process: a single process driving several GPUs (-g N, -t N) launches their
  // kernels one after the other.
  const int per_process = std::max(1, run.nthread) * std::max(1, run.ngpus);
  f.gpus_per_process = run.ngpus > 0 ? per_process : (f.processes > 0 ? f.ranks / f.processes : 1);
  f.threads_per_process = std::max(1, run.nthread);
  if (f.processes == 0) f.processes = std::max(1, f.ranks / std::max(1, f.gpus_per_process));
  if (f.hosts == 0 && ov.gpus_per_node > 0 && f.ranks % ov.gpus_per_node == 0) {
    f.notes.push_back("no device list: " + std::to_string(f.ranks) + " ranks taken as " +
                      std::to_string(f.ranks / ov.gpus_per_node) + " node(s) of the topology's " +
                      std::to_string(ov.gpus_per_node) + " GPUs");
  }

  f.datatype = run.has_type && !first.type.empty() ? first.type : "float";
  if (!run.has_type) f.notes.push_back("no type column: float assumed");
  f.op = chosen->reduces ? (run.has_redop && !first.redop.empty() && first.redop != "none" ? first.redop : "sum") : "";
  f.root = chosen->has_root ? std::max(0, first.root) : -1;
  f.has_out_of_place = std::any_of(run.rows.begin(), run.rows.end(), [](const NcclTestsRow& r) { return r.oop_time_us > 0; });
  f.has_in_place = run.has_in_place &&
                   std::any_of(run.rows.begin(), run.rows.end(), [](const NcclTestsRow& r) { return r.ip_time_us > 0; });
  if (!f.has_out_of_place && !f.has_in_place) fail("no row has a time");
  return f;
}

}  // namespace ccsim
