// NCCL's default tuner: the (algorithm, protocol) with the least predicted time among those
// enabled, with NCCL_ALGO / NCCL_PROTO (or ccsim's --algo / --proto) restricting the candidates.
//
// Filter syntax (NCCL 2.30 parseList): a comma-separated list of names, case-insensitive;
// a leading "^" excludes the listed names instead ("^NVLS,Tree" = all but NVLS and Tree).
// Per-function entries are separated by ";" and prefixed "Func:", e.g.
// "Ring;AllReduce:Tree,NVLS" (only the first entry may omit the prefix; it applies to all
// functions). Algorithms: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT.
// Protocols: LL, LL128, Simple. Functions: Broadcast, Reduce, AllGather, ReduceScatter, AllReduce.
// Unknown names are InputErrors listing the valid ones. An empty string leaves everything at
// NCCL's defaults.
//
// Difference from NCCL (documented choice): NCCL treats an explicitly enabled LL128 (including the
// implicit enable of "^LL") as forced on even where its default rule disables it (silent data
// corruption risk). ccsim keeps the default rule for "^..." lists and rejects a positive request
// for LL128 that the rule disables with an InputError naming the reason.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/nccl_model.h"
#include "algorithms/nccl_types.h"

namespace ccsim {

struct AlgoProtoFilter {
  // Per function: allowed[f][a] / [f][p]. true = allowed (default: all).
  std::array<std::array<bool, kNumAlgos>, kNumFuncs> algo{};
  std::array<std::array<bool, kNumProtos>, kNumFuncs> proto{};
  // Per function: the algorithm / protocol was named in a positive list (the user asked for it).
  std::array<std::array<bool, kNumAlgos>, kNumFuncs> algo_requested{};
  std::array<std::array<bool, kNumProtos>, kNumFuncs> proto_requested{};
  std::string algo_text, proto_text, where;  // as given, for messages
  AlgoProtoFilter();
  bool allows(Func f, Algo a, Proto p) const;
};

// `where` names the source for InputErrors ("NCCL_ALGO", "--algo", "command line", ...).
AlgoProtoFilter parse_algo_filter(const std::string& nccl_algo, const std::string& nccl_proto, const std::string& where);

struct TunerChoice {
  Algo algo = Algo::Ring;
  Proto proto = Proto::Simple;
  double time_us = 0;
  int channels = 0;
  int threads = 0;
  std::vector<AlgoProtoCost> table;  // nccl_costs rows, with `enabled` narrowed by the filter
};

// Minimum time over the enabled and allowed (algo, proto); ties keep NCCL's order (first wins).
// InputError when nothing is left, naming why each requested or remaining candidate is out. As
// NCCL's getAlgoInfo for one operation, NVLS and NVLSTree are out of an all_reduce or reduce_scatter
// whose `operand` NVLink SHARP cannot reduce (nvls_reduction_unsupported: int8, prod, avg, ...).
TunerChoice choose(const NcclTopoSummary& s, Func f, std::uint64_t bytes, const AlgoProtoFilter& filter = AlgoProtoFilter(),
                   const ReduceOperand& operand = ReduceOperand());

}  // namespace ccsim
