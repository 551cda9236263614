// `ccsim schedule --collective C -b SIZE [--dump]`: the schedule an algorithm produces, as data.
#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <iostream>

#include "algorithms/nccl_channels.h"
#include "algorithms/ring.h"
#include "algorithms/tuner.h"
#include "cli/commands.h"
#include "cli/topology_options.h"
#include "common/error.h"
#include "common/text.h"
#include "scenarios/collective_schedule.h"
#include "scenarios/replay.h"

namespace ccsim {
namespace {

// A schedule record costs ~85 bytes (the Transfer and its dependencies: 1024 GPUs' ring, 16.8 M
// records, 1.4 GiB). The limit is the engine's largest ring (2048 GPUs, 67 M records, ~5.6 GiB)
// with a little room; `--expand` (one record per channel and chunk) reached 8.9 GB and bad_alloc.
constexpr double kScheduleRecordBytes = 85;
constexpr std::size_t kMaxScheduleRecords = std::size_t{80} << 20;  // 83.9 M records, ~6.6 GiB
// --dump prints ~110 bytes per record: 1 M lines (~110 MB, ~10 s) at most (2048 GPUs took > 100 s).
constexpr std::size_t kMaxDumpRecords = std::size_t{1} << 20;

std::string gib(double bytes) { return strprintf("%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

void check_gpus(const Topology& topo, const ParsedArgs& args) {
  // `schedule` builds and prints the whole schedule, never its orbit representatives.
  if (topo.num_gpus() > kMaxWholeScheduleGpus)
    throw InputError(args.has("nodes") ? "--nodes" : "--topology",
                     std::to_string(topo.num_gpus()) + " GPUs is above the engine's limit of " +
                         std::to_string(kMaxWholeScheduleGpus) + " for whole schedules (they grow as GPUs squared: ~6 GiB at " +
                         std::to_string(kMaxWholeScheduleGpus) + "; docs/errors.md)");
}

// Before a schedule of `records` is printed: --dump beyond kMaxDumpRecords is refused up front.
void check_dump(std::size_t records, const ParsedArgs& args) {
  if (args.has("dump") && records > kMaxDumpRecords)
    throw InputError("--dump", "the schedule has " + std::to_string(records) + " records, above the " +
                                   std::to_string(kMaxDumpRecords) +
                                   " that --dump prints (~110 MB of text; docs/errors.md); drop --dump for the counts, or use fewer nodes");
}

}  // namespace

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
  if (!args.positional().empty())
    throw InputError("command line", "unexpected argument '" + cut_for_message(args.positional().front()) + "'");
  const std::string collective = args.get("collective", "all_reduce");
  const bool ring = collective == "all_reduce" || collective == "all_gather" || collective == "reduce_scatter";
  if (!ring && !is_chain_collective(collective) && !is_p2p_collective(collective))
    throw InputError(args.spelled("collective"), "unknown collective '" + cut_for_message(collective) +
                                                     "' (all_reduce, all_gather, reduce_scatter, broadcast, reduce, "
                                                     "sendrecv, alltoall)");
  const Topology topo = topology_from_args(args, "dgx-h100");
  check_gpus(topo, args);
  const double size = static_cast<double>(parse_size_arg(args, "size", 32ull << 20));  // --size 32M
  const std::string algo = lower(args.get("algo", "ring"));
  // --proto, or NCCL_PROTO as predict reads it: one protocol for the schedule. A bad value is exit 2
  // (it was ignored with exit 0, and --proto made no difference to the ring's schedule).
  std::string proto_given, proto_where;
  if (args.has("proto")) {
    proto_given = lower(args.get("proto"));
    proto_where = args.spelled("proto");
  } else if (const char* env = std::getenv("NCCL_PROTO"); env && *env) {
    const AlgoProtoFilter f = parse_algo_filter("", env, "NCCL_PROTO");  // NCCL's list syntax, checked as predict does
    int allowed = 0, only = -1;
    for (int p = 0; p < kNumProtos; ++p)
      if (f.proto[0][p]) ++allowed, only = p;
    if (allowed == 1) {  // a list of several leaves the algorithm's default
      proto_given = lower(to_string(static_cast<Proto>(only)));
      proto_where = "NCCL_PROTO";
    }
  }
  if (!proto_given.empty()) {
    bool known = false;
    for (int p = 0; p < kNumProtos; ++p) known = known || proto_given == lower(to_string(static_cast<Proto>(p)));
    if (!known)
      throw InputError(proto_where, "unknown protocol '" + cut_for_message(proto_given) + "' (LL, LL128, Simple)");
    if (proto_given != "simple" && (is_chain_collective(collective) || is_p2p_collective(collective)))
      throw InputError(proto_where, collective + "'s schedule is NCCL's " +
                                        (is_p2p_collective(collective) ? "P2P" : "ring chain") +
                                        " with Simple; another protocol applies to all_reduce, all_gather and reduce_scatter");
  }
  // A ring with a protocol is the engine's replay of it (the protocol's wire bytes and timing).
  const bool replay = algo != "ring" || (!proto_given.empty() && ring);
  if (replay) {
    // Any other algorithm the engine replays: the schedule predict would simulate (scenarios/replay.h).
    // NCCL's algorithm names, case-insensitive, and "nvls_tree" for NVLSTree.
    int algo_index = -1;
    for (int a = 0; a < kNumAlgos; ++a)
      if (algo == lower(to_string(static_cast<Algo>(a)))) algo_index = a;
    if (algo == "nvls_tree") algo_index = static_cast<int>(Algo::NVLSTree);
    if (algo_index < 0)
      throw InputError(args.spelled("algo"),
                       "unknown algorithm '" + cut_for_message(algo) + "' (ring, tree, nvls, nvlstree, collnetdirect, collnetchain, pat)");
    const Algo chosen = static_cast<Algo>(algo_index);
    const NcclTopoSummary summary = summarize_for_nccl(topo);
    ReplayContext ctx;
    ctx.topo = &topo;
    ctx.collective = collective;
    ctx.summary = &summary;
    std::string why;
    if (!engine_replays(ctx, chosen, &why)) throw InputError(args.spelled("algo"), why);
    const std::string proto_name = proto_given.empty() ? (chosen == Algo::Tree ? "ll128" : "simple") : proto_given;
    int proto_index = -1;
    for (int p = 0; p < kNumProtos; ++p)
      if (proto_name == lower(to_string(static_cast<Proto>(p)))) proto_index = p;
    const ReplayRecipe recipe = replay_recipe(ctx, chosen, static_cast<Proto>(proto_index));
    const Schedule s = recipe.build(size);
    check_dump(s.transfers.size(), args);
    std::cout << "# " << recipe.label << ": " << s.nranks << " GPUs, " << s.switches.size() << " switch endpoints\n";
    if (args.has("dump"))
      std::cout << s.dump();
    else
      std::cout << "# " << s.transfers.size() << " transfers; add --dump to print them\n";
    std::cout << std::flush;
    return 0;
  }
  const int channels = parse_int_arg(args, "channels", default_ring_channels(topo), 1);
  if (is_chain_collective(collective) || is_p2p_collective(collective)) {
    // Broadcast / reduce: the ring chain with Simple; sendrecv / alltoall: NCCL's P2P decisions.
    const int root = parse_int_arg(args, "root", 0, 0);
    if (root >= topo.num_gpus()) throw InputError("-r", "root " + std::to_string(root) + " is not a rank");
    const CollectiveSchedule cs =
        collective_schedule(topo, summarize_for_nccl(topo), collective, size, root, Proto::Simple, channels);
    check_dump(cs.schedule.transfers.size(), args);
    std::cout << "# " << collective << " as " << cs.label << ": " << cs.schedule.transfers.size() << " transfers\n";
    if (args.has("dump")) std::cout << cs.schedule.dump();
    std::cout << std::flush;
    return 0;
  }
  ring_steps(collective, 2);  // validates the name
  const RingPlan plan = plan_rings(topo, channels);
  RingScheduleOptions opts;
  opts.expand_channels_and_chunks = args.has("expand");
  {
    // The records ring_schedule will hold (algorithms/ring.cpp: per step, n per family, times channels
    // x chunks when expanded), refused up front when their memory is beyond kMaxScheduleRecords.
    const int n = topo.num_gpus(), families = static_cast<int>(plan.families.size());
    double records = 0;
    for (const auto& fam : plan.families) {
      const double chunks = std::max(1.0, std::ceil(size / n / families / fam.channels / kSimpleChunkBytes));
      records += static_cast<double>(n) * (opts.expand_channels_and_chunks ? fam.channels * chunks : 1.0);
    }
    records *= ring_steps(collective, n);
    if (records > static_cast<double>(kMaxScheduleRecords))
      throw InputError(opts.expand_channels_and_chunks ? "--expand" : (args.has("nodes") ? "--nodes" : "--topology"),
                       strprintf("the schedule would hold %.3g records (~", records) + gib(records * kScheduleRecordBytes) +
                           " at " + std::to_string(static_cast<int>(kScheduleRecordBytes)) + " bytes each), above ccsim's limit of " +
                           std::to_string(kMaxScheduleRecords) + " (~" + gib(kMaxScheduleRecords * kScheduleRecordBytes) +
                           "; docs/errors.md)" + (opts.expand_channels_and_chunks ? "; drop --expand or use fewer nodes" : "; use fewer nodes"));
    check_dump(static_cast<std::size_t>(records), args);
  }
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
