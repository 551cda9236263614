// Robust alpha-beta fitting (calibrate/fit.h) on synthetic curves with known parameters. Every
// expected number is derived by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "calibrate/fit.h"

namespace ccsim {
namespace {

// x = 8 B .. 1 GiB, one point per power of two: 2^3 .. 2^30 (28 points).
std::vector<double> pow2_sizes() {
  std::vector<double> x;
  for (int k = 3; k <= 30; ++k) x.push_back(std::ldexp(1.0, k));
  return x;
}

TEST(Fit, PureAlphaBetaIsRecoveredExactly) {
  // t = 20 us + x / 50 GB/s. Knee x* = a*b = 20e-6 * 50e9 = 1e6 bytes.
  const double a = 20e-6, b = 50e9;
  const auto x = pow2_sizes();
  std::vector<double> t;
  for (double v : x) t.push_back(a + v / b);
  const AlphaBetaFit f = fit_alpha_beta(x, t);
  EXPECT_NEAR(f.latency_s, 20e-6, 20e-6 * 1e-6);
  EXPECT_NEAR(f.beta_Bps, 50e9, 50e9 * 1e-6);
  EXPECT_NEAR(f.knee_x, 1e6, 1.0);
  EXPECT_EQ(f.segments.size(), 1u);
  EXPECT_TRUE(f.efficiency.empty());
  EXPECT_TRUE(f.outliers.empty());
  EXPECT_EQ(f.points, 28u);
  EXPECT_NEAR(f.r2, 1.0, 1e-9);
  EXPECT_LT(f.max_rel_residual, 1e-9);
  // At x = 1 MiB: 20 us + 1048576 / 50e9 s = 20 + 20.97152 = 40.97152 us.
  EXPECT_NEAR(fitted_time_s(f, 1048576.0), 40.97152e-6, 1e-12);
}

TEST(Fit, ProtocolSwitchGivesTwoSegments) {
  // LL-like below 64 KiB: t = 5 us + x / 10 GB/s; Simple-like from 64 KiB: t = 15 us + x / 100 GB/s.
  const auto x = pow2_sizes();
  std::vector<double> t;
  for (double v : x) t.push_back(v < 65536 ? 5e-6 + v / 10e9 : 15e-6 + v / 100e9);
  const AlphaBetaFit f = fit_alpha_beta(x, t);
  ASSERT_EQ(f.segments.size(), 2u);
  EXPECT_EQ(f.switch_x, 65536.0);
  EXPECT_NEAR(f.segments[0].latency_s, 5e-6, 5e-6 * 0.01);
  EXPECT_NEAR(f.segments[0].beta_Bps, 10e9, 10e9 * 0.01);
  EXPECT_NEAR(f.segments[1].latency_s, 15e-6, 15e-6 * 0.01);
  EXPECT_NEAR(f.segments[1].beta_Bps, 100e9, 100e9 * 0.01);
  EXPECT_EQ(f.segments[0].to_x, 32768.0);
  EXPECT_EQ(f.segments[1].from_x, 65536.0);
  // Overall: latency of the small sizes, bandwidth of the large ones.
  EXPECT_NEAR(f.latency_s, 5e-6, 5e-6 * 0.01);
  EXPECT_NEAR(f.beta_Bps, 100e9, 100e9 * 0.01);
  // The composite 5 us + x / (100 GB/s * eff(x)) needs knots: in the LL regime eff = 10/100 = 0.1
  // once the bandwidth term counts; the model follows the curve within 1% there.
  EXPECT_FALSE(f.efficiency.empty());
  EXPECT_LE(f.max_rel_residual_final, 0.011);
  // x = 2^30: 15 us + 2^30 / 100e9 s = 15 + 10737.41824 us; the fitted model agrees within 1%.
  EXPECT_NEAR(fitted_time_s(f, std::ldexp(1.0, 30)), 10752.41824e-6, 10752.41824e-6 * 0.01);
}

// Deterministic multiplicative noise in [-3%, +3%]: a 64-bit LCG (Knuth's MMIX constants), seed 42.
struct Lcg {
  std::uint64_t s = 42;
  double uniform() {  // [0, 1)
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(s >> 11) * (1.0 / 9007199254740992.0);
  }
};

TEST(Fit, NoisyCurveWithSpikesIsRecoveredWithin1Percent) {
  // t = 20 us + x / 50 GB/s, x = 2^(k/4) for k = 12..120 (8 B .. 1 GiB, 109 sizes), two repeats
  // per size (like out-of-place and in-place), each times (1 + u), u uniform in [-3%, 3%].
  // With ~40 latency-dominated and ~40 bandwidth-dominated sizes, the standard error of each
  // parameter is about 1.7% / sqrt(80) = 0.2%: 1% is a > 4-sigma bound.
  const double a = 20e-6, b = 50e9;
  Lcg rng;
  std::vector<double> x, t;
  for (int k = 12; k <= 120; ++k) {
    const double v = std::pow(2.0, k / 4.0);
    for (int r = 0; r < 2; ++r) {
      x.push_back(v);
      t.push_back((a + v / b) * (1 + 0.06 * (rng.uniform() - 0.5)));
    }
  }
  // Two spikes in the latency region, like the 68.52 us and 94.40 us rows of the H100 log: 3x and 4x.
  t[0] *= 3;    // x = 8 B
  t[40] *= 4;   // x = 2^(32/4) = 256 B
  const AlphaBetaFit f = fit_alpha_beta(x, t);
  EXPECT_NEAR(f.latency_s, a, a * 0.01);
  EXPECT_NEAR(f.beta_Bps, b, b * 0.01);
  EXPECT_EQ(f.segments.size(), 1u);
  // The spikes are rejected (weight 0), and the noise is not mistaken for curve shape.
  bool has0 = false, has40 = false;
  for (auto i : f.outliers) { has0 |= i == 0; has40 |= i == 40; }
  EXPECT_TRUE(has0);
  EXPECT_TRUE(has40);
  EXPECT_LE(f.outliers.size(), 4u);
  EXPECT_TRUE(f.efficiency.empty());
  EXPECT_GT(f.r2, 0.999);
}

TEST(Fit, EfficiencyInterpolatesInLogSizeAndIsFlatOutside) {
  // Knots (1 KiB, 0.5) and (1 MiB, 1.0): 32 KiB is halfway in log2 (10 -> 20, 15) -> 0.75.
  const std::vector<std::pair<double, double>> k{{1024, 0.5}, {1048576, 1.0}};
  EXPECT_DOUBLE_EQ(interpolate_efficiency(k, 32768), 0.75);
  EXPECT_DOUBLE_EQ(interpolate_efficiency(k, 8), 0.5);
  EXPECT_DOUBLE_EQ(interpolate_efficiency(k, 1e12), 1.0);
  EXPECT_DOUBLE_EQ(interpolate_efficiency({}, 1e6), 1.0);
}

TEST(Fit, RejectsDegenerateInput) {
  EXPECT_THROW(fit_alpha_beta({1, 2}, {1e-6, 2e-6}), std::invalid_argument);
  EXPECT_THROW(fit_alpha_beta({1, 1, 1}, {1e-6, 2e-6, 3e-6}), std::invalid_argument);
  EXPECT_THROW(fit_alpha_beta({1, 2, 3}, {1e-6, 0, 3e-6}), std::invalid_argument);
}

}  // namespace
}  // namespace ccsim
