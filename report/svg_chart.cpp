#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/text.h"
#include "common/units.h"

namespace ccsim {

namespace {

// Fixed layout: wide enough for a laptop screen, small enough for many charts on one page.
constexpr double kWidth = 760, kHeight = 340;
constexpr double kLeft = 64, kRight = 30, kTop = 14, kBottom = 46;

std::string num(double v) { return strprintf("%.2f", v); }

// A "nice" step (1, 2, 5 x 10^k) giving about `target` intervals over [0, max].
double nice_step(double max, int target) {
  if (!(max > 0)) return 1;
  const double raw = max / target;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

std::string svg_open(const std::string& id, double width, double height) {
  return "<svg class=\"chart\" id=\"" + xml_escape(id) + "\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
         num(width) + " " + num(height) + "\" width=\"" + num(width) + "\" height=\"" + num(height) +
         "\" role=\"img\">\n";
}

std::string text(double x, double y, const std::string& s, const std::string& anchor, const std::string& extra = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\"" + extra + ">" + xml_escape(s) +
         "</text>\n";
}

std::string line(double x1, double y1, double x2, double y2, const std::string& cls) {
  return "<line class=\"" + cls + "\" x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" +
         num(y2) + "\"/>\n";
}

std::string value_text(double v) { return strprintf("%.4g", v); }

}  // namespace

std::string xml_escape(const std::string& s) {
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

const char* palette_color(std::size_t i) {
  static const char* colors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                 "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return colors[i % 10];
}

std::string svg_line_chart(const std::vector<LineSeries>& series, const std::string& y_title, const std::string& id) {
  double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
  for (const auto& s : series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (s.x[i] > 0) {
        xmin = std::min(xmin, std::log2(s.x[i]));
        xmax = std::max(xmax, std::log2(s.x[i]));
      }
      if (std::isfinite(s.y[i])) ymax = std::max(ymax, s.y[i]);
    }
  if (!std::isfinite(xmin)) xmin = xmax = 0;
  if (xmax - xmin < 1) {  // one size: a one-octave window around it
    xmin -= 0.5;
    xmax += 0.5;
  }
  const double ystep = nice_step(ymax > 0 ? ymax : 1, 5);
  const double ytop = ystep * std::max(1.0, std::ceil((ymax > 0 ? ymax : 1) / ystep));
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto X = [&](double bytes) { return kLeft + (std::log2(bytes) - xmin) / (xmax - xmin) * pw; };
  auto Y = [&](double v) { return kTop + ph - v / ytop * ph; };

  std::string out = svg_open(id, kWidth, kHeight);
  // Axes, grid and labels (text, so numbers can be selected and copied).
  for (double v = 0; v <= ytop * (1 + 1e-9); v += ystep) {
    out += line(kLeft, Y(v), kLeft + pw, Y(v), "grid");
    out += text(kLeft - 6, Y(v) + 4, value_text(v), "end");
  }
  const int octave_step = std::max(1, static_cast<int>(std::ceil((xmax - xmin) / 12)));
  for (int e = static_cast<int>(std::ceil(xmin)); e <= static_cast<int>(std::floor(xmax)); e += octave_step) {
    const double x = X(std::ldexp(1.0, e));
    out += line(x, kTop, x, kTop + ph, "grid");
    out += text(x, kTop + ph + 16, format_bytes(std::ldexp(1.0, e)), "middle");
  }
  out += line(kLeft, kTop + ph, kLeft + pw, kTop + ph, "axis");
  out += line(kLeft, kTop, kLeft, kTop + ph, "axis");
  out += text(kLeft + pw / 2, kHeight - 6, "message size (bytes, log scale)", "middle");
  out += text(14, kTop + ph / 2, y_title, "middle", " transform=\"rotate(-90 14 " + num(kTop + ph / 2) + ")\"");

  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    const std::string color = palette_color(k);
    std::string points;
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (s.x[i] > 0 && std::isfinite(s.y[i])) points += num(X(s.x[i])) + "," + num(Y(s.y[i])) + " ";
    if (points.empty()) continue;  // nothing to draw: no mark, so the page's self-check notices
    out += "<g><title>" + xml_escape(s.name) + "</title><polyline class=\"mark series\" fill=\"none\" stroke=\"" + color +
           "\" stroke-width=\"1.6\"" + (s.dashed ? " stroke-dasharray=\"6 4\"" : "") + " points=\"" + points + "\"/>\n";
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!(s.x[i] > 0 && std::isfinite(s.y[i]))) continue;
      std::string tip = s.name + ": " + format_bytes(s.x[i]) + ", " + value_text(s.y[i]) + " " + y_title;
      if (i < s.point_notes.size() && !s.point_notes[i].empty()) tip += ", " + s.point_notes[i];
      out += "<circle class=\"mark point\" cx=\"" + num(X(s.x[i])) + "\" cy=\"" + num(Y(s.y[i])) + "\" r=\"2.4\" fill=\"" +
             color + "\"><title>" + xml_escape(tip) + "</title></circle>\n";
    }
    if (s.knee_x > 0 && std::log2(s.knee_x) >= xmin && std::log2(s.knee_x) <= xmax) {
      const double x = X(s.knee_x), y = kTop + ph;
      out += "<path class=\"mark knee\" fill=\"" + color + "\" d=\"M" + num(x) + "," + num(y - 9) + " L" + num(x - 5) + "," +
             num(y) + " L" + num(x + 5) + "," + num(y) + " Z\"><title>" +
             xml_escape(s.name + ": knee S* = n alpha beta = " + format_bytes(s.knee_x)) + "</title></path>\n";
    }
    out += "</g>\n";
  }
  return out + "</svg>\n";
}

std::string svg_bar_chart(const std::vector<Bar>& bars, const std::vector<std::string>& names, double scale,
                          const std::string& value_format, const std::string& x_title, const std::string& id) {
  std::vector<std::string> groups;
  for (const auto& b : bars)
    if (std::find(groups.begin(), groups.end(), b.group) == groups.end()) groups.push_back(b.group);
  std::map<std::string, std::size_t> color_of;
  for (std::size_t i = 0; i < names.size(); ++i) color_of.emplace(names[i], i);
  double vmax = 0;
  for (const auto& b : bars) vmax = std::max(vmax, b.value * scale);
  const double step = nice_step(vmax > 0 ? vmax : 1, 5);
  const double top = step * std::max(1.0, std::ceil((vmax > 0 ? vmax : 1) / step));
  const double left = 150, bar_h = 9, gap = 8;
  double height = kTop + 30;
  for (const auto& g : groups)
    height += gap + bar_h * static_cast<double>(std::count_if(bars.begin(), bars.end(), [&](const Bar& b) { return b.group == g; }));
  const double pw = kWidth - left - kRight - 60;
  auto X = [&](double v) { return left + v / top * pw; };

  std::string out = svg_open(id, kWidth, height);
  const double bottom = height - 30;
  for (double v = 0; v <= top * (1 + 1e-9); v += step) {
    out += line(X(v), kTop, X(v), bottom, "grid");
    out += text(X(v), bottom + 14, value_text(v), "middle");
  }
  out += text(left + pw / 2, height - 4, x_title, "middle");
  double y = kTop;
  for (const auto& g : groups) {
    y += gap;
    const double group_top = y;
    for (const auto& b : bars) {
      if (b.group != g) continue;
      const std::size_t c = color_of.count(b.name) ? color_of[b.name] : 0;
      const double v = b.value * scale;
      out += "<rect class=\"mark bar\" x=\"" + num(left) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(0.5, X(v) - left)) +
             "\" height=\"" + num(bar_h - 1) + "\" fill=\"" + palette_color(c) + "\"><title>" +
             xml_escape(b.group + ", " + b.name + ": " + strprintf(value_format.c_str(), v) + (b.note.empty() ? "" : ", " + b.note)) +
             "</title></rect>\n";
      out += text(X(v) + 4, y + bar_h - 1.5, strprintf(value_format.c_str(), v), "start", " class=\"small\"");
      y += bar_h;
    }
    out += text(left - 6, (group_top + y) / 2 + 4, g, "end");
  }
  out += line(left, kTop, left, bottom, "axis");
  return out + "</svg>\n";
}

std::string svg_label_grid(const std::vector<std::string>& rows, const std::vector<double>& column_sizes,
                           const std::vector<GridCell>& cells, const std::string& id) {
  std::vector<std::string> labels;
  for (const auto& c : cells)
    if (std::find(labels.begin(), labels.end(), c.label) == labels.end()) labels.push_back(c.label);
  std::sort(labels.begin(), labels.end());
  const double left = 250, cell_h = rows.size() > 40 ? 5 : 14, top = 14;
  const double cell_w = column_sizes.empty() ? 10 : (kWidth - left - kRight) / static_cast<double>(column_sizes.size());
  const double grid_h = cell_h * static_cast<double>(rows.size());
  const double legend_rows = std::ceil(static_cast<double>(labels.size()) / 3);
  const double height = top + grid_h + 22 + 18 * legend_rows + 6;
  std::string out = svg_open(id, kWidth, height);
  for (std::size_t j = 0; j < column_sizes.size(); ++j)
    if (column_sizes.size() <= 16 || j % 2 == 0)
      out += text(left + (static_cast<double>(j) + 0.5) * cell_w, top - 3, format_bytes(column_sizes[j]), "middle", " class=\"small\"");
  if (cell_h >= 10)
    for (std::size_t i = 0; i < rows.size(); ++i)
      out += text(left - 6, top + (static_cast<double>(i) + 0.8) * cell_h, rows[i], "end", " class=\"small\"");
  for (const auto& c : cells) {
    const std::size_t k = static_cast<std::size_t>(std::find(labels.begin(), labels.end(), c.label) - labels.begin());
    out += "<rect class=\"mark cell\" x=\"" + num(left + static_cast<double>(c.column) * cell_w) + "\" y=\"" +
           num(top + static_cast<double>(c.row) * cell_h) + "\" width=\"" + num(cell_w - 1) + "\" height=\"" +
           num(std::max(1.0, cell_h - 1)) + "\" fill=\"" + palette_color(k) + "\"><title>" +
           xml_escape(rows[c.row] + ", " + format_bytes(column_sizes[c.column]) + ": " + c.label) + "</title></rect>\n";
  }
  for (std::size_t k = 0; k < labels.size(); ++k) {
    const double x = 10 + static_cast<double>(k % 3) * 250, y = top + grid_h + 22 + 18 * static_cast<double>(k / 3);
    out += "<rect x=\"" + num(x) + "\" y=\"" + num(y - 10) + "\" width=\"12\" height=\"12\" fill=\"" + palette_color(k) + "\"/>\n";
    out += text(x + 18, y, labels[k], "start");
  }
  return out + "</svg>\n";
}

}  // namespace ccsim
