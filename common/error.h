// Errors caused by user input (files, flags). The CLI prints what() on one line and exits with code 2.
#pragma once
#include <stdexcept>
#include <string>

namespace ccsim {

// `where` names the file (or "command line") and the place in it: a JSON path such as
// "/node/nic/Gbps", a line number "line 42", or a flag "-b".
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& where, const std::string& what)
      : std::runtime_error(where.empty() ? what : where + ": " + what), where_(where), what_(what) {}
  const std::string& where() const { return where_; }
  const std::string& detail() const { return what_; }

 private:
  std::string where_;
  std::string what_;
};

}  // namespace ccsim
