#include "scenarios/nccl_tests_table.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "algorithms/collectives.h"
#include "common/error.h"
#include "common/text.h"

namespace ccsim {
namespace {


std::string wrong_str(long wrong, NcclTestsStyle style) {
  if (style == NcclTestsStyle::Current)
    return wrong < 0 ? std::string("    N/A") : strprintf("  %6g", static_cast<double>(wrong));
  return wrong < 0 ? strprintf("  %5s", "N/A") : strprintf("  %5g", static_cast<double>(wrong));
}

std::string body(double time_us, double algbw, double busbw, long wrong, NcclTestsStyle style) {
  if (style == NcclTestsStyle::Current)
    return strprintf("  %7s  %6s  %6s", format_nccl_number(time_us, 7).c_str(), format_nccl_number(algbw, 6).c_str(),
               format_nccl_number(busbw, 6).c_str()) +
           wrong_str(wrong, style);
  return strprintf("  %7s  %6.2f  %6.2f", format_nccl_time_legacy(time_us).c_str(), algbw, busbw) + wrong_str(wrong, style);
}

}  // namespace

std::string format_nccl_number(double value, int width) {
  // Same digit count as nccl-tests' "for (uint64_t val = 1; value >= val; val *= 10) power++;", capped so
  // that huge or infinite values end (nccl-tests would overflow there; they all take the exponent branch).
  int power = 0;
  double val = 1;
  while (value >= val && power < 24) {
    ++power;
    val *= 10;
  }
  if (power < width - 2) return strprintf("%*.2f", width, value);
  if (power < width - 1) return strprintf("%*.1f", width, value);
  if (power < width + 1) return strprintf("%*.0f", width, value);
  if (width >= 7) return strprintf("%*.1e", width, value);
  return strprintf("%*.0e", width, value);
}

std::string format_nccl_time_legacy(double us) {
  if (us >= 10000.0) return strprintf("%7.0f", us);
  if (us >= 100.0) return strprintf("%7.1f", us);
  return strprintf("%7.2f", us);
}

std::string format_nccl_tests_row(const NcclTestsRow& r, NcclTestsStyle style) {
  std::string root = strprintf("%6i", r.root);
  std::string s = strprintf("%12" PRIu64 "  %12" PRIu64 "  %8s  %6s  %6s", r.size_bytes, r.count, r.type.c_str(),
                      r.redop.c_str(), root.c_str());
  s += body(r.oop_time_us, r.oop_algbw_GBps, r.oop_busbw_GBps, r.oop_wrong, style);
  s += body(r.ip_time_us, r.ip_algbw_GBps, r.ip_busbw_GBps, r.ip_wrong, style);
  return s;
}

std::string format_nccl_tests_column_header(NcclTestsStyle style) {
  std::string s = strprintf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
                      "", "", "", "", "");
  if (style == NcclTestsStyle::Current) {
    s += strprintf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size", "count", "type",
             "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", 0, "");
    s += strprintf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)", "(elements)", "", "",
             "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", 0, "");
  } else {
    s += strprintf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count", "type", "redop",
             "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    s += strprintf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)", "(elements)", "", "", "",
             "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  }
  return s;
}

std::string format_nccl_tests_output(const NcclTestsHeader& h, const std::vector<std::string>& preamble,
                                     const std::vector<NcclTestsRow>& rows) {
  std::string s;
  if (!h.program_name.empty()) s += "# Collective test starting: " + h.program_name + "\n";
  s += strprintf("# nThread %d nGpus %d minBytes %" PRIu64 " maxBytes %" PRIu64
           " step: %s warmup iters: %d iters: %d agg iters: %d validation: %d graph: %d\n",
           h.nthread, h.ngpus, h.min_bytes, h.max_bytes, h.step.c_str(), h.warmup_iters, h.iters, h.agg_iters,
           h.validation, h.graph);
  for (const auto& p : preamble) s += (!p.empty() && p[0] == '#' ? p : "# " + p) + "\n";
  s += "#\n";
  s += format_nccl_tests_column_header(h.style);
  int errors = 0;
  for (NcclTestsRow r : rows) {
    if (h.validation == 0) r.oop_wrong = r.ip_wrong = -1;  // nccl-tests prints "N/A" without -c 1
    s += format_nccl_tests_row(r, h.style) + "\n";
    errors += (r.oop_wrong > 0) + (r.ip_wrong > 0);
  }
  s += strprintf("# %-20s : %d %s\n", "Out of bounds values", errors, errors ? "FAILED" : "OK");
  s += strprintf("# %-20s : %g %s\n", "Avg bus bandwidth", avg_bus_bandwidth(rows), "");
  s += "#\n";
  if (!h.program_name.empty()) s += "# Collective test concluded: " + h.program_name + "\n";
  return s;
}

double avg_bus_bandwidth(const std::vector<NcclTestsRow>& rows) {
  if (rows.empty()) return 0.0;
  double sum = 0;
  for (const auto& r : rows) sum += r.oop_busbw_GBps + r.ip_busbw_GBps;
  return sum / (2.0 * static_cast<double>(rows.size()));
}

double busbw_factor(const std::string& c, int nranks) {
  const CollectiveInfo* info = find_collective(c);
  if (!info || info->busbw == BusbwRule::Unknown) {
    std::string valid;
    for (const auto& k : collectives())
      if (k.busbw != BusbwRule::Unknown) valid += (valid.empty() ? "" : ", ") + std::string(k.name);
    throw InputError("collective", "unknown collective '" + c + "' (valid: " + valid + ")");
  }
  return collective_busbw_factor(*info, nranks);
}

}  // namespace ccsim
