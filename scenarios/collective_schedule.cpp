#include "scenarios/collective_schedule.h"

#include <algorithm>

#include "algorithms/chain.h"
#include "algorithms/p2p.h"
#include "algorithms/ring.h"
#include "algorithms/step_timing.h"
#include "common/error.h"

namespace ccsim {

bool is_chain_collective(const std::string& c) { return c == "broadcast" || c == "reduce"; }
bool is_p2p_collective(const std::string& c) { return c == "sendrecv" || c == "alltoall"; }

CollectiveSchedule collective_schedule(const Topology& topo, const NcclTopoSummary& summary,
                                       const std::string& collective, double size_bytes, int root, Proto ring_proto,
                                       int ring_channels) {
  CollectiveSchedule out;
  if (is_chain_collective(collective)) {
    const RingProtocol proto = ring_protocol(ring_proto);
    ChainScheduleOptions opt;
    opt.timing = proto.timing;
    opt.wire_factor = proto.wire_factor;
    opt.chunk_wire_bytes = chain_chunk_wire_bytes(ring_proto);
    out.schedule = chain_schedule(topo, plan_rings(topo, ring_channels), collective, size_bytes, root, opt);
    out.pipeline_depth = kChainPipelineDepth;
    out.proto = ring_proto;
    out.label = std::string("Ring/") + to_string(ring_proto);
    return out;
  }
  if (is_p2p_collective(collective)) {
    const P2pConfig cfg = nccl_p2p_config(topo, summary.coll_channels, summary.net_overhead_us);
    out.schedule = collective == "sendrecv" ? sendrecv_schedule(topo, cfg, size_bytes)
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
  const P2pConfig cfg = nccl_p2p_config(topo, summary.coll_channels, summary.net_overhead_us);
  const double message = collective == "sendrecv" ? size_bytes : size_bytes / std::max(1, topo.num_gpus());
  return nccl_p2p_op(cfg, message, topo.num_nodes() > 1).proto;
}

bool nccl_tests_extra_size_and_count(const std::string& collective, std::uint64_t requested, int type_size,
                                     int nranks, std::uint64_t* size_bytes, std::uint64_t* count) {
  const std::uint64_t ts = static_cast<std::uint64_t>(std::max(1, type_size));
  if (collective == "broadcast" || collective == "reduce" || collective == "sendrecv") {
    *count = requested / ts;
    *size_bytes = *count * ts;
    return true;
  }
  if (collective == "alltoall") {
    const std::uint64_t n = static_cast<std::uint64_t>(std::max(1, nranks));
    const std::uint64_t align = std::max<std::uint64_t>(1, 16 / ts);  // -(16/eltSize) mask
    *count = (requested / ts / n) / align * align;
    *size_bytes = *count * n * ts;
    return true;
  }
  return false;
}

std::string nccl_tests_redop(const std::string& collective, const std::string& op) {
  if (collective == "broadcast" || collective == "alltoall" || collective == "all_gather") return "none";
  return op;
}

int nccl_tests_root(const std::string& collective, int root) { return is_chain_collective(collective) ? root : -1; }

}  // namespace ccsim
