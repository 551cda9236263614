// Robust alpha-beta fitting of measured size/time curves: t = a + x / b, where x is the bytes term
// of the operation (for a ring all_reduce of S bytes on n ranks, x = 2(n-1)/n * S; for a
// point-to-point message, x = S), a the time of a 0-byte operation and b the bandwidth.
//
// * Relative residuals: log-spaced sizes span 8 B .. 16 GiB, so the fit minimises (t - model)/t
//   (weighted least squares with weights 1/t^2); small and large sizes count alike.
// * Robust: iteratively reweighted least squares, Huber weights first (convex, finds the basin),
//   then Tukey's biweight (rejects gross outliers completely), scale = 1.4826 * MAD of the
//   relative residuals. Spikes such as a 68 us row among 25 us rows get weight 0.
// * Protocol switches: when NCCL changes protocol or algorithm at some size, the curve has two
//   regimes; the best two-segment fit (breakpoint search over the sorted sizes) replaces the single
//   line when it reduces the robust residual scale at least twofold (and the single line misses
//   by more than 1%). Both segments are reported.
// * Efficiency: where the (one or two) lines still do not describe the curve, knots
//   (x, measured_bw / model_bw) of a piecewise-linear-in-log(x) factor on the bandwidth term, in the
//   spirit of SimGrid SMPI's piecewise bandwidth factors, so that a + x / (b * eff(x)) follows the
//   measurements to within 1%. Knots are kept only where they are needed.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace ccsim {

// One regime: t = latency_s + x / beta_Bps for x in [from_x, to_x].
struct AlphaBetaSegment {
  double from_x = 0, to_x = 0;  // range of the bytes term covered by the points of this segment
  double latency_s = 0;         // intercept
  double beta_Bps = 0;          // slope^-1 (+inf when the segment is flat)
  double r2 = 0;                // on log time, over the segment's inliers
  double max_rel_residual = 0;  // over the segment's inliers
  std::size_t points = 0;
};

struct AlphaBetaFit {
  double latency_s = 0;  // intercept: time of a 0-byte op (of the smallest-size segment; see latency_refined)
  double beta_Bps = 0;   // slope: bytes_term / time (of the largest-size segment)
  double r2 = 0;         // 1 - SS_res/SS_tot on log time, over inliers, of the line (segment) model
  double max_rel_residual = 0;  // largest |t - model| / t over inliers, line (segment) model
  std::size_t points = 0;       // points given
  // Piecewise efficiency (x, measured_bw / model_bw) of the bandwidth term; empty: the lines fit.
  std::vector<std::pair<double, double>> efficiency;
  std::vector<AlphaBetaSegment> segments;  // one, or two when a protocol switch was detected
  double switch_x = 0;                     // bytes term where the second segment starts (0: none)
  double knee_x = 0;                       // latency_s * beta_Bps: bytes term where both bills are equal
  std::vector<std::size_t> outliers;       // indices (into the input) the robust fit rejected
  double max_rel_residual_all = 0;         // largest |t - model| / t including outliers
  // The curve as the efficiency sees it: per distinct x (sorted), the median of its measurements
  // without spikes (a repeat more than 15% slower than the fastest at that x).
  std::vector<double> sizes, times;
  double max_rel_residual_final = 0;  // over (sizes, times), of the full model a + x/(b*eff(x))
  // latency_s is not the first segment's intercept but the plateau of the smallest sizes (the
  // first segment is curved and its intercept misses the plateau by more than 5%).
  bool latency_refined = false;
  // Knots keep the full model within this relative error of the curve: 1%, or 3 sigma of the noise
  // seen between repeats at the same size when that is larger.
  double efficiency_tolerance = 0;
};

// Fits t = a + x/b. x and t must have the same size (>= 3 points, x >= 0, t > 0, at least two
// distinct x); throws std::invalid_argument otherwise (callers validate user input first).
AlphaBetaFit fit_alpha_beta(const std::vector<double>& x_bytes, const std::vector<double>& t_seconds);

// The fitted model at x: latency + x / (beta * efficiency(x)).
double fitted_time_s(const AlphaBetaFit& fit, double x_bytes);

// The median (0 for no values; the mean of the two middle ones for an even count).
double median(std::vector<double> v);

// Piecewise-linear interpolation in log(x) between knots, flat outside; 1.0 without knots.
double interpolate_efficiency(const std::vector<std::pair<double, double>>& knots, double x);

}  // namespace ccsim
