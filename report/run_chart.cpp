#include "report/run_chart.h"

#include <algorithm>
#include <cmath>

#include "common/units.h"

namespace ccsim {

namespace {

std::string label_of(const RunRow& r) { return r.protocol.empty() ? r.algorithm : r.algorithm + "/" + r.protocol; }

// The sizes to rank at: the requested ones moved to the nearest size that ran (log distance), else
// the smallest, middle and largest.
std::vector<std::uint64_t> ranking_sizes(const std::vector<std::uint64_t>& ran, const std::vector<std::uint64_t>& requested) {
  std::vector<std::uint64_t> out;
  if (ran.empty()) return out;
  auto add = [&](std::uint64_t s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  if (requested.empty()) {
    add(ran.front());
    add(ran[ran.size() / 2]);
    add(ran.back());
    return out;
  }
  for (auto want : requested) {
    std::uint64_t best = ran.front();
    for (auto s : ran)
      if (std::abs(std::log2(static_cast<double>(s)) - std::log2(static_cast<double>(want))) <
          std::abs(std::log2(static_cast<double>(best)) - std::log2(static_cast<double>(want))))
        best = s;
    add(best);
  }
  return out;
}

}  // namespace

ChartModel run_chart_model(const Scenario& scenario, const std::vector<VariantResult>& done, bool complete) {
  ChartModel m;
  m.title = "ccsim run: " + scenario.name;
  m.description = scenario.description;
  m.facts.push_back("scenario file: " + scenario.file);
  m.facts.push_back(std::to_string(done.size()) + " of " + std::to_string(scenario.variants.size()) + " variants" +
                    (complete ? "" : " (interrupted: the other variants did not finish)"));
  m.facts.push_back("ccsim " + std::string(CCSIM_VERSION) + " prediction, not a measurement");
  for (std::size_t wi = 0; wi < scenario.workloads.size(); ++wi) {
    const ScenarioWorkload& w = scenario.workloads[wi];
    if (w.kind == "validate") {
      for (const VariantResult& v : done) {
        const ScenarioWorkloadResult& r = v.workloads.at(wi);
        Comparison c;
        c.title = w.name + (done.size() > 1 || v.name != "base" ? " on " + v.name : "") + ": " +
                  (r.pass ? "PASS" : "FAIL");
        c.notes = r.notes;
        c.tolerance_pct = r.tolerance_pct;
        c.knee_bytes = r.knee_bytes;
        for (const RunRow& row : r.rows)
          c.points.push_back({static_cast<double>(row.size_bytes), row.measured_busbw_GBps, row.busbw_GBps,
                              row.measured_time_us, row.time_us, label_of(row), row.within_tolerance == 1,
                              row.side == "latency"});
        for (const RunCause& cause : r.causes)
          c.causes.push_back({cause.title + (cause.informational ? " (informational)" : "") + " [" + cause.id + "]",
                              "Evidence: " + cause.evidence, cause.next});
        m.comparisons.push_back(std::move(c));
      }
      continue;
    }
    if (w.kind == "straggler") {
      for (const VariantResult& v : done) {
        const ScenarioWorkloadResult& r = v.workloads.at(wi);
        StragglerView s;
        s.title = w.name + ": " + w.collective + " of " + format_bytes(static_cast<double>(w.min_bytes)) +
                  (done.size() > 1 || v.name != "base" ? " on " + v.name : "");
        s.late_rank = r.late_rank;
        s.delay_us = r.delay_us;
        s.named_rank = r.shortest_rank;
        s.per_rank_us = r.per_rank_us;
        s.baseline_per_rank_us = r.baseline_per_rank_us;
        m.stragglers.push_back(std::move(s));
      }
      continue;
    }
    ChartSection sec;
    sec.title = w.name;
    sec.subtitle = w.collective + ", " + format_bytes(static_cast<double>(w.min_bytes)) + " to " +
                   format_bytes(static_cast<double>(w.max_bytes)) + ", model: " + w.model +
                   (w.algo.empty() ? "" : ", algo " + w.algo) + (w.proto.empty() ? "" : ", proto " + w.proto);
    std::vector<std::uint64_t> ran;
    for (const VariantResult& v : done) {
      const ScenarioWorkloadResult& r = v.workloads.at(wi);
      ChartSeries series;
      series.name = v.name;
      series.knee_bytes = r.knee_bytes;
      for (const RunRow& row : r.rows) {
        series.points.push_back({static_cast<double>(row.size_bytes), row.busbw_GBps, row.time_us, label_of(row)});
        if (std::find(ran.begin(), ran.end(), row.size_bytes) == ran.end()) ran.push_back(row.size_bytes);
      }
      for (const LinkClassUse& u : r.link_classes) sec.link_use.push_back({v.name, u.link_class, u.link, u.utilization});
      sec.series.push_back(std::move(series));
    }
    std::sort(ran.begin(), ran.end());
    for (auto size : ranking_sizes(ran, scenario.rank_at_bytes)) {
      Ranking rk;
      rk.size_bytes = static_cast<double>(size);
      for (const VariantResult& v : done)
        for (const RunRow& row : v.workloads.at(wi).rows)
          if (row.size_bytes == size) rk.entries.push_back({v.name, row.time_us, row.busbw_GBps, label_of(row)});
      // Fastest first; equal times keep the scenario's order.
      std::stable_sort(rk.entries.begin(), rk.entries.end(),
                       [](const RankingEntry& a, const RankingEntry& b) { return a.time_us < b.time_us; });
      sec.rankings.push_back(std::move(rk));
    }
    m.sections.push_back(std::move(sec));
  }
  return m;
}

}  // namespace ccsim
