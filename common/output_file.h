// Writes an output file (--output, -o) so that a failed run never leaves a half-written file and
// nothing but the named path is touched:
// - a regular file (or a new name) gets its content through a temporary that mkstemp creates
//   beside it (unpredictable name, O_EXCL, never a followed link), renamed over the target when
//   complete;
// - a device or FIFO the user names (/dev/null, /dev/stdout, a named pipe with a reader) is written
//   directly: it is never replaced by a regular file;
// - a directory, or a FIFO with no reader, is an InputError.
#pragma once
#include <string>

namespace ccsim {

void write_file_atomically(const std::string& path, const std::string& content);

// A command's result: to `path` as above, or to stdout when `path` is empty (write errors on stdout
// are reported when the command ends: cli/main.cpp).
void write_output(const std::string& path, const std::string& content);

}  // namespace ccsim
