#include "scenarios/moe/config.h"

#include "common/error.h"

namespace ccsim::moe {
namespace {
constexpr std::int64_t kMaxTokenExpertPairs = std::int64_t{1} << 26;
}  // namespace

std::int64_t bytes_per_token(WireDtype dtype, int hidden) {
  const std::int64_t h = hidden;
  if (dtype == WireDtype::Bf16) return 2 * h;
  return h + (h + 127) / 128 * 4;  // one fp32 scale per 128-channel block
}

WireDtype parse_wire_dtype(const std::string& text, const std::string& where) {
  if (text == "fp8") return WireDtype::Fp8;
  if (text == "bf16") return WireDtype::Bf16;
  throw InputError(where, "unknown dtype '" + text + "' (fp8, bf16)");
}

const char* wire_dtype_name(WireDtype dtype) { return dtype == WireDtype::Fp8 ? "fp8" : "bf16"; }

void validate(const MoeConfig& c) {
  const auto s = [](auto v) { return std::to_string(v); };
  if (c.tokens_per_rank < 0) throw InputError("--tokens", "tokens per rank must be >= 0, got " + s(c.tokens_per_rank));
  if (c.hidden < 1) throw InputError("--hidden", "hidden size must be >= 1, got " + s(c.hidden));
  if (c.experts < 1) throw InputError("--experts", "experts must be >= 1, got " + s(c.experts));
  if (c.top_k < 1 || c.top_k > c.experts)
    throw InputError("--topk", "top-k must be in [1, experts = " + s(c.experts) + "], got " + s(c.top_k));
  if (c.ep < 1) throw InputError("--ep", "EP size must be >= 1, got " + s(c.ep));
  if (c.gpus_per_node < 1 || c.ep % c.gpus_per_node != 0)
    throw InputError("--gpus-per-node", "GPUs per node (" + s(c.gpus_per_node) + ") must be >= 1 and divide EP (" +
                                            s(c.ep) + ")");
  if (c.experts % c.nodes() != 0)
    throw InputError("--experts", s(c.experts) + " experts do not split into " + s(c.nodes()) +
                                      " equal node groups (nodes = EP / GPUs per node)");
  // Routing holds one 4-byte expert id per (token, expert) pair, and the traffic and transport passes
  // walk every pair: 2^24 pairs took 14 s and 100 MB on a busy 2-core machine, so 2^26 is ~0.4 GiB and
  // up to a minute; 10^8 tokens per rank ended in std::bad_alloc, 10^7 ran 90 s silently (docs/moe.md).
  const double pairs = static_cast<double>(c.tokens_per_rank) * c.ep * c.top_k;
  if (pairs > static_cast<double>(kMaxTokenExpertPairs))
    throw InputError("--tokens", s(c.tokens_per_rank) + " tokens per rank x EP " + s(c.ep) + " x top-k " + s(c.top_k) + " = " +
                                     std::to_string(static_cast<long long>(pairs)) + " (token, expert) pairs, above ccsim's limit of " +
                                     s(kMaxTokenExpertPairs) + " (2^26: each pair is routed and counted, ~0.4 GiB and up to a minute at the limit; docs/moe.md)");
  if (c.node_limit < 0)
    throw InputError("--max-nodes", "node limit must be >= 1 (or 0 for unlimited), got " + s(c.node_limit));
  if (c.node_limit > 0 && c.node_limit < c.nodes() &&
      static_cast<std::int64_t>(c.node_limit) * c.experts_per_group() < c.top_k)
    throw InputError("--max-nodes", s(c.node_limit) + " nodes hold " + s(c.node_limit * c.experts_per_group()) +
                                         " experts, fewer than top-k " + s(c.top_k));
}

}  // namespace ccsim::moe
