// Reading tests/data/published/: files of whitespace-separated columns under a '#' provenance header.
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ccsim::testing {

// The rows of tests/data/published/`name`, each split at whitespace, without its '#' and empty lines.
inline std::vector<std::vector<std::string>> read_published_rows(const std::string& name) {
  std::ifstream in(std::string(CCSIM_SOURCE_DIR) + "/tests/data/published/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<std::string> row;
    for (std::string f; fields >> f;) row.push_back(f);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace ccsim::testing
