// --algo / --proto, --env NCCL_ALGO=... / --env NCCL_PROTO=..., and the NCCL_ALGO / NCCL_PROTO
// environment variables (in that order of precedence), in NCCL's
// syntax: comma lists, case-insensitive, '^' to exclude, e.g. --algo ^NVLS --proto LL128,Simple.
#pragma once
#include "algorithms/tuner.h"
#include "cli/args.h"

namespace ccsim {

// `shell_environment` false: the flags and --env only, for commands that describe a run made
// elsewhere (validate, calibrate --topology), where a NCCL_ALGO left in this shell is not the run's.
AlgoProtoFilter algo_filter_from_args(const ParsedArgs& args, bool shell_environment = true);

// --nccl-version X.Y[.Z]: whose tuner constants NCCL's cost model uses (algorithms/nccl_versions.h);
// NCCL 2.30.7 without the flag. InputError for a malformed or unmodelled version.
NcclVersion nccl_version_from_args(const ParsedArgs& args);

}  // namespace ccsim
