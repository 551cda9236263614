#include "report/html_page.h"

#include <algorithm>
#include <map>

#include "common/text.h"
#include "common/units.h"
#include "report/svg_chart.h"

namespace ccsim {

namespace {

const char* kStyle = R"(body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1000px;color:#222;line-height:1.4}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:2em}h3{font-size:1.05em;margin-top:1.4em}
svg.chart{display:block;margin:8px 0;font-size:11px;max-width:100%;height:auto}
svg .grid{stroke:#e4e4e4;stroke-width:1}svg .axis{stroke:#555;stroke-width:1}svg .small{font-size:9px}
table{border-collapse:collapse;font-size:12px;margin:6px 0}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}.swatch{display:inline-block;width:10px;height:10px;margin-right:4px}
.note{color:#666;font-size:.9em}.cause{margin:6px 0 10px 0}.named{font-weight:bold;color:#b00}
#ccsim-selfcheck{color:#666;font-size:.8em})";

// Fills #ccsim-selfcheck: every svg.chart must hold data marks, draw something, and contain no NaN.
const char* kSelfCheck = R"(<script>
(function () {
  var out = document.getElementById('ccsim-selfcheck');
  function fail(msg) { out.textContent = 'ccsim-selfcheck: error: ' + msg; out.setAttribute('data-status', 'error'); }
  window.addEventListener('error', function (e) { fail('javascript: ' + e.message); });
  try {
    var charts = document.querySelectorAll('svg.chart'), problems = [];
    for (var i = 0; i < charts.length; i++) {
      var c = charts[i], marks = c.querySelectorAll('.mark');
      if (marks.length === 0) problems.push(c.id + ': no data marks');
      var box = c.getBBox();
      if (!(box.width > 0 && box.height > 0)) problems.push(c.id + ': nothing drawn');
      if (/NaN|Infinity/.test(c.outerHTML)) problems.push(c.id + ': NaN or Infinity in the drawing');
    }
    if (charts.length === 0) problems.push('no charts');
    if (problems.length) fail(problems.join('; '));
    else { out.textContent = 'ccsim-selfcheck: ok charts=' + charts.length; out.setAttribute('data-status', 'ok'); }
  } catch (e) { fail('javascript: ' + e.message); }
})();
</script>
)";

std::string g4(double v) { return strprintf("%.4g", v); }

std::string cell(const std::string& s, bool left = false) { return std::string(left ? "<td class=\"l\">" : "<td>") + xml_escape(s) + "</td>"; }

std::string swatch(std::size_t i) { return std::string("<span class=\"swatch\" style=\"background:") + palette_color(i) + "\"></span>"; }

std::string section_html(const ChartSection& s, std::size_t index) {
  const std::string id = "w" + std::to_string(index);
  std::string out = "<section id=\"" + id + "\">\n<h2>" + xml_escape(s.title) + "</h2>\n";
  if (!s.subtitle.empty()) out += "<p class=\"note\">" + xml_escape(s.subtitle) + "</p>\n";

  // Bus bandwidth against size, one line per variant, the knee S* marked on the size axis.
  std::vector<LineSeries> lines;
  std::vector<double> sizes;
  for (const auto& series : s.series) {
    LineSeries l;
    l.name = series.name;
    l.knee_x = series.knee_bytes;
    for (const auto& p : series.points) {
      l.x.push_back(p.size_bytes);
      l.y.push_back(p.busbw_GBps);
      l.point_notes.push_back(g4(p.time_us) + " us, " + p.label);
      if (std::find(sizes.begin(), sizes.end(), p.size_bytes) == sizes.end()) sizes.push_back(p.size_bytes);
    }
    lines.push_back(std::move(l));
  }
  std::sort(sizes.begin(), sizes.end());
  out += "<h3>Bus bandwidth against size</h3>\n";
  out += "<p class=\"note\">One line per variant; the triangles on the size axis mark each variant's knee S* = n&middot;&alpha;&middot;&beta;"
         " (latency bill = bandwidth bill). Hover a point for its numbers." +
         std::string(s.series.size() > 10 ? " Colours repeat after 10 variants: the legend and the tables below name them." : "") +
         "</p>\n";
  out += svg_line_chart(lines, "busbw GB/s", id + "-busbw");
  out += "<details><summary>Legend: variants and knees (" + std::to_string(s.series.size()) +
         ")</summary>\n<table><tr><th class=\"l\">variant</th><th>knee S* (bytes)</th></tr>\n";
  for (std::size_t k = 0; k < s.series.size(); ++k)
    out += "<tr><td class=\"l\">" + swatch(k) + xml_escape(s.series[k].name) + "</td>" +
           cell(s.series[k].knee_bytes > 0 ? format_bytes(s.series[k].knee_bytes) : "-") + "</tr>\n";
  out += "</table></details>\n";

  // The algorithm and protocol predicted at each size.
  std::vector<std::string> rows;
  std::vector<GridCell> cells;
  for (std::size_t k = 0; k < s.series.size(); ++k) {
    rows.push_back(s.series[k].name);
    for (const auto& p : s.series[k].points)
      cells.push_back({k, static_cast<std::size_t>(std::find(sizes.begin(), sizes.end(), p.size_bytes) - sizes.begin()), p.label});
  }
  out += "<h3>Algorithm and protocol per size</h3>\n";
  out += svg_label_grid(rows, sizes, cells, id + "-algo");

  // Ranking of the variants by time at chosen sizes.
  for (const auto& r : s.rankings) {
    out += "<h3>Ranking at " + xml_escape(format_bytes(r.size_bytes)) + " (fastest first)</h3>\n";
    out += "<table><tr><th>#</th><th class=\"l\">variant</th><th>time (us)</th><th>busbw (GB/s)</th><th>vs. fastest</th><th "
           "class=\"l\">algorithm/protocol</th></tr>\n";
    for (std::size_t i = 0; i < r.entries.size(); ++i) {
      const auto& e = r.entries[i];
      out += "<tr>" + cell(std::to_string(i + 1)) + cell(e.series, true) + cell(g4(e.time_us)) + cell(g4(e.busbw_GBps)) +
             cell(strprintf("x%.2f", e.time_us / r.entries.front().time_us)) + cell(e.label, true) + "</tr>\n";
    }
    out += "</table>\n";
  }

  // Link-class utilisation (engine workloads only: a cost model has no links).
  if (!s.link_use.empty()) {
    std::vector<Bar> bars;
    std::vector<std::string> names;
    for (const auto& u : s.link_use) {
      bars.push_back({u.link_class, u.series, u.utilization, u.link});
      if (std::find(names.begin(), names.end(), u.series) == names.end()) names.push_back(u.series);
    }
    out += "<h3>Link-class utilisation at the largest size</h3>\n<p class=\"note\">Per link class, the busiest link "
           "direction's bytes / (bandwidth &times; operation time), one bar per variant.</p>\n";
    out += svg_bar_chart(bars, names, 100, "%.0f%%", "utilisation of the busiest link of the class (%)", id + "-links");
  }

  out += "<details><summary>All numbers</summary>\n<table><tr><th class=\"l\">variant</th><th>size (bytes)</th><th>time "
         "(us)</th><th>busbw (GB/s)</th><th class=\"l\">predicted as</th></tr>\n";
  for (const auto& series : s.series)
    for (const auto& p : series.points)
      out += "<tr>" + cell(series.name, true) + cell(strprintf("%.0f", p.size_bytes)) + cell(g4(p.time_us)) +
             cell(g4(p.busbw_GBps)) + cell(p.label, true) + "</tr>\n";
  out += "</table></details>\n</section>\n";
  return out;
}

std::string comparison_html(const Comparison& c, std::size_t index) {
  const std::string id = "v" + std::to_string(index);
  std::string out = "<section id=\"" + id + "\">\n<h2>" + xml_escape(c.title) + "</h2>\n";
  if (!c.notes.empty()) {
    out += "<ul class=\"note\">\n";
    for (const auto& n : c.notes) out += "<li>" + xml_escape(n) + "</li>\n";
    out += "</ul>\n";
  }
  LineSeries measured{"measured", {}, {}, {}, 0, false}, predicted{"predicted", {}, {}, {}, c.knee_bytes, true};
  // The gap per size: measured time over predicted time (1 = on the prediction).
  LineSeries ratio{"measured / predicted time", {}, {}, {}, c.knee_bytes, false};
  for (const auto& p : c.points) {
    measured.x.push_back(p.size_bytes);
    measured.y.push_back(p.measured_busbw_GBps);
    measured.point_notes.push_back(g4(p.measured_time_us) + " us");
    predicted.x.push_back(p.size_bytes);
    predicted.y.push_back(p.predicted_busbw_GBps);
    predicted.point_notes.push_back(g4(p.predicted_time_us) + " us, " + p.label);
    if (p.predicted_time_us > 0) {
      ratio.x.push_back(p.size_bytes);
      ratio.y.push_back(p.measured_time_us / p.predicted_time_us);
      ratio.point_notes.push_back(p.label);
    }
  }
  out += "<h3>Measured against predicted</h3>\n<p class=\"note\">The triangle on the size axis marks the knee S* = "
         "n&middot;&alpha;&middot;&beta;: sizes below it are the latency side, the rest the bandwidth side.</p>\n" +
         svg_line_chart({measured, predicted}, "busbw GB/s", id + "-compare");
  out += "<p class=\"note\">" + swatch(0) + "measured " + swatch(1) + "predicted (dashed)</p>\n";
  out += "<h3>Gap per size</h3>\n" + svg_line_chart({ratio}, "measured / predicted time", id + "-ratio");
  const bool marks = c.tolerance_pct > 0;
  out += "<table><tr><th>size (bytes)</th><th class=\"l\">side</th><th>measured (us)</th><th>predicted (us)</th><th>error "
         "(%)</th><th>measured busbw (GB/s)</th><th>predicted busbw (GB/s)</th><th class=\"l\">predicted as</th>" +
         std::string(marks ? "<th class=\"l\">within " + xml_escape(strprintf("%g%%", c.tolerance_pct)) + "</th>" : "") +
         "</tr>\n";
  for (const auto& p : c.points)
    out += "<tr>" + cell(strprintf("%.0f", p.size_bytes)) + cell(p.latency_side ? "latency" : "bandwidth", true) +
           cell(g4(p.measured_time_us)) + cell(g4(p.predicted_time_us)) +
           cell(p.predicted_time_us > 0 ? strprintf("%+.1f", 100 * (p.measured_time_us / p.predicted_time_us - 1)) : "-") +
           cell(g4(p.measured_busbw_GBps)) + cell(g4(p.predicted_busbw_GBps)) + cell(p.label, true) +
           (marks ? cell(p.within ? "ok" : "OUT", true) : "") + "</tr>\n";
  out += "</table>\n<h3>Likely causes</h3>\n";
  if (c.causes.empty()) out += "<p>None: the prediction matches within the tolerance.</p>\n";
  for (const auto& cause : c.causes)
    out += "<div class=\"cause\"><b>" + xml_escape(cause.title) + "</b><br>" + xml_escape(cause.evidence) +
           (cause.next.empty() ? "" : "<br><i>Next:</i> " + xml_escape(cause.next)) + "</div>\n";
  return out + "</section>\n";
}

std::string straggler_html(const StragglerView& s, std::size_t index) {
  const std::string id = "s" + std::to_string(index);
  std::string out = "<section id=\"" + id + "\">\n<h2>" + xml_escape(s.title) + "</h2>\n";
  double grew_us = 0;  // the other ranks' mean growth
  for (std::size_t r = 0; r < s.per_rank_us.size() && r < s.baseline_per_rank_us.size(); ++r)
    if (static_cast<int>(r) != s.late_rank)
      grew_us += (s.per_rank_us[r] - s.baseline_per_rank_us[r]) / static_cast<double>(s.per_rank_us.size() - 1);
  out += "<p>Rank " + std::to_string(s.late_rank) + " entered the collective " + g4(s.delay_us) + " us late. The other ranks' " +
         "collective time grew by " + g4(grew_us) + " us on average" +
         (grew_us < 0.5 * s.delay_us ? " (the delay was partly absorbed: the late rank's own links were not on the critical path)" : "") +
         ". The rank whose own collective (finish - own start) was shortest is the one the others waited for: "
         "<span class=\"named\">rank " + std::to_string(s.named_rank) + "</span>" +
         (s.named_rank == s.late_rank ? " (the late rank)." : " (not the late rank).") + "</p>\n";
  std::vector<Bar> bars;
  for (std::size_t r = 0; r < s.per_rank_us.size(); ++r) {
    const std::string group = "rank " + std::to_string(r);
    if (r < s.baseline_per_rank_us.size()) bars.push_back({group, "no straggler", s.baseline_per_rank_us[r], ""});
    bars.push_back({group, "with the late rank", s.per_rank_us[r], "finish - own start"});
  }
  out += svg_bar_chart(bars, {"no straggler", "with the late rank"}, 1, "%.1f", "per-rank collective time (us): finish - own start",
                       id + "-ranks");
  out += "<p class=\"note\">" + swatch(0) + "no straggler " + swatch(1) + "with the late rank</p>\n";
  return out + "</section>\n";
}

}  // namespace

std::string render_report_html(const ChartModel& m) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + xml_escape(m.title) +
                    "</title>\n<style>\n" + kStyle + "\n</style>\n</head>\n<body>\n<h1>" + xml_escape(m.title) + "</h1>\n";
  if (!m.description.empty()) out += "<p>" + xml_escape(m.description) + "</p>\n";
  if (!m.facts.empty()) {
    out += "<ul class=\"note\">\n";
    for (const auto& f : m.facts) out += "<li>" + xml_escape(f) + "</li>\n";
    out += "</ul>\n";
  }
  out += "<nav><b>Contents:</b> ";
  for (std::size_t i = 0; i < m.sections.size(); ++i)
    out += "<a href=\"#w" + std::to_string(i) + "\">" + xml_escape(m.sections[i].title) + "</a> ";
  for (std::size_t i = 0; i < m.comparisons.size(); ++i)
    out += "<a href=\"#v" + std::to_string(i) + "\">" + xml_escape(m.comparisons[i].title) + "</a> ";
  for (std::size_t i = 0; i < m.stragglers.size(); ++i)
    out += "<a href=\"#s" + std::to_string(i) + "\">" + xml_escape(m.stragglers[i].title) + "</a> ";
  out += "</nav>\n";
  for (std::size_t i = 0; i < m.sections.size(); ++i) out += section_html(m.sections[i], i);
  for (std::size_t i = 0; i < m.comparisons.size(); ++i) out += comparison_html(m.comparisons[i], i);
  for (std::size_t i = 0; i < m.stragglers.size(); ++i) out += straggler_html(m.stragglers[i], i);
  out += std::string("<p id=\"") + kSelfCheckId + "\" data-status=\"pending\">ccsim-selfcheck: pending</p>\n";
  out += kSelfCheck;
  return out + "</body>\n</html>\n";
}

}  // namespace ccsim
