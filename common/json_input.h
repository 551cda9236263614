// Parses JSON that a user wrote (topology and calibration files, --set values) with the limits
// ccsim promises (docs/errors.md): nesting deeper than kMaxJsonDepth, a key given twice in one
// object, a number beyond a double's range and any syntax error are one InputError naming the
// place (line and column, or the JSON path of a duplicate key), never a crash or a silent choice.
#pragma once
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccsim {

// Arrays and objects nested deeper than this are refused: every real ccsim file is below 10.
inline constexpr int kMaxJsonDepth = 256;

namespace json_input_detail {
// InputError for nesting deeper than kMaxJsonDepth, at its line and column.
void check_depth(const std::string& text, const std::string& where, bool allow_comments);
[[noreturn]] void throw_duplicate_key(const std::string& where, const std::string& pointer, const std::string& key);
[[noreturn]] void throw_parse_error(const std::string& text, const std::string& where, const nlohmann::json::parse_error& e);
[[noreturn]] void throw_out_of_range(const std::string& text, const std::string& where, const nlohmann::json::out_of_range& e);

// The JSON pointer of the value being parsed, and each open object's keys, to refuse duplicates.
class DuplicateKeyCheck {
 public:
  explicit DuplicateKeyCheck(std::string where) : where_(std::move(where)) {}
  void object_start(bool object) { levels_.push_back(Level{object, 0, {}, {}}); }
  void key(const std::string& k);
  void end() {
    levels_.pop_back();
    element_done();
  }
  void element_done() {
    if (!levels_.empty() && !levels_.back().object) ++levels_.back().next_index;
  }

 private:
  struct Level {
    bool object = false;
    std::size_t next_index = 0;  // arrays: the index of the next element
    std::set<std::string> keys;
    std::string key;  // objects: the key of the value being parsed
  };
  std::string pointer() const;
  std::vector<Level> levels_;
  std::string where_;
};
}  // namespace json_input_detail

// `where` names the source ("topo.json", "--set node.nic.Gbps=..."); comments (// and /* */) are
// accepted when `allow_comments`. Json: nlohmann::json or nlohmann::ordered_json.
template <class Json = nlohmann::json>
Json parse_user_json(const std::string& text, const std::string& where, bool allow_comments) {
  json_input_detail::check_depth(text, where, allow_comments);
  json_input_detail::DuplicateKeyCheck dup(where);
  auto callback = [&dup](int /*depth*/, typename Json::parse_event_t event, Json& parsed) {
    using E = typename Json::parse_event_t;
    switch (event) {
      case E::object_start: dup.object_start(true); break;
      case E::array_start: dup.object_start(false); break;
      case E::key: dup.key(parsed.template get<std::string>()); break;
      case E::object_end:
      case E::array_end: dup.end(); break;
      case E::value: dup.element_done(); break;
    }
    return true;
  };
  try {
    return Json::parse(text, callback, /*allow_exceptions=*/true, allow_comments);
  } catch (const nlohmann::json::parse_error& e) {
    json_input_detail::throw_parse_error(text, where, e);
  } catch (const nlohmann::json::out_of_range& e) {
    json_input_detail::throw_out_of_range(text, where, e);
  }
}

}  // namespace ccsim
