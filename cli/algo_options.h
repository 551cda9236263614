// --algo / --proto, --env NCCL_ALGO=... / --env NCCL_PROTO=..., and the NCCL_ALGO / NCCL_PROTO
// environment variables (in that order of precedence), in NCCL's
// syntax: comma lists, case-insensitive, '^' to exclude, e.g. --algo ^NVLS --proto LL128,Simple.
#pragma once
#include "algorithms/tuner.h"
#include "cli/args.h"

namespace ccsim {

AlgoProtoFilter algo_filter_from_args(const ParsedArgs& args);

// --nccl-version X.Y[.Z]: whose tuner constants NCCL's cost model uses (algorithms/nccl_versions.h);
// NCCL 2.30.7 without the flag. InputError for a malformed or unmodelled version.
NcclVersion nccl_version_from_args(const ParsedArgs& args);

}  // namespace ccsim
