// Writes an output file atomically: content goes to a temporary file beside the target and is
// renamed over it only when complete, so a failed run never leaves a half-written file.
#pragma once
#include <string>

namespace ccsim {

void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace ccsim
