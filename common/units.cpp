#include "common/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "common/error.h"

namespace ccsim {

std::uint64_t parse_size_bytes(const std::string& text, const std::string& where) {
  if (text.empty()) throw InputError(where, "empty size");
  std::size_t i = 0;
  std::uint64_t value = 0;
  if (!std::isdigit(static_cast<unsigned char>(text[0])))
    throw InputError(where, "unparsable size '" + text + "' (expected a non-negative integer with optional K/M/G/T)");
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
      throw InputError(where, "size '" + text + "' is too large");
    value = value * 10 + digit;
    ++i;
  }
  std::uint64_t multiplier = 1;
  if (i < text.size()) {
    switch (std::toupper(static_cast<unsigned char>(text[i]))) {
      case 'K': multiplier = 1ull << 10; break;
      case 'M': multiplier = 1ull << 20; break;
      case 'G': multiplier = 1ull << 30; break;
      case 'T': multiplier = 1ull << 40; break;
      case 'B': multiplier = 1; break;
      default:
        throw InputError(where, "unparsable size '" + text + "' (expected a non-negative integer with optional K/M/G/T)");
    }
    ++i;
    if (i < text.size() && multiplier != 1 && std::toupper(static_cast<unsigned char>(text[i])) == 'B') ++i;
    if (i != text.size())
      throw InputError(where, "unparsable size '" + text + "' (expected a non-negative integer with optional K/M/G/T)");
  }
  if (value > std::numeric_limits<std::uint64_t>::max() / multiplier)
    throw InputError(where, "size '" + text + "' is too large");
  return value * multiplier;
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[64];
  if (std::fabs(bytes - std::round(bytes)) < 1e-9)
    std::snprintf(buf, sizeof buf, "%.0f %s", bytes, units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", bytes, units[u]);
  return buf;
}

}  // namespace ccsim
