#include "scenarios/chosen_schedule.h"

#include "algorithms/nccl_channels.h"
#include "common/error.h"
#include "scenarios/collective_schedule.h"
#include "scenarios/replay.h"

namespace ccsim {

ChosenSchedule chosen_schedule(const Topology& topo, const std::string& collective, double size_bytes,
                               const AlgoProtoFilter& filter, int root, const std::string& where,
                               const NcclVersion& version) {
  NcclTopoSummary summary = summarize_for_nccl(topo);
  summary.nccl_version = version;
  ReplayContext ctx;
  ctx.topo = &topo;
  ctx.collective = collective;
  ctx.summary = &summary;
  ctx.root = root;
  Algo algo = Algo::Ring;
  Proto proto;
  if (is_p2p_collective(collective)) {
    proto = p2p_protocol(topo, summary, collective, size_bytes);
  } else {
    const TunerChoice c = choose(summary, func_from_collective(collective), static_cast<std::uint64_t>(size_bytes), filter);
    algo = c.algo;
    proto = c.proto;
    std::string why;
    if (!engine_replays(ctx, algo, &why))
      throw InputError(where, std::string("NCCL picks ") + to_string(algo) + "/" + to_string(proto) + " for " + collective +
                                  " here, which the engine does not replay (" + why + ")");
  }
  const ReplayRecipe recipe = replay_recipe(ctx, algo, proto);
  ChosenSchedule out;
  out.schedule = recipe.build(size_bytes);
  out.pipeline_depth = recipe.pipeline_depth;
  out.label = recipe.label;
  return out;
}

}  // namespace ccsim
