// A text report of NCCL's tuning decision, in the spirit of NCCL_DEBUG=INFO
// NCCL_DEBUG_SUBSYS=TUNING: the graphs the model starts from, NCCL's Latency/AlgBw table for every
// function (latency us / algBw GB/s, 0/0 where NCCL does not compute or disables a pair), the
// enabled mask, the per-(algorithm, protocol) prediction for one size, and the choice.
#pragma once
#include <cstdint>
#include <string>

#include "algorithms/nccl_model.h"
#include "algorithms/tuner.h"

namespace ccsim {

// Throws InputError (from choose) when the filter leaves nothing for `f`. `operand` (the datatype and
// op) decides whether NVLS can run this operation (choose); NCCL's table is the communicator's.
std::string explain_report(const NcclTopoSummary& s, Func f, std::uint64_t bytes,
                           const AlgoProtoFilter& filter = AlgoProtoFilter(), const ReduceOperand& operand = ReduceOperand());

}  // namespace ccsim
