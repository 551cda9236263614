#include "calibrate/perftest_log.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/input_file.h"
#include "common/line_limit.h"
#include "common/text.h"

namespace ccsim {
namespace {






// A plain non-negative decimal number ("23.03", "0.000343", "1e-3").
bool parse_number(const std::string& t, double& v) {
  if (t.empty() || !(std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '.')) return false;
  for (char c : t)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
      return false;
  char* end = nullptr;
  v = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && std::isfinite(v);
}

bool is_dash_line(const std::string& t) { return t.size() >= 3 && t.find_first_not_of('-') == std::string::npos; }

// Column header tokens merged into names: "BW" "peak[Gb/sec]" -> "BW peak[Gb/sec]", "99%" "percentile[usec]"
// -> "99% percentile[usec]"; "#bytes", "#iterations", "t_min[usec]" stand alone.
std::vector<std::string> header_columns(const std::vector<std::string>& toks) {
  std::vector<std::string> cols;
  std::string cur;
  for (const auto& t : toks) {
    if (!cur.empty()) cur += " ";
    cur += t;
    if (t[0] == '#' || t.find(']') != std::string::npos) {
      cols.push_back(cur);
      cur.clear();
    }
  }
  if (!cur.empty()) cols.push_back(cur);
  return cols;
}

enum class Col { Bytes, Iters, BwPeak, BwAvg, MsgRate, TMin, TMax, TTypical, TAvg, TStdev, P99, P999, Other };

// "BW peak[Gb/sec]" -> name "BW peak", unit "Gb/sec".
void split_unit(const std::string& col, std::string& name, std::string& unit) {
  std::size_t b = col.find('[');
  if (b == std::string::npos || col.back() != ']') {
    name = col;
    unit.clear();
    return;
  }
  name = trim(col.substr(0, b));
  unit = col.substr(b + 1, col.size() - b - 2);
}

Col column_kind(const std::string& name) {
  std::string n = lower(name);
  if (n == "#bytes") return Col::Bytes;
  if (n == "#iterations") return Col::Iters;
  if (n == "bw peak") return Col::BwPeak;
  if (n == "bw average") return Col::BwAvg;
  if (n == "msgrate") return Col::MsgRate;
  if (n == "t_min") return Col::TMin;
  if (n == "t_max") return Col::TMax;
  if (n == "t_typical") return Col::TTypical;
  if (n == "t_avg") return Col::TAvg;
  if (n == "t_stdev") return Col::TStdev;
  if (n == "99% percentile") return Col::P99;
  if (n == "99.9% percentile") return Col::P999;
  return Col::Other;
}

// Gb/s per printed unit; 0 when unknown. perftest's MB/sec is 2^20 bytes/s (format_factor 0x100000) and its
// Gb/sec is 10^9 bits/s (format_factor 125000000).
double gbps_factor(const std::string& unit) {
  std::string u = lower(unit);
  if (u == "gb/sec" || u == "gbit/sec" || u == "gb/s" || u == "gbps") return 1.0;
  if (u == "mb/sec" || u == "mib/sec" || u == "mb/s") return 1048576.0 * 8.0 / 1e9;
  return 0.0;
}

// "RDMA_Write BW Test" -> "ib_write_bw"; "" if the line is not a perftest title.
std::string test_from_title(const std::string& t, bool& bidirectional) {
  auto toks = split_ws(t);
  if (toks.size() < 3 || toks.back() != "Test") return "";
  const std::string& kind = toks[toks.size() - 2];
  std::string verb;
  if (toks[0] == "RDMA_Write") verb = "write";
  else if (toks[0] == "RDMA_Read") verb = "read";
  else if (toks[0] == "Send") verb = "send";
  else if (toks[0] == "Atomic") verb = "atomic";
  else return "";
  std::string suffix;
  if (kind == "BW") suffix = "bw";
  else if (kind == "Latency") suffix = "lat";
  else return "";
  bidirectional = false;
  for (const auto& x : toks)
    if (x == "Bidirectional") bidirectional = true;
  return "ib_" + verb + "_" + suffix;
}

struct Params {
  std::string test, title, tool_hint, device, link_type, transport, connection, gpu_name;
  bool bidirectional = false, use_cuda = false;
  bool server = false;  // after the server's "Waiting for client to connect..." banner
  int mtu = 0, num_qps = 0;
};

// perftest's notes between a header and its rows ("Conflicting CPU frequency values detected ...").
bool is_note(const std::string& t) {
  std::string l = lower(t);
  return l.find("warning") != std::string::npos || l.find("conflicting") != std::string::npos ||
         l.find("frequency") != std::string::npos;
}

// A row of numbers (its first field a number), as opposed to a header, a note or a '----' line.
bool looks_like_row(const std::string& t) {
  if (t.empty()) return false;
  const std::string first = t.substr(0, t.find_first_of(" \t"));
  std::uint64_t u;
  double d;
  return parse_u64(first, u) || parse_number(first, d);
}

// The "Key : value" pairs of a parameter-block line, left to right: a key starts with a letter and
// holds letters, digits, spaces and _ . * / ( ) -, then optional blanks, ':', optional blanks and a
// value without blanks. It is what std::regex "([A-Za-z][A-Za-z0-9_ .*/()-]*?)\s*:\s*(\S+)"
// matched, found in one pass: that regex backtracked from every letter to the next ':', so one
// 4096-character line of letters ending in ':' took 45 s (fuzz_perftest_log timed out in it).
std::vector<std::pair<std::string, std::string>> key_value_pairs(const std::string& line) {
  const auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  const auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); };
  const auto key_char = [&](char c) {
    return letter(c) || (c >= '0' && c <= '9') || c == '_' || c == ' ' || c == '.' || c == '*' || c == '/' ||
           c == '(' || c == ')' || c == '-';
  };
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t colon = line.find(':', pos);
    if (colon == std::string::npos) break;
    std::size_t v = colon + 1;
    while (v < line.size() && blank(line[v])) ++v;
    if (v == line.size()) break;  // nothing after the last ':'
    std::size_t v_end = v;
    while (v_end < line.size() && !blank(line[v_end])) ++v_end;
    // The key: the run of key characters before the blanks before ':', from its first letter.
    std::size_t b = colon;
    while (b > pos && blank(line[b - 1])) --b;
    std::size_t a = b;
    while (a > pos && key_char(line[a - 1])) --a;
    while (a < b && !letter(line[a])) ++a;
    if (a < b) {
      out.emplace_back(line.substr(a, b - a), line.substr(v, v_end - v));
      pos = v_end;
    } else {
      pos = colon + 1;  // no key before this ':'; the value may hold the next key's start
    }
  }
  return out;
}

// Reads "Key : value" pairs of the parameter block (two pairs per line in perftest's layout).
void read_params(const std::string& line, Params& p) {
  for (const auto& [raw_key, val] : key_value_pairs(line)) {
    const std::string key = lower(trim(raw_key));
    if (key == "device") p.device = val;
    else if (key == "link type") p.link_type = val;
    else if (key == "transport type") p.transport = val;
    else if (key == "connection type") p.connection = val;
    else if (key == "mtu") {
      int m = 0;
      auto r = std::from_chars(val.data(), val.data() + val.size(), m);
      if (r.ec == std::errc()) p.mtu = m;
    } else if (key == "number of qps") {
      int q = 0;
      auto r = std::from_chars(val.data(), val.data() + val.size(), q);
      if (r.ec == std::errc()) p.num_qps = q;
    }
  }
}

}  // namespace

std::vector<PerftestRun> parse_perftest_log(std::istream& in, const std::string& filename) {
  auto fail = [&](int line, const std::string& msg) -> void {
    throw InputError(filename, "line " + std::to_string(line) + ": " + msg);
  };
  static const std::regex tool_re(R"(\b(ib_(write|read|send|atomic)_(bw|lat))\b)");
  static const std::regex gpu_re(R"(device name = \[([^\]]*)\])");

  std::vector<PerftestRun> runs;
  Params p;
  std::string raw;
  int ln = 0;
  bool in_table = false;
  PerftestRun* run = nullptr;
  std::vector<Col> kinds;
  double factor = 1.0;
  // A table both sides print into (sides 2) stays open after the first '----' line: the other side's
  // rows and closing line may still follow.
  bool half_closed = false;

  auto close_table = [&](int line) {
    if (in_table && run->samples.empty()) {
      // perftest servers of some versions print the header and no row: nothing measured on that side.
      if (run->server) runs.pop_back();
      else fail(line, "perftest table header on line " + std::to_string(run->header_line) + " has no rows");
    }
    in_table = false;
    half_closed = false;
    p = Params{};  // what follows belongs to the next run
  };

  while (std::getline(in, raw)) {
    ++ln;
    if (raw.size() > kMaxLineChars) fail(ln, line_too_long(raw.size()));  // before any std::regex (common/line_limit.h)
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    if (is_provenance(raw)) continue;
    std::string t = trim(raw);

    if (in_table && !t.empty()) {
      auto toks = split_ws(t);
      if (toks[0] == "#bytes" && header_columns(toks) == run->columns) {
        // The other side's header: both sides' output interleave in this table. A '----' line seen
        // before it was the other side's line above its header.
        run->sides = 2;
        run->server = false;
        half_closed = false;
        continue;
      }
    }
    // After a '----' line that may be the other side's, anything but a row ends the table and is read
    // as usual below.
    if (in_table && half_closed && !looks_like_row(t) && !is_note(t)) close_table(ln);

    if (in_table) {
      if (t.empty() || is_dash_line(t)) {
        // perftest prints no '----' between a header and its rows, nor inside the rows: with no row
        // yet, or in a table of both sides, the line may be the other side's; the table stays open.
        if (!t.empty() && !half_closed && (run->sides == 2 || run->samples.empty())) {
          half_closed = true;
          continue;
        }
        close_table(ln);
        continue;
      }
      auto toks = split_ws(t);
      double dummy;
      std::uint64_t u;
      if (!parse_u64(toks[0], u) && !parse_number(toks[0], dummy)) {
        if (is_note(t)) continue;
        fail(ln, "unexpected text in the perftest result table (expected a row of " + std::to_string(kinds.size()) +
                     " numbers or a '----' line): '" + t.substr(0, 60) + "'");
      }
      if (toks.size() != kinds.size())
        fail(ln, "perftest row has " + std::to_string(toks.size()) + " fields, the header on line " +
                     std::to_string(run->header_line) + " has " + std::to_string(kinds.size()) + " columns (truncated row?)");
      PerftestSample s;
      s.line = ln;
      for (std::size_t i = 0; i < toks.size(); ++i) {
        const std::string& tok = toks[i];
        if (kinds[i] == Col::Bytes || kinds[i] == Col::Iters) {
          std::uint64_t v = 0;
          if (!parse_u64(tok, v)) fail(ln, "column '" + run->columns[i] + "': expected an integer, got '" + tok + "'");
          (kinds[i] == Col::Bytes ? s.bytes : s.iterations) = v;
          continue;
        }
        double v = 0;
        if (!parse_number(tok, v)) fail(ln, "column '" + run->columns[i] + "': expected a number, got '" + cut_for_message(tok) + "'");
        // Physical bounds (docs/errors.md): 100 Tb/s, 10^9 us (or cycles): beyond them a value is
        // corrupt, and a fit through it would divide by zero or overflow.
        const bool bandwidth = kinds[i] == Col::BwPeak || kinds[i] == Col::BwAvg;
        if (bandwidth ? v * factor > 1e5 : v > 1e9)
          fail(ln, "column '" + run->columns[i] + "': " + cut_for_message(tok) + " is beyond any NIC (at most " +
                       (bandwidth ? "100000 Gb/s" : "1e9 per sample") + ")");
        switch (kinds[i]) {
          case Col::BwPeak: s.bw_peak_Gbps = v * factor; break;
          case Col::BwAvg: s.bw_avg_Gbps = v * factor; break;
          case Col::MsgRate: s.msg_rate_Mpps = v; break;
          case Col::TMin: s.t_min_us = v; break;
          case Col::TMax: s.t_max_us = v; break;
          case Col::TTypical: s.t_typical_us = v; break;
          case Col::TAvg: s.t_avg_us = v; break;
          case Col::TStdev: s.t_stdev_us = v; break;
          case Col::P99: s.p99_us = v; break;
          case Col::P999: s.p999_us = v; break;
          default: break;
        }
      }
      run->samples.push_back(s);
      continue;
    }

    if (t.empty()) continue;
    auto toks = split_ws(t);

    // Column header of a result table.
    if (toks[0] == "#bytes") {
      PerftestRun r;
      r.test = p.test;
      r.title = p.title;
      r.bidirectional = p.bidirectional;
      r.device = p.device;
      r.link_type = p.link_type;
      r.transport = p.transport;
      r.connection = p.connection;
      r.mtu = p.mtu;
      r.num_qps = p.num_qps;
      r.use_cuda = p.use_cuda;
      r.gpu_name = p.gpu_name;
      r.server = p.server;
      r.index = static_cast<int>(runs.size());
      r.header_line = ln;
      r.columns = header_columns(toks);
      kinds.clear();
      bool has_bw = false, has_lat = false, has_iters = false;
      std::string bw_unit, lat_unit;
      for (const auto& c : r.columns) {
        std::string name, unit;
        split_unit(c, name, unit);
        Col k = column_kind(name);
        kinds.push_back(k);
        if (k == Col::Iters) has_iters = true;
        if (k == Col::BwPeak || k == Col::BwAvg) {
          if (gbps_factor(unit) == 0.0) fail(ln, "unknown bandwidth unit '" + unit + "' in column '" + c + "' (expected Gb/sec or MB/sec)");
          if (!bw_unit.empty() && bw_unit != unit) fail(ln, "bandwidth columns use different units ('" + bw_unit + "', '" + unit + "')");
          bw_unit = unit;
          has_bw = true;
        }
        if (k >= Col::TMin && k <= Col::P999) {
          std::string lu = lower(unit);
          if (lu != "usec" && lu != "cycles") fail(ln, "unknown latency unit '" + unit + "' in column '" + c + "' (expected usec or cycles)");
          lat_unit = unit;
          has_lat = true;
        }
      }
      if (!has_iters || (!has_bw && !has_lat))
        fail(ln, "perftest table header without '#iterations' and BW or t_* columns: '" + t.substr(0, 80) + "'");
      if (has_bw && has_lat) fail(ln, "perftest table header mixes bandwidth and latency columns");
      r.is_bandwidth = has_bw;
      r.units = has_bw ? bw_unit : lat_unit;
      factor = has_bw ? gbps_factor(bw_unit) : 1.0;
      if (r.test.empty() && !p.tool_hint.empty()) {
        bool hint_bw = p.tool_hint.size() > 3 && p.tool_hint.compare(p.tool_hint.size() - 3, 3, "_bw") == 0;
        if (hint_bw == has_bw) r.test = p.tool_hint;
      }
      if (!r.test.empty()) {
        bool test_bw = r.test.compare(r.test.size() - 3, 3, "_bw") == 0;
        if (test_bw != has_bw)
          fail(ln, "the table columns (" + std::string(has_bw ? "bandwidth" : "latency") + ") do not match the test '" + r.title + "'");
      }
      runs.push_back(std::move(r));
      run = &runs.back();
      in_table = true;
      continue;
    }

    bool bidir = false;
    std::string test = test_from_title(t, bidir);
    if (!test.empty()) {
      // CUDA set-up messages precede the title, so only the test identity is set here.
      p.test = test;
      p.title = t;
      p.bidirectional = bidir;
      continue;
    }
    std::smatch m;
    if (std::regex_search(t, m, tool_re)) p.tool_hint = m[1].str();
    if (std::regex_search(t, m, gpu_re)) {
      p.gpu_name = m[1].str();
      p.use_cuda = true;
    }
    std::string l = lower(t);
    if (l.find("waiting for client to connect") != std::string::npos) p.server = true;
    if (l.find("initializing cuda") != std::string::npos || l.find("cumemalloc") != std::string::npos ||
        l.find("cuda device") != std::string::npos || l.find("use_cuda") != std::string::npos ||
        l.find("initializing rocm") != std::string::npos)
      p.use_cuda = true;
    if (t.find(':') != std::string::npos) read_params(t, p);
  }
  if (in_table) run->cut_line = ln;  // no closing dashed line: the caller warns
  if (in_table) close_table(ln);
  if (runs.empty()) throw InputError(filename, "no perftest result table found (expected a header line starting with '#bytes')");
  return runs;
}

namespace {

bool same_sample(const PerftestSample& a, const PerftestSample& b) {
  return a.bytes == b.bytes && a.iterations == b.iterations && a.bw_peak_Gbps == b.bw_peak_Gbps &&
         a.bw_avg_Gbps == b.bw_avg_Gbps && a.msg_rate_Mpps == b.msg_rate_Mpps && a.t_min_us == b.t_min_us &&
         a.t_max_us == b.t_max_us && a.t_typical_us == b.t_typical_us && a.t_avg_us == b.t_avg_us &&
         a.t_stdev_us == b.t_stdev_us && a.p99_us == b.p99_us && a.p999_us == b.p999_us;
}

// Same measurement kind: the same test (or, without a title, the same kind of table) and direction.
bool same_test(const PerftestRun& a, const PerftestRun& b) {
  return a.is_bandwidth == b.is_bandwidth && a.bidirectional == b.bidirectional && a.units == b.units &&
         (a.test.empty() || b.test.empty() || a.test == b.test);
}

// Every row of `a` is a row of `b`.
bool contained_in(const PerftestRun& a, const PerftestRun& b) {
  for (const auto& x : a.samples) {
    bool found = false;
    for (const auto& y : b.samples)
      if (same_sample(x, y)) { found = true; break; }
    if (!found) return false;
  }
  return true;
}

std::string table_name(const PerftestRun& r) {
  return (r.test.empty() ? std::string("table") : r.test + " table") + " of line " + std::to_string(r.header_line);
}

// One row per size of a table both sides printed into: equal rows once, differing ones averaged.
void merge_sides(PerftestRun& r, std::vector<std::string>* notes) {
  std::vector<PerftestSample> out;
  std::vector<int> count;
  std::vector<bool> differ;
  for (const auto& s : r.samples) {
    std::size_t i = 0;
    while (i < out.size() && out[i].bytes != s.bytes) ++i;
    if (i == out.size()) {
      out.push_back(s);
      count.push_back(1);
      differ.push_back(false);
      continue;
    }
    if (same_sample(out[i], s)) continue;  // the other side's copy
    // Running mean over the rows of this size, field by field (-1: absent stays absent).
    const int n = ++count[i];
    differ[i] = true;
    auto mean = [n](double& m, double v) {
      if (m >= 0 && v >= 0) m += (v - m) / n;
    };
    PerftestSample& m = out[i];
    m.iterations = std::max(m.iterations, s.iterations);
    for (auto [mp, v] : {std::pair<double*, double>{&m.bw_peak_Gbps, s.bw_peak_Gbps}, {&m.bw_avg_Gbps, s.bw_avg_Gbps},
                         {&m.msg_rate_Mpps, s.msg_rate_Mpps}, {&m.t_min_us, s.t_min_us}, {&m.t_max_us, s.t_max_us},
                         {&m.t_typical_us, s.t_typical_us}, {&m.t_avg_us, s.t_avg_us}, {&m.t_stdev_us, s.t_stdev_us},
                         {&m.p99_us, s.p99_us}, {&m.p999_us, s.p999_us}})
      mean(*mp, v);
  }
  std::size_t merged = 0;
  for (bool d : differ) merged += d;
  if (notes)
    notes->push_back(r.test + (r.test.empty() ? "" : ": ") + "the server's and the client's output interleave in the " +
                     table_name(r) + ": " + std::to_string(r.samples.size()) + " rows read as " +
                     std::to_string(out.size()) + " size(s)" +
                     (merged ? ", " + std::to_string(merged) + " of them the mean of the two sides' differing rows" : ""));
  r.samples = std::move(out);
}

}  // namespace

std::vector<PerftestRun> select_perftest_runs(const std::vector<PerftestRun>& runs, std::vector<std::string>* notes) {
  std::vector<bool> keep(runs.size(), true);
  // The server's table when the client's is here too.
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].server) continue;
    for (std::size_t j = 0; j < runs.size(); ++j)
      if (j != i && !runs[j].server && same_test(runs[i], runs[j])) {
        keep[i] = false;
        if (notes)
          notes->push_back("the server's " + table_name(runs[i]) + " is not used: the client's " + table_name(runs[j]) +
                           " is");
        break;
      }
  }
  // Copies: every row also in another kept table of the same test (the longer, else the earlier, stays).
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!keep[i]) continue;
    for (std::size_t j = 0; j < runs.size(); ++j) {
      if (j == i || !keep[j] || !same_test(runs[i], runs[j])) continue;
      const bool longer = runs[j].samples.size() > runs[i].samples.size() ||
                          (runs[j].samples.size() == runs[i].samples.size() && j < i);
      if (longer && contained_in(runs[i], runs[j])) {
        keep[i] = false;
        if (notes)
          notes->push_back("the " + table_name(runs[i]) + " repeats rows of the " + table_name(runs[j]) +
                           " (the other side's copy): used once");
        break;
      }
    }
  }
  std::vector<PerftestRun> out;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!keep[i]) continue;
    out.push_back(runs[i]);
    if (out.back().sides == 2) merge_sides(out.back(), notes);
  }
  return out;
}

std::vector<PerftestRun> parse_perftest_file(const std::string& path) {
  std::istringstream f(read_input_file(path, "perftest log"));
  return parse_perftest_log(f, path);
}

}  // namespace ccsim
