// Reads one user input file (a topology, a calibration, a log to import) once, whole, into memory,
// with limits: a file larger than kMaxInputBytes, a directory, a device (/dev/zero, /dev/urandom)
// or a pipe that stays silent for kPipeIdleSeconds is an InputError naming the path, never a hang
// or an unbounded read. Pipes are accepted (`ccsim calibrate <(cat log)`, /dev/stdin) and read
// once: every parser then works on the returned text (docs/errors.md).
#pragma once
#include <cstddef>
#include <string>

namespace ccsim {

// 256 MiB: far above any real input (the largest nccl-tests logs are a few MB) and small enough to
// hold in memory on any machine ccsim runs on.
inline constexpr std::size_t kMaxInputBytes = std::size_t{256} << 20;
// A pipe or FIFO that delivers nothing for this long is given up on.
inline constexpr int kPipeIdleSeconds = 10;

// `what` names the kind of file for messages ("topology file", "calibration file", "log").
std::string read_input_file(const std::string& path, const std::string& what, std::size_t max_bytes = kMaxInputBytes,
                            int pipe_idle_seconds = kPipeIdleSeconds);

}  // namespace ccsim
