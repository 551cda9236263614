#include "cli/topology_options.h"

#include "common/text.h"
#include "topologies/spec.h"

namespace ccsim {

std::vector<OptionSpec> topology_option_specs() {
  return {{"", "topology", true, false}, {"", "nodes", true, false}, {"", "set", true, true}};
}

void apply_topology_args(const ParsedArgs& args, nlohmann::json& spec) {
  if (args.has("nodes")) set_node_count(spec, parse_int_arg(args, "nodes", 1, 1));
  for (const auto& assignment : args.all("set")) apply_override(spec, assignment, "--set " + cut_for_message(assignment));
}

nlohmann::json topology_spec_from_args(const ParsedArgs& args, const std::string& default_topology, std::string* source) {
  *source = args.get("topology", default_topology);
  nlohmann::json spec = load_topology_spec(*source);
  apply_topology_args(args, spec);
  return spec;
}

Topology topology_from_args(const ParsedArgs& args, const std::string& default_topology) {
  std::string source;
  const nlohmann::json spec = topology_spec_from_args(args, default_topology, &source);
  return build_topology(spec, source);
}

}  // namespace ccsim
