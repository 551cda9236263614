// report.html: one self-contained page (inline CSS, inline SVG charts, a small inline script that
// checks the charts; nothing fetched over the network) rendering a ChartModel. Deterministic: the
// same model gives the same bytes.
#pragma once
#include <string>

#include "report/chart_model.h"

namespace ccsim {

std::string render_report_html(const ChartModel& model);

// The element the page's self-check script fills in: "ccsim-selfcheck: ok charts=N" when every
// chart has data marks and a non-empty drawing, "ccsim-selfcheck: error: ..." otherwise (also on
// any JavaScript error). Tests read it from `chromium --dump-dom`.
constexpr const char* kSelfCheckId = "ccsim-selfcheck";

}  // namespace ccsim
