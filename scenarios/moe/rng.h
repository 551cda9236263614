// Deterministic random numbers for MoE routing: std::mt19937_64 bits turned into doubles and
// weighted choices by our own code (std::*_distribution differ between standard libraries, and
// outputs must be byte-identical per seed on every platform).
#pragma once
#include <cstdint>
#include <random>
#include <vector>

namespace ccsim::moe {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), n >= 1 (Lemire's multiply-shift with rejection: unbiased).
  std::uint64_t below(std::uint64_t n);
  // Fisher-Yates permutation of 0..n-1.
  std::vector<int> permutation(int n);

 private:
  std::mt19937_64 engine_;
};

// Draws an index with probability weight[i] / sum from a cumulative table (cdf[i] = sum of
// weight[0..i]; cdf.back() > 0): binary search for the first cdf[i] > u * total.
int draw_from_cdf(const double* cdf, int n, double u);

}  // namespace ccsim::moe
