#include "calibrate/fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

namespace ccsim {
namespace {

constexpr double kTukeyC = 4.685;      // 95% efficiency under Gaussian noise
constexpr double kHuberC = 1.345;
constexpr double kMinScale = 0.002;    // relative residual scale floor: 0.2% (exact data has scale 0)
constexpr double kEfficiencyTol = 0.01;  // knots keep the full model within 1% of the curve
constexpr double kBandwidthShare = 0.1;  // knots only where the bandwidth term is >= 10% of the time
constexpr double kSpike = 1.15;          // a repeat more than 15% slower than the fastest is a spike

struct Line {
  double a = 0, c = 0;     // t = a + c x
  std::vector<double> w;   // robust weights of the points used (same order as the index list)
  double scale = 0;        // robust scale of the relative residuals
};

// Weighted least squares of t = a + c x with weights w_i / t_i^2, a >= 0.
void solve_wls(const std::vector<double>& x, const std::vector<double>& t, const std::vector<std::size_t>& idx,
               const std::vector<double>& w, double& a, double& c) {
  double s0 = 0, s1 = 0, s2 = 0, r0 = 0, r1 = 0;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    const double xi = x[idx[k]], ti = t[idx[k]];
    const double wi = w[k] / (ti * ti);
    s0 += wi; s1 += wi * xi; s2 += wi * xi * xi; r0 += wi * ti; r1 += wi * xi * ti;
  }
  const double det = s0 * s2 - s1 * s1;
  if (s0 <= 0) { a = 0; c = 0; return; }
  if (std::fabs(det) <= 1e-12 * s0 * s2 || s2 <= 0) {  // one distinct x: a flat line
    a = r0 / s0; c = 0; return;
  }
  a = (s2 * r0 - s1 * r1) / det;
  c = (s0 * r1 - s1 * r0) / det;
  if (a < 0) { a = 0; c = r1 / s2; }              // no negative 0-byte time
  if (c < 0) { c = 0; a = r0 / s0; }              // no negative bandwidth term
}

Line fit_line(const std::vector<double>& x, const std::vector<double>& t, const std::vector<std::size_t>& idx) {
  Line L;
  L.w.assign(idx.size(), 1.0);
  solve_wls(x, t, idx, L.w, L.a, L.c);
  std::vector<double> r(idx.size());
  for (int it = 0; it < 60; ++it) {
    for (std::size_t k = 0; k < idx.size(); ++k) r[k] = (t[idx[k]] - (L.a + L.c * x[idx[k]])) / t[idx[k]];
    std::vector<double> ar(r.size());
    for (std::size_t k = 0; k < r.size(); ++k) ar[k] = std::fabs(r[k]);
    L.scale = std::max(kMinScale, 1.4826 * median(ar));
    const bool tukey = it >= 10;
    std::vector<double> w(idx.size());
    for (std::size_t k = 0; k < idx.size(); ++k) {
      const double u = r[k] / L.scale;
      if (tukey) {
        const double v = u / kTukeyC;
        w[k] = std::fabs(v) < 1 ? (1 - v * v) * (1 - v * v) : 0.0;
      } else {
        w[k] = std::fabs(u) <= kHuberC ? 1.0 : kHuberC / std::fabs(u);
      }
    }
    double a = L.a, c = L.c;
    solve_wls(x, t, idx, w, a, c);
    const bool converged = std::fabs(a - L.a) <= 1e-12 * std::max(1e-30, std::fabs(L.a)) + 1e-18 &&
                           std::fabs(c - L.c) <= 1e-12 * std::max(1e-30, std::fabs(L.c)) + 1e-30;
    L.a = a; L.c = c; L.w = w;
    if (converged && tukey) break;
  }
  // Final scale with the final coefficients.
  std::vector<double> ar(idx.size());
  for (std::size_t k = 0; k < idx.size(); ++k) ar[k] = std::fabs((t[idx[k]] - (L.a + L.c * x[idx[k]])) / t[idx[k]]);
  L.scale = 1.4826 * median(ar);
  return L;
}

double rel_residual(double t, double model) { return (t - model) / t; }

// R^2 on log time and the largest relative residual over the inliers (weight > 0) of a line.
void line_quality(const std::vector<double>& x, const std::vector<double>& t, const std::vector<std::size_t>& idx,
                  const Line& L, double& r2, double& max_rel) {
  double mean = 0;
  std::size_t n = 0;
  for (std::size_t k = 0; k < idx.size(); ++k)
    if (L.w[k] > 0) { mean += std::log(t[idx[k]]); ++n; }
  mean = n ? mean / n : 0;
  double ss_res = 0, ss_tot = 0;
  max_rel = 0;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    if (!(L.w[k] > 0)) continue;
    const double m = L.a + L.c * x[idx[k]];
    const double lt = std::log(t[idx[k]]);
    ss_res += (lt - std::log(m)) * (lt - std::log(m));
    ss_tot += (lt - mean) * (lt - mean);
    max_rel = std::max(max_rel, std::fabs(rel_residual(t[idx[k]], m)));
  }
  r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
}

AlphaBetaSegment make_segment(const std::vector<double>& x, const std::vector<double>& t,
                              const std::vector<std::size_t>& idx, const Line& L) {
  AlphaBetaSegment s;
  s.from_x = std::numeric_limits<double>::infinity();
  s.to_x = 0;
  for (std::size_t i : idx) { s.from_x = std::min(s.from_x, x[i]); s.to_x = std::max(s.to_x, x[i]); }
  s.latency_s = L.a;
  s.beta_Bps = L.c > 0 ? 1 / L.c : std::numeric_limits<double>::infinity();
  s.points = idx.size();
  line_quality(x, t, idx, L, s.r2, s.max_rel_residual);
  return s;
}

// The measured times of each distinct size, in the order of `order` (sorted by x).
std::vector<std::vector<double>> group_times(const std::vector<double>& x, const std::vector<double>& t,
                                             const std::vector<std::size_t>& order) {
  std::vector<std::vector<double>> groups;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || x[order[k]] != x[order[k - 1]]) groups.emplace_back();
    groups.back().push_back(t[order[k]]);
  }
  return groups;
}

// interpolate_efficiency(knots without knot `skip`, x), without building that vector: the same
// interval and the same arithmetic, so the result is bit-identical. Binary search over the knots.
double efficiency_without(const std::vector<std::pair<double, double>>& knots, std::size_t skip, double x) {
  const std::size_t n = knots.size() - (skip < knots.size() ? 1 : 0);
  auto at = [&](std::size_t i) -> const std::pair<double, double>& { return knots[i < skip ? i : i + 1]; };
  if (n == 0) return 1.0;
  if (x <= at(0).first) return at(0).second;
  if (x >= at(n - 1).first) return at(n - 1).second;
  std::size_t lo = 1, hi = n - 1;  // the first i >= 1 with x <= at(i).first
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (x <= at(mid).first) hi = mid; else lo = mid + 1;
  }
  const double x0 = at(lo - 1).first, x1 = at(lo).first;
  const double f = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
  return at(lo - 1).second + f * (at(lo).second - at(lo - 1).second);
}

// Greedy knot removal: while some knot can go with every point still within `tol`, remove the one
// whose removal leaves the smallest largest error (ties: the first). Removing knot k changes the
// interpolation only between knots k-1 and k+1, so each trial re-evaluates those points and takes
// the rest from prefix and suffix maxima of the current errors: O(points x log knots) per removal
// instead of O(points x knots^2) (10k-row logs took minutes).
std::vector<std::pair<double, double>> prune_knots(std::vector<std::pair<double, double>> knots,
                                                   const std::vector<double>& gx, const std::vector<double>& gt,
                                                   const std::vector<std::size_t>& points, double latency_s,
                                                   double beta_Bps, double tol) {
  const std::size_t P = points.size();
  auto err = [&](std::size_t p, double eff) {
    const std::size_t g = points[p];
    return std::fabs(rel_residual(gt[g], latency_s + gx[g] / (beta_Bps * eff)));
  };
  std::vector<double> px(P);
  for (std::size_t p = 0; p < P; ++p) px[p] = gx[points[p]];
  std::vector<double> prefix(P + 1), suffix(P + 1);
  // With every bandwidth-dominated size as a knot the start fits all points (error ~0 <= tol); a
  // thinned start (long logs) may not, and is then the reference a removal must not worsen.
  double start_err = 0;
  for (std::size_t p = 0; p < P; ++p) start_err = std::max(start_err, err(p, efficiency_without(knots, knots.size(), px[p])));
  const double limit = std::max(tol, start_err);
  while (knots.size() > 1) {
    const std::size_t none = knots.size();
    prefix[0] = 0;
    for (std::size_t p = 0; p < P; ++p) prefix[p + 1] = std::max(prefix[p], err(p, efficiency_without(knots, none, px[p])));
    suffix[P] = 0;
    for (std::size_t p = P; p-- > 0;) suffix[p] = std::max(suffix[p + 1], err(p, efficiency_without(knots, none, px[p])));
    double best = std::numeric_limits<double>::infinity();
    std::size_t best_k = 0;
    for (std::size_t k = 0; k < knots.size(); ++k) {
      // Points in [knot k-1, knot k+1] (unbounded past the ends) see a different interpolation.
      const std::size_t lo = k == 0 ? 0 : static_cast<std::size_t>(std::lower_bound(px.begin(), px.end(), knots[k - 1].first) - px.begin());
      const std::size_t hi = k + 1 == knots.size() ? P : static_cast<std::size_t>(std::upper_bound(px.begin(), px.end(), knots[k + 1].first) - px.begin());
      double e = std::max(prefix[lo], suffix[hi]);
      for (std::size_t p = lo; p < hi; ++p) e = std::max(e, err(p, efficiency_without(knots, k, px[p])));
      if (e < best) { best = e; best_k = k; }
    }
    if (best > limit) break;
    knots.erase(knots.begin() + static_cast<std::ptrdiff_t>(best_k));
  }
  return knots;
}

}  // namespace

double interpolate_efficiency(const std::vector<std::pair<double, double>>& knots, double x) {
  if (knots.empty()) return 1.0;
  if (x <= knots.front().first) return knots.front().second;
  if (x >= knots.back().first) return knots.back().second;
  for (std::size_t i = 1; i < knots.size(); ++i) {
    if (x <= knots[i].first) {
      const double x0 = knots[i - 1].first, x1 = knots[i].first;
      const double f = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
      return knots[i - 1].second + f * (knots[i].second - knots[i - 1].second);
    }
  }
  return knots.back().second;
}

double fitted_time_s(const AlphaBetaFit& fit, double x) {
  if (!(x > 0) || std::isinf(fit.beta_Bps)) return fit.latency_s;
  return fit.latency_s + x / (fit.beta_Bps * interpolate_efficiency(fit.efficiency, x));
}

AlphaBetaFit fit_alpha_beta(const std::vector<double>& x, const std::vector<double>& t) {
  if (x.size() != t.size()) throw std::invalid_argument("fit_alpha_beta: x and t differ in length");
  if (x.size() < 3) throw std::invalid_argument("fit_alpha_beta: need at least 3 points");
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!(x[i] >= 0) || !(t[i] > 0) || std::isinf(x[i]) || std::isinf(t[i]))
      throw std::invalid_argument("fit_alpha_beta: sizes must be >= 0 and times > 0");
  // Points sorted by x; distinct x values.
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return x[i] < x[j]; });
  std::vector<double> distinct;
  for (std::size_t i : order)
    if (distinct.empty() || x[i] != distinct.back()) distinct.push_back(x[i]);
  if (distinct.size() < 2) throw std::invalid_argument("fit_alpha_beta: need at least two distinct sizes");

  AlphaBetaFit fit;
  fit.points = x.size();

  // One line.
  const Line one = fit_line(x, t, order);
  std::vector<std::vector<std::size_t>> parts{order};
  std::vector<Line> lines{one};

  // Two segments: break between distinct sizes, at least 3 distinct sizes on each side.
  constexpr std::size_t kMinDistinct = 3;
  if (distinct.size() >= 2 * kMinDistinct) {
    double best_scale = std::numeric_limits<double>::infinity(), best_loss = best_scale;
    std::vector<std::size_t> best_lo, best_hi;
    Line best_l0, best_l1;
    // Every split for ordinary logs (-f 2 gives ~30 sizes); for long linear sweeps (-i 1K to 10M:
    // 10k sizes, each split a robust fit over all points) every `stride`-th split, then, around the
    // best so far, every 16x finer stride down to single splits: about kMaxSplits + 32 per level fits
    // instead of one per size, which made calibrate quadratic in the rows (docs/performance.md,
    // `ccsim-bench --calibrate-rows`).
    constexpr std::size_t kMaxSplits = 64;
    const std::size_t first = kMinDistinct, last = distinct.size() - kMinDistinct;  // splits k in [first, last]
    std::size_t stride = (last - first) / kMaxSplits + 1;
    std::size_t best_k = first;
    auto try_split = [&](std::size_t k) {
      const double split = distinct[k];
      std::vector<std::size_t> lo, hi;
      for (std::size_t i : order) (x[i] < split ? lo : hi).push_back(i);
      const Line l0 = fit_line(x, t, lo), l1 = fit_line(x, t, hi);
      std::vector<double> ar;
      for (std::size_t i : lo) ar.push_back(std::fabs(rel_residual(t[i], l0.a + l0.c * x[i])));
      for (std::size_t i : hi) ar.push_back(std::fabs(rel_residual(t[i], l1.a + l1.c * x[i])));
      // Breakpoint by truncated squared loss (a residual counts at most 5%: spikes cost every split
      // alike), acceptance below by the robust scale.
      double loss = 0;
      for (double r : ar) loss += std::min(r * r, 0.05 * 0.05);
      if (loss < best_loss) {
        best_loss = loss; best_scale = 1.4826 * median(ar); best_lo = lo; best_hi = hi; best_l0 = l0; best_l1 = l1;
        best_k = k;
      }
    };
    for (std::size_t k = first; k <= last; k += stride) try_split(k);
    while (stride > 1) {
      const std::size_t coarse = best_k, finer = std::max<std::size_t>(1, stride / 16);
      for (std::size_t k = coarse > first + stride ? coarse - stride : first; k <= std::min(last, coarse + stride); k += finer)
        if (k != coarse) try_split(k);
      stride = finer;
    }
    double one_loss = 0;
    for (std::size_t i : order) {
      const double r = rel_residual(t[i], one.a + one.c * x[i]);
      one_loss += std::min(r * r, 0.05 * 0.05);
    }
    if (one.scale > 0.01 && (best_scale < 0.5 * one.scale || best_loss < 0.5 * one_loss)) {
      parts = {best_lo, best_hi};
      lines = {best_l0, best_l1};
      fit.switch_x = x[best_hi.front()];
    }
  }

  // Segments, outliers, line-model quality.
  std::vector<double> model(x.size()), weight(x.size());
  for (std::size_t p = 0; p < parts.size(); ++p) {
    fit.segments.push_back(make_segment(x, t, parts[p], lines[p]));
    for (std::size_t k = 0; k < parts[p].size(); ++k) {
      const std::size_t i = parts[p][k];
      model[i] = lines[p].a + lines[p].c * x[i];
      weight[i] = lines[p].w[k];
    }
  }
  fit.latency_s = fit.segments.front().latency_s;
  fit.beta_Bps = fit.segments.back().beta_Bps;
  {
    double mean = 0;
    std::size_t n = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (weight[i] > 0) { mean += std::log(t[i]); ++n; }
    mean = n ? mean / n : 0;
    double ss_res = 0, ss_tot = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double r = std::fabs(rel_residual(t[i], model[i]));
      fit.max_rel_residual_all = std::max(fit.max_rel_residual_all, r);
      if (!(weight[i] > 0)) { fit.outliers.push_back(i); continue; }
      fit.max_rel_residual = std::max(fit.max_rel_residual, r);
      const double lt = std::log(t[i]);
      ss_res += (lt - std::log(model[i])) * (lt - std::log(model[i]));
      ss_tot += (lt - mean) * (lt - mean);
    }
    fit.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res == 0 ? 1.0 : 0.0);
  }

  // Representative time per distinct x: the median of its measurements, without spikes (a
  // measurement more than kSpike above the fastest at that size: interference only slows a run down).
  std::vector<double> gx, gt;
  // `order` is sorted by x: each distinct size's measurements are one contiguous run of it.
  const std::vector<std::vector<double>> times_by_size = group_times(x, t, order);
  for (std::size_t di = 0; di < distinct.size(); ++di) {
    const double d = distinct[di];
    const std::vector<double>& ts = times_by_size[di];
    const double lo = *std::min_element(ts.begin(), ts.end());
    std::vector<double> kept;
    for (double v : ts)
      if (v <= kSpike * lo) kept.push_back(v);
    gx.push_back(d);
    gt.push_back(median(kept));
  }

  // Latency refinement: when the first segment is curved (NCCL's LL regime grows sub-linearly), its
  // intercept can miss the latency plateau; the plateau is then the median, over the three smallest
  // latency-dominated sizes, of t - x / b0. Used only when it differs from the intercept by more than
  // 5%, so that on straight (even noisy) curves the least-squares intercept stands.
  if (!std::isinf(fit.segments.front().beta_Bps)) {
    const double b0 = fit.segments.front().beta_Bps;
    std::vector<double> plateau;
    for (std::size_t g = 0; g < gx.size() && plateau.size() < 3; ++g)
      if (gx[g] / b0 < kBandwidthShare * gt[g]) plateau.push_back(gt[g] - gx[g] / b0);
    if (plateau.size() == 3) {
      const double a_small = median(plateau);
      if (std::fabs(a_small - fit.latency_s) > 0.05 * a_small) {
        fit.latency_s = a_small;
        fit.latency_refined = true;
      }
    }
  }
  fit.knee_x = std::isinf(fit.beta_Bps) ? std::numeric_limits<double>::infinity() : fit.latency_s * fit.beta_Bps;

  // Efficiency knots on the composite model a + x / (b * eff(x)).
  if (!std::isinf(fit.beta_Bps) && fit.beta_Bps > 0) {
    std::vector<std::pair<double, double>> cand;
    std::vector<std::size_t> cand_group;
    for (std::size_t g = 0; g < gx.size(); ++g) {
      const double bw_time = gt[g] - fit.latency_s;
      if (gx[g] > 0 && bw_time > kBandwidthShare * gt[g]) {
        cand.emplace_back(gx[g], (gx[g] / fit.beta_Bps) / bw_time);
        cand_group.push_back(g);
      }
    }
    auto max_err = [&](const std::vector<std::pair<double, double>>& knots) {
      double m = 0;
      for (std::size_t g : cand_group) {
        const double model_t = fit.latency_s + gx[g] / (fit.beta_Bps * interpolate_efficiency(knots, gx[g]));
        m = std::max(m, std::fabs(rel_residual(gt[g], model_t)));
      }
      return m;
    };
    // Tolerance: 1%, or 3 sigma of the measurement noise when repeats at the same size (out-of-place
    // and in-place) disagree more, so that knots follow the curve, not the noise.
    double tol = kEfficiencyTol;
    {
      std::vector<double> d;
      for (const std::vector<double>& ts : times_by_size) {
        if (ts.size() >= 2) d.push_back(std::fabs(ts[0] - ts[1]) / (0.5 * (ts[0] + ts[1])));
      }
      if (d.size() >= 5) tol = std::max(tol, 3 * 1.4826 * median(d) / std::sqrt(2.0));
    }
    fit.efficiency_tolerance = tol;
    if (!cand.empty() && max_err({}) > tol) {
      // Greedy removal costs O(points) per knot and removal: from every size of a 10k-row log that
      // is 10^8 evaluations per removal. Long logs start from kMaxKnotCandidates sizes evenly spread
      // over their rows instead (the fit to all points is still what every removal is judged by).
      constexpr std::size_t kMaxKnotCandidates = 128;
      if (cand.size() > kMaxKnotCandidates) {
        std::vector<std::pair<double, double>> thin;
        for (std::size_t i = 0; i < kMaxKnotCandidates; ++i)
          thin.push_back(cand[i * (cand.size() - 1) / (kMaxKnotCandidates - 1)]);
        cand = thin;
      }
      fit.efficiency = prune_knots(cand, gx, gt, cand_group, fit.latency_s, fit.beta_Bps, tol);
    }
  }
  for (std::size_t g = 0; g < gx.size(); ++g) {
    fit.sizes.push_back(gx[g]);
    fit.times.push_back(gt[g]);
    fit.max_rel_residual_final = std::max(fit.max_rel_residual_final, std::fabs(rel_residual(gt[g], fitted_time_s(fit, gx[g]))));
  }
  return fit;
}

// Selection instead of a sort: the same two middle values, in linear time (the robust fits call
// this every iteration, on every candidate split).
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t n = v.size();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2) return *mid;
  return 0.5 * (*std::max_element(v.begin(), mid) + *mid);
}

}  // namespace ccsim
