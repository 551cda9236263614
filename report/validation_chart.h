// The report.html view of a validation: one measured-against-predicted comparison per validated
// run (its log facts, side verdicts, per-size gap and likely causes). Used by `ccsim validate -o
// report.html` and by `ccsim run` for its validate workloads.
#pragma once
#include "report/chart_model.h"
#include "report/validation_report.h"

namespace ccsim {

// One run of a log as a comparison; `title` heads its section.
Comparison validation_comparison(const ValidatedRun& run, double tolerance_pct, const std::string& title);

// The whole validation report as a page model.
ChartModel validation_chart_model(const ValidationReport& report);

}  // namespace ccsim
