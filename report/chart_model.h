// What report.html shows, independent of where the numbers came from: `ccsim run`'s variants
// (scenarios/run_report.h builds it from run results) or a validation (measured against
// predicted). The HTML renderer (report/html_page.h) reads only this, so each source needs one
// adapter function.
#pragma once
#include <string>
#include <vector>

namespace ccsim {

// One size of one series.
struct ChartPoint {
  double size_bytes = 0;
  double busbw_GBps = 0;
  double time_us = 0;
  std::string label;  // what was predicted at this size: "NVLSTree/Simple"
};

// One variant's curve of one workload.
struct ChartSeries {
  std::string name;
  std::vector<ChartPoint> points;  // ascending sizes
  double knee_bytes = 0;           // S* = n alpha beta; 0: none
};

// Per series, the busiest link direction of each link class (at the largest size).
struct LinkUseBar {
  std::string series, link_class, link;
  double utilization = 0;  // 0..1
};

struct RankingEntry {
  std::string series;
  double time_us = 0, busbw_GBps = 0;
  std::string label;
};

// The series ordered by time (fastest first) at one size.
struct Ranking {
  double size_bytes = 0;
  std::vector<RankingEntry> entries;
};

// One workload: its curves, link use and rankings.
struct ChartSection {
  std::string title;      // "all_reduce"
  std::string subtitle;   // model, sizes
  std::vector<ChartSeries> series;
  std::vector<LinkUseBar> link_use;
  std::vector<Ranking> rankings;
};

// Measured against predicted (a validation): one point per size.
struct ComparedPoint {
  double size_bytes = 0;
  double measured_busbw_GBps = 0, predicted_busbw_GBps = 0;
  double measured_time_us = 0, predicted_time_us = 0;
  std::string label;  // what was predicted
  bool within = true;        // within the validation's tolerance
  bool latency_side = false; // below the knee S*
};

struct ComparisonCause {
  std::string title, evidence, next;
};

struct Comparison {
  std::string title;
  std::vector<std::string> notes;  // what the log said, the side verdicts, the result: one line each
  double tolerance_pct = 0;        // > 0: the per-size table marks sizes within / outside it
  double knee_bytes = 0;
  std::vector<ComparedPoint> points;
  std::vector<ComparisonCause> causes;
};

// A straggler experiment: per-rank collective times with and without one late rank.
struct StragglerView {
  std::string title;
  int late_rank = 0;
  double delay_us = 0;
  int named_rank = 0;  // the rank whose collective was shortest: the one named late
  std::vector<double> per_rank_us, baseline_per_rank_us;
};

struct ChartModel {
  std::string title;
  std::string description;
  std::vector<std::string> facts;  // lines under the title (scenario file, variant count, version)
  std::vector<ChartSection> sections;
  std::vector<Comparison> comparisons;
  std::vector<StragglerView> stragglers;
};

}  // namespace ccsim
