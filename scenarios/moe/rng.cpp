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

int draw_from_cdf(const double* cdf, int n, double u) {
  const double target = u * cdf[n - 1];
  const int i = static_cast<int>(std::upper_bound(cdf, cdf + n, target) - cdf);
  if (i < n) return i;
  // u * total rounded up to total: the last item with weight.
  return static_cast<int>(std::lower_bound(cdf, cdf + n, cdf[n - 1]) - cdf);
}

}  // namespace ccsim::moe
