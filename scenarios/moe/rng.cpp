#include "scenarios/moe/rng.h"

#include <algorithm>
#include <utility>

namespace ccsim::moe {

std::uint64_t Rng::below(std::uint64_t n) {
  // Lemire, "Fast random integer generation in an interval" (2019).
  std::uint64_t x = engine_();
  unsigned __int128 m = static_cast<unsigned __int128>(x) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      x = engine_();
      m = static_cast<unsigned __int128>(x) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

std::vector<int> Rng::permutation(int n) {
  std::vector<int> p(n);
  for (int i = 0; i < n; ++i) p[i] = i;
  for (int i = n - 1; i > 0; --i) std::swap(p[i], p[below(static_cast<std::uint64_t>(i) + 1)]);
  return p;
}

int last_with_weight(const double* cdf, int n) {
  return static_cast<int>(std::lower_bound(cdf, cdf + n, cdf[n - 1]) - cdf);
}

CdfTable::CdfTable(std::vector<double> cdf) : cdf_(std::move(cdf)), n_(static_cast<int>(cdf_.size())) {
  last_ = last_with_weight(cdf_.data(), n_);
  // Bucket b holds the u in [b/B, (b+1)/B): its answer is at least the first cdf[i] above b/B of
  // the total. The bound is lowered by a relative 1e-9 so that rounding of u * total never puts
  // the answer below the bucket's start.
  const std::size_t buckets = std::max<std::size_t>(1, cdf_.size());
  guide_.resize(buckets);
  const double total = cdf_[n_ - 1];
  for (std::size_t b = 0; b < buckets; ++b) {
    const double low = static_cast<double>(b) / static_cast<double>(buckets) * total * (1 - 1e-9);
    guide_[b] = static_cast<int>(std::upper_bound(cdf_.begin(), cdf_.end(), low) - cdf_.begin());
  }
}

}  // namespace ccsim::moe
