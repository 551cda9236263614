#include "report/validation_chart.h"

#include "common/text.h"
#include "common/units.h"

namespace ccsim {

namespace {

std::string side_note(const SideVerdict& v, double tolerance_pct, double knee_bytes) {
  std::string s = v.side + " side (" + (v.side == "latency" ? "< " : ">= ") + "S* = " + format_bytes(knee_bytes) + "): ";
  if (v.sizes == 0) return s + "no sizes";
  return s + std::to_string(v.within) + " of " + std::to_string(v.sizes) + " size(s) within " +
         strprintf("%g%%", tolerance_pct) + ", median error " + strprintf("%+.1f%%", 100 * v.median_error) + ", worst " +
         strprintf("%+.1f%%", 100 * v.worst_error) + ": " + to_string(v.verdict);
}

}  // namespace

Comparison validation_comparison(const ValidatedRun& run, double tolerance_pct, const std::string& title) {
  Comparison c;
  c.title = title;
  c.tolerance_pct = tolerance_pct;
  c.knee_bytes = run.knee_bytes;
  const LogFacts& f = run.log;
  c.notes.push_back("log: " + f.file + ": " + f.collective + " [" + f.collective_source + "], " + std::to_string(f.ranks) +
                    " ranks [" + f.ranks_source + "], " + std::to_string(f.processes) + " process(es) x " +
                    std::to_string(f.gpus_per_process) + " GPU(s), NCCL " +
                    (f.nccl_version.empty() ? std::string("version not printed") : f.nccl_version));
  for (const auto& n : f.notes) c.notes.push_back("note: " + n);
  c.notes.push_back("prediction: " + run.prediction.facts.model + " on " + run.prediction.facts.topology_name + ", " +
                    std::to_string(run.prediction.facts.nodes) + " node(s) x " +
                    std::to_string(run.prediction.facts.gpus_per_node) + " GPUs");
  c.notes.push_back(side_note(run.latency, tolerance_pct, run.knee_bytes));
  c.notes.push_back(side_note(run.bandwidth, tolerance_pct, run.knee_bytes));
  int within = 0;
  for (const ValidatedSize& v : run.sizes) {
    within += v.within_tolerance ? 1 : 0;
    c.points.push_back({static_cast<double>(v.size_bytes), v.measured_busbw_GBps, v.predicted_busbw_GBps, v.measured_time_us,
                        v.predicted_time_us, v.nccl_algorithm + "/" + v.nccl_protocol, v.within_tolerance, v.latency_side});
  }
  c.notes.push_back(std::string("result: ") + (run.pass ? "PASS" : "FAIL") + " (" + std::to_string(within) + " of " +
                    std::to_string(run.sizes.size()) + " sizes within " + strprintf("%g%%", tolerance_pct) + ")");
  for (const LikelyCause& cause : run.causes)
    c.causes.push_back({cause.title + (cause.informational ? " (informational)" : "") + " [" + cause.id + "]",
                        "Evidence: " + cause.evidence, cause.next});
  return c;
}

ChartModel validation_chart_model(const ValidationReport& report) {
  ChartModel m;
  m.title = "ccsim validate: measured against predicted";
  m.facts.push_back("ccsim " + report.ccsim_version + ", tolerance " + strprintf("%g%%", report.tolerance_pct));
  m.facts.push_back("hardware: " + report.hardware);
  if (report.debug.present) m.facts.push_back("NCCL_DEBUG log: " + report.debug.file);
  m.facts.push_back(std::string("result: ") + (report.pass ? "PASS: every size within the tolerance" : "FAIL: some sizes outside the tolerance"));
  for (const ValidatedRun& run : report.runs)
    m.comparisons.push_back(validation_comparison(
        run, report.tolerance_pct,
        run.log.file + (run.log.run_index > 0 ? " (run " + std::to_string(run.log.run_index + 1) + ")" : "") + ": " +
            run.log.collective + ", " + std::to_string(run.log.ranks) + " ranks"));
  return m;
}

}  // namespace ccsim
