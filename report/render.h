// Renderers of the typed prediction report (report/prediction_report.h): one file per format.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "report/prediction_report.h"
#include "report/validation_report.h"

namespace ccsim {

// nccl-tests' own layout (report/table.cpp): the header line, ccsim's "# ..." preamble (model, NCCL's
// choice, the ring's alpha-beta and knee, calibration, busiest link), the column header, the rows.
std::string render_prediction_table(const PredictionReport& report);
// The "# ..." preamble lines the table prints between the header line and the column header.
std::vector<std::string> prediction_preamble(const PredictionReport& report);

// The metadata object the JSON and CSV outputs record (report/json.cpp): keys sorted.
nlohmann::json prediction_metadata_json(const PredictionReport& report);
// {"metadata": ..., "rows": [...]} (report/json.cpp).
std::string render_prediction_json(const PredictionReport& report);
// "# key: value" metadata lines, the column names, one line per size (report/csv.cpp).
std::string render_prediction_csv(const PredictionReport& report);

// `ccsim validate`'s renderings: the text table per size with the verdicts and likely causes
// (report/validation_text.cpp), JSON (report/validation_json.cpp), CSV with one line per size
// (report/validation_csv.cpp); HTML in report/html.h.
std::string render_validation_text(const ValidationReport& report);
nlohmann::ordered_json validation_json(const ValidationReport& report);
std::string render_validation_json(const ValidationReport& report);
std::string render_validation_csv(const ValidationReport& report);

}  // namespace ccsim
