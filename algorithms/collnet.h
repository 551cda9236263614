// NCCL's CollNetDirect (and CollNetChain, below) all_reduce as a Schedule with switch endpoints (docs/collnet.md): inside a
// node every GPU writes slice h of its buffer to head h (one head per NIC rail), the head sends the
// node's partial sum to its rail's leaf switch, whose SHARP units reduce across the nodes and return
// the sum to every node's head, and the head writes it to every local GPU. Needs fabric.sharp.
#pragma once
#include <string>

#include "algorithms/nccl_model.h"
#include "algorithms/schedule.h"
#include "topologies/topology.h"

namespace ccsim {

constexpr int kCollNetPipelineDepth = nccl230::kSteps;  // NCCL_STEPS, sliceSteps 1

struct CollNetOptions {
  // Per head; 0: the Simple step of the topology's buffer (NCCL_BUFFSIZE / NCCL_STEPS, 512 KiB by default).
  double chunk_bytes = 0;
  int max_chunks = 64;
  // NCCL 2.30 CollNetDirect/Simple: latency 2 (min(1, ppn-1) intraLat + 0.4 (ppn-1)) + interLat with
  // intraLat = hwLat[NVLINK][CollNetDirect] = 3.7 us and interLat = hwLat[NET][CollNetDirect] = 31 us.
  double intra_s = nccl230::hwLat[nccl230::kHwNvlink][static_cast<int>(Algo::CollNetDirect)][2] * 1e-6;
  double per_peer_s = 0.4e-6;
  double net_s = nccl230::hwLat[nccl230::kHwNet][static_cast<int>(Algo::CollNetDirect)][2] * 1e-6;
  // CollNetChain/Simple: latency 2 (ppn-1) intraLat + interLat, intraLat = hwLat[NVLINK][CollNetChain]
  // = 2.8 us per chain hop, interLat = hwLat[NET][CollNetChain] = 30 us.
  double chain_intra_s = nccl230::hwLat[nccl230::kHwNvlink][static_cast<int>(Algo::CollNetChain)][2] * 1e-6;
  double chain_net_s = nccl230::hwLat[nccl230::kHwNet][static_cast<int>(Algo::CollNetChain)][2] * 1e-6;
};

// Whether the fabric reduces (fabric.sharp: a Reducer vertex behind every leaf switch).
bool collnet_supported(const Topology& topo);

// CollNetDirect all_reduce on several nodes in one leaf group. C = max(1, min(max_chunks,
// ceil(S / H / chunk_bytes))) chunks per head: not linear in S (rebuild per size); simulate with
// pipeline depth kCollNetPipelineDepth. InputError without SHARP, on one node, across leaf groups,
// for other protocols than Simple or other collectives.
Schedule collnet_direct_schedule(const Topology& topo, const std::string& collective, double size_bytes, Proto proto);
Schedule collnet_direct_schedule(const Topology& topo, const std::string& collective, double size_bytes,
                                 const CollNetOptions& options);
int collnet_chunks(const Topology& topo, double size_bytes, const CollNetOptions& options);
// The size at which every head runs max_chunks chunks of chunk_bytes; past it the builder enlarges the
// chunks (sim/steady_state.h extends the pipeline instead).
double collnet_chunk_cap_bytes(const Topology& topo, const CollNetOptions& options);

// CollNetChain all_reduce: per rail h, a chain over each node's GPUs starting at the head of rail h
// (the GPU affined to NIC h); chunks are reduced up the chain, sent to the rail's SHARP units,
// and the sum comes back down the chain. Same chunking, limits and errors as CollNetDirect.
Schedule collnet_chain_schedule(const Topology& topo, const std::string& collective, double size_bytes, Proto proto);
Schedule collnet_chain_schedule(const Topology& topo, const std::string& collective, double size_bytes,
                                const CollNetOptions& options);

}  // namespace ccsim
