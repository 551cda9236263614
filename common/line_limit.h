// The longest line the line-oriented importers accept. std::regex recurses once per character and
// overflowed the stack (exit 139) on lines of 30 KB; the longest lines of real nvidia-smi, perftest
// and NCCL output are a few hundred characters. nvidia-smi topo -m and perftest logs: a longer line
// is an InputError at its line; NCCL debug logs (long lines are legitimate there): ring lines are
// read at any length, other over-long lines are not matched against NCCL's message formats
// (docs/errors.md).
#pragma once
#include <cstddef>
#include <string>

namespace ccsim {

inline constexpr std::size_t kMaxLineChars = 4096;

// "line is longer than 4096 characters (N bytes) ...", the detail of an InputError at the line.
inline std::string line_too_long(std::size_t bytes) {
  return "line is longer than " + std::to_string(kMaxLineChars) + " characters (" + std::to_string(bytes) +
         " bytes): not the output of the tool this importer reads";
}

}  // namespace ccsim
