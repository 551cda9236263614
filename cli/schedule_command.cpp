// `ccsim schedule --collective C -b SIZE [--dump]`: the schedule an algorithm produces, as data.
#include <algorithm>
#include <iostream>

#include "algorithms/nccl_channels.h"
#include "algorithms/ring.h"
#include "cli/commands.h"
#include "cli/topology_options.h"
#include "common/error.h"
#include "common/units.h"
#include "common/text.h"
#include "scenarios/collective_schedule.h"
#include "scenarios/replay.h"

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
  specs.push_back({"", "proto", true, false});
  specs.push_back({"h", "help", false, false});
  const ParsedArgs args = parse_args(argv, specs);
  if (args.has("help")) {
    print_help();
    return 0;
  }
  const Topology topo = topology_from_args(args, "dgx-h100");
  const std::string collective = args.get("collective", "all_reduce");
  const double size = static_cast<double>(parse_size_bytes(args.get("size", "32M"), args.spelled("size")));
  const std::string algo = lower(args.get("algo", "ring"));
  if (algo != "ring") {
    // Any other algorithm the engine replays: the schedule predict would simulate (scenarios/replay.h).
    static const std::pair<const char*, Algo> names[] = {
        {"tree", Algo::Tree},           {"nvls", Algo::NVLS},
        {"nvlstree", Algo::NVLSTree},   {"nvls_tree", Algo::NVLSTree},
        {"collnetdirect", Algo::CollNetDirect}, {"collnetchain", Algo::CollNetChain},
        {"pat", Algo::PAT}};
    const auto found = std::find_if(std::begin(names), std::end(names), [&](const auto& n) { return algo == n.first; });
    if (found == std::end(names))
      throw InputError(args.spelled("algo"),
                       "unknown algorithm '" + algo + "' (ring, tree, nvls, nvlstree, collnetdirect, collnetchain, pat)");
    const NcclTopoSummary summary = summarize_for_nccl(topo);
    ReplayContext ctx;
    ctx.topo = &topo;
    ctx.collective = collective;
    ctx.summary = &summary;
    std::string why;
    if (!engine_replays(ctx, found->second, &why)) throw InputError(args.spelled("algo"), why);
    const std::string proto_name = lower(args.get("proto", found->second == Algo::Tree ? "ll128" : "simple"));
    const Proto proto = proto_name == "ll" ? Proto::LL : proto_name == "ll128" ? Proto::LL128 : Proto::Simple;
    if (proto_name != "ll" && proto_name != "ll128" && proto_name != "simple")
      throw InputError(args.spelled("proto"), "unknown protocol '" + proto_name + "' (LL, LL128, Simple)");
    const ReplayRecipe recipe = replay_recipe(ctx, found->second, proto);
    const Schedule s = recipe.build(size);
    std::cout << "# " << recipe.label << ": " << s.nranks << " GPUs, " << s.switches.size() << " switch endpoints\n";
    if (args.has("dump"))
      std::cout << s.dump();
    else
      std::cout << "# " << s.transfers.size() << " transfers; add --dump to print them\n";
    std::cout << std::flush;
    return 0;
  }
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
