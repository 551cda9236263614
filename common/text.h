// Small text helpers shared by the log and topology importers.
#pragma once
#include <cstdint>
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

}  // namespace ccsim
