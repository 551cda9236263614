#include "scenarios/replay.h"

#include <algorithm>
#include <stdexcept>

#include "algorithms/collnet.h"
#include "algorithms/nvls.h"
#include "algorithms/p2p.h"
#include "algorithms/pat.h"
#include "algorithms/ring.h"
#include "algorithms/tree.h"
#include "common/error.h"
#include "scenarios/collective_schedule.h"
#include "sim/p2p_orbits.h"
#include "sim/ring_orbits.h"

namespace ccsim {

bool engine_replays(const ReplayContext& ctx, Algo algo, std::string* why) {
  const Topology& topo = *ctx.topo;
  const std::string& c = ctx.collective;
  auto no = [&](const std::string& reason) {
    if (why) *why = std::string(to_string(algo)) + " " + reason;
    return false;
  };
  switch (algo) {
    case Algo::Ring:
      return true;
    case Algo::Tree:
      if (c != "all_reduce") return no("runs all_reduce only");
      return true;
    case Algo::NVLS:
      if (!nvls_supported(topo)) return no("needs NVSwitch with NVLS");
      if (topo.num_nodes() != 1) return no("across nodes is NVLSTree");
      if (c != "all_reduce" && c != "all_gather" && c != "reduce_scatter") return no("does not run " + c);
      return true;
    case Algo::NVLSTree:
      if (!nvls_supported(topo)) return no("needs NVSwitch with NVLS");
      if (topo.num_nodes() < 2 || c != "all_reduce") return no("runs all_reduce across nodes only");
      // The replay grows faster than linearly with the nodes (docs/nvls.md).
      if (topo.num_nodes() > kNvlsTreeEngineMaxNodes)
        return no("replay is limited to " + std::to_string(kNvlsTreeEngineMaxNodes) + " nodes");
      return true;
    case Algo::PAT:
      try {
        check_pat(topo, c);
      } catch (const InputError& e) {
        return no(std::string("does not apply: ") + e.what());
      }
      return true;
    case Algo::CollNetDirect:
    case Algo::CollNetChain:
      if (!collnet_supported(topo)) return no("needs a fabric whose switches reduce (fabric.sharp)");
      if (c != "all_reduce" || topo.num_nodes() < 2) return no("runs all_reduce across nodes only");
      if (topo.num_nodes() > topo.nodes_per_leaf()) return no("across leaf groups (spine reduction) is not modelled");
      if (topo.num_nodes() > kCollNetEngineMaxNodes)
        return no("replay is limited to " + std::to_string(kCollNetEngineMaxNodes) + " nodes");
      return true;
    default:
      return no("is not replayed by the engine");
  }
}

bool pipeline_on_fluid_solver(const Topology& topo) {
  return topo.num_gpus() > kFluidPipelineAboveGpus || topo.gpus_per_node() > kFluidPipelineAboveDomainGpus;
}

namespace {

int ring_channels(const ReplayContext& ctx) {
  return ctx.ring_channels > 0 ? ctx.ring_channels : default_ring_channels(*ctx.topo);
}

// What every recipe sets: the choice, its label, the engine's slots, and its structure key.
ReplayRecipe recipe_for(Algo algo, Proto proto, int pipeline_depth, std::function<long(double)> structure_key) {
  ReplayRecipe r;
  r.algo = algo;
  r.proto = proto;
  r.label = std::string(to_string(algo)) + "/" + to_string(proto);
  r.pipeline_depth = pipeline_depth;
  r.structure_key = std::move(structure_key);
  return r;
}

long linear(double) { return 0; }
long per_size(double size_bytes) { return static_cast<long>(size_bytes); }

// Broadcast / reduce chains: chunk counts depend on the size, so one schedule per size
// (scenarios/collective_schedule.h).
ReplayRecipe chain_recipe(const ReplayContext& ctx, Proto proto) {
  const int channels = ring_channels(ctx);
  const Topology* topo = ctx.topo;
  const NcclTopoSummary* summary = ctx.summary;
  const std::string collective = ctx.collective;
  const int root = ctx.root;
  const CollectiveSchedule probe = collective_schedule(*topo, *summary, collective, 1.0, root, proto, channels);
  ReplayRecipe r = recipe_for(Algo::Ring, proto, probe.pipeline_depth, per_size);
  r.build = [topo, summary, collective, root, proto, channels](double size_bytes) {
    return collective_schedule(*topo, *summary, collective, size_bytes, root, proto, channels).schedule;
  };
  return r;
}

ReplayRecipe ring_recipe(const ReplayContext& ctx, Proto proto) {
  if (is_chain_collective(ctx.collective)) return chain_recipe(ctx, proto);
  RingProtocol p = ring_protocol(proto);
  if (ctx.summary) p.timing = multi_node_ring_timing(p.timing, proto, ctx.topo->num_nodes(), ctx.summary->net_overhead_us);
  // Calibrated timing: the fitted bandwidth is already the data rate, so no wire overhead is added.
  if (ctx.calibrated_timing) {
    p.timing = *ctx.calibrated_timing;
    p.wire_factor = 1.0;
  }
  // NCCL's Ring LL/LL128 ceilings and one block's Simple rate (kernel rates, not links) at each size:
  // fewer channels run below NCCL's thread thresholds, so sizes with the same running channels share
  // one schedule. A calibration's fitted rate already is one.
  const NcclTopoSummary* summary = ctx.calibrated_timing ? nullptr : ctx.summary;
  ReplayRecipe r = recipe_for(Algo::Ring, proto, p.pipeline_depth, [summary, proto](double size_bytes) {
    return summary ? static_cast<long>(nccl_running_channels(*summary, Algo::Ring, proto, size_bytes)) : 0L;
  });
  if (ctx.calibrated_timing) r.label = "Ring (calibrated)";
  RingScheduleOptions opts;
  opts.timing = p.timing;
  opts.wire_factor = p.wire_factor;
  const Topology* topo = ctx.topo;
  const std::string collective = ctx.collective;
  const int channels = ring_channels(ctx);
  const bool orbits = ctx.orbit_schedules;
  r.build = [topo, collective, channels, base_opts = opts, orbits, summary, proto](double size_bytes) {
    const RingPlan plan = plan_rings(*topo, channels);
    RingScheduleOptions opts = base_opts;
    if (summary) opts.channel_rate_cap_Bps = ring_replay_channel_cap_Bps(*topo, *summary, plan, proto, size_bytes);
    if (!orbits || topo->num_gpus() <= kMaxWholeScheduleGpus)
      return orbits ? ring_schedule_for_engine(*topo, plan, collective, size_bytes, opts)
                    : ring_schedule(*topo, plan, collective, size_bytes, opts);
    // Above the whole-schedule limit only orbit representatives fit, and only so many of them.
    std::size_t records = 0;
    std::optional<Schedule> s = ring_orbit_schedule(*topo, plan, collective, size_bytes, opts, kMaxOrbitRecords, &records);
    const std::string gpus = std::to_string(topo->num_gpus()) + " GPUs";
    if (records > 0)
      throw InputError("--nodes", gpus + ": the ring's orbit representatives would be " + std::to_string(records) +
                                      " records, above the engine's limit of " + std::to_string(kMaxOrbitRecords) +
                                      " (the fabric's rotations hold only in part, e.g. a partial leaf group);"
                                      " use --model closed-form (docs/errors.md)");
    if (!s)
      throw InputError("--nodes", gpus + " is above the engine's limit of " + std::to_string(kMaxWholeScheduleGpus) +
                                      " for whole schedules, and the fabric's node and rail rotations do not hold for"
                                      " this ring (a partial leaf group, unequal links), so it cannot be generated one"
                                      " orbit at a time; use --model closed-form (docs/errors.md)");
    return std::move(*s);
  };
  return r;
}

// sendrecv / alltoall: NCCL's P2P path, no algorithm. A schedule is linear in the size as long as
// its messages keep their protocol and channels (NCCL's per-message decisions): sizes with the same
// decisions share one schedule.
ReplayRecipe p2p_recipe(const ReplayContext& ctx, Proto proto) {
  const Topology* topo = ctx.topo;
  const NcclTopoSummary* summary = ctx.summary;
  const std::string collective = ctx.collective;
  const P2pConfig cfg = nccl_p2p_config(*topo, *summary);
  const double per_message = collective == "sendrecv" ? 1.0 : 1.0 / std::max(1, topo->num_gpus());
  ReplayRecipe r = recipe_for(Algo::Ring, proto, kP2pPipelineDepth, [cfg, per_message](double size_bytes) {
                                const P2pOp op = nccl_p2p_op(cfg, size_bytes * per_message, cfg.multi_node);
                                return static_cast<long>(op.proto) * 1000 + op.channels;
                              });
  r.p2p = true;
  r.label = std::string("P2P/") + to_string(proto);
  // alltoall with the symmetry on: its orbit representatives where the fabric's rotations hold
  // (sim/p2p_orbits.h); above the whole-schedule limit nothing else.
  const bool orbits = ctx.orbit_schedules && collective == "alltoall";
  r.build = [topo, summary, collective, proto, cfg, orbits](double size_bytes) {
    if (!orbits) return collective_schedule(*topo, *summary, collective, size_bytes, 0, proto, 1).schedule;
    const bool whole_fits = topo->num_gpus() <= kMaxWholeScheduleGpus;
    std::size_t messages = 0;
    std::optional<Schedule> s =
        alltoall_orbit_schedule(*topo, cfg, size_bytes, {}, whole_fits ? static_cast<std::size_t>(-1) : kMaxOrbitMessages, &messages);
    if (s) return std::move(*s);
    if (whole_fits) return collective_schedule(*topo, *summary, collective, size_bytes, 0, proto, 1).schedule;
    const std::string gpus = std::to_string(topo->num_gpus()) + " GPUs";
    if (messages > 0)
      throw InputError("--nodes", gpus + ": alltoall's orbit representatives would plan " + std::to_string(messages) +
                                      " messages, above the engine's limit of " + std::to_string(kMaxOrbitMessages) +
                                      " (the fabric's node rotation does not hold, e.g. a partial leaf group);"
                                      " use --model closed-form (docs/errors.md)");
    throw InputError("--nodes", gpus + " is above the engine's limit of " + std::to_string(kMaxWholeScheduleGpus) +
                                    " for whole schedules, and the fabric's node and rail rotations do not hold for"
                                    " this alltoall, so it cannot be generated one orbit at a time; use --model"
                                    " closed-form (docs/errors.md)");
  };
  return r;
}

ReplayRecipe tree_recipe(const ReplayContext& ctx, Proto proto) {
  const int channels = ring_channels(ctx);
  const Topology* topo = ctx.topo;
  const std::string collective = ctx.collective;
  TreeScheduleOptions opts = tree_options(proto);
  // NCCL's Tree ceilings (perChMaxTreeBws; llMaxBws, perChMaxTreeLL128Bws) cap each channel, at each
  // size (fewer channels run below NCCL's thread thresholds): sizes share a schedule when they have
  // the same chunks and running channels.
  const NcclTopoSummary* summary = ctx.summary;
  ReplayRecipe r = recipe_for(Algo::Tree, proto, kTreeSlots, [topo, channels, opts, summary, proto](double size_bytes) {
    const long chunks = static_cast<long>(tree_chunks(*topo, plan_trees(*topo, channels), size_bytes, opts));
    return summary ? chunks * (kNcclMaxChannels + 1) + nccl_running_channels(*summary, Algo::Tree, proto, size_bytes) : chunks;
  });
  r.build = [topo, collective, channels, base_opts = opts, summary, proto](double size_bytes) {
    TreeScheduleOptions opts = base_opts;
    if (summary) opts.channel_rate_cap_Bps = tree_channel_cap_Bps(*summary, plan_trees(*topo, channels), proto, size_bytes);
    return tree_schedule(*topo, plan_trees(*topo, channels), collective, size_bytes, opts);
  };
  r.chunk_cap_bytes = tree_chunk_cap_bytes(*topo, plan_trees(*topo, channels), opts);
  r.fluid_solver = pipeline_on_fluid_solver(*topo);
  return r;
}

// NCCL's NVLS channels and heads for this topology, so that the replay runs what the NCCL model counts.
NvlsOptions nvls_options(const ReplayContext& ctx) {
  return ctx.summary ? nccl_nvls_options(*ctx.summary) : NvlsOptions{};
}

ReplayRecipe nvls_recipe(const ReplayContext& ctx, Proto proto) {
  const Topology* topo = ctx.topo;
  const std::string collective = ctx.collective;
  const NvlsOptions options = nvls_options(ctx);
  // The bytes are linear in the size, the kernel's pipeline fill is not (NCCL's chunk follows it).
  ReplayRecipe r = recipe_for(Algo::NVLS, proto, kNvlsPipelineDepth, per_size);
  r.build = [topo, collective, proto, options](double size_bytes) {
    if (proto != Proto::Simple) return nvls_schedule(*topo, collective, size_bytes, proto);  // its error
    return nvls_schedule(*topo, collective, size_bytes, options);
  };
  return r;
}

ReplayRecipe nvls_tree_recipe(const ReplayContext& ctx, Proto proto) {
  const Topology* topo = ctx.topo;
  const std::string collective = ctx.collective;
  NvlsOptions options = nvls_options(ctx);
  // NCCL's per-channel NVLSTree ceiling (a measured kernel throughput) caps the network hops.
  if (ctx.summary) options.channel_rate_cap_Bps = nvls_tree_channel_cap_Bps(*ctx.summary);
  ReplayRecipe r = recipe_for(Algo::NVLSTree, proto, kNvlsPipelineDepth, [topo, options](double size_bytes) {
    return static_cast<long>(nvls_tree_chunks(*topo, size_bytes, options));
  });
  r.build = [topo, collective, proto, options](double size_bytes) {
    if (proto != Proto::Simple) return nvls_tree_schedule(*topo, collective, size_bytes, proto);  // its error
    return nvls_tree_schedule(*topo, collective, size_bytes, options);
  };
  r.chunk_cap_bytes = nvls_tree_chunk_cap_bytes(*topo, options);
  r.fluid_solver = pipeline_on_fluid_solver(*topo);
  return r;
}

ReplayRecipe collnet_recipe(const ReplayContext& ctx, Algo algo, Proto proto) {
  const Topology* topo = ctx.topo;
  const std::string collective = ctx.collective;
  ReplayRecipe r = recipe_for(algo, proto, kCollNetPipelineDepth, [topo](double size_bytes) {
    return static_cast<long>(collnet_chunks(*topo, size_bytes, CollNetOptions{}));
  });
  r.build = [topo, collective, algo, proto](double size_bytes) {
    return algo == Algo::CollNetDirect ? collnet_direct_schedule(*topo, collective, size_bytes, proto)
                                       : collnet_chain_schedule(*topo, collective, size_bytes, proto);
  };
  r.chunk_cap_bytes = collnet_chunk_cap_bytes(*topo, CollNetOptions{});
  r.fluid_solver = topo->num_nodes() > kCollNetSimGridMaxNodes || pipeline_on_fluid_solver(*topo);
  return r;
}

ReplayRecipe pat_recipe(const ReplayContext& ctx, Proto proto) {
  const Topology* topo = ctx.topo;
  const std::string collective = ctx.collective;
  ReplayRecipe r = recipe_for(Algo::PAT, proto, ReplayRecipe{}.pipeline_depth, linear);
  r.build = [topo, collective](double size_bytes) { return pat_schedule(*topo, collective, size_bytes); };
  return r;
}

}  // namespace

ReplayRecipe replay_recipe(const ReplayContext& ctx, Algo algo, Proto proto) {
  std::string why;
  if (!engine_replays(ctx, algo, &why)) throw std::logic_error("replay_recipe: " + why);
  if (is_p2p_collective(ctx.collective)) return p2p_recipe(ctx, proto);
  switch (algo) {
    case Algo::Ring:
      return ring_recipe(ctx, proto);
    case Algo::Tree:
      return tree_recipe(ctx, proto);
    case Algo::NVLS:
      return nvls_recipe(ctx, proto);
    case Algo::NVLSTree:
      return nvls_tree_recipe(ctx, proto);
    case Algo::PAT:
      return pat_recipe(ctx, proto);
    case Algo::CollNetDirect:
    case Algo::CollNetChain:
      return collnet_recipe(ctx, algo, proto);
    default:
      throw std::logic_error("replay_recipe: no recipe for " + std::string(to_string(algo)));
  }
}

}  // namespace ccsim
