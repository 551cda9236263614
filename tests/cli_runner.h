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
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A path under the test temp directory, unique to this process.
inline std::string temp_file(const std::string& name) {
  return ::testing::TempDir() + "ccsim_" + std::to_string(::getpid()) + "_" + name;
}

// A file under the test temp directory with `content`; returns its path.
inline std::string write_temp_file(const std::string& name, const std::string& content) {
  const std::string path = temp_file(name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// `args` is shell text after the binary's name; `redirect_stdout` replaces the capture of stdout (e.g.
// ">/dev/full"); `env` is prepended as shell assignments ("CCSIM_SIMGRID_CFG=x"). A run past 60 s is
// killed (a hang is a failure, not a stuck suite).
inline CliResult run_ccsim(const std::string& args, const std::string& redirect_stdout = "", const std::string& env = "") {
  const std::string out = temp_file("stdout"), err = temp_file("stderr");
  const std::string cmd = env + " timeout 60 " + std::string(CCSIM_BINARY) + " " + args + " " +
                          (redirect_stdout.empty() ? ">" + out : redirect_stdout) + " 2>" + err + " </dev/null";
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
