#include "calibrate/nccl_tests_log.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "algorithms/nccl_types.h"
#include "calibrate/nccl_tests_json.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/text.h"

namespace ccsim {
namespace {



bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

// Removes "[1,0]<stdout>:" (mpirun --tag-output, also after another launcher's prefix: Ray's
// "(head, rank=0, pid=3808) [1,0]<stdout>:", or indented by a test harness) and "  0: " (srun --label).
std::string strip_launcher_prefix(const std::string& s) {
  for (const char* tag : {"]<stdout>:", "]<stderr>:"}) {
    const std::size_t p = s.find(tag);
    if (p == std::string::npos || p > 160) continue;
    const std::size_t open = s.rfind('[', p);
    if (open == std::string::npos) continue;
    bool ok = open + 1 < p;
    for (std::size_t i = open + 1; i < p; ++i)
      if (!std::isdigit(static_cast<unsigned char>(s[i])) && s[i] != ',') ok = false;
    if (ok) return s.substr(p + std::string(tag).size());
  }
  std::size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  std::size_t d = i;
  while (d < s.size() && std::isdigit(static_cast<unsigned char>(s[d]))) ++d;
  if (d > i && d - i <= 6 && d + 1 < s.size() && s[d] == ':' && s[d + 1] == ' ') return s.substr(d + 2);
  return s;
}

// Other launchers and log collectors put their own text before every line: timestamps (kubectl logs
// --timestamps), "[pod/NAME/CONTAINER] " (kubectl --prefix), "svc-1  | " (docker compose),
// "[default0]:" (torchrun), "HOST: " (pdsh), "[0] " (Intel MPI -prepend-rank), "(head, rank=0, ...)"
// (Ray). Their shapes are too many to list; what they share is that nccl-tests' own lines come after
// them unchanged. The run header ("# nThread ...") and the column header ("#       size ...") are
// found wherever they sit on a line, and what stands before their '#' marks the log as prefixed. In a
// prefixed log a comment line is read from its first '#', and a table row from its last fields (the
// table's width): a row has no '#', and its fields are the header's.
std::size_t nccl_tests_header_hash(const std::string& s) {
  for (const char* marker : {"# nThread ", "#  Rank ", "# Using devices", "#       size ", "# Collective test starting",
                             "# nccl-tests version"}) {
    const std::size_t p = s.find(marker);
    if (p != std::string::npos) return p;
  }
  return std::string::npos;
}

bool parse_double(const std::string& t, double& v) {
  if (t.empty()) return false;
  // Plain decimal / exponent numbers, plus "nan" / "inf" / "-nan" as printf writes them.
  for (char c : t)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' || c == 'e' ||
          c == 'E' || c == 'n' || c == 'a' || c == 'i' || c == 'f'))
      return false;
  char* end = nullptr;
  v = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

// Column layout derived from a header line.
struct Layout {
  int ncols = 0;       // number of whitespace-separated fields of a row
  int idx_size = -1, idx_count = -1, idx_type = -1, idx_redop = -1, idx_root = -1;
  struct Group { int time = -1, algbw = -1, busbw = -1, wrong = -1; bool oop = true; };
  std::vector<Group> groups;
  std::string names;   // for messages
};

class Parser {
 public:
  Parser(std::istream& in, const std::string& filename) : in_(in), file_(filename) {}

  std::vector<NcclTestsRun> run() {
    std::string raw;
    while (std::getline(in_, raw)) {
      ++lineno_;
      if (!raw.empty() && raw.back() == '\r') raw.pop_back();
      if (lineno_ == 1 && raw.rfind("\xEF\xBB\xBF", 0) == 0) raw.erase(0, 3);  // a UTF-8 byte-order mark
      handle(strip_other_prefix(strip_launcher_prefix(raw)));
    }
    if (cur_.header_line > 0) {
      finalize();
    } else if (nthread_line_ > 0 && !runs_.empty()) {
      fail(nthread_line_, "nccl-tests run header without a result table");
    }
    if (runs_.empty())
      throw InputError(file_, "no nccl-tests result table found (expected a column header line like "
                              "'#       size         count      type   redop    root     time   algbw   busbw #wrong ...')");
    return std::move(runs_);
  }

 private:
  // A launcher's prefix (nccl_tests_header_hash above): once a run header or column header is found
  // after other text, comment lines are read from their first '#' and table rows from their last
  // fields. NCCL's own lines are left whole (handle() reads them anywhere on the line).
  std::string strip_other_prefix(const std::string& s) {
    const std::size_t h = nccl_tests_header_hash(s);
    if (h != std::string::npos && !trim(s.substr(0, h)).empty()) prefixed_ = true;
    if (!prefixed_ || s.find("NCCL INFO") != std::string::npos || s.find("NCCL WARN") != std::string::npos) return s;
    const std::size_t hash = s.find('#');
    if (hash != std::string::npos) return s.substr(hash);
    if (!table_mode_ || layout_.ncols < 2) return s;
    const auto t = split_ws(s);
    const std::size_t width = static_cast<std::size_t>(layout_.ncols);
    if (t.size() <= width) return s;
    const std::size_t first = t.size() - width;
    std::uint64_t size = 0, count = 0;
    if (!parse_u64(t[first], size) || !parse_u64(t[first + 1], count)) return s;
    std::string row;
    for (std::size_t i = first; i < t.size(); ++i) row += (i > first ? " " : "") + t[i];
    return row;
  }

  [[noreturn]] void fail(int line, const std::string& what) const {
    throw InputError(file_, "line " + std::to_string(line) + ": " + what);
  }

  void new_run() {
    cur_ = NcclTestsRun{};
    layout_ = Layout{};
    table_mode_ = false;
    nthread_line_ = 0;
    library_code_ = 0;
    label_line_.clear();
    if (!pending_collective_.empty()) cur_.collective = pending_collective_;
    cur_.named_collectives = std::move(pending_named_);
    pending_named_.clear();
    if (!pending_version_.empty()) cur_.nccl_version = pending_version_;
    cur_.blocking = pending_blocking_;
    cur_.local_register = pending_local_register_;
    pending_collective_.clear();
    pending_version_.clear();
    pending_blocking_ = -1;
    pending_local_register_ = -1;
  }

  void finalize() {
    flush_row_pieces();
    if (cur_.rows.empty()) fail(cur_.header_line, "nccl-tests table header has no data rows");
    cur_.ranks = static_cast<int>(cur_.devices.size());
    if (cur_.nccl_version.empty() && library_code_ > 0) cur_.nccl_version = nccl_version_from_code(library_code_);
    for (NcclTestsRun& one : split_runs_by_type_and_op(std::move(cur_))) runs_.push_back(std::move(one));
    new_run();
  }

  // A line that starts a new run section ("# nccl-tests version", "# Collective test starting", "# nThread").
  void begin_section() {
    if (cur_.header_line > 0) {
      finalize();
    } else if (nthread_line_ > 0) {
      fail(nthread_line_, "nccl-tests run header without a result table");
    }
  }

  void set_collective(const std::string& c, bool override_known) {
    if (c.empty()) return;
    std::vector<std::string>& named = cur_.header_line > 0 ? pending_named_ : cur_.named_collectives;
    const auto known = std::find(named.begin(), named.end(), c);
    if (override_known) {  // the test header: first in the list
      if (known != named.end()) named.erase(known);
      named.insert(named.begin(), c);
    } else {  // the latest mention last
      if (known != named.end()) named.erase(known);
      named.push_back(c);
    }
    if (cur_.header_line > 0) {
      if (pending_collective_.empty() || override_known) pending_collective_ = c;
    } else if (cur_.collective.empty() || override_known) {
      cur_.collective = c;
    }
  }

  void set_version(const std::string& v) {
    if (cur_.header_line > 0) pending_version_ = v;
    else if (cur_.nccl_version.empty()) cur_.nccl_version = v;
  }

  void scan_version(const std::string& s) {
    std::size_t p = s.find("NCCL version ");
    if (p == std::string::npos) return;
    auto toks = split_ws(s.substr(p + 13));
    if (toks.empty() || !std::isdigit(static_cast<unsigned char>(toks[0][0]))) return;
    // A version is digits, dots and a build suffix ("2.26.2+cuda12.8"); a quote or bracket after it is
    // the line's text around a quoted line (a log's header citing `"NCCL version 2.26.2+cuda12.8")`).
    std::string v = toks[0];
    const std::size_t end = v.find_first_not_of("0123456789.+-_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
    if (end != std::string::npos) v.resize(end);
    set_version(v);
  }

  // Every "<collective>_perf" of a line (a note may list several); -z is read after the first.
  void scan_collective(const std::string& s) {
    std::size_t p = 0;
    bool first = true;
    while ((p = s.find("_perf", p)) != std::string::npos) {
      std::size_t b = p;
      while (b > 0 && (std::islower(static_cast<unsigned char>(s[b - 1])) || s[b - 1] == '_' ||
                       std::isdigit(static_cast<unsigned char>(s[b - 1]))))
        --b;
      std::string c = nccl_tests_collective_from_name(s.substr(b, p - b));
      if (!c.empty()) {
        set_collective(c, false);
        if (first) scan_command_flags(s.substr(p + 5));
        first = false;
      }
      p += 5;
    }
  }

  // nccl-tests' -z (--blocking) and -R (--local_register) on an echoed command line, after the binary's
  // name: "-z 1", "-z1", "--blocking 1", "--blocking=1" (getopt_long's spellings). The last one given
  // wins, as in getopt. A command after a run's header belongs to the next run.
  void scan_command_flags(const std::string& args) {
    const std::vector<std::string> t = split_ws(args);
    const bool next_run = cur_.header_line > 0;
    if (const int b = nccl_tests_blocking_flag(t); b >= 0) (next_run ? pending_blocking_ : cur_.blocking) = b;
    if (const int r = nccl_tests_local_register_flag(t); r >= 0) (next_run ? pending_local_register_ : cur_.local_register) = r;
  }

  void parse_nthread(const std::string& body) {
    begin_section();
    nthread_line_ = lineno_;
    auto t = split_ws(body);
    auto need = [&](std::size_t i, const char* what) -> const std::string& {
      if (i >= t.size()) fail(lineno_, std::string("nccl-tests header line lacks the value of '") + what + "'");
      return t[i];
    };
    auto get_int = [&](std::size_t i, const char* what) {
      int v;
      if (!parse_int(need(i, what), v)) fail(lineno_, std::string("cannot read '") + what + "' in the nccl-tests header: '" + t[i] + "'");
      return v;
    };
    auto get_u64 = [&](std::size_t i, const char* what) {
      std::uint64_t v;
      if (!parse_u64(need(i, what), v)) fail(lineno_, std::string("cannot read '") + what + "' in the nccl-tests header: '" + t[i] + "'");
      return v;
    };
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::string& k = t[i];
      if (k == "nThread") cur_.nthread = get_int(i + 1, "nThread");
      else if (k == "nGpus") cur_.ngpus = get_int(i + 1, "nGpus");
      else if (k == "minBytes") cur_.min_bytes = get_u64(i + 1, "minBytes");
      else if (k == "maxBytes") cur_.max_bytes = get_u64(i + 1, "maxBytes");
      else if (k == "step:") cur_.step = need(i + 1, "step");
      else if (k == "iters:") {
        std::string prev = i > 0 ? t[i - 1] : "";
        int v = get_int(i + 1, "iters");
        if (prev == "warmup") cur_.warmup_iters = v;
        else if (prev == "agg") cur_.agg_iters = v;
        else cur_.iters = v;
      } else if (k == "validation:") cur_.validation = get_int(i + 1, "validation");
      else if (k == "graph:") cur_.graph = get_int(i + 1, "graph");
    }
  }

  void parse_column_header(const std::string& body) {
    if (cur_.header_line > 0) finalize();
    auto t = split_ws(body);
    Layout L;
    std::size_t i = 0;
    auto is_time = [](const std::string& s) { return s == "time" || s == "cputime"; };
    for (; i < t.size() && !is_time(t[i]); ++i) {
      const std::string& k = t[i];
      int idx = static_cast<int>(i);
      if (k == "size") L.idx_size = idx;
      else if (k == "count") L.idx_count = idx;
      else if (k == "type") L.idx_type = idx;
      else if (k == "redop") L.idx_redop = idx;
      else if (k == "root") L.idx_root = idx;
      else fail(lineno_, "unrecognised column '" + k + "' in the nccl-tests table header");
    }
    if (L.idx_size != 0 || L.idx_count != 1)
      fail(lineno_, "nccl-tests table header must start with 'size count'");
    bool timestamp = false;
    for (; i < t.size(); ++i) {
      const std::string& k = t[i];
      int idx = static_cast<int>(i);
      if (is_time(k)) { L.groups.emplace_back(); L.groups.back().time = idx; continue; }
      if (L.groups.empty()) continue;
      auto& g = L.groups.back();
      if (k == "algbw" && g.algbw < 0) g.algbw = idx;
      else if (k == "busbw" && g.busbw < 0) g.busbw = idx;
      else if ((k == "#wrong" || k == "error") && g.wrong < 0) { g.wrong = idx; cur_.wrong_column = k; }
      else if (k == "timestamp") timestamp = true;
    }
    if (L.groups.empty() || L.groups.size() > 2)
      fail(lineno_, "nccl-tests table header needs one or two 'time algbw busbw' column groups");
    for (auto& g : L.groups)
      if (g.algbw < 0 || g.busbw < 0) fail(lineno_, "nccl-tests table header lacks an 'algbw' or 'busbw' column");
    L.ncols = static_cast<int>(t.size()) + (timestamp ? 1 : 0);
    for (auto& k : t) L.names += (L.names.empty() ? "" : " ") + k;

    // Which group is out-of-place: from the "out-of-place   in-place" label line above, if any.
    std::size_t po = label_line_.find("out-of-place"), pi = label_line_.find("in-place");
    if (po != std::string::npos && pi != std::string::npos && pi < po) {
      // "in-place" could be a substring match inside "out-of-place"? No: "out-of-place" has no "in-".
      L.groups[0].oop = false;
      if (L.groups.size() > 1) L.groups[1].oop = true;
    } else {
      L.groups[0].oop = true;
      if (L.groups.size() > 1) L.groups[1].oop = false;
      if (L.groups.size() == 1 && po == std::string::npos && pi != std::string::npos) L.groups[0].oop = false;
    }
    cur_.has_type = L.idx_type >= 0;
    cur_.has_redop = L.idx_redop >= 0;
    cur_.has_root = L.idx_root >= 0;
    cur_.has_in_place = L.groups.size() == 2 || !L.groups[0].oop;
    if (body.find("busbw  #wrong") != std::string::npos) cur_.style = NcclTestsStyle::Current;
    else cur_.style = NcclTestsStyle::Legacy;
    cur_.header_line = lineno_;
    layout_ = L;
    table_mode_ = true;
    label_line_.clear();
  }

  // One table row; `line` is where it starts (a row NCCL's lines cut in two is read where it began).
  void parse_row(const std::string& s, int line) {
    auto t = split_ws(s);
    const Layout& L = layout_;
    if (static_cast<int>(t.size()) == L.ncols - 1 && L.idx_redop >= 0 && L.idx_root == L.idx_redop + 1) {
      int dummy;  // hypercube prints an empty op name: "float          -1"
      if (parse_int(t[L.idx_redop], dummy)) t.insert(t.begin() + L.idx_redop, "");
    }
    if (static_cast<int>(t.size()) != L.ncols)
      fail(line, "nccl-tests row has " + std::to_string(t.size()) + " fields, expected " + std::to_string(L.ncols) +
                        " (" + L.names + ")" + (static_cast<int>(t.size()) < L.ncols ? "; truncated line?" : ""));
    NcclTestsRow r;
    r.line = line;
    auto bad = [&](int idx, const char* what) {
      fail(line, std::string("field '") + what + "' (column " + std::to_string(idx + 1) + ") is not a valid number: '" +
                        t[idx] + "'");
    };
    if (!parse_u64(t[L.idx_size], r.size_bytes)) bad(L.idx_size, "size");
    if (!parse_u64(t[L.idx_count], r.count)) bad(L.idx_count, "count");
    if (L.idx_type >= 0) r.type = t[L.idx_type];
    if (L.idx_redop >= 0) r.redop = t[L.idx_redop];
    if (L.idx_root >= 0 && !parse_int(t[L.idx_root], r.root)) bad(L.idx_root, "root");
    r.oop_wrong = r.ip_wrong = -1;  // stays -1 for a column group the layout lacks
    for (const auto& g : L.groups) {
      double tm, ab, bb;
      if (!parse_double(t[g.time], tm)) bad(g.time, "time");
      // printf writes nan and inf too, but a time that is one, or negative, is no measurement.
      if (!(tm >= 0) || std::isinf(tm))
        fail(line, "field 'time' (column " + std::to_string(g.time + 1) + ") is not a measurement: '" +
                          cut_for_message(t[g.time]) + "' (negative, nan or inf)");
      // A time of 0 for a non-empty buffer is no measurement either (such rows were dropped silently).
      if (tm == 0 && r.size_bytes > 0)
        fail(line, "field 'time' (column " + std::to_string(g.time + 1) + ") is 0 for " + std::to_string(r.size_bytes) +
                          " bytes: not a measurement");
      if (!parse_double(t[g.algbw], ab)) bad(g.algbw, "algbw");
      if (!parse_double(t[g.busbw], bb)) bad(g.busbw, "busbw");
      long wrong = -1;
      if (g.wrong >= 0 && t[g.wrong] != "N/A") {
        double w;
        if (!parse_double(t[g.wrong], w) || !(w >= 0) || std::isinf(w)) bad(g.wrong, cur_.wrong_column.c_str());
        // The old "error" column is a max delta ("%5.0le"); any non-zero delta counts as one wrong element.
        wrong = (w > 0 && w < 1) ? 1 : static_cast<long>(std::llround(w));
      }
      if (g.oop) { r.oop_time_us = tm; r.oop_algbw_GBps = ab; r.oop_busbw_GBps = bb; r.oop_wrong = wrong; }
      else { r.ip_time_us = tm; r.ip_algbw_GBps = ab; r.ip_busbw_GBps = bb; r.ip_wrong = wrong; }
    }
    cur_.rows.push_back(std::move(r));
  }

  // "Avg bus bandwidth    : 2.05774": the phrase, blanks, then ':' (a comment that only mentions the
  // phrase, e.g. a note saying a log has no such trailer, is not the trailer).
  static bool is_avg_line(const std::string& s) {
    static const std::string phrase = "Avg bus bandwidth";
    const std::size_t p = s.find(phrase);
    if (p == std::string::npos) return false;
    std::size_t q = p + phrase.size();
    while (q < s.size() && (s[q] == ' ' || s[q] == '\t')) ++q;
    return q < s.size() && s[q] == ':';
  }

  void parse_avg(const std::string& s) {
    std::size_t p = s.find(':', s.find("Avg bus bandwidth"));
    auto t = p == std::string::npos ? std::vector<std::string>{} : split_ws(s.substr(p + 1));
    double v;
    if (t.empty() || !parse_double(t[0], v)) fail(lineno_, "cannot read the value of 'Avg bus bandwidth'");
    if (cur_.header_line > 0 && cur_.has_avg_busbw) return;  // already have it; ignore duplicates
    if (cur_.header_line > 0) { cur_.has_avg_busbw = true; cur_.avg_busbw_GBps = v; }
    table_mode_ = false;
  }

  static bool is_device_line(const std::string& body) {
    auto t = split_ws(body);
    int dummy;
    return t.size() >= 4 && t[0] == "Rank" && parse_int(t[1], dummy) && body.find(" device ") != std::string::npos;
  }

  static bool is_bare_comment_line(const std::string& ts) {
    if (starts_with(ts, "nThread ") || starts_with(ts, "nccl-tests version") || starts_with(ts, "Collective test starting:") ||
        starts_with(ts, "Collective test concluded:") || starts_with(ts, "Using devices") || starts_with(ts, "(B)") ||
        is_device_line(ts))
      return true;
    const auto t = split_ws(ts);
    if (t.size() >= 2 && t[0] == "size" && t[1] == "count" && ts.find("algbw") != std::string::npos) return true;
    return (ts.find("out-of-place") != std::string::npos || ts.find("in-place") != std::string::npos) &&
           !std::isdigit(static_cast<unsigned char>(ts[0]));
  }

  // nccl-tests' column names since 2.13 (a run prints them above its rows).
  static constexpr const char* kCurrentColumns =
      "size count type redop root time algbw busbw #wrong time algbw busbw #wrong";

  // A row of nccl-tests' current layout where no column header came first (a table pasted without
  // its header lines): 13 fields, size and count, a datatype, an op (or "none"), a root, then two
  // groups of time, algbw, busbw and #wrong (a number or N/A).
  static bool is_headerless_row(const std::string& ts) {
    const auto t = split_ws(ts);
    std::uint64_t u = 0;
    int root = 0;
    double v = 0;
    if (t.size() != 13 || !parse_u64(t[0], u) || !parse_u64(t[1], u) || !is_nccl_datatype(t[2]) || !parse_int(t[4], root))
      return false;
    for (const std::size_t i : {5, 6, 7, 9, 10, 11})
      if (!parse_double(t[i], v)) return false;
    for (const std::size_t i : {8, 12})
      if (t[i] != "N/A" && !parse_double(t[i], v)) return false;
    return true;
  }

  // A launcher's message that happens to start with a number, printed into the table ("8 more
  // processes have sent help message help-mtl-ofi.txt / OFI call fail", Open MPI's aggregated
  // warnings): every layout's second field is the element count, a number, so a word there, on a line
  // of another field count than the table's, is text. A row cut after its size, or one of the table's
  // width with a bad count, is still a bad row.
  bool is_text_after_a_number(const std::string& ts) const {
    const auto t = split_ws(ts);
    double v = 0;
    return t.size() >= 2 && !parse_double(t[1], v) && static_cast<int>(t.size()) != layout_.ncols;
  }

  void handle(const std::string& s) {
    const std::size_t nccl_at = nccl_line_start(s);
    if (nccl_at != std::string::npos) {
      if (nccl_at > 0) take_row_piece(s.substr(0, nccl_at));
      scan_version(s.substr(nccl_at));
      return;
    }
    if (s.find("NCCL INFO") != std::string::npos || s.find("NCCL WARN") != std::string::npos) {
      scan_version(s);
      return;
    }
    if (!row_piece_.empty() && continue_row(s)) return;
    std::string ts = trim(s);
    if (ts.empty()) return;
    // Some launchers and log collectors drop the leading '#' of nccl-tests' comment lines (dstack
    // prints "nThread 1 nGpus 1 ..." and "size count type ..."): read nccl-tests' own comment
    // lines as such. Data rows start with a digit and match none of these.
    if (ts[0] != '#' && is_bare_comment_line(ts)) ts = "# " + ts;
    if (ts[0] == '#') {
      std::string body = ts.substr(1);
      std::string tb = trim(body);
      if (starts_with(tb, "nccl-tests version")) {
        begin_section();
        auto t = split_ws(tb);
        if (t.size() >= 3) cur_.nccl_tests_version = t[2];
        std::size_t p = tb.find("nccl-library=");
        if (p != std::string::npos) library_code_ = std::atol(tb.c_str() + p + 13);
        return;
      }
      if (starts_with(tb, "Collective test starting:")) {
        begin_section();
        set_collective(nccl_tests_collective_from_name(trim(tb.substr(25))), true);
        return;
      }
      if (starts_with(tb, "Collective test concluded:")) return;
      // nccl-tests' own line for -z 1 ("# Blocking Enabled: wait for completion and barrier after each
      // collective"), printed below the run header.
      if (starts_with(tb, "Blocking Enabled")) {
        if (cur_.header_line > 0) pending_blocking_ = 1;
        else cur_.blocking = 1;
        return;
      }
      if (starts_with(tb, "nThread ")) { parse_nthread(tb); return; }
      if (is_device_line(tb)) {
        if (cur_.header_line > 0) finalize();
        cur_.devices.push_back(s.size() >= 2 && s[0] == '#' && s[1] == ' ' ? s.substr(2) : tb);
        return;
      }
      if (is_avg_line(tb)) { parse_avg(tb); return; }
      if (starts_with(tb, "Out of bounds values")) return;
      {
        auto t = split_ws(tb);
        if (t.size() >= 2 && t[0] == "size" && t[1] == "count" && tb.find("algbw") != std::string::npos) {
          parse_column_header(tb);
          return;
        }
      }
      // The label line above the column names ("out-of-place   in-place"); a provenance note that
      // mentions the words is not one.
      if ((tb.find("out-of-place") != std::string::npos || tb.find("in-place") != std::string::npos) && !is_provenance(ts)) {
        if (tb.find("(B)") == std::string::npos) label_line_ = tb;
        return;
      }
      if (starts_with(tb, "(B)")) return;
      scan_version(tb);
      scan_collective(tb);
      return;
    }
    if (starts_with(ts, "Avg bus bandwidth")) { parse_avg(ts); return; }
    if (starts_with(ts, "Out of bounds values")) return;
    // A signed first field ("-8") is a row with a bad size, not text to skip (it was dropped silently).
    const bool signed_number = (ts[0] == '-' || ts[0] == '+') && ts.size() > 1 && std::isdigit(static_cast<unsigned char>(ts[1]));
    if (!table_mode_ && cur_.header_line == 0 && is_headerless_row(ts)) {
      parse_column_header(kCurrentColumns);
      cur_.column_header_implied = true;
      cur_.style = NcclTestsStyle::Current;
    }
    if (table_mode_ && (std::isdigit(static_cast<unsigned char>(ts[0])) || signed_number)) {
      std::size_t e = 0;
      while (e < ts.size() && !std::isspace(static_cast<unsigned char>(ts[e]))) ++e;
      if (ts.substr(0, e).find(':') == std::string::npos && !is_text_after_a_number(ts)) { parse_row(ts, lineno_); return; }
    }
    scan_version(ts);
    scan_collective(ts);
  }

  // nccl-tests prints a row in pieces: size .. root before the collective runs, each column group's
  // time and bandwidths after it. NCCL writes its own lines to the same terminal or file while the
  // collective runs (with NCCL_DEBUG=INFO: the rings or trees it connects when an algorithm first runs,
  // lazily since NCCL 2.22), so one can land inside a row, glued to its last field,
  //   "     2097152        524288     float     sum      -1gcn151:1904979:1905073 [0] NCCL INFO Channel ..."
  // with the row's rest on a later line ("    87.18   24.05   42.10      0    85.11 ..."). Where an NCCL
  // line starts on `s`: its host:pid:tid token, after the field glued to it; npos when `s` holds no
  // NCCL line of that form. The field ends where a host of the run's device list begins, or, for a
  // host the list does not name, after the field's digits where a letter follows them.
  std::size_t nccl_line_start(const std::string& s) const {
    std::size_t p = s.find(" NCCL INFO");
    if (p == std::string::npos) p = s.find(" NCCL WARN");
    if (p == std::string::npos || p == 0 || s[p - 1] != ']') return std::string::npos;
    std::size_t open = s.rfind('[', p - 1);
    if (open == std::string::npos || open == 0) return std::string::npos;
    std::size_t end = open;
    while (end > 0 && s[end - 1] == ' ') --end;
    std::size_t start = end;
    while (start > 0 && !std::isspace(static_cast<unsigned char>(s[start - 1]))) --start;
    const std::string token = s.substr(start, end - start);  // [field digits]host:pid:tid
    if (std::count(token.begin(), token.end(), ':') < 2) return std::string::npos;
    const std::string name = token.substr(0, token.find(':'));
    for (const std::string& host : device_hosts())
      if (name.size() > host.size() && name.compare(name.size() - host.size(), host.size(), host) == 0)
        return start + name.size() - host.size();
    std::size_t g = 0;
    if (g < token.size() && (token[g] == '-' || token[g] == '+')) ++g;
    const std::size_t digits = g;
    while (g < token.size() && std::isdigit(static_cast<unsigned char>(token[g]))) ++g;
    if (g < token.size() && token[g] == '.')
      for (++g; g < token.size() && std::isdigit(static_cast<unsigned char>(token[g]));) ++g;
    const bool glued = g > digits && g < token.size() && std::isalpha(static_cast<unsigned char>(token[g]));
    return start + (glued ? g : 0);
  }

  // The hosts of the run's device lines ("Rank  0 Group  0 Pid 1904979 on     gcn151 device  0 ...").
  std::vector<std::string> device_hosts() const {
    std::vector<std::string> hosts;
    for (const std::string& line : cur_.devices) {
      const auto t = split_ws(line);
      for (std::size_t i = 0; i + 2 < t.size(); ++i)
        if (t[i] == "on" && t[i + 2] == "device") hosts.push_back(t[i + 1]);
    }
    return hosts;
  }

  // Text that stood before an NCCL line on one line: the start of a table row, or the next piece of
  // one already started; anything else (a timestamp, a launcher's text) is not a row and is dropped.
  void take_row_piece(const std::string& piece) {
    const auto t = split_ws(piece);
    if (!table_mode_ || t.empty()) return;
    if (row_piece_.empty()) {
      std::uint64_t v = 0;
      if (!parse_u64(t[0], v) || (t.size() > 1 && !parse_u64(t[1], v)) || static_cast<int>(t.size()) >= layout_.ncols) return;
      row_piece_ = trim(piece);
      row_piece_line_ = lineno_;
      return;
    }
    if (all_row_values(t)) row_piece_ += " " + trim(piece);
  }

  static bool all_row_values(const std::vector<std::string>& t) {
    double v = 0;
    for (const std::string& x : t)
      if (x != "N/A" && !parse_double(x, v)) return false;
    return !t.empty();
  }

  // A line after a row's first piece: its rest (values only) completes it; anything else leaves the
  // row cut off, which parse_row reports where it began. Returns whether `s` was taken.
  bool continue_row(const std::string& s) {
    const auto t = split_ws(s);
    if (t.empty()) return true;
    if (!all_row_values(t)) {
      flush_row_pieces();
      return false;
    }
    row_piece_ += " " + trim(s);
    if (static_cast<int>(split_ws(row_piece_).size()) >= layout_.ncols) flush_row_pieces();
    return true;
  }

  void flush_row_pieces() {
    if (row_piece_.empty()) return;
    const std::string row = std::move(row_piece_);
    row_piece_.clear();
    parse_row(row, row_piece_line_);
  }

  std::istream& in_;
  std::string file_;
  int lineno_ = 0;
  std::vector<NcclTestsRun> runs_;
  NcclTestsRun cur_;
  Layout layout_;
  bool table_mode_ = false;
  int nthread_line_ = 0;
  long library_code_ = 0;
  std::string label_line_;
  std::string pending_collective_, pending_version_;
  std::vector<std::string> pending_named_;
  int pending_blocking_ = -1;
  int pending_local_register_ = -1;
  bool prefixed_ = false;  // a launcher's text stands before nccl-tests' lines (strip_other_prefix)
  std::string row_piece_;  // a row's first pieces, cut by an NCCL line (take_row_piece)
  int row_piece_line_ = 0;
};

// The integer value of an nccl-tests option among a command's arguments in getopt_long's spellings
// ("-z 1", "-z1", "--blocking 1", "--blocking=1"), the last one given winning; -1 when none is given.
int nccl_tests_int_flag(const std::vector<std::string>& t, const std::string& short_flag, const std::string& long_flag) {
  int found = -1;
  for (std::size_t i = 0; i < t.size(); ++i) {
    std::string value;
    if ((t[i] == short_flag || t[i] == long_flag) && i + 1 < t.size()) value = t[i + 1];
    else if (t[i].rfind(long_flag + "=", 0) == 0) value = t[i].substr(long_flag.size() + 1);
    else if (t[i].rfind(short_flag, 0) == 0 && t[i].size() > short_flag.size()) value = t[i].substr(short_flag.size());
    int v;
    if (!value.empty() && parse_int(value, v) && v >= 0) found = v;
  }
  return found;
}

}  // namespace

int nccl_tests_blocking_flag(const std::vector<std::string>& t) {
  const int v = nccl_tests_int_flag(t, "-z", "--blocking");
  return v < 0 ? -1 : v != 0 ? 1 : 0;
}

int nccl_tests_local_register_flag(const std::vector<std::string>& t) { return nccl_tests_int_flag(t, "-R", "--local_register"); }

std::vector<NcclTestsRun> split_runs_by_type_and_op(NcclTestsRun run) {
  std::vector<std::pair<std::string, std::string>> kinds;
  for (const NcclTestsRow& r : run.rows)
    if (std::find(kinds.begin(), kinds.end(), std::make_pair(r.type, r.redop)) == kinds.end()) kinds.emplace_back(r.type, r.redop);
  if (kinds.size() <= 1) return {std::move(run)};
  std::vector<NcclTestsRun> out;
  for (const auto& kind : kinds) {
    NcclTestsRun one = run;
    one.rows.clear();
    for (const NcclTestsRow& r : run.rows)
      if (r.type == kind.first && r.redop == kind.second) one.rows.push_back(r);
    out.push_back(std::move(one));
  }
  return out;
}

std::string nccl_version_from_code(long code) {
  long major, minor, patch;
  if (code >= 20900) {
    major = code / 10000; minor = (code % 10000) / 100; patch = code % 100;
  } else {
    major = code / 1000; minor = (code % 1000) / 100; patch = code % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string nccl_tests_collective_from_name(const std::string& name) {
  std::string n = trim(name);
  std::size_t slash = n.find_last_of('/');
  if (slash != std::string::npos) n = n.substr(slash + 1);
  for (const char* suffix : {"_mpi", "_perf"}) {
    std::string sfx = suffix;
    if (n.size() > sfx.size() && n.compare(n.size() - sfx.size(), sfx.size(), sfx) == 0) n.resize(n.size() - sfx.size());
  }
  static const char* known[] = {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "alltoallv", "broadcast",
                                "reduce", "sendrecv", "gather", "scatter", "hypercube"};
  for (const char* k : known)
    if (n == k) return n;
  return "";
}

std::vector<NcclTestsRun> parse_nccl_tests_log(std::istream& in, const std::string& filename) {
  std::ostringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  if (looks_like_nccl_tests_json(text)) return parse_nccl_tests_json(text, filename);
  std::istringstream lines(text);
  return Parser(lines, filename).run();
}

std::vector<NcclTestsFile> parse_nccl_tests_files(const std::vector<std::string>& paths) {
  std::vector<NcclTestsFile> files;
  for (const std::string& p : paths) files.push_back({p, parse_nccl_tests_file(p)});
  return files;
}

std::vector<NcclTestsRun> parse_nccl_tests_file(const std::string& path) {
  std::istringstream f(read_input_file(path, "nccl-tests log"));
  return parse_nccl_tests_log(f, path);
}

}  // namespace ccsim
