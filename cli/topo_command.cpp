// `ccsim topo PRESET|FILE [--nodes N] [--set K=V]`: the path-class matrix and link bandwidths.
// `ccsim topo --from-nvidia-smi FILE | --from-nccl-xml FILE [-o OUT]`: a node topology imported from
// `nvidia-smi topo -m` output or NCCL's topology dump, as a ccsim-topology/1 file predict can use.
#include <iostream>

#include "calibrate/nccl_topo_xml.h"
#include "calibrate/nvidia_smi_topo.h"
#include "cli/commands.h"
#include "cli/topology_options.h"
#include "common/error.h"
#include "common/output_file.h"
#include "common/text.h"
#include "topologies/spec.h"
#include "topologies/topo_report.h"

namespace ccsim {

namespace {

int run_import(const ParsedArgs& args) {
  if (!args.positional().empty() || args.has("topology"))
    throw InputError("command line", "--from-nvidia-smi and --from-nccl-xml import a node: give no topology besides ('" +
                                         cut_for_message(args.positional().empty() ? args.get("topology") : args.positional().front()) + "')");
  nlohmann::json spec;
  std::string source, warning;
  if (args.has("from-nvidia-smi")) {
    source = args.get("from-nvidia-smi");
    const NvidiaSmiTopo smi = parse_nvidia_smi_topo_file(source);
    // nvidia-smi always prints its Legend after the matrix: without it the output was likely cut
    // (or pasted without it); the matrix itself is complete, so this is a warning.
    if (!smi.has_legend)
      warning = source + ": no 'Legend:' block after the matrix (nvidia-smi prints one: output cut short?); "
                         "the complete matrix was imported";
    spec = node_spec_from_nvidia_smi(smi, source);
  } else {
    source = args.get("from-nccl-xml");
    spec = node_spec_from_nccl_xml(parse_nccl_topo_xml_file(source), source);
  }
  apply_topology_args(args, spec, source);
  build_topology(spec, source);  // the imported spec must build: fail here, not in a later predict
  if (!warning.empty()) std::cerr << "ccsim: warning: " << warning << "\n";
  const std::string text = spec.dump(2) + "\n";
  write_output(args.get("output", ""), text);
  return 0;
}

}  // namespace

int run_topo(const std::vector<std::string>& argv) {
  auto specs = topology_option_specs();
  specs.push_back({"h", "help", false, false});
  specs.push_back({"", "from-nvidia-smi", true, false});
  specs.push_back({"", "from-nccl-xml", true, false});
  specs.push_back({"o", "output", true, false});
  const ParsedArgs args = parse_args(argv, specs);
  if (args.has("help")) {
    print_help();
    return 0;
  }
  if (args.has("from-nvidia-smi") && args.has("from-nccl-xml"))
    throw InputError("command line", "give one of --from-nvidia-smi and --from-nccl-xml");
  if (args.has("from-nvidia-smi") || args.has("from-nccl-xml")) return run_import(args);
  std::string default_topology = "dgx-h100";
  if (!args.positional().empty()) {
    if (args.positional().size() > 1 || args.has("topology"))
      throw InputError("command line", "give the topology once: ccsim topo PRESET|FILE");
    default_topology = args.positional().front();  // --topology is absent here
  }
  std::string source;
  const nlohmann::json spec = topology_spec_from_args(args, default_topology, &source);
  std::cout << format_topology_report(build_topology(spec, source)) << std::flush;
  return 0;
}

}  // namespace ccsim
