// `ccsim validate -o report.html`: the validation as report.html's comparison view (charts of
// measured against predicted busbw and of the gap per size, the per-size table, the causes).
#include "report/html.h"

#include "report/html_page.h"
#include "report/validation_chart.h"

namespace ccsim {

std::string render_validation_html(const ValidationReport& report) {
  return render_report_html(validation_chart_model(report));
}

}  // namespace ccsim
