// `ccsim validate --format csv`: one line per validated size, the run's facts repeated on each line
// so that the file loads into a spreadsheet or pandas as one table.
#include "report/render.h"

#include <cmath>

#include "scenarios/report_formats.h"

namespace ccsim {
namespace {

// Non-finite numbers (an error against a zero prediction) are empty fields.
std::string shortest(double v) { return std::isfinite(v) ? shortest_double_text(v) : std::string(); }

std::string nccl_env_lines(const ValidationReport& report) {
  std::string s;
  for (const auto& e : report.nccl_env) s += "\n# nccl_env: " + e;
  return s;
}

}  // namespace

std::string render_validation_csv(const ValidationReport& report) {
  std::string s = "# ccsim_version: " + report.ccsim_version + "\n# tolerance_pct: " + shortest(report.tolerance_pct) +
                  "\n# hardware: " + report.hardware + nccl_env_lines(report) + "\n# pass: " + (report.pass ? "true" : "false") + "\n";
  s += "file,run,collective,ranks,size_bytes,measured_time_us,predicted_time_us,error,within_tolerance,side,"
       "measured_busbw_GBps,predicted_busbw_GBps,nccl_algorithm,nccl_protocol,predicted\n";
  for (const ValidatedRun& run : report.runs)
    for (const ValidatedSize& v : run.sizes)
      s += csv_field(run.log.file) + "," + std::to_string(run.log.run_index) + "," + run.log.collective + "," +
           std::to_string(run.log.ranks) + "," + std::to_string(v.size_bytes) + "," + shortest(v.measured_time_us) + "," +
           shortest(v.predicted_time_us) + "," + shortest(v.error) + "," + (v.within_tolerance ? "true" : "false") + "," +
           (v.latency_side ? "latency" : "bandwidth") + "," + shortest(v.measured_busbw_GBps) + "," +
           shortest(v.predicted_busbw_GBps) + "," + v.nccl_algorithm + "," + v.nccl_protocol + "," + csv_field(v.predicted) +
           "\n";
  return s;
}

}  // namespace ccsim
