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
// The provenance lines reference files carry on top ("# SOURCE:", "# HARDWARE:", "# TOOL:", "# NOTE:");
// users' own files do not have them.
bool is_provenance(const std::string& line);
// Whole-string unsigned / signed integer parsing; false on anything else.
bool parse_u64(const std::string& t, std::uint64_t& v);
bool parse_int(const std::string& t, int& v);

// printf into a std::string, for report lines.
template <typename... Args>
std::string strprintf(const char* format, Args... args) {
  const int n = std::snprintf(nullptr, 0, format, args...);
  std::string s(static_cast<std::size_t>(n > 0 ? n : 0), '\0');
  std::snprintf(s.data(), s.size() + 1, format, args...);
  return s;
}

}  // namespace ccsim
