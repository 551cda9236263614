#include "common/json_text.h"

#include <algorithm>

#include "common/error.h"

namespace ccsim {

void throw_json_parse_error(const std::string& text, const nlohmann::json::parse_error& e, const std::string& where) {
  const std::size_t limit = std::min<std::size_t>(e.byte, text.size());
  std::size_t line = 1, col = 0;
  for (std::size_t i = 0; i < limit; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 0;
    } else {
      ++col;
    }
  }
  if (col == 0) col = 1;
  std::string msg = e.what();
  const auto at = msg.find("parse error");
  if (at != std::string::npos) {
    const auto colon = msg.find(": ", at);
    if (colon != std::string::npos) msg = msg.substr(colon + 2);
  }
  throw InputError(where + ": line " + std::to_string(line) + ", column " + std::to_string(col), msg);
}

}  // namespace ccsim
