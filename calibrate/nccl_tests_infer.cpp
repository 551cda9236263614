#include "calibrate/nccl_tests_infer.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "algorithms/nccl_types.h"
#include "common/error.h"
#include "common/text.h"

namespace ccsim {
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

// Whether `info`'s count rule fits the count column (with n ranks, 0 when not known). `aligned`: hold
// the per-peer collectives to nccl-tests' rounding of their counts to 16 bytes, which older nccl-tests
// did not do (its alltoall, scatter and gather divided the count by the ranks and no more).
bool count_fits(const CollectiveInfo& info, const CountEvidence& e, int n, bool aligned) {
  if (e.multiple == 0) return true;
  if (info.count_rule == CountRule::Whole) return e.multiple == 1;
  if (aligned && info.count_rule == CountRule::PerPeerAligned16 && !e.aligned16) return false;
  return n > 0 ? e.multiple == static_cast<std::uint64_t>(n) : e.multiple >= 2;
}

}  // namespace

double busbw_ratio(const NcclTestsRun& run) { return measured_ratio(run).value; }

CollectiveInference infer_collective(const NcclTestsRun& run, const std::string& collective_flag, int known,
                                     const std::string& file, const std::string& where) {
  const auto fail = [&](const std::string& what) { throw InputError(file, where + what); };
  CollectiveInference out;
  if (run.rows.empty()) fail("no result rows");
  const NcclTestsRow& first = run.rows.front();
  const Ratio ratio = measured_ratio(run);
  const CountEvidence counts = count_evidence(run);
  const bool redop_known = run.has_redop && !first.redop.empty();
  const bool reduces = run.has_redop ? first.redop != "none" : false;  // old nccl-tests printed redop only for reductions
  const bool rooted = run.has_root ? first.root >= 0 : false;          // ... and root only for rooted ones
  std::vector<std::pair<const CollectiveInfo*, std::vector<int>>> fitting;
  // Current nccl-tests' count rules first; only where none fits, the older rounding (count_fits).
  for (const bool aligned : {true, false}) {
    for (const auto& c : collectives()) {
      if (c.busbw == BusbwRule::Unknown) continue;
      if ((redop_known || !run.has_redop) && c.reduces != reduces) continue;
      if (c.has_root != rooted) continue;
      // Per-rank counts tell n where the device list does not.
      const int from_counts = c.count_rule != CountRule::Whole && counts.multiple >= 2 ? static_cast<int>(counts.multiple) : 0;
      if (!count_fits(c, counts, known, aligned)) continue;
      std::vector<int> n;
      if (ratio.value > 0) {
        n = ranks_fitting(c, ratio, known > 0 ? known : from_counts);
        if (n.empty()) continue;
      } else if (from_counts > 0) {
        n = {from_counts};
      }
      fitting.emplace_back(&c, n);
    }
    if (!fitting.empty()) break;
  }
  {
    std::string cols = run.has_redop ? "redop '" + first.redop + "'" : "no redop column";
    cols += run.has_root ? ", root " + std::to_string(first.root) : ", no root column";
    out.table_evidence = "table: " + cols + (ratio.value > 0 ? ", busbw/algbw " + ratio_text(ratio) : ", no busbw/algbw ratio");
    if (counts.multiple > 0) out.table_evidence += ", size = " + std::to_string(counts.multiple) + " x count x element";
  }
  const std::string& table_evidence = out.table_evidence;
  const auto ranks_of = [&](const CollectiveInfo* c) -> const std::vector<int>* {
    for (const auto& [k, n] : fitting)
      if (k == c) return &n;
    return nullptr;
  };
  const CollectiveInfo* chosen = nullptr;
  if (!collective_flag.empty()) {
    chosen = find_collective_spelled(collective_flag);
    if (!chosen) fail("--collective '" + collective_flag + "' is not an nccl-tests collective");
    out.source = "--collective";
    if (!ranks_of(chosen)) out.notes.push_back("--collective " + std::string(chosen->name) + " does not fit the " + table_evidence);
  } else if (const CollectiveInfo* named = find_collective(run.collective)) {
    chosen = named;
    out.source = "named in the log (test header or echoed command)";
    // A log may name several (a note listing the tests it ran, then the command that ran this one).
    // Where the first does not fit the table, the last one that does wins: the name nearest the table.
    for (auto it = run.named_collectives.rbegin(); it != run.named_collectives.rend(); ++it) {
      const std::string& other = *it;
      const CollectiveInfo* c = find_collective(other);
      if (c && c != named && !ranks_of(named) && ranks_of(c)) {
        out.notes.push_back("the log names " + run.collective + " first, which the " + table_evidence +
                            " does not fit; it also names " + other + ", which it fits");
        chosen = c;
        break;
      }
    }
    if (!ranks_of(chosen)) out.notes.push_back("the log names " + run.collective + " but the " + table_evidence + " does not fit it");
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
    out.source = table_evidence;
  }
  out.collective = chosen;
  const std::vector<int>* n = ranks_of(chosen);
  if (n && n->size() == 1 && n->front() > 0) {
    out.ranks = n->front();
    out.ranks_source = chosen->count_rule != CountRule::Whole && counts.multiple >= 2
                           ? "count column: size = " + std::to_string(counts.multiple) + " x count x element"
                           : "busbw/algbw " + ratio_text(ratio) + " = " +
                                 (chosen->busbw == BusbwRule::AllReduce ? "2(n-1)/n" : "(n-1)/n") + " with n = " +
                                 std::to_string(out.ranks);
  }
  return out;
}

}  // namespace ccsim
