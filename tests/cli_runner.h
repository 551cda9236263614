// Runs the built ccsim binary with a shell command line and captures exit code, stdout and stderr.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace ccsim::testing {

struct CliResult {
  int code = -1;
  std::string out, err;
};

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A path under the test temp directory, unique to this process.
inline std::string temp_file(const std::string& name) {
  return ::testing::TempDir() + "ccsim_" + std::to_string(::getpid()) + "_" + name;
}

inline CliResult run_ccsim(const std::string& args) {
  const std::string out = temp_file("stdout"), err = temp_file("stderr");
  const std::string cmd = std::string(CCSIM_BINARY) + " " + args + " >" + out + " 2>" + err + " </dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text_file(out);
  r.err = read_text_file(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

}  // namespace ccsim::testing
