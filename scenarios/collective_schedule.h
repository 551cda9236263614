// The engine's schedule for one size of the collectives that are not ring all_reduce / all_gather /
// reduce_scatter: broadcast and reduce (NCCL runs them on Ring only: a pipelined chain along each
// ring, algorithms/chain.h, with the protocol NCCL's tuner picks) and the P2P collectives sendrecv
// and alltoall (grouped ncclSend/ncclRecv: no tuner, NCCL picks LL or Simple per message,
// algorithms/p2p.h). predict() calls this per size; the nccl-tests conventions of every collective
// (size and count columns, redop and root columns) are the registry's (algorithms/collectives.h).
#pragma once
#include <cstdint>
#include <string>

#include "algorithms/nccl_model.h"
#include "algorithms/schedule.h"
#include "topologies/topology.h"

namespace ccsim {

// Shorthands for the registry's shapes (algorithms/collectives.h).
bool is_chain_collective(const std::string& collective);  // broadcast, reduce
bool is_p2p_collective(const std::string& collective);    // sendrecv, alltoall

struct CollectiveSchedule {
  Schedule schedule;
  int pipeline_depth = 8;  // engine slots per connection (NCCL_STEPS / slice steps)
  Proto proto = Proto::Simple;
  std::string label;       // "Ring/LL" (chain) or "P2P/Simple"
};

// One size of broadcast / reduce / sendrecv / alltoall. `ring_proto`: the protocol NCCL's tuner
// picked for Ring (broadcast / reduce only); `ring_channels`: NCCL channels spread over the ring
// families (as for the ring all_reduce); `summary`: NCCL's view of the topology (comm->nChannels and
// the proxy cost for P2P). InputError for a bad root or another collective.
CollectiveSchedule collective_schedule(const Topology& topo, const NcclTopoSummary& summary,
                                       const std::string& collective, double size_bytes, int root, Proto ring_proto,
                                       int ring_channels);

// The protocol NCCL picks for the messages of a sendrecv / alltoall of `size_bytes` (LL up to
// channels x NCCL_P2P_LL_THRESHOLD per message, Simple above).
Proto p2p_protocol(const Topology& topo, const NcclTopoSummary& summary, const std::string& collective,
                   double size_bytes);

}  // namespace ccsim
