// --topology PRESET|FILE, --nodes N and --set KEY=VALUE, shared by every command that needs a cluster.
#pragma once
#include <string>
#include <vector>

#include "cli/args.h"
#include "topologies/topology.h"

namespace ccsim {

std::vector<OptionSpec> topology_option_specs();

// Builds the topology the options describe (`default_topology` when --topology is absent).
Topology topology_from_args(const ParsedArgs& args, const std::string& default_topology);

}  // namespace ccsim
