#include "cli/topology_options.h"

#include "common/text.h"
#include "topologies/spec.h"

namespace ccsim {

std::vector<OptionSpec> topology_option_specs() {
  return {{"", "topology", true, false}, {"", "nodes", true, false}, {"", "set", true, true}, {"", "env", true, true}};
}

std::vector<NcclEnvNote> apply_topology_args(const ParsedArgs& args, nlohmann::json& spec, const std::string& source) {
  if (args.has("nodes")) set_node_count(spec, parse_int_arg(args, "nodes", 1, 1));
  for (const auto& assignment : args.all("set")) apply_override(spec, assignment, "--set " + cut_for_message(assignment));
  // NCCL's settings act on the hardware as described, so they come after every --set.
  std::vector<NcclEnvNote> notes;
  for (const auto& setting : args.all("env"))
    notes.push_back(apply_nccl_env(spec, setting, "--env " + cut_for_message(setting), source));
  return notes;
}

nlohmann::json topology_spec_from_args(const ParsedArgs& args, const std::string& default_topology, std::string* source,
                                       std::vector<NcclEnvNote>* env_notes) {
  *source = args.get("topology", default_topology);
  nlohmann::json spec = load_topology_spec(*source);
  std::vector<NcclEnvNote> notes = apply_topology_args(args, spec, *source);
  if (env_notes) *env_notes = std::move(notes);
  return spec;
}

Topology topology_from_args(const ParsedArgs& args, const std::string& default_topology) {
  std::string source;
  const nlohmann::json spec = topology_spec_from_args(args, default_topology, &source);
  return build_topology(spec, source);
}

}  // namespace ccsim
