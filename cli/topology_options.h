// --topology PRESET|FILE, --nodes N and --set KEY=VALUE, shared by every command that needs a cluster.
#pragma once
#include <string>
#include <vector>

#include "cli/args.h"
#include "topologies/topology.h"

namespace ccsim {

std::vector<OptionSpec> topology_option_specs();

// Applies --nodes, then each --set in order, to a specification.
void apply_topology_args(const ParsedArgs& args, nlohmann::json& spec);

// The specification the options describe (`default_topology` when --topology is absent), with
// --nodes and --set applied, and the name it came from.
nlohmann::json topology_spec_from_args(const ParsedArgs& args, const std::string& default_topology, std::string* source);

// Builds the topology the options describe.
Topology topology_from_args(const ParsedArgs& args, const std::string& default_topology);

}  // namespace ccsim
