// Units used throughout ccsim. Bandwidths are bytes per second per direction (GB/s = 1e9 B/s),
// NIC speeds in Gb/s are converted once at input. Sizes follow nccl-tests: K/M/G/T are powers of 1024.
#pragma once
#include <cstdint>
#include <string>

namespace ccsim {

constexpr double kGB = 1e9;          // GB/s = 1e9 bytes/s
constexpr double kGbit = 1e9 / 8.0;  // Gb/s -> bytes/s
constexpr double kMicro = 1e-6;

// Parses an nccl-tests size: "8", "64K", "8G", "1M" (suffixes K,M,G,T = 1024^k, case-insensitive,
// optional trailing 'B'). Throws InputError(where, ...) on anything else, on negative values and overflow.
std::uint64_t parse_size_bytes(const std::string& text, const std::string& where);

// "8 B", "64 KiB", "8 GiB" style, for human-readable output.
std::string format_bytes(double bytes);

}  // namespace ccsim
