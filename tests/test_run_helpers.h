// Helpers for the `ccsim run` tests: run the binary, read files, write a scenario.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ccsim::run_testing {

struct CommandResult {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh directory under the test temp dir.
inline std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "ccsim_run_" + std::to_string(::getpid()) + "_" + name;
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  return dir;
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// Runs `command` through the shell with stdout/stderr captured in `dir`.
inline CommandResult shell(const std::string& command, const std::string& dir) {
  const std::string out = dir + "/.stdout", err = dir + "/.stderr";
  const int status = std::system((command + " >" + out + " 2>" + err).c_str());
  CommandResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// One CSV line split into fields; a quoted field may hold commas ("" is not unescaped).
inline std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.push_back(std::exchange(cur, ""));
    else cur += c;
  }
  out.push_back(cur);
  return out;
}

inline CommandResult ccsim(const std::string& args, const std::string& dir) { return shell(std::string(CCSIM_BINARY) + " " + args, dir); }

}  // namespace ccsim::run_testing
