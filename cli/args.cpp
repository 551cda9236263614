#include "cli/args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "common/error.h"
#include "common/text.h"
#include "common/units.h"

namespace ccsim {

std::string ParsedArgs::get(const std::string& name, const std::string& fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() || it->second.empty() ? fallback : it->second.back();
}

const std::vector<std::string>& ParsedArgs::all(const std::string& name) const {
  static const std::vector<std::string> none;
  const auto it = values_.find(name);
  return it == values_.end() ? none : it->second;
}

std::string ParsedArgs::spelled(const std::string& name) const {
  const auto it = spelled_.find(name);
  return it == spelled_.end() ? "--" + name : it->second;
}

ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs) {
  ParsedArgs out;
  auto key_of = [](const OptionSpec& s) { return s.long_name.empty() ? s.short_name : s.long_name; };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9')) {
      out.positional_.push_back(a);
      continue;
    }
    const OptionSpec* spec = nullptr;
    std::string inline_value;
    bool has_inline = false;
    std::string typed;
    if (a[1] == '-') {
      std::string name = a.substr(2);
      const auto eq = name.find('=');
      if (eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        has_inline = true;
        name = name.substr(0, eq);
      }
      typed = "--" + name;
      for (const auto& s : specs)
        if (!s.long_name.empty() && s.long_name == name) spec = &s;
    } else {
      const std::string name = a.substr(1, 1);
      typed = "-" + name;
      for (const auto& s : specs)
        if (!s.short_name.empty() && s.short_name == name) spec = &s;
      if (a.size() > 2) {
        inline_value = a.substr(2);
        has_inline = true;
      }
    }
    if (!spec) throw InputError("command line", "unknown option '" + cut_for_message(a) + "' (see 'ccsim help')");
    std::string value;
    if (spec->takes_value) {
      if (has_inline) {
        value = inline_value;
      } else {
        if (i + 1 >= args.size()) throw InputError("command line", "option '" + typed + "' needs a value");
        value = args[++i];
      }
    } else if (has_inline) {
      throw InputError("command line", "option '" + typed + "' takes no value");
    }
    const std::string key = key_of(*spec);
    auto& v = out.values_[key];
    if (!spec->repeatable) v.clear();
    v.push_back(value);
    out.spelled_[key] = typed;
  }
  return out;
}

int parse_int_arg(const ParsedArgs& args, const std::string& name, int fallback, int min_value) {
  if (!args.has(name)) return fallback;
  const std::string text = args.get(name);
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < min_value || v > 1000000000L)
    throw InputError(args.spelled(name), "expected an integer >= " + std::to_string(min_value) + ", got '" + cut_for_message(text) + "'");
  return static_cast<int>(v);
}

double parse_double_arg(const ParsedArgs& args, const std::string& name, double fallback) {
  if (!args.has(name)) return fallback;
  const std::string text = args.get(name);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(v))
    throw InputError(args.spelled(name), "expected a finite number, got '" + cut_for_message(text) + "'");
  return v;
}

std::uint64_t parse_size_arg(const ParsedArgs& args, const std::string& name, std::uint64_t fallback) {
  if (!args.has(name)) return fallback;
  return parse_size_bytes(args.get(name), args.spelled(name));
}

}  // namespace ccsim
