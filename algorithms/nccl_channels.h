// The graph bandwidths and channel counts NCCL would derive for a ccsim Topology: an estimate of
// NCCL 2.30's topology search (src/graph/search.cc ncclTopoCompute, ncclTopoDupChannels) and of the
// channel duplication in src/graph/connect.cc, in NCCL's own units.
//
// NCCL's units (src/graph/topo.h, topo.cc), used instead of the topology's physical numbers:
//   NVLink per link: SM60 18, SM70 20, SM80 20, SM86 12, SM90 20.6, SM100 40.1 GB/s (per direction);
//   PCIe: lanes x {Gen3 60, Gen4 120, Gen5 240, Gen6 480} / 80 GB/s (Gen4 x16 = 24, Gen5 x16 = 48);
//   NIC: line rate / 8 (400 Gb/s = 50 GB/s); inter-socket: Intel 10 (SKL_QPI_BW), AMD 16, other 6.
//
// Search (per graph): channels are tried at the speeds of NCCL's speed array (sm90 intra
// {60,50,40,30,24,20,15,12,11,6,3}, inter {48,45,42,40,30,24,22,20,17.5,15,12,6,3,...}; sm100 and
// older arrays likewise), highest first, starting at the first speed <= maxBw; a speed gives as
// many channels as the links can carry; the search stops at the first speed whose channels x speed
// reaches the GPU's total bandwidth, otherwise keeps the best channels x speed found while the
// speed stays above 0.49 x the best one. Then ncclTopoDupChannels doubles the channels (halving
// the per-channel speed) when bwIntra >= 25 unless (sm > 80, bwIntra < 50 and > 4 channels), and
// pass 2 raises the speed while the channels still fit. Channel capacities at speed s:
//   single node, NVSwitch/NVLink ring or tree: floor(B / s), B = NVLink links x per-link bw;
//   multi-node ring/tree: min(NICs x floor(netBw / s), floor(B x ppn / ((ppn-1) x s))),
//     netBw = min(NIC, GPU PCIe, NIC PCIe) (each channel enters and leaves the node once);
//   NVLS: n <= ppn channels need (n + 1) x s <= B (every GPU pulls each channel, the head twice);
//     one node forces n = ppn; pass 2 raises bwInter (NVLS only) up to 2 x bwIntra.
//   PCIe-only nodes: B = min(GPU PCIe, switch uplink[, inter-socket]) -- an approximation.
// connect.cc: comm->nChannels = 2 x min(ring, tree channels) (max 64), doubled again on sm90+
// multi-node when ring bwIntra > 45 ("4 compute channels per search channel").
// nvlsChannels: 16 (sm90), 24 (sm100, one node), 32 (sm100, several nodes).
#pragma once
#include "algorithms/nccl_model.h"
#include "topologies/nccl_hardware_figures.h"
#include "topologies/topology.h"

namespace ccsim {

// `collnet_fabric`: the network has in-network reduction (SHARP) and NCCL's CollNet plugin is
// loaded (CollNetDirect / CollNetChain, multi-node NVLS). ccsim topologies do not describe it.
NcclTopoSummary summarize_for_nccl(const Topology& topo, bool collnet_fabric = false);

}  // namespace ccsim
