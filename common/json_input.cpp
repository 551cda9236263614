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

// nlohmann's parser recurses only through its callbacks' bookkeeping, but the values it builds are
// destroyed and printed recursively: refuse deep nesting before parsing, at the bracket that
// crosses the limit.
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

// The JSON pointer of the value being parsed, and each open object's keys, to refuse duplicates.
struct DuplicateKeyCheck {
  struct Level {
    bool object = false;
    std::size_t next_index = 0;  // arrays: the index of the next element
    std::set<std::string> keys;
    std::string key;  // objects: the key of the value being parsed
  };
  std::vector<Level> levels;
  std::string where;

  std::string pointer() const {
    std::string p;
    for (const Level& l : levels) p += "/" + (l.object ? l.key : std::to_string(l.next_index));
    return p.empty() ? "/" : p;
  }
  void element_done() {
    if (!levels.empty() && !levels.back().object) ++levels.back().next_index;
  }
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        levels.push_back(Level{event == json::parse_event_t::object_start, 0, {}, {}});
        break;
      case json::parse_event_t::key: {
        Level& l = levels.back();
        l.key = parsed.get<std::string>();
        if (!l.keys.insert(l.key).second)
          throw InputError(where + ": " + pointer(), "duplicate key '" + cut_for_message(l.key) + "'");
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        levels.pop_back();
        element_done();
        break;
      case json::parse_event_t::value:
        element_done();
        break;
    }
    return true;
  }
};

}  // namespace

json parse_user_json(const std::string& text, const std::string& where, bool allow_comments) {
  check_depth(text, where, allow_comments);
  DuplicateKeyCheck dup;
  dup.where = where;
  try {
    return json::parse(
        text, [&dup](int depth, json::parse_event_t event, json& parsed) { return dup(depth, event, parsed); },
        /*allow_exceptions=*/true, allow_comments);
  } catch (const json::parse_error& e) {
    std::string msg = e.what();
    const auto at = msg.find("parse error");
    if (at != std::string::npos) {
      const auto colon = msg.find(": ", at);
      if (colon != std::string::npos) msg = msg.substr(colon + 2);
    }
    throw InputError(where + ": " + line_column(text, e.byte == 0 ? 0 : e.byte - 1), cut_for_message(msg));
  } catch (const json::out_of_range& e) {
    // 406: a number beyond a double's range ("1e999"); nlohmann names the token, not its place.
    const std::string msg = e.what();
    const auto q = msg.find('\'');
    const auto q2 = q == std::string::npos ? q : msg.find('\'', q + 1);
    const std::string token = q2 == std::string::npos ? "" : msg.substr(q + 1, q2 - q - 1);
    const std::size_t pos = token.empty() ? std::string::npos : text.find(token);
    throw InputError(pos == std::string::npos ? where : where + ": " + line_column(text, pos),
                     "number " + cut_for_message(token) + " is out of range (beyond a double's " + "1.8e308)");
  }
}

}  // namespace ccsim
