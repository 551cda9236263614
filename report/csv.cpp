// The CSV output of a prediction: the metadata as "# key: value" comment lines, then the rows.
#include "report/render.h"

#include "scenarios/report_formats.h"

namespace ccsim {

std::string render_prediction_csv(const PredictionReport& report) {
  return format_rows_csv(prediction_metadata_json(report), report.rows());
}

}  // namespace ccsim
