#include "scenarios/moe/scenario_file.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/error.h"
#include "common/json_input.h"
#include "common/text.h"

namespace ccsim::moe {
namespace {

// A scenario value as a flag's text.
std::string flag_text(const nlohmann::json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) {
    std::ostringstream s;
    s << v.get<double>();
    return s.str();
  }
  throw InputError(where, "expected a string or a number");
}

// Appends a scenario object's keys as flags ("set" and "transport" may be lists; "pure-rdma" a bool).
void append_flags(const nlohmann::json& obj, const std::string& where, const std::vector<std::string>& skip,
                  std::vector<std::string>* out) {
  if (!obj.is_object()) throw InputError(where, "expected an object");
  for (const auto& [key, value] : obj.items()) {
    if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    const std::string here = where + "/" + key;
    if (key == "pure-rdma") {
      if (!value.is_boolean()) throw InputError(here, "expected true or false");
      if (value.get<bool>()) out->push_back("--pure-rdma");
      continue;
    }
    if (value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        out->push_back("--" + key);
        out->push_back(flag_text(value[i], here + "/" + std::to_string(i)));
      }
      continue;
    }
    out->push_back("--" + key);
    out->push_back(flag_text(value, here));
  }
}

// Names and descriptions are printed into tables: strings without control characters, line
// separators or invalid UTF-8 (common/text.h, find_control_char).
std::string printable_text(const nlohmann::json& obj, const std::string& key, const std::string& where,
                           const std::string& fallback) {
  if (!obj.contains(key)) return fallback;
  const nlohmann::json& v = obj[key];
  if (!v.is_string()) throw InputError(where + "/" + key, "expected a string");
  const std::string t = v.get<std::string>();
  if (find_control_char(t) != std::string::npos)
    throw InputError(where + "/" + key, "must not contain control characters, line separators or invalid UTF-8 (got \"" +
                                            cut_for_message(t) + "\")");
  return t;
}

}  // namespace

std::vector<ScenarioRun> read_scenario_runs(const std::string& text, const std::string& path) {
  const nlohmann::json j = parse_user_json(text, path, /*allow_comments=*/false);
  if (!j.is_object()) throw InputError(path, "expected a JSON object");
  if (!j.contains("format") || !j["format"].is_string() || j["format"].get<std::string>() != "ccsim-moe-scenario/1")
    throw InputError(path + ": /format", "expected \"ccsim-moe-scenario/1\"");
  if (!j.contains("runs") || !j["runs"].is_array() || j["runs"].empty())
    throw InputError(path + ": /runs", "expected a non-empty list of runs");
  printable_text(j, "description", path + ": ", "");
  std::vector<std::string> base;
  append_flags(j, path + ": ", {"format", "runs", "description"}, &base);
  std::vector<ScenarioRun> runs;
  for (std::size_t i = 0; i < j["runs"].size(); ++i) {
    const std::string where = path + ": /runs/" + std::to_string(i);
    ScenarioRun run;
    run.flags = base;
    append_flags(j["runs"][i], where, {"name"}, &run.flags);
    run.name = printable_text(j["runs"][i], "name", where, "run " + std::to_string(i));
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace ccsim::moe
