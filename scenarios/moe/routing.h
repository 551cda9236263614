// Which experts each token picks (issue 9). A routing is a flat token-major array of logical expert
// ids, k distinct ids per token, with each token owned by a source rank. Generated routings draw
// k distinct experts by weighted sampling without replacement from a popularity vector (uniform,
// zipf, hot, or a zipf fitted to a target hottest-rank/mean ratio); traces are read from a file
// (scenarios/moe/trace.h). Node-limited routing first draws M distinct node groups, then the k
// experts among those groups' experts: a stand-in for DeepSeek-V3's group-limited top-k.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/moe/config.h"

namespace ccsim::moe {

enum class RoutingKind { Uniform, Zipf, Hot, Ratio, Trace };

struct RoutingSpec {
  RoutingKind kind = RoutingKind::Uniform;
  double zipf_s = 0;          // zipf:s   popularity of the expert ranked r is 1 / r^s
  double hot_fraction = 0;    // hot:f:h  h hot experts share a fraction f of the sampling weight
  int hot_experts = 0;
  double target_ratio = 1;    // ratio:x  hottest-rank / mean load under contiguous placement
  std::string trace_path;     // trace:FILE
  int trace_layer = -1;       // which layer of a multi-layer trace; -1 = the lowest in the file
};

// Parses "uniform", "zipf:1.2", "hot:0.3:4", "ratio:2.5", "trace:path". Errors name `where`
// (the flag, e.g. "--routing") and say what is wrong.
RoutingSpec parse_routing_spec(const std::string& text, const std::string& where = "--routing");
std::string routing_spec_name(const RoutingSpec& spec);

struct Routing {
  int ep = 0;
  int top_k = 0;
  int experts = 0;
  // Tokens of rank r are [rank_offsets[r], rank_offsets[r+1]) (size EP+1).
  std::vector<std::int64_t> rank_offsets;
  // expert_ids[token * top_k + j], j < top_k: the token's j-th logical expert, all distinct.
  std::vector<std::int32_t> expert_ids;
  // For generated routings: the skew parameter used (zipf s; the fitted s for ratio:x); 0 otherwise.
  double zipf_s = 0;

  std::int64_t tokens() const { return rank_offsets.empty() ? 0 : rank_offsets.back(); }
  // (token, expert) pairs routed to each logical expert.
  std::vector<std::int64_t> expert_counts() const;
};

// The sampling weight of every logical expert for a generated spec (sums to 1). Zipf and hot
// assign ranks through a seeded permutation of the experts; ratio:x bisects zipf s (see
// fit_zipf_to_ratio). Not for traces.
std::vector<double> expert_popularity(const MoeConfig& config, const RoutingSpec& spec,
                                      std::uint64_t seed, double* zipf_s_used = nullptr);

// Expected (token, expert) pairs per token landing on each expert when k distinct experts are
// drawn by successive weighted sampling without replacement: the inclusion probabilities, from
// the exponential-clock approximation pi_e = 1 - exp(-w_e t) with t solving sum pi_e = k
// (Rosen's successive-sampling approximation; exact for equal weights). Sums to k.
std::vector<double> expected_inclusion(const std::vector<double>& weights, int k);

// The zipf s >= 0 whose expected hottest-rank / mean rank load (contiguous placement, the seeded
// permutation, expected_inclusion, no node limit) equals `ratio`, by bisection on [0, 16].
// InputError (where) if ratio < 1 or beyond what any s reaches.
double fit_zipf_to_ratio(const MoeConfig& config, double ratio, std::uint64_t seed,
                         const std::string& where = "--routing");

// Generates (or, for Trace, reads) the routing. Byte-identical per (config, spec, seed).
Routing make_routing(const MoeConfig& config, const RoutingSpec& spec, std::uint64_t seed);

// Draws T tokens per rank from `popularity` (size E), honouring config.node_limit.
Routing sample_routing(const MoeConfig& config, const std::vector<double>& popularity,
                       std::uint64_t seed);

}  // namespace ccsim::moe
