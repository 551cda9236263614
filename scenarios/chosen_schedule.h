// The engine schedule of NCCL's choice for one collective at one size: what `predict --trace` and
// the straggler experiment replay with per-transfer detail. The same choice predict() makes for a
// size (the tuner within the filter; NCCL's P2P protocol rule for sendrecv / alltoall), built by the
// same recipe (scenarios/replay.h).
#pragma once
#include <string>

#include "algorithms/schedule.h"
#include "algorithms/tuner.h"
#include "topologies/topology.h"

namespace ccsim {

struct ChosenSchedule {
  Schedule schedule;
  int pipeline_depth = 4;  // engine slots per connection
  std::string label;       // "Ring/LL", "P2P/Simple"
};

// InputError (where = `where`) when the engine cannot replay the chosen algorithm on this topology
// (the reason in words), or for a collective predict does not know.
// `version`: whose tuner constants pick (--nccl-version; NCCL 2.30.7 by default).
ChosenSchedule chosen_schedule(const Topology& topo, const std::string& collective, double size_bytes,
                               const AlgoProtoFilter& filter, int root, const std::string& where,
                               const NcclVersion& version = default_nccl_version());

}  // namespace ccsim
