// One MoE layer's expert-parallel shape (issue 9): tokens per rank, hidden size, experts, top-k,
// EP size and GPUs per node, node-limited routing and the wire dtypes of dispatch and combine.
// Defaults are DeepEP's published prefill benchmark (README: 4096 tokens, hidden 7168, 256 routed
// experts, top-8, top-4 groups, FP8 dispatch, BF16 combine). See docs/moe.md.
#pragma once
#include <cstdint>
#include <string>

namespace ccsim::moe {

enum class WireDtype { Fp8, Bf16 };

// Bytes one token occupies on the wire. FP8: H bytes plus one fp32 scale per 128 channels
// (DeepEP/DeepSeek-V3 per-128 block quantisation: 7168 -> 7168 + 56*4 = 7392 B); a hidden size
// that is not a multiple of 128 gets a scale for its last partial block. BF16: 2H.
std::int64_t bytes_per_token(WireDtype dtype, int hidden);

// "fp8" / "bf16"; anything else -> InputError naming `where`.
WireDtype parse_wire_dtype(const std::string& text, const std::string& where);
const char* wire_dtype_name(WireDtype dtype);

struct MoeConfig {
  std::int64_t tokens_per_rank = 4096;  // T (ignored by trace routing: the trace's tokens are used)
  int hidden = 7168;                     // H
  int experts = 256;                     // E routed experts (logical)
  int top_k = 8;                         // k distinct experts per token
  int ep = 8;                            // EP ranks (GPUs)
  int gpus_per_node = 8;                 // G; nodes N = EP / G
  int node_limit = 0;                    // M: each token's experts on at most M nodes; 0 = unlimited
  WireDtype dispatch_dtype = WireDtype::Fp8;
  WireDtype combine_dtype = WireDtype::Bf16;

  int nodes() const { return ep / gpus_per_node; }
  // The node groups of node-limited routing: E / N consecutive logical experts per group
  // (DeepSeek-V3's expert groups; with contiguous placement group g lives on node g).
  int experts_per_group() const { return experts / nodes(); }
};

// Throws InputError naming the flag ("--tokens", "--experts", "--topk", "--ep",
// "--gpus-per-node", "--max-nodes", "--hidden") for: negative tokens, hidden < 1, experts < 1,
// top-k < 1 or > experts, EP < 1, G < 1 or not dividing EP, E not divisible by N (the node
// groups), node limit < 0, or a node limit whose nodes hold fewer than k experts (M * E/N < k).
// (E divisible by EP is contiguous placement's rule: contiguous_placement checks it.)
void validate(const MoeConfig& config);

}  // namespace ccsim::moe
