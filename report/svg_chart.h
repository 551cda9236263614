// Inline SVG charts for report.html, generated as text: no chart library, no network, and the
// same numbers always give the same bytes. Every drawn data element carries class "mark" (the
// page's self-check counts them) and a <title> with its numbers, and every axis label is text.
#pragma once
#include <string>
#include <vector>

namespace ccsim {

// HTML/XML text escaping (&, <, >, ").
std::string xml_escape(const std::string& s);

// The i-th colour of a 10-colour qualitative palette (Tableau 10), cycling.
const char* palette_color(std::size_t i);

struct LineSeries {
  std::string name;
  std::vector<double> x, y;            // x: bytes (log2 axis); y: the value
  std::vector<std::string> point_notes;  // per point, appended to its tooltip (may be empty)
  double knee_x = 0;                   // > 0: a marker on the x axis at this size
  bool dashed = false;
};

// A line chart with a log2 size axis (labels "1 MiB", "8 GiB") and a linear y axis from 0.
std::string svg_line_chart(const std::vector<LineSeries>& series, const std::string& y_title, const std::string& id);

struct Bar {
  std::string group;  // one row of bars per group (e.g. a link class, a rank)
  std::string name;   // the bar within its group (e.g. a variant), coloured by its index in `names`
  double value = 0;
  std::string note;   // appended to the tooltip
};

// Horizontal grouped bars; `names` fixes the colour order; `value_format` is a printf format for
// one double ("%.0f%%" after scaling, see `scale`).
std::string svg_bar_chart(const std::vector<Bar>& bars, const std::vector<std::string>& names, double scale,
                          const std::string& value_format, const std::string& x_title, const std::string& id);

// A grid: one row per row name, one column per size, each cell coloured by its label (legend below).
struct GridCell {
  std::size_t row = 0, column = 0;
  std::string label;
};
std::string svg_label_grid(const std::vector<std::string>& rows, const std::vector<double>& column_sizes,
                           const std::vector<GridCell>& cells, const std::string& id);

}  // namespace ccsim
