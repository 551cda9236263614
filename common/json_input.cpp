#include "common/json_input.h"

#include <set>
#include <vector>

#include "common/error.h"
#include "common/text.h"

namespace ccsim {

using nlohmann::json;

namespace {

std::string line_column(const std::string& text, std::size_t byte) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

}  // namespace

namespace json_input_detail {

// Deep nesting is refused before parsing, at the bracket that crosses the limit: nlohmann's values
// are destroyed and printed recursively (70,000 levels overflowed the stack).
void check_depth(const std::string& text, const std::string& where, bool allow_comments) {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
    } else if (allow_comments && c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (allow_comments && c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const std::size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 1;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw InputError(where + ": " + line_column(text, i),
                         "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

void throw_duplicate_key(const std::string& where, const std::string& pointer, const std::string& key) {
  throw InputError(where + ": " + pointer, "duplicate key '" + cut_for_message(key) + "'");
}

void DuplicateKeyCheck::key(const std::string& k) {
  Level& l = levels_.back();
  l.key = k;
  if (!l.keys.insert(k).second) throw_duplicate_key(where_, pointer(), k);
}

std::string DuplicateKeyCheck::pointer() const {
  std::string p;
  for (const Level& l : levels_) p += "/" + (l.object ? l.key : std::to_string(l.next_index));
  return p.empty() ? "/" : p;
}

void throw_parse_error(const std::string& text, const std::string& where, const json::parse_error& e) {
  std::string msg = e.what();
  const auto at = msg.find("parse error");
  if (at != std::string::npos) {
    const auto colon = msg.find(": ", at);
    if (colon != std::string::npos) msg = msg.substr(colon + 2);
  }
  throw InputError(where + ": " + line_column(text, e.byte == 0 ? 0 : e.byte - 1), cut_for_message(msg));
}

// 406: a number beyond a double's range ("1e999"); nlohmann names the token, not its place.
void throw_out_of_range(const std::string& text, const std::string& where, const json::out_of_range& e) {
  const std::string msg = e.what();
  const auto q = msg.find('\'');
  const auto q2 = q == std::string::npos ? q : msg.find('\'', q + 1);
  const std::string token = q2 == std::string::npos ? "" : msg.substr(q + 1, q2 - q - 1);
  const std::size_t pos = token.empty() ? std::string::npos : text.find(token);
  throw InputError(pos == std::string::npos ? where : where + ": " + line_column(text, pos),
                   "number " + cut_for_message(token) + " is out of range (beyond a double's 1.8e308)");
}

}  // namespace json_input_detail

}  // namespace ccsim
