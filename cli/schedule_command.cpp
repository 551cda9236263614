// `ccsim schedule --collective C -b SIZE [--dump]`: the schedule an algorithm produces, as data.
#include <iostream>

#include "algorithms/nvls.h"
#include "algorithms/nccl_channels.h"
#include "algorithms/ring.h"
#include "cli/commands.h"
#include "cli/topology_options.h"
#include "common/error.h"
#include "common/units.h"
#include "scenarios/collective_schedule.h"

namespace ccsim {

int run_schedule(const std::vector<std::string>& argv) {
  auto specs = topology_option_specs();
  specs.push_back({"", "collective", true, false});
  specs.push_back({"b", "size", true, false});
  specs.push_back({"", "channels", true, false});
  specs.push_back({"r", "root", true, false});
  specs.push_back({"", "dump", false, false});
  specs.push_back({"", "expand", false, false});
  specs.push_back({"", "algo", true, false});
  specs.push_back({"h", "help", false, false});
  const ParsedArgs args = parse_args(argv, specs);
  if (args.has("help")) {
    print_help();
    return 0;
  }
  const Topology topo = topology_from_args(args, "dgx-h100");
  const std::string collective = args.get("collective", "all_reduce");
  const double size = static_cast<double>(parse_size_bytes(args.get("size", "32M"), args.spelled("size")));
  const std::string algo = args.get("algo", "ring");
  if (algo == "nvls" || algo == "nvls_tree") {
    // NVLS schedules: switch endpoints follow the GPU ranks (listed by the dump).
    const Schedule s = algo == "nvls" ? nvls_schedule(topo, collective, size, Proto::Simple)
                                      : nvls_tree_schedule(topo, collective, size, Proto::Simple);
    std::cout << "# " << algo << ": " << s.nranks << " GPUs, " << s.switches.size() << " switch endpoints\n";
    if (args.has("dump"))
      std::cout << s.dump();
    else
      std::cout << "# " << s.transfers.size() << " transfers; add --dump to print them\n";
    std::cout << std::flush;
    return 0;
  }
  if (algo != "ring") throw InputError("--algo", "ccsim schedule builds ring, nvls or nvls_tree (got " + algo + ")");
  const int channels = parse_int_arg(args, "channels", 2 * std::max(1, topo.num_nodes() > 1 ? topo.nics_per_node() : 1), 1);
  if (is_chain_collective(collective) || is_p2p_collective(collective)) {
    // Broadcast / reduce: the ring chain with Simple; sendrecv / alltoall: NCCL's P2P decisions.
    const int root = parse_int_arg(args, "root", 0, 0);
    if (root >= topo.num_gpus()) throw InputError("-r", "root " + std::to_string(root) + " is not a rank");
    const CollectiveSchedule cs =
        collective_schedule(topo, summarize_for_nccl(topo), collective, size, root, Proto::Simple, channels);
    std::cout << "# " << collective << " as " << cs.label << ": " << cs.schedule.transfers.size() << " transfers\n";
    if (args.has("dump")) std::cout << cs.schedule.dump();
    std::cout << std::flush;
    return 0;
  }
  ring_steps(collective, 2);  // validates the name
  const RingPlan plan = plan_rings(topo, channels);
  RingScheduleOptions opts;
  opts.expand_channels_and_chunks = args.has("expand");
  const Schedule s = ring_schedule(topo, plan, collective, size, opts);
  std::cout << "# ring families: " << plan.families.size() << ", channels: " << plan.total_channels() << "\n";
  for (std::size_t f = 0; f < plan.families.size(); ++f) {
    const auto& fam = plan.families[f];
    std::cout << "# family " << f << " rail " << fam.rail << " channels " << fam.channels << " order:";
    const std::size_t shown = std::min<std::size_t>(fam.order.size(), 64);
    for (std::size_t i = 0; i < shown; ++i) std::cout << " " << fam.order[i];
    if (shown < fam.order.size()) std::cout << " ...";
    std::cout << "\n";
  }
  if (args.has("dump"))
    std::cout << s.dump();
  else
    std::cout << "# " << s.transfers.size() << " transfers, " << ring_steps(collective, topo.num_gpus())
              << " steps; add --dump to print them\n";
  std::cout << std::flush;
  return 0;
}

}  // namespace ccsim
