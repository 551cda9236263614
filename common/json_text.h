// Parsing JSON text that a user wrote (topology specs, scenarios): a syntax error becomes one
// InputError naming the file and the line and column, not nlohmann's byte offset.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace ccsim {

// Throws InputError("WHERE: line L, column C", <nlohmann's message without its prefix>).
[[noreturn]] void throw_json_parse_error(const std::string& text, const nlohmann::json::parse_error& e,
                                         const std::string& where);

// Parses `text` (comments allowed) as JSON of type Json (nlohmann::json or nlohmann::ordered_json).
template <class Json>
Json parse_json_text(const std::string& text, const std::string& where) {
  try {
    return Json::parse(text, nullptr, true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    throw_json_parse_error(text, e, where);
  }
}

}  // namespace ccsim
