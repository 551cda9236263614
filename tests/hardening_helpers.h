// Helpers for the hardening tests (tests/test_hardening_*.cpp): run the ccsim binary with a shell
// command line and check ccsim's promise for bad input: one line on stderr, exit code 2, nothing
// on stdout (docs/errors.md).
#pragma once
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ccsim::hardening {

struct CliRun {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh path in the test's temporary directory (not created).
inline std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "ccsim_hard_" + std::to_string(::getpid()) + "_" + name;
}

inline std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// `args` is shell text after the binary's name; `redirect_stdout` replaces the capture of stdout
// (e.g. ">/dev/full").
// `env` is prepended as shell assignments ("CCSIM_SIMGRID_CFG=x").
inline CliRun ccsim(const std::string& args, const std::string& redirect_stdout = "", const std::string& env = "") {
  const std::string out = temp_path("stdout"), err = temp_path("stderr");
  const std::string cmd = env + " timeout 60 " + std::string(CCSIM_BINARY) + " " + args + " " +
                          (redirect_stdout.empty() ? ">" + out : redirect_stdout) + " 2>" + err;
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
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
