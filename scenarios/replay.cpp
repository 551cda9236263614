#include "scenarios/replay.h"

#include <algorithm>
#include <stdexcept>

#include "algorithms/ring.h"
#include "scenarios/collective_schedule.h"

namespace ccsim {

int default_ring_channels(const Topology& topo) {
  return 2 * std::max(1, topo.num_nodes() > 1 ? topo.nics_per_node() : 1);
}

bool engine_replays(const ReplayContext& ctx, Algo algo, std::string* why) {
  (void)ctx;  // algorithms other than Ring will depend on the topology and collective
  if (algo == Algo::Ring) return true;
  if (why) *why = std::string(to_string(algo)) + " is not replayed by the engine yet";
  return false;
}

namespace {

// Broadcast / reduce chains and P2P collectives: chunk counts and message protocols depend on the
// size, so one schedule per size (scenarios/collective_schedule.h).
ReplayRecipe per_size_collective_recipe(const ReplayContext& ctx, Proto proto) {
  const int channels = ctx.ring_channels > 0 ? ctx.ring_channels : default_ring_channels(*ctx.topo);
  const Topology* topo = ctx.topo;
  const NcclTopoSummary* summary = ctx.summary;
  const std::string collective = ctx.collective;
  const int root = ctx.root;
  const CollectiveSchedule probe = collective_schedule(*topo, *summary, collective, 1.0, root, proto, channels);
  ReplayRecipe r;
  r.algo = Algo::Ring;
  r.proto = proto;
  r.label = is_p2p_collective(collective) ? std::string("P2P/") + to_string(proto) : std::string("Ring/") + to_string(proto);
  r.pipeline_depth = probe.pipeline_depth;
  r.linear_in_size = false;
  r.build = [topo, summary, collective, root, proto, channels](double size_bytes) {
    return collective_schedule(*topo, *summary, collective, size_bytes, root, proto, channels).schedule;
  };
  return r;
}

ReplayRecipe ring_recipe(const ReplayContext& ctx, Proto proto) {
  if (is_chain_collective(ctx.collective) || is_p2p_collective(ctx.collective))
    return per_size_collective_recipe(ctx, proto);
  RingProtocol p = ring_protocol(proto);
  // Calibrated timing: the fitted bandwidth is already the data rate, so no wire overhead is added.
  if (ctx.calibrated_timing) {
    p.timing = *ctx.calibrated_timing;
    p.wire_factor = 1.0;
  }
  const int channels = ctx.ring_channels > 0 ? ctx.ring_channels : default_ring_channels(*ctx.topo);
  ReplayRecipe r;
  r.algo = Algo::Ring;
  r.proto = proto;
  r.label = ctx.calibrated_timing ? "Ring (calibrated)" : std::string("Ring/") + to_string(proto);
  r.pipeline_depth = p.pipeline_depth;
  r.linear_in_size = true;
  RingScheduleOptions opts;
  opts.timing = p.timing;
  opts.wire_factor = p.wire_factor;
  const Topology* topo = ctx.topo;
  const std::string collective = ctx.collective;
  r.build = [topo, collective, channels, opts](double size_bytes) {
    return ring_schedule(*topo, plan_rings(*topo, channels), collective, size_bytes, opts);
  };
  return r;
}

}  // namespace

ReplayRecipe replay_recipe(const ReplayContext& ctx, Algo algo, Proto proto) {
  std::string why;
  if (!engine_replays(ctx, algo, &why)) throw std::logic_error("replay_recipe: " + why);
  switch (algo) {
    case Algo::Ring:
      return ring_recipe(ctx, proto);
    default:
      throw std::logic_error("replay_recipe: no recipe for " + std::string(to_string(algo)));
  }
}

}  // namespace ccsim
