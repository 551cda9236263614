#include "common/text.h"

#include <cctype>
#include <charconv>
#include <sstream>

namespace ccsim {

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string t;
  while (in >> t) out.push_back(t);
  return out;
}

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_provenance(const std::string& line) {
  for (const char* p : {"# SOURCE:", "# HARDWARE:", "# TOOL:", "# NOTE:"})
    if (line.rfind(p, 0) == 0) return true;
  return false;
}

bool parse_u64(const std::string& t, std::uint64_t& v) {
  if (t.empty()) return false;
  for (char c : t)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

bool parse_int(const std::string& t, int& v) {
  if (t.empty()) return false;
  auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

std::string cut_for_message(const std::string& value, std::size_t max_chars) {
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (out.size() >= max_chars) return out + "... (" + std::to_string(value.size()) + " bytes)";
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7f)
      out += strprintf("\\x%02x", static_cast<unsigned>(c));
    else
      out += static_cast<char>(c);
  }
  return out;
}

std::size_t find_control_char(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return i;
  }
  return std::string::npos;
}

}  // namespace ccsim
