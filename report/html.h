// HTML renderings of the typed reports (self-contained pages, no external assets).
#pragma once
#include <string>

#include "report/validation_report.h"

namespace ccsim {

// `ccsim validate -o report.html`: one page per validation report.
std::string render_validation_html(const ValidationReport& report);

}  // namespace ccsim
