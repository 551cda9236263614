// The `moe` command's flags (cli/moe_command.cpp, docs/moe.md): their specs, and the layer and
// topology a set of them describes. Shared by the command and by its scenario files
// (scenarios/moe/scenario_file.h turns each run of a file into flags).
#pragma once
#include <string>
#include <vector>

#include "cli/args.h"
#include "scenarios/moe/layer_report.h"
#include "topologies/topology.h"

namespace ccsim {

std::vector<OptionSpec> moe_option_specs();

// One layer to simulate and the cluster it runs on.
struct MoeRun {
  std::string name;
  Topology topo;
  moe::LayerRequest request;
};

// The layer a set of flags describes (--ep sets the node count when --nodes is absent; EP is every
// GPU of the cluster). InputError naming the flag for every bad value.
MoeRun moe_run_from_args(const ParsedArgs& args);

}  // namespace ccsim
