#include "scenarios/moe/routing.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "common/error.h"
#include "common/text.h"
#include "scenarios/moe/rng.h"
#include "scenarios/moe/trace.h"

namespace ccsim::moe {
namespace {

// Independent streams from one seed: the popularity permutation and the token sampling.
std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  // splitmix64 finaliser of seed + stream * golden ratio: distinct, well-mixed engine seeds.
  std::uint64_t z = seed + (stream + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
constexpr std::uint64_t kPermutationStream = 0;
constexpr std::uint64_t kSamplingStream = 1;

double parse_number(const std::string& text, const std::string& where, const std::string& spec) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    throw InputError(where, "'" + cut_for_message(spec) + "': '" + cut_for_message(text) + "' is not a number");
  return v;
}

std::vector<std::string> split_colons(const std::string& text, std::size_t max_parts) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (parts.size() + 1 < max_parts) {
    const auto colon = text.find(':', start);
    if (colon == std::string::npos) break;
    parts.push_back(text.substr(start, colon - start));
    start = colon + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

std::vector<double> zipf_weights(int experts, double s, const std::vector<int>& permutation) {
  std::vector<double> w(experts);
  for (int r = 0; r < experts; ++r) w[permutation[r]] = std::pow(static_cast<double>(r + 1), -s);
  return w;
}

void normalise(std::vector<double>& w) {
  double total = 0;
  for (double x : w) total += x;
  for (double& x : w) x /= total;
}

// Expected hottest-rank / mean rank load under contiguous placement.
double expected_rank_ratio(const std::vector<double>& weights, int k, int ep) {
  const std::vector<double> pi = expected_inclusion(weights, k);
  const int per_rank = static_cast<int>(pi.size()) / ep;
  double max_load = 0, total = 0;
  for (int r = 0; r < ep; ++r) {
    double load = 0;
    for (int i = 0; i < per_rank; ++i) load += pi[r * per_rank + i];
    max_load = std::max(max_load, load);
    total += load;
  }
  return max_load / (total / ep);
}

bool already_taken(const std::int32_t* out, int have, std::int32_t id) {
  for (int j = 0; j < have; ++j)
    if (out[j] == id) return true;
  return false;
}

// Fills out[have..count) by exact successive sampling over n candidates (id_of(i), weight_of(i)),
// skipping ids already in out; zero remaining weight: uniform among the free candidates.
template <typename IdOf, typename WeightOf>
void draw_rest_exactly(Rng& rng, std::int32_t* out, int have, int count, int n, IdOf id_of, WeightOf weight_of) {
  while (have < count) {
    double rest = 0;
    int free_items = 0;
    for (int i = 0; i < n; ++i)
      if (!already_taken(out, have, id_of(i))) rest += weight_of(i), ++free_items;
    const double u = rng.uniform();
    double target = u * rest;
    auto pick = static_cast<std::int64_t>(u * free_items);
    int chosen = -1;
    for (int i = 0; i < n; ++i) {
      if (already_taken(out, have, id_of(i))) continue;
      chosen = i;
      if (rest > 0 ? target < weight_of(i) : pick == 0) break;
      if (rest > 0) target -= weight_of(i);
      else --pick;
    }
    out[have++] = id_of(chosen);
  }
}

// Draws `count` distinct ids into out[0..count) by successive weighted sampling without
// replacement: draw_one(rng) draws from the full distribution and repeats are rejected (the same
// distribution as renormalising over the rest). After many rejections (heavy items already
// taken) `exact(have)` finishes the draw exactly over the remainder.
template <typename DrawOne, typename Exact>
void draw_distinct(Rng& rng, int count, std::int32_t* out, DrawOne draw_one, Exact exact) {
  int have = 0;
  int rejections = 0;
  while (have < count && rejections < 32 + 8 * count) {
    const std::int32_t id = draw_one(rng);
    if (already_taken(out, have, id)) {
      ++rejections;
      continue;
    }
    out[have++] = id;
  }
  if (have < count) exact(have);
}

std::vector<double> cumulative(const std::vector<double>& w) {
  std::vector<double> cdf(w.size());
  double run = 0;
  for (std::size_t i = 0; i < w.size(); ++i) cdf[i] = run += w[i];
  return cdf;
}

}  // namespace

RoutingSpec parse_routing_spec(const std::string& text, const std::string& where) {
  RoutingSpec spec;
  const auto head = text.substr(0, text.find(':'));
  if (head == "trace") {
    spec.kind = RoutingKind::Trace;
    spec.trace_path = text.size() > 6 ? text.substr(6) : "";
    if (spec.trace_path.empty()) throw InputError(where, "'trace:' needs a file: trace:FILE");
    return spec;
  }
  const auto parts = split_colons(text, 4);
  const auto arity = [&](std::size_t n, const char* form) {
    if (parts.size() != n) throw InputError(where, "'" + cut_for_message(text) + "': expected " + form);
  };
  if (head == "uniform") {
    arity(1, "uniform");
  } else if (head == "zipf") {
    arity(2, "zipf:S (S >= 0)");
    spec.kind = RoutingKind::Zipf;
    spec.zipf_s = parse_number(parts[1], where, text);
    if (spec.zipf_s < 0) throw InputError(where, "'" + cut_for_message(text) + "': zipf exponent must be >= 0");
  } else if (head == "hot") {
    arity(3, "hot:F:H (fraction F in [0,1] of the weight on H hot experts)");
    spec.kind = RoutingKind::Hot;
    spec.hot_fraction = parse_number(parts[1], where, text);
    const double h = parse_number(parts[2], where, text);
    if (spec.hot_fraction < 0 || spec.hot_fraction > 1)
      throw InputError(where, "'" + cut_for_message(text) + "': hot fraction must be in [0, 1]");
    if (h < 1 || h != std::floor(h) || h > 1e9)
      throw InputError(where, "'" + cut_for_message(text) + "': hot expert count must be a whole number >= 1");
    spec.hot_experts = static_cast<int>(h);
  } else if (head == "ratio") {
    arity(2, "ratio:X (hottest-rank / mean load, X >= 1)");
    spec.kind = RoutingKind::Ratio;
    spec.target_ratio = parse_number(parts[1], where, text);
    if (spec.target_ratio < 1) throw InputError(where, "'" + cut_for_message(text) + "': ratio must be >= 1");
  } else {
    throw InputError(where, "unknown routing '" + cut_for_message(text) + "' (uniform, zipf:S, hot:F:H, ratio:X, trace:FILE)");
  }
  return spec;
}

std::string routing_spec_name(const RoutingSpec& spec) {
  const auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  switch (spec.kind) {
    case RoutingKind::Uniform: return "uniform";
    case RoutingKind::Zipf: return "zipf:" + num(spec.zipf_s);
    case RoutingKind::Hot: return "hot:" + num(spec.hot_fraction) + ":" + std::to_string(spec.hot_experts);
    case RoutingKind::Ratio: return "ratio:" + num(spec.target_ratio);
    case RoutingKind::Trace: return "trace:" + spec.trace_path;
  }
  return "";
}

std::vector<std::int64_t> Routing::expert_counts() const {
  std::vector<std::int64_t> counts(experts, 0);
  for (std::int32_t e : expert_ids) ++counts[e];
  return counts;
}

std::vector<double> expected_inclusion(const std::vector<double>& weights, int k) {
  std::vector<double> w = weights;
  normalise(w);
  int positive = 0;
  for (double x : w) positive += x > 0;
  std::vector<double> pi(w.size(), 0.0);
  if (positive <= k) {  // every item with weight is always taken
    for (std::size_t i = 0; i < w.size(); ++i) pi[i] = w[i] > 0 ? 1.0 : 0.0;
    return pi;
  }
  const auto included = [&](double t) {
    double sum = 0;
    for (double x : w) sum += -std::expm1(-x * t);
    return sum;
  };
  double lo = 0, hi = 1;
  while (included(hi) < k) hi *= 2;
  for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    (included(mid) < k ? lo : hi) = mid;
  }
  const double t = 0.5 * (lo + hi);
  for (std::size_t i = 0; i < w.size(); ++i) pi[i] = -std::expm1(-w[i] * t);
  return pi;
}

double fit_zipf_to_ratio(const MoeConfig& config, double ratio, std::uint64_t seed, const std::string& where) {
  if (ratio < 1) throw InputError(where, "ratio must be >= 1");
  if (config.experts % config.ep != 0)
    throw InputError(where, "ratio:X is defined under contiguous placement, which needs EP (" +
                                std::to_string(config.ep) + ") to divide the experts (" +
                                std::to_string(config.experts) + ")");
  const auto perm = Rng(stream_seed(seed, kPermutationStream)).permutation(config.experts);
  const auto ratio_at = [&](double s) {
    return expected_rank_ratio(zipf_weights(config.experts, s, perm), config.top_k, config.ep);
  };
  double lo = 0, hi = 16;
  const double reachable = ratio_at(hi);
  if (reachable < ratio) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "ratio %.3g is beyond reach: the most skewed zipf (s = 16) gives %.3g", ratio,
                  reachable);
    throw InputError(where, buf);
  }
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    (ratio_at(mid) < ratio ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

std::vector<double> expert_popularity(const MoeConfig& config, const RoutingSpec& spec, std::uint64_t seed,
                                      double* zipf_s_used) {
  const int e = config.experts;
  std::vector<double> w(e, 1.0);
  double s_used = 0;
  const auto perm = [&] { return Rng(stream_seed(seed, kPermutationStream)).permutation(e); };
  switch (spec.kind) {
    case RoutingKind::Uniform: break;
    case RoutingKind::Zipf:
      s_used = spec.zipf_s;
      w = zipf_weights(e, s_used, perm());
      break;
    case RoutingKind::Ratio:
      s_used = fit_zipf_to_ratio(config, spec.target_ratio, seed);
      w = zipf_weights(e, s_used, perm());
      break;
    case RoutingKind::Hot: {
      const int h = spec.hot_experts;
      if (h > e)
        throw InputError("--routing", "hot:" + std::to_string(h) + " hot experts but only " + std::to_string(e) +
                                          " experts");
      const auto p = perm();
      for (int r = 0; r < e; ++r)
        w[p[r]] = r < h ? spec.hot_fraction / h : (h == e ? 0.0 : (1 - spec.hot_fraction) / (e - h));
      if (h == e) std::fill(w.begin(), w.end(), 1.0);
      break;
    }
    case RoutingKind::Trace: throw InputError("--routing", "a trace has no popularity vector");
  }
  normalise(w);
  if (zipf_s_used) *zipf_s_used = s_used;
  return w;
}

Routing sample_routing(const MoeConfig& config, const std::vector<double>& popularity, std::uint64_t seed) {
  const int e = config.experts, k = config.top_k, ep = config.ep;
  Routing r;
  r.ep = ep;
  r.top_k = k;
  r.experts = e;
  r.rank_offsets.resize(ep + 1);
  for (int i = 0; i <= ep; ++i) r.rank_offsets[i] = config.tokens_per_rank * i;
  const std::int64_t tokens = r.tokens();
  r.expert_ids.resize(static_cast<std::size_t>(tokens) * k);

  Rng rng(stream_seed(seed, kSamplingStream));
  const CdfTable cdf(cumulative(popularity));
  const int groups = config.nodes();
  const bool limited = config.node_limit > 0 && config.node_limit < groups;
  if (!limited) {
    for (std::int64_t t = 0; t < tokens; ++t) {
      std::int32_t* out = &r.expert_ids[t * k];
      draw_distinct(
          rng, k, out, [&](Rng& g) { return cdf.draw(g.uniform()); },
          [&](int have) {
            draw_rest_exactly(rng, out, have, k, e, [](int i) { return i; }, [&](int i) { return popularity[i]; });
          });
    }
    return r;
  }
  // Node-limited: M distinct groups weighted by their experts' total popularity, then k distinct
  // experts among those groups (a chosen group by its weight, then an expert inside it).
  const int per_group = config.experts_per_group(), m = config.node_limit;
  std::vector<double> group_weight(groups, 0.0), in_group_cdf(e);
  for (int g = 0; g < groups; ++g) {
    double run = 0;
    for (int i = 0; i < per_group; ++i) in_group_cdf[g * per_group + i] = run += popularity[g * per_group + i];
    group_weight[g] = run;
  }
  const CdfTable group_cdf(cumulative(group_weight));
  std::vector<std::int32_t> chosen(m);
  std::vector<double> chosen_cdf(m);
  for (std::int64_t t = 0; t < tokens; ++t) {
    draw_distinct(
        rng, m, chosen.data(), [&](Rng& g) { return group_cdf.draw(g.uniform()); },
        [&](int have) {
          draw_rest_exactly(rng, chosen.data(), have, m, groups, [](int i) { return i; },
                            [&](int i) { return group_weight[i]; });
        });
    std::sort(chosen.begin(), chosen.end());
    double run = 0;
    for (int j = 0; j < m; ++j) chosen_cdf[j] = run += group_weight[chosen[j]];
    std::int32_t* out = &r.expert_ids[t * k];
    const auto expert_at = [&](int i) { return chosen[i / per_group] * per_group + i % per_group; };
    draw_distinct(
        rng, k, out,
        [&](Rng& g) {
          const int group = chosen[draw_from_cdf(chosen_cdf.data(), m, g.uniform())];
          return group * per_group + draw_from_cdf(&in_group_cdf[group * per_group], per_group, g.uniform());
        },
        [&](int have) {
          draw_rest_exactly(rng, out, have, k, m * per_group, expert_at,
                            [&](int i) { return popularity[expert_at(i)]; });
        });
  }
  return r;
}

Routing make_routing(const MoeConfig& config, const RoutingSpec& spec, std::uint64_t seed) {
  if (spec.kind == RoutingKind::Trace) return read_trace(spec.trace_path, config, spec.trace_layer);
  double s = 0;
  const std::vector<double> popularity = expert_popularity(config, spec, seed, &s);
  int positive = 0;
  for (double w : popularity) positive += w > 0;
  if (positive < config.top_k)
    throw InputError("--routing", "'" + routing_spec_name(spec) + "' gives weight to only " + std::to_string(positive) +
                                      " experts, fewer than top-k " + std::to_string(config.top_k));
  Routing r = sample_routing(config, popularity, seed);
  r.zipf_s = s;
  return r;
}

}  // namespace ccsim::moe
