// Helpers for the hardening tests (tests/test_hardening_*.cpp): run the ccsim binary with a shell
// command line and check ccsim's promise for bad input: one line on stderr, exit code 2, nothing
// on stdout (docs/errors.md).
#pragma once
#include <gtest/gtest.h>

#include "cli_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ccsim::hardening {

using CliRun = testing::CliResult;
inline std::string slurp(const std::string& path) { return testing::read_text_file(path); }
inline std::string temp_path(const std::string& name) { return testing::temp_file("hard_" + name); }
inline std::string write_temp(const std::string& name, const std::string& content) {
  return testing::write_temp_file("hard_" + name, content);
}
inline CliRun ccsim(const std::string& args, const std::string& redirect_stdout = "", const std::string& env = "") {
  return testing::run_ccsim(args, redirect_stdout, env);
}

// One line on stderr containing every fragment, exit code 2, nothing on stdout.
inline void expect_input_error(const CliRun& r, const std::vector<std::string>& fragments) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 200);
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_LE(r.err.size(), 600u) << "an error line must stay short";
  for (const auto& f : fragments) EXPECT_NE(r.err.find(f), std::string::npos) << "missing '" << f << "' in: " << r.err;
}

}  // namespace ccsim::hardening
