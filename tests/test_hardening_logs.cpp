// Logs and importers (issue 13): a log cut short calibrated silently to a very different beta,
// impossible times were dropped without a word, out-of-range cells and values ended in exit 1
// with a library exception, and a cut NIC legend was accepted.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "calibrate/fit.h"
#include "hardening_helpers.h"

namespace ccsim {
namespace {

using hardening::ccsim;
using hardening::expect_input_error;
using hardening::slurp;
using hardening::temp_path;
using hardening::write_temp;

std::string data(const std::string& rel) { return slurp(std::string(CCSIM_SOURCE_DIR) + "/tests/data/" + rel); }

// The first `n` lines of `text`.
std::string first_lines(const std::string& text, int n) {
  std::istringstream in(text);
  std::string out, line;
  for (int i = 0; i < n && std::getline(in, line); ++i) out += line + "\n";
  return out;
}

TEST(HardeningLogs, ATableWithoutItsFooterIsAWarningNamingTheLastRow) {
  const std::string log = data("nccl-tests/a100x8-1node-allreduce.txt");
  const std::string out = temp_path("trunc_cal.json");
  const auto whole = ccsim("calibrate " + write_temp("whole.txt", log) + " -o " + out);
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_EQ(whole.err, "");
  // Cut after line 35 (the 128 MiB row): no "# Avg bus bandwidth" footer.
  const std::string cut = write_temp("cut.txt", first_lines(log, 35));
  const auto r = ccsim("calibrate " + cut + " -o " + out);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "ccsim: warning: " + cut +
                       ": the table of line 9 has no 'Avg bus bandwidth' footer (log cut short?); the last row read is "
                       "line 35 (size 134217728 B): beta is fitted without the sizes after it\n");
  std::remove(out.c_str());
}

TEST(HardeningLogs, ImpossibleTimesAreErrorsWithTheLine) {
  std::string log = first_lines(data("nccl-tests/a100x8-1node-allreduce.txt"), 43);
  for (const std::string& bad : {"nan", "-5.0", "inf"}) {
    std::string t = log;
    const std::string row_time = "    103.8   40.40";  // line 30's out-of-place time
    const auto at = t.find(row_time);
    ASSERT_NE(at, std::string::npos);
    t.replace(at, row_time.size(), "    " + bad + "   40.40");
    expect_input_error(ccsim("calibrate " + write_temp("bad_time.txt", t) + " -o " + temp_path("x.json")),
                       {"bad_time.txt: line 30: field 'time' (column 6) is not a measurement: '" + bad + "'"});
  }
}

TEST(HardeningLogs, NvidiaSmiCellsAndLegendsAreChecked) {
  const std::string smi = data("samples/nvsmi_topo_1.txt");
  std::string huge = smi;
  huge.replace(huge.find(" X \tNV18") + 4, 4, "NV99999999999999999999");  // GPU0's row, GPU1's column
  expect_input_error(ccsim("topo --from-nvidia-smi " + write_temp("nv.txt", huge)),
                     {"nv.txt: line 5: row GPU0, column GPU1: unknown connection 'NV99999999999999999999'"});
  // The NIC Legend cut after NIC5.
  const std::string cut = smi.substr(0, smi.find("  NIC6: mlx5_6"));
  expect_input_error(ccsim("topo --from-nvidia-smi " + write_temp("legend.txt", cut)),
                     {"legend.txt", "the NIC Legend ends without naming NIC6 (truncated output?)"});
}

TEST(HardeningLogs, PerftestValuesBeyondAnyNicAreErrors) {
  std::string log = data("samples/perftest_5.txt");
  const std::string row = " 64         10000            1.41               1.41 ";
  const auto at = log.find(row);
  ASSERT_NE(at, std::string::npos);
  log.replace(at, row.size(), " 64         10000            1.41               1e300 ");
  expect_input_error(ccsim("calibrate " + write_temp("pt.txt", log) + " -o " + temp_path("x.json")),
                     {"pt.txt: line", "column 'BW average[Gb/sec]': 1e300 is beyond any NIC"});
}

// calibrate was superlinear in table rows (3k rows 7.9 s, 10k rows 134 s): the efficiency knots'
// greedy removal re-evaluated every point for every knot. This checks the result, not the time
// (bench: `ccsim-bench calibrate-rows`, docs/performance.md): a curve whose efficiency sags between
// two sizes keeps the knots that describe the sag, and a long curve is fitted at all.
TEST(HardeningLogs, EfficiencyKnotsOfALongCurve) {
  std::vector<double> x, t;
  const double a = 20e-6, b = 100e9;
  for (int i = 1; i <= 2000; ++i) {
    const double s = 1024.0 * i * i;
    // 20% below the line between 64 MiB and 256 MiB (log-linear ramp in and out).
    const double l = std::log2(s);
    const double eff = l < 26 ? 1.0 : l < 27 ? 1.0 - 0.2 * (l - 26) : l < 28 ? 0.8 : l < 29 ? 0.8 + 0.2 * (l - 28) : 1.0;
    x.push_back(s);
    t.push_back(a + s / (b * eff));
  }
  const AlphaBetaFit f = fit_alpha_beta(x, t);
  ASSERT_FALSE(f.efficiency.empty());
  bool sag = false;
  for (const auto& [s, e] : f.efficiency) sag = sag || (s >= std::ldexp(1.0, 26) && s <= std::ldexp(1.0, 29) && e < 0.9);
  EXPECT_TRUE(sag);
  EXPECT_LT(f.max_rel_residual_final, 0.02);
}

}  // namespace
}  // namespace ccsim
