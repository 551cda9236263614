// Which NICs each GPU drives, and which GPU a NIC's rings enter and leave through: NCCL's NIC
// affinity (src/graph/topo.cc ncclTopoGetLocal, ncclTopoGetLocalNet, ncclTopoGetLocalGpu),
// restated for a ccsim Topology so that nodes with several NICs per GPU (OCI BM.GPU4.8: 16 for 8
// GPUs; AWS p5: 32) and fewer NICs than GPUs (AWS p4d: 4 for 8) use the NICs NCCL uses.
//
// NCCL's rule, for local GPU g:
//   local NICs L(g): the NICs at the closest path class from g (PIX < PXB < PHB < NODE < SYS), among
//     those the highest route bandwidth (ncclTopoGetLocal orders bandwidth first, then path type;
//     with one link width per device kind the two orders agree);
//   local GPUs of a NIC: the GPUs at its closest path class / highest bandwidth;
//   channel c of g uses one of DIVUP(|L(g)|, |local GPUs of L(g)[0]|) NICs of L(g), round robin:
//     net = mirrorBits(g) + c % DIVUP(...) (ncclTopoGetLocalNet). So the GPUs that share a set of
//     equally close NICs split it, each driving its share, and a GPU that shares one NIC with
//     others drives that NIC.
// ccsim keeps NCCL's split but picks each GPU's share as "least used by lower-numbered GPUs, then
// lowest index" instead of NCCL's bit-mirrored start index: the same NICs per GPU pair on every
// layout ccsim can describe (GPUs and NICs spread over the switches in order), and, with one NIC
// per GPU, exactly the affinity ccsim had before (docs/topology.md "GPU -> NIC affinity").
#pragma once
#include <vector>

#include "topologies/topology.h"

namespace ccsim {

struct NicAffinity {
  std::vector<std::vector<int>> gpu_nics;  // per local GPU: the NICs its channels use, channel c on [c % size]
  std::vector<int> nic_gpu;                // per NIC: the GPU rings and trees enter and leave it through, -1: none
};

// Computes the affinity of every local GPU and NIC (what build_topology stores in the Topology).
NicAffinity compute_nic_affinities(const Topology& topo);

// NICs local GPU `local_gpu` drives, in channel order (empty when the node has no NIC).
std::vector<int> nics_of_gpu(const Topology& topo, int local_gpu);
// NIC index channel `channel` of local GPU `local_gpu` uses (NCCL's ncclTopoGetLocalNet); -1 without NICs.
int nic_for_channel(const Topology& topo, int local_gpu, int channel);
// NIC index used by local GPU `local_gpu` for its first channel (same on every node); -1 without NICs.
int nic_for_gpu(const Topology& topo, int local_gpu);
// The local GPU whose channels use NIC `rail` at the lowest channel, preferring the GPUs closest to
// the NIC (NCCL's ncclTopoGetLocalGpu): where rings and trees cross the network on that rail, and
// the PXN relay for other GPUs' traffic on it. -1 if no GPU uses it.
int first_gpu_on_rail(const Topology& topo, int rail);
// The first-channel NIC of every local GPU (nic_for_gpu for each).
std::vector<int> compute_nic_affinity(const Topology& topo);

}  // namespace ccsim
