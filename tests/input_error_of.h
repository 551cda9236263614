// The message of the InputError that `f` throws ("" when it throws none): tests assert the one line
// a user sees.
#pragma once
#include <functional>
#include <string>

#include "common/error.h"

namespace ccsim::testing {

inline std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace ccsim::testing
