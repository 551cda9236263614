// Parses JSON that a user wrote (topology and calibration files, --set values) with the limits
// ccsim promises (docs/errors.md): nesting deeper than kMaxJsonDepth, a key given twice in one
// object, a number beyond a double's range and any syntax error are one InputError naming the
// place (line and column, or the JSON path of a duplicate key), never a crash or a silent choice.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace ccsim {

// Arrays and objects nested deeper than this are refused: every real ccsim file is below 10.
inline constexpr int kMaxJsonDepth = 256;

// `where` names the source ("topo.json", "--set node.nic.Gbps=..."); comments (// and /* */) are
// accepted when `allow_comments`.
nlohmann::json parse_user_json(const std::string& text, const std::string& where, bool allow_comments);

}  // namespace ccsim
