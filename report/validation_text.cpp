// `ccsim validate`'s text report: the log's facts, one line per size, the verdicts, the likely causes.
#include "report/render.h"

#include <cinttypes>
#include <cmath>

#include "common/text.h"
#include "common/units.h"

namespace ccsim {
namespace {

std::string side_line(const SideVerdict& v, double tolerance_pct, double knee_bytes) {
  std::string s = "# " + v.side + " side (" + (v.side == "latency" ? "< " : ">= ") + "S* = " + format_bytes(knee_bytes) +
                  "): ";
  if (v.sizes == 0) return s + "no sizes";
  return s + std::to_string(v.sizes) + " size(s), " + std::to_string(v.within) + " within " +
         strprintf("%g%%", tolerance_pct) + ", median error " + strprintf("%+.1f%%", 100 * v.median_error) +
         ", worst " + strprintf("%+.1f%%", 100 * v.worst_error) + ": " + to_string(v.verdict);
}

std::string log_line(const LogFacts& f) {
  std::string s = "# log: " + f.file + (f.run_index > 0 ? " (run " + std::to_string(f.run_index + 1) + ")" : "") + ": " +
                  f.collective + " [" + f.collective_source + "], " + std::to_string(f.ranks) + " ranks [" +
                  f.ranks_source + "]";
  if (f.hosts > 0) s += ", " + std::to_string(f.hosts) + " host(s)";
  s += ", " + std::to_string(f.processes) + " process(es) x " + std::to_string(f.gpus_per_process) + " GPU(s)";
  // nccl-tests' timing loop, which the prediction reproduces (scenarios/launch_mode.h).
  s += ", " + std::to_string(f.iters) + " iterations";
  if (f.agg_iters > 1) s += " of " + std::to_string(f.agg_iters) + " aggregated";
  if (f.graph_launches > 0) s += " x " + std::to_string(f.graph_launches) + " CUDA graph launches";
  if (f.blocking) s += " (blocking, -z 1)";
  s += ", " + f.datatype + (f.op.empty() ? "" : " " + f.op);
  s += std::string(", ") + (f.has_out_of_place ? "out-of-place" : "in-place") + " times";
  s += ", NCCL " + (f.nccl_version.empty() ? std::string("version not printed") : f.nccl_version);
  if (!f.nccl_tests_version.empty()) s += ", nccl-tests " + f.nccl_tests_version;
  if (!f.nccl_env.empty()) s += ", recorded NCCL settings " + join(f.nccl_env, " ");
  return s;
}

}  // namespace

std::string render_validation_text(const ValidationReport& report) {
  std::string s = "# ccsim " + report.ccsim_version + " validate: measured nccl-tests log against ccsim's prediction, "
                  "tolerance " + strprintf("%g%%", report.tolerance_pct) + "\n";
  s += "# hardware: " + report.hardware + "\n";
  for (const auto& e : report.nccl_env) s += "# NCCL environment: " + e + "\n";
  if (report.debug.present) s += "# NCCL_DEBUG log: " + report.debug.file + "\n";
  int failed_sizes = 0, sizes = 0;
  for (const ValidatedRun& run : report.runs) {
    s += "#\n" + log_line(run.log) + "\n";
    for (const auto& note : run.log.notes) s += "# note: " + note + "\n";
    s += "# prediction: " + run.prediction.facts.model + " on " + run.prediction.facts.topology_name + ", " +
         std::to_string(run.prediction.facts.nodes) + " node(s) x " + std::to_string(run.prediction.facts.gpus_per_node) +
         " GPUs\n";
    s += strprintf("# %10s  %10s  %10s  %8s  %10s  %10s  %-18s %s\n", "size", "measured", "predicted", "error",
                   "busbw", "busbw", "NCCL (assumed)", "");
    s += strprintf("# %10s  %10s  %10s  %8s  %10s  %10s  %-18s %s\n", "(B)", "(us)", "(us)", "(%)", "meas GB/s",
                   "pred GB/s", "", "");
    for (const ValidatedSize& v : run.sizes) {
      s += strprintf("%12" PRIu64 "  %10.2f  %10.2f  %+8.1f  %10.2f  %10.2f  %-18s %s\n", v.size_bytes, v.measured_time_us,
                     v.predicted_time_us, 100 * v.error, v.measured_busbw_GBps, v.predicted_busbw_GBps,
                     (v.nccl_algorithm + "/" + v.nccl_protocol).c_str(), v.within_tolerance ? "ok" : "OUT");
      ++sizes;
      failed_sizes += v.within_tolerance ? 0 : 1;
    }
    s += side_line(run.latency, report.tolerance_pct, run.knee_bytes) + "\n";
    s += side_line(run.bandwidth, report.tolerance_pct, run.knee_bytes) + "\n";
    if (!run.causes.empty()) {
      s += "# likely causes:\n";
      int k = 0;
      for (const LikelyCause& c : run.causes) {
        s += "#  " + std::to_string(++k) + ". " + c.title + (c.informational ? " (informational)" : "") + " [" + c.id + "]\n";
        s += "#     evidence: " + c.evidence + "\n";
        s += "#     next: " + c.next + "\n";
      }
    }
  }
  s += "# result: " + std::string(report.pass ? "PASS" : "FAIL") + " (" + std::to_string(sizes - failed_sizes) + " of " +
       std::to_string(sizes) + " sizes within " + strprintf("%g%%", report.tolerance_pct) + ")\n";
  return s;
}

}  // namespace ccsim
