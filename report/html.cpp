// Minimal HTML rendering of a validation report: the text report in a <pre>, escaped. The HTML
// renderer of report/ (charts, tables) replaces this body; the signature in report/html.h stays.
#include "report/html.h"

#include "report/render.h"

namespace ccsim {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_validation_html(const ValidationReport& report) {
  return "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ccsim validate</title></head><body>\n<pre>" +
         escape(render_validation_text(report)) + "</pre>\n</body></html>\n";
}

}  // namespace ccsim
