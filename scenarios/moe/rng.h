// Deterministic random numbers for MoE routing: std::mt19937_64 bits turned into doubles and
// weighted choices by our own code (std::*_distribution differ between standard libraries, and
// outputs must be byte-identical per seed on every platform).
#pragma once
#include <algorithm>
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
// weight[0..i]; cdf.back() > 0): the first cdf[i] > u * total. Inline: the routing sampler calls
// it tens of millions of times, mostly on tables of a few entries (a token's chosen groups, the
// experts of one group), where a scan beats a binary search.
int last_with_weight(const double* cdf, int n);
inline int draw_from_cdf(const double* cdf, int n, double u) {
  const double target = u * cdf[n - 1];
  int i = 0;
  if (n <= 16) {
    while (i < n && !(target < cdf[i])) ++i;
  } else {
    i = static_cast<int>(std::upper_bound(cdf, cdf + n, target) - cdf);
  }
  if (i < n) return i;
  // u * total rounded up to total: the last item with weight.
  return last_with_weight(cdf, n);
}

// draw_from_cdf over a large table, in expected constant time: a guide table gives, per bucket
// of u, an index at or below the answer, and a scan finishes (Chen and Asau's indexed search).
// Returns exactly what draw_from_cdf returns for the same u.
class CdfTable {
 public:
  explicit CdfTable(std::vector<double> cdf);
  int draw(double u) const {
    const double target = u * cdf_[n_ - 1];
    const auto b = std::min(static_cast<std::size_t>(u * static_cast<double>(guide_.size())), guide_.size() - 1);
    int i = guide_[b];
    while (i < n_ && !(target < cdf_[i])) ++i;
    return i < n_ ? i : last_;
  }
  const std::vector<double>& cdf() const { return cdf_; }

 private:
  std::vector<double> cdf_;
  std::vector<int> guide_;
  int n_ = 0, last_ = 0;
};

}  // namespace ccsim::moe
