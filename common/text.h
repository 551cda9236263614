// Small text helpers shared by the log and topology importers.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ccsim {

// Whitespace-separated fields.
std::vector<std::string> split_ws(const std::string& s);
std::string trim(const std::string& s);
std::string lower(std::string s);
// The parts with `sep` between them ("a, b, c").
std::string join(const std::vector<std::string>& parts, const std::string& sep = ", ");
// The provenance lines reference files carry on top ("# SOURCE:", "# HARDWARE:", "# TOOL:", "# NOTE:");
// users' own files do not have them.
bool is_provenance(const std::string& line);
// Whole-string unsigned / signed integer parsing; false on anything else.
bool parse_u64(const std::string& t, std::uint64_t& v);
bool parse_int(const std::string& t, int& v);

// A user's value as error messages quote it: control characters (C0, DEL, C1, U+2028, U+2029) and
// bytes of invalid UTF-8 escaped as \xNN, and anything beyond `max_chars` characters cut with
// "... (N bytes)" (the value's own length), so an error stays one short line.
std::string cut_for_message(const std::string& value, std::size_t max_chars = 80);
// The offset of the first control character (C0, DEL, C1 U+0080..U+009F, U+2028, U+2029) or invalid
// UTF-8 in `s`, or npos: names that ccsim prints into tables and reports must not carry line breaks,
// NUL bytes or terminal controls.
std::size_t find_control_char(const std::string& s);

// printf into a std::string, for report lines.
template <typename... Args>
std::string strprintf(const char* format, Args... args) {
  const int n = std::snprintf(nullptr, 0, format, args...);
  std::string s(static_cast<std::size_t>(n > 0 ? n : 0), '\0');
  std::snprintf(s.data(), s.size() + 1, format, args...);
  return s;
}

}  // namespace ccsim
