// Validating one real log of tests/data/nccl-tests against a description, as `ccsim validate` does.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibrate/nccl_tests_log.h"
#include "cli_runner.h"
#include "scenarios/log_gpu_preset.h"
#include "scenarios/validate.h"
#include "scenarios/validate_debug.h"
#include "scenarios/validate_log.h"

namespace ccsim::testing {

// The runs of `name` under tests/data/nccl-tests.
inline std::vector<NcclTestsRun> parse_real_log(const std::string& name) {
  std::istringstream in(read_text_file(std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/" + name));
  return parse_nccl_tests_log(in, name);
}

// What validate takes from the device lines of `name`'s one run without --topology.
inline LogHardware hardware_of_real_log(const std::string& name) {
  const auto runs = parse_real_log(name);
  if (runs.size() != 1) throw std::runtime_error(name + ": expected one run, parsed " + std::to_string(runs.size()));
  int hosts = 0;
  const int per_host = log_gpus_per_host(runs.front(), &hosts);
  return hardware_for_gpu(log_gpu_name(runs.front()), per_host, hosts);
}

// `name` under tests/data/nccl-tests, holding one run; `source` names the description in reports.
inline ValidatedRun validate_real_log(const std::string& name, const nlohmann::json& spec, const std::string& source,
                                      const ValidateOptions& opts) {
  const auto runs = parse_real_log(name);
  if (runs.size() != 1) throw std::runtime_error(name + ": expected one run, parsed " + std::to_string(runs.size()));
  return validate_run(runs.front(), name, 0, spec, source, opts, DebugFacts{});
}
// The same with validate's defaults. An overload, not a default argument: GCC 12 takes a defaulted
// ValidateOptions{} temporary's strings for uninitialized (-Wmaybe-uninitialized, a false positive).
inline ValidatedRun validate_real_log(const std::string& name, const nlohmann::json& spec, const std::string& source) {
  const ValidateOptions defaults;
  return validate_real_log(name, spec, source, defaults);
}

// The validated size of `bytes` in `run`; std::runtime_error when the log has no such size.
inline const ValidatedSize& size_at(const ValidatedRun& run, std::uint64_t bytes) {
  for (const ValidatedSize& v : run.sizes)
    if (v.size_bytes == bytes) return v;
  throw std::runtime_error("no size " + std::to_string(bytes));
}

}  // namespace ccsim::testing
