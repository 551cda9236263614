#include "scenarios/collective_schedule.h"

#include <algorithm>

#include "algorithms/chain.h"
#include "algorithms/collectives.h"
#include "algorithms/p2p.h"
#include "algorithms/ring.h"
#include "algorithms/step_timing.h"
#include "common/error.h"

namespace ccsim {

namespace {

bool has_shape(const std::string& collective, CollectiveShape shape) {
  const CollectiveInfo* info = find_collective(collective);
  return info && info->shape == shape;
}

}  // namespace

bool is_chain_collective(const std::string& c) { return has_shape(c, CollectiveShape::Chain); }
bool is_p2p_collective(const std::string& c) { return has_shape(c, CollectiveShape::P2P); }

CollectiveSchedule collective_schedule(const Topology& topo, const NcclTopoSummary& summary,
                                       const std::string& collective, double size_bytes, int root, Proto ring_proto,
                                       int ring_channels) {
  CollectiveSchedule out;
  if (is_chain_collective(collective)) {
    const RingProtocol proto = ring_protocol(ring_proto);
    ChainScheduleOptions opt;
    opt.timing = proto.timing;
    opt.wire_factor = proto.wire_factor;
    opt.chunk_wire_bytes = chain_chunk_wire_bytes(topo, ring_proto);
    const RingPlan plan = plan_rings(topo, ring_channels);
    opt.channel_rate_cap_Bps = ring_replay_channel_cap_Bps(topo, summary, plan, ring_proto, size_bytes);
    int threads = 0;
    nccl_channels_threads(summary, Algo::Ring, ring_proto, static_cast<std::uint64_t>(size_bytes), &opt.nccl_channels, &threads);
    opt.forward_unit_wire_bytes = chain_forward_unit_wire_bytes(ring_proto, threads, topo.num_nodes() > 1);
    out.schedule = chain_schedule(topo, plan, collective, size_bytes, root, opt);
    out.pipeline_depth = kChainPipelineDepth;
    out.proto = ring_proto;
    out.label = std::string("Ring/") + to_string(ring_proto);
    return out;
  }
  if (is_p2p_collective(collective)) {
    const P2pConfig cfg = nccl_p2p_config(topo, summary);
    out.schedule = find_collective(collective)->p2p == P2pPattern::RingNeighbour ? sendrecv_schedule(topo, cfg, size_bytes)
                                                                                  : alltoall_schedule(topo, cfg, size_bytes);
    out.proto = p2p_protocol(topo, summary, collective, size_bytes);
    out.pipeline_depth = kP2pPipelineDepth;
    out.label = std::string("P2P/") + to_string(out.proto);
    return out;
  }
  throw InputError("--collective", "no schedule for collective '" + collective + "'");
}

Proto p2p_protocol(const Topology& topo, const NcclTopoSummary& summary, const std::string& collective,
                   double size_bytes) {
  const P2pConfig cfg = nccl_p2p_config(topo, summary);
  const CollectiveInfo& info = collective_info(collective);
  const double message = info.p2p == P2pPattern::AllPairs ? size_bytes / std::max(1, topo.num_gpus()) : size_bytes;
  return nccl_p2p_op(cfg, message, topo.num_nodes() > 1).proto;
}

}  // namespace ccsim
