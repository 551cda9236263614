// Per-transport traffic of one MoE layer's dispatch and combine (issue 9): aggregated flows per
// (stage, src, dst) with their link class, per-rank byte totals, DeepEP's logical "bottleneck
// bandwidth" numerators, and routing statistics. Pure bookkeeping (no engine): the `ccsim moe`
// command turns flows into schedules. Rules (docs/moe.md):
//  nccl           Megatron's all-to-all dispatcher: per (src,dst) one message of the (token,expert)
//                 pairs from src served on dst; no dedup. Self pairs are local (no flow).
//  deepep-normal  DeepEP's normal kernels: one RDMA copy per (token, remote node) to the relay (same
//                 local index as the source on that node), which forwards over NVLink once to every
//                 other GPU of its node serving one of the token's experts; same-node GPUs get one
//                 NVLink copy directly. Combine is the reverse (expert GPU -> relay over NVLink,
//                 relay reduces, one RDMA copy relay -> source).
//  deepep-ll      DeepEP's low-latency kernels: one message per (token, expert) pair, no dedup;
//                 same-node peers over NVLink (default) or all over RDMA (pure_rdma).
//  allgather      Megatron's all-gather dispatcher: every rank gets every other rank's tokens;
//                 combine is a reduce-scatter of the same volume in combine bytes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/moe/config.h"
#include "scenarios/moe/placement.h"
#include "scenarios/moe/routing.h"

namespace ccsim::moe {

enum class Transport { Nccl, DeepepNormal, DeepepLowLatency, AllGather };
enum class Phase { Dispatch, Combine };
enum class Hop { Rdma, Nvlink };  // link class of a flow

// "nccl", "deepep-normal", "deepep-ll", "allgather"; anything else -> InputError naming `where`.
Transport parse_transport(const std::string& text, const std::string& where = "--transport");
const char* transport_name(Transport transport);
const char* phase_name(Phase phase);
const char* hop_name(Hop hop);

struct TransportOptions {
  bool pure_rdma = false;  // deepep-ll: same-node peers over RDMA too (DeepEP's first release)
};

struct Flow {                 // aggregated over tokens: one entry per (stage, src, dst)
  int src = 0, dst = 0;       // global ranks (node * G + local)
  Hop hop = Hop::Nvlink;
  int stage = 0;              // 0: leaves the token's owner (dispatch) / the expert GPU (combine);
                              // 1: the relay's forwarding hop (deepep-normal), which consumes stage-0
                              //    data received by the relay (dispatch: relay -> expert GPUs over
                              //    NVLink; combine: relay -> token owner over RDMA)
  double bytes = 0;           // payload bytes
  std::int64_t messages = 0;  // messages this flow stands for: nccl/allgather 1 per (src,dst);
                              // deepep-normal one per token copy; deepep-ll one per (token,expert) pair
  std::int64_t tokens = 0;    // token copies carried
};

struct PhaseTraffic {
  Phase phase = Phase::Dispatch;
  Transport transport = Transport::Nccl;
  std::int64_t bytes_per_token = 0;  // this phase's wire dtype
  std::vector<Flow> flows;           // sorted by (stage, src, dst); no zero flows, no src == dst
  // Per rank, over all stages (a relay counts what it receives and what it forwards).
  std::vector<double> rdma_bytes_sent, rdma_bytes_received;
  std::vector<double> nvlink_bytes_sent, nvlink_bytes_received;
  // Per rank: token copies that need no flow because the token's owner GPU itself serves an
  // expert of it (nccl/deepep-ll: one per such pair; deepep-normal: one per token; allgather: the
  // rank's own tokens), and their bytes. A relay serving the token itself consumes the RDMA copy
  // it received (no extra flow, not counted here).
  std::vector<std::int64_t> local_tokens;
  std::vector<double> local_bytes;
  // DeepEP's "bottleneck bandwidth" numerators (tests/test_internode.py), per rank and their mean:
  // rdma: (token, node) pairs the rank's tokens go to, own node included (dedup per node), times
  //       bytes_per_token; combine: the same pairs coming back.
  // nvlink: distinct tokens the rank receives (dispatch; one per (token, GPU)) or sends back
  //       (combine), times bytes_per_token, own tokens included.
  // Defined from the routing alone, so identical for every transport.
  std::vector<double> logical_rdma_bytes_per_rank, logical_nvlink_bytes_per_rank;
  double logical_rdma_bytes = 0;    // mean over ranks
  double logical_nvlink_bytes = 0;  // mean over ranks

  double total_rdma_bytes() const;
  double total_nvlink_bytes() const;
};

struct RoutingStats {
  std::int64_t tokens = 0;                  // all ranks
  std::int64_t pairs = 0;                   // (token, expert) pairs = tokens * k
  double distinct_nodes_per_token = 0;      // mean over tokens, after placement
  double distinct_gpus_per_token = 0;
  double remote_node_fraction = 0;          // share of (token, node) pairs off the token's node
  std::vector<std::int64_t> rank_load;      // (token,expert) pairs received per rank after placement
  double max_over_mean_rank_load = 0;       // hottest rank / mean (1 = balanced)
  int hottest_rank = 0;                     // lowest index among ties
  std::vector<std::int64_t> expert_load;    // pairs per logical expert
  double max_over_mean_expert_load = 0;
  int hottest_expert = 0;
  std::vector<std::int64_t> rank_tokens_received;  // distinct tokens per rank (one per (token, GPU))
};

struct MoeLayer {
  MoeConfig config;
  RoutingSpec routing_spec;
  PlacementSpec placement_spec;
  std::uint64_t seed = 0;
  Routing routing;
  Placement placement;
  std::vector<double> eplb_load;  // the per-expert load EPLB balanced (empty for contiguous)
};

// Validates the config, makes the routing (generated or trace), and the placement (EPLB fitted per
// placement_spec.fit; traces always Measured). InputError on bad input.
MoeLayer make_layer(const MoeConfig& config, const RoutingSpec& routing, const PlacementSpec& placement,
                    std::uint64_t seed);
// Same, with a routing made elsewhere (tests' hand-built routings).
MoeLayer make_layer(const MoeConfig& config, Routing routing, const PlacementSpec& placement);

RoutingStats routing_stats(const MoeLayer& layer);

// One transport's token counts over the layer, in dispatch orientation: what both phases carry
// (combine sends the same tokens back, in its own dtype). The one pass over every (token, expert)
// pair that traffic() needs; a layer's two phases share it.
struct TokenCounts {
  Transport transport = Transport::DeepepNormal;
  std::vector<Flow> flows;                       // bytes not yet set; unsorted
  std::vector<std::int64_t> local_tokens;        // per rank: tokens served on the rank itself
  std::vector<std::int64_t> logical_node_pairs;  // per source rank: (token, distinct node) pairs
  std::vector<std::int64_t> logical_tokens_received;  // per rank: (token, distinct GPU) pairs to it
};
TokenCounts count_tokens(const MoeLayer& layer, Transport transport, const TransportOptions& options = {});

// The phase's flows and bytes from those counts.
PhaseTraffic phase_traffic(const MoeLayer& layer, const TokenCounts& counts, Phase phase);

PhaseTraffic traffic(const MoeLayer& layer, Transport transport, Phase phase,
                     const TransportOptions& options = {});

}  // namespace ccsim::moe
