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

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const auto& x : parts) out += (out.empty() ? "" : sep) + x;
  return out;
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

namespace {

// The length of the printable character at s[i] (1 for ASCII, 2..4 for a UTF-8 sequence), or 0 for
// a control character (C0, DEL, C1 U+0080..U+009F, U+2028, U+2029) or a byte that starts no valid
// UTF-8 sequence (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF).
std::size_t printable_length(const std::string& s, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x20 || c == 0x7f) return 0;
  if (c < 0x80) return 1;
  const std::size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  std::uint32_t cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
  for (std::size_t k = 1; k < len; ++k) {
    const unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3f);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff) ||
      (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029)
    return 0;
  return len;
}

}  // namespace

std::string cut_for_message(const std::string& value, std::size_t max_chars) {
  std::string out;
  std::size_t chars = 0;
  for (std::size_t i = 0; i < value.size(); ++chars) {
    if (chars >= max_chars) return out + "... (" + std::to_string(value.size()) + " bytes)";
    const std::size_t len = printable_length(value, i);
    if (len == 0) {
      out += strprintf("\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(value[i])));
      ++i;
    } else {
      out.append(value, i, len);
      i += len;
    }
  }
  return out;
}

// Names and descriptions ccsim prints into tables and reports: no control character (a newline
// forged a table row, ESC or U+009B drives a terminal, U+2028 breaks a line in editors) and valid
// UTF-8 only (docs/errors.md).
std::size_t find_control_char(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = printable_length(s, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string::npos;
}

}  // namespace ccsim
