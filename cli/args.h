// A small getopt_long-like reader for ccsim's command line: "-b 8", "-b8", "--minbytes 8",
// "--minbytes=8". Options are declared up front so that an unknown flag is an error, not a guess.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ccsim {

struct OptionSpec {
  std::string short_name;  // "b" (may be empty)
  std::string long_name;   // "minbytes" (may be empty)
  bool takes_value = true;
  bool repeatable = false;  // e.g. --set
};

class ParsedArgs {
 public:
  bool has(const std::string& name) const { return values_.count(name) > 0; }
  // Last value given for an option (by its long name, or short name when it has none).
  std::string get(const std::string& name, const std::string& fallback = "") const;
  const std::vector<std::string>& all(const std::string& name) const;
  const std::vector<std::string>& positional() const { return positional_; }
  // The flag as the user typed it, for error messages ("-b", "--minbytes").
  std::string spelled(const std::string& name) const;
  // The same arguments without an option (as if it had not been given).
  ParsedArgs without(const std::string& name) const {
    ParsedArgs copy = *this;
    copy.values_.erase(name);
    copy.spelled_.erase(name);
    return copy;
  }

 private:
  friend ParsedArgs parse_args(const std::vector<std::string>&, const std::vector<OptionSpec>&);
  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, std::string> spelled_;
  std::vector<std::string> positional_;
};

// Throws InputError("command line", ...) for unknown options and missing values.
ParsedArgs parse_args(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs);

int parse_int_arg(const ParsedArgs& args, const std::string& name, int fallback, int min_value);
double parse_double_arg(const ParsedArgs& args, const std::string& name, double fallback);
// A size option as nccl-tests writes it ("64K", "1G": parse_size_bytes), `fallback` when absent.
std::uint64_t parse_size_arg(const ParsedArgs& args, const std::string& name, std::uint64_t fallback);

}  // namespace ccsim
