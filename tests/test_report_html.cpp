// report.html in headless Chromium: the page's self-check (every chart has data marks, draws
// something, no NaN, no JavaScript error) must report ok with as many charts as the page holds; a
// chart without data must make it fail. Screenshots stay under the build directory. Also the
// Chrome trace of `predict --trace` and the straggler experiment.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "report/html_page.h"
#include "scenarios/chosen_schedule.h"
#include "scenarios/straggler.h"
#include "sim/engine.h"
#include "tests/test_helpers.h"
#include "tests/test_run_helpers.h"

namespace ccsim {
namespace {

using namespace run_testing;

std::string chromium_binary() {
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (::access(c, X_OK) == 0) return c;
  return "";
}

// The build directory (next to the ccsim binary), where screenshots are kept.
std::string build_dir() {
  const std::string bin = CCSIM_BINARY;
  return bin.substr(0, bin.find_last_of('/'));
}

// The self-check line Chromium leaves in the DOM after running the page's script.
std::string self_check(const std::string& html_path, const std::string& screenshot, const std::string& dir) {
  const std::string flags = "--headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1100,2400 ";
  const CommandResult dom = shell("timeout 120 " + chromium_binary() + " " + flags + "--dump-dom file://" + html_path, dir);
  if (!screenshot.empty())
    shell("timeout 120 " + chromium_binary() + " " + flags + "--screenshot=" + screenshot + " file://" + html_path, dir);
  std::smatch m;
  if (std::regex_search(dom.out, m, std::regex("ccsim-selfcheck: [^<]*"))) return m.str();
  return "no self-check in the DOM (chromium exit " + std::to_string(dom.code) + "): " + dom.err.substr(0, 300);
}

TEST(ReportHtml, RunReportDrawsEveryChartInChromium) {
  if (chromium_binary().empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium; scripts/setup.sh does)";
  const std::string dir = fresh_dir("html");
  write_text(dir + "/s.json", R"({"format": "ccsim-scenario/1", "name": "html",
      "cluster": {"topology": "dgx-h100", "nodes": 2},
      "workloads": [{"collective": "all_reduce", "sizes": {"min": "1M", "max": "16M", "factor": 4}},
                    {"kind": "straggler", "collective": "all_reduce", "algo": "Ring", "size": "4M", "late_rank": 5, "delay_us": 40}],
      "variants": {"matrix": {"node.nic.Gbps": [200, 400]}}})");
  const CommandResult r = ccsim("run " + dir + "/s.json -o " + dir + "/out -q", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string html = slurp(dir + "/out/report.html");
  // Offline: nothing is fetched.
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));
  EXPECT_EQ(html.find("https://"), std::string::npos);
  // busbw, algorithm grid and link use for the sweep; per-rank bars for each variant's straggler.
  std::size_t charts = 0;
  for (std::size_t at = 0; (at = html.find("<svg class=\"chart\"", at)) != std::string::npos; ++at) ++charts;
  EXPECT_EQ(charts, 3u + 2u);
  EXPECT_EQ(self_check(dir + "/out/report.html", build_dir() + "/report_html_test.png", dir),
            "ccsim-selfcheck: ok charts=" + std::to_string(charts));
  EXPECT_EQ(::access((build_dir() + "/report_html_test.png").c_str(), F_OK), 0);
}

TEST(ReportHtml, ValidateReportDrawsMeasuredAgainstPredictedInChromium) {
  if (chromium_binary().empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium; scripts/setup.sh does)";
  const std::string dir = fresh_dir("validate-html");
  const CommandResult r = ccsim("validate " + std::string(CCSIM_SOURCE_DIR) +
                                    "/tests/data/nccl-tests/a100x8-1node-allreduce.txt --topology hgx-a100 -o " + dir +
                                    "/report.html",
                                dir);
  ASSERT_EQ(r.code, 1) << r.err;  // the latency side is far from the prediction (one process drives 8 GPUs)
  const std::string html = slurp(dir + "/report.html");
  EXPECT_EQ(html.find("https://"), std::string::npos);
  // busbw measured against predicted and the gap per size; the causes and the per-size table as text.
  EXPECT_NE(html.find("[single-process-multi-gpu]"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"l\">OUT</td>"), std::string::npos);
  EXPECT_EQ(self_check(dir + "/report.html", build_dir() + "/validate_html_test.png", dir), "ccsim-selfcheck: ok charts=2");
}

TEST(ReportHtml, SelfCheckFailsOnAnEmptyChart) {
  if (chromium_binary().empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium; scripts/setup.sh does)";
  const std::string dir = fresh_dir("empty");
  ChartModel m;
  m.title = "empty";
  ChartSection s;
  s.title = "no data";
  s.series.push_back({"v", {}, 0});  // a series without points: nothing to draw
  m.sections.push_back(s);
  write_text(dir + "/empty.html", render_report_html(m));
  const std::string check = self_check(dir + "/empty.html", "", dir);
  EXPECT_EQ(check.rfind("ccsim-selfcheck: error: w0-busbw: no data marks", 0), 0u) << check;
}

TEST(PredictTrace, OneProcessPerRankAndPerBusyLinkWithValidEvents) {
  const std::string dir = fresh_dir("trace");
  const CommandResult r =
      ccsim("predict -b 1M -e 1M --nodes 1 --algo Ring --proto Simple --trace " + dir + "/t.json --format csv", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json trace = nlohmann::json::parse(slurp(dir + "/t.json"));
  std::map<int, std::string> process;
  std::set<std::pair<int, int>> threads;
  std::size_t transfers = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") process[e["pid"].get<int>()] = e["args"]["name"].get<std::string>();
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    if (e["ph"] != "X") continue;
    ++transfers;
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    EXPECT_TRUE(process.count(e["pid"].get<int>())) << e.dump();  // metadata first
    EXPECT_TRUE(threads.count({e["pid"].get<int>(), e["tid"].get<int>()})) << e.dump();
  }
  int ranks = 0, links = 0;
  for (const auto& [pid, name] : process) {
    ranks += name.rfind("rank ", 0) == 0;
    links += name.rfind("link ", 0) == 0;
  }
  EXPECT_EQ(ranks, 8);  // one track per rank of the 8-GPU node
  // A ring through the NVSwitch: each GPU's uplink and downlink carry traffic.
  EXPECT_GE(links, 16);
  EXPECT_GT(transfers, 8u);
  // The last event ends at the operation time the trace records.
  double last_end = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") last_end = std::max(last_end, e["ts"].get<double>() + e["dur"].get<double>());
  EXPECT_NEAR(last_end, trace["otherData"]["operation_time_us"].get<double>(), 1e-6);

  // More than one size is an error on --trace.
  const CommandResult bad = ccsim("predict -b 1M -e 2M --nodes 1 --trace " + dir + "/u.json", dir);
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, "ccsim: error: --trace: needs one size (-b equal to -e), got 2\n");
  EXPECT_NE(::access((dir + "/u.json").c_str(), F_OK), 0);
}

TEST(Straggler, EveryRankSlowsAndTheLateRankHasTheShortestCollective) {
  const Topology topo = testing::preset("dgx-h100", 2);
  const int late = 11;
  const double delay_s = 50e-6;
  const ChosenSchedule cs = chosen_schedule(topo, "all_reduce", 16 << 20, parse_algo_filter("Ring", "Simple", "test"), 0, "test");
  EngineOptions eo;
  eo.pipeline_depth = cs.pipeline_depth;
  const auto r = simulate(topo, {cs.schedule, delay_rank_start(cs.schedule, late, delay_s)}, eo);
  const StragglerTimes base = per_rank_collective_times(r[0], -1, 0);
  const StragglerTimes slow = per_rank_collective_times(r[1], late, delay_s);
  ASSERT_EQ(slow.per_rank_s.size(), 16u);
  EXPECT_EQ(slow.shortest_rank, late);
  // A ring passes every byte through every rank: no rank can finish before the late rank's data
  // went round, so each other rank's collective grows by about the delay (a little more: the ring's
  // pipeline refills behind the late rank).
  for (int k = 0; k < 16; ++k) {
    if (k == late) continue;
    EXPECT_GT(slow.per_rank_s[k], base.per_rank_s[k] + 0.5 * delay_s) << "rank " << k;
    EXPECT_LT(slow.per_rank_s[k], base.per_rank_s[k] + 1.5 * delay_s) << "rank " << k;
  }
  // Only the late rank's dependency-free sends moved.
  const Schedule delayed = delay_rank_start(cs.schedule, late, delay_s);
  std::size_t moved = 0;
  for (std::size_t i = 0; i < delayed.transfers.size(); ++i)
    if (delayed.transfers[i].delay_s != cs.schedule.transfers[i].delay_s) {
      ++moved;
      EXPECT_EQ(delayed.transfers[i].src, late);
      EXPECT_EQ(delayed.transfers[i].dep_count, 0u);
    }
  EXPECT_GT(moved, 0u);
}

}  // namespace
}  // namespace ccsim
