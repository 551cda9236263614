// Validating one real log of tests/data/nccl-tests against a description, as `ccsim validate` does.
#pragma once
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "calibrate/nccl_tests_log.h"
#include "cli_runner.h"
#include "scenarios/validate.h"
#include "scenarios/validate_debug.h"
#include "scenarios/validate_log.h"

namespace ccsim::testing {

// `name` under tests/data/nccl-tests, holding one run; `source` names the description in reports.
inline ValidatedRun validate_real_log(const std::string& name, const nlohmann::json& spec, const std::string& source,
                                      const ValidateOptions& opts = ValidateOptions{}) {
  std::istringstream in(read_text_file(std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/" + name));
  const auto runs = parse_nccl_tests_log(in, name);
  if (runs.size() != 1) throw std::runtime_error(name + ": expected one run, parsed " + std::to_string(runs.size()));
  return validate_run(runs.front(), name, 0, spec, source, opts, DebugFacts{});
}

}  // namespace ccsim::testing
