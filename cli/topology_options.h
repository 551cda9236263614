// --topology PRESET|FILE, --nodes N, --set KEY=VALUE and --env NCCL_NAME=VALUE (topologies/nccl_env.h),
// shared by every command that needs a cluster.
#pragma once
#include <string>
#include <vector>

#include "cli/args.h"
#include "topologies/nccl_env.h"
#include "topologies/topology.h"

namespace ccsim {

std::vector<OptionSpec> topology_option_specs();

// Applies --nodes, then each --set in order, then each --env in order, to a specification (named
// `source` in errors); returns what each --env did.
std::vector<NcclEnvNote> apply_topology_args(const ParsedArgs& args, nlohmann::json& spec, const std::string& source);

// The specification the options describe (`default_topology` when --topology is absent), with
// --nodes, --set and --env applied, and the name it came from; `env_notes` gets what each --env did.
nlohmann::json topology_spec_from_args(const ParsedArgs& args, const std::string& default_topology, std::string* source,
                                       std::vector<NcclEnvNote>* env_notes = nullptr);

// Builds the topology the options describe.
Topology topology_from_args(const ParsedArgs& args, const std::string& default_topology);

}  // namespace ccsim
