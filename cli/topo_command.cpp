// `ccsim topo PRESET|FILE [--nodes N] [--set K=V]`: the path-class matrix and link bandwidths.
#include <iostream>

#include "cli/commands.h"
#include "cli/topology_options.h"
#include "common/error.h"
#include "topologies/topo_report.h"

namespace ccsim {

int run_topo(const std::vector<std::string>& argv) {
  auto specs = topology_option_specs();
  specs.push_back({"h", "help", false, false});
  const ParsedArgs args = parse_args(argv, specs);
  if (args.has("help")) {
    print_help();
    return 0;
  }
  std::vector<std::string> rest = argv;
  std::string source = args.get("topology", "dgx-h100");
  if (!args.positional().empty()) {
    if (args.positional().size() > 1 || args.has("topology"))
      throw InputError("command line", "give the topology once: ccsim topo PRESET|FILE");
    source = args.positional().front();
  }
  std::vector<std::string> with_topology = argv;
  if (!args.positional().empty()) {
    with_topology.clear();
    for (const auto& a : argv)
      if (a != source) with_topology.push_back(a);
    with_topology.push_back("--topology");
    with_topology.push_back(source);
  }
  const Topology topo = topology_from_args(parse_args(with_topology, specs), source);
  std::cout << format_topology_report(topo) << std::flush;
  return 0;
}

}  // namespace ccsim
