// `ccsim explain --collective sendrecv|alltoall`: what NCCL decides for grouped ncclSend/ncclRecv,
// which has no tuner and no algorithm: the P2P channels of the communicator, the transport and route
// to each kind of peer (P2P over NVLink or PCIe, SHM through host memory, the network with or
// without GPUDirect RDMA and PXN), the per-message channels, protocol, chunks and peers in flight at
// one size, and ccsim's closed form of the resulting schedule (algorithms/p2p.h).
#pragma once
#include <cstdint>
#include <string>

#include "algorithms/nccl_model.h"
#include "topologies/topology.h"

namespace ccsim {

// `collective` is "sendrecv" or "alltoall" (std::invalid_argument otherwise); `bytes` the nccl-tests
// size (alltoall: count x ranks x element bytes per rank).
std::string explain_p2p_report(const Topology& topo, const NcclTopoSummary& s, const std::string& collective,
                               std::uint64_t bytes);

}  // namespace ccsim
