// The report.html view of a `ccsim run`: one section per sweep workload (every variant's curve,
// knees, chosen algorithms, rankings, link use) and one straggler view per straggler workload and
// variant.
#pragma once
#include <vector>

#include "report/chart_model.h"
#include "scenarios/run_results.h"
#include "scenarios/scenario.h"

namespace ccsim {

// `done`: the finished variants; `complete`: whether that is all of them (the page says so if not).
// Rankings are at the scenario's rank_at sizes (each moved to the nearest size the workload ran),
// by default its smallest, middle and largest size.
ChartModel run_chart_model(const Scenario& scenario, const std::vector<VariantResult>& done, bool complete);

}  // namespace ccsim
