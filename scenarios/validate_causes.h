// Likely causes of a measured log far from ccsim's prediction, from the diagnostics NCCL users apply:
// P2P disabled or redirected through the host, GPUDirect RDMA off, a NIC missing, slower or on the
// wrong NUMA node, NVLS unavailable, a forced algorithm or protocol, too few channels, one process
// driving several GPUs, a straggler, and busbw above the ring limit on 2 nodes (Tree / NVLSTree: not an
// error). Each cause says what in the numbers points to it and what to check or run next
// (docs/validate.md lists the rules).
#pragma once
#include <vector>

#include "algorithms/nccl_versions.h"
#include "report/validation_report.h"
#include "topologies/topology.h"

namespace ccsim {

// `ring_only`: the same prediction with NCCL restricted to Ring (nullptr when not computed: the
// prediction already is Ring on the bandwidth side, or the collective has no tuner choice).
// `tolerance`: fraction (0.2 = 20%). `version`: the NCCL whose rules the prediction followed.
std::vector<LikelyCause> likely_causes(const ValidatedRun& run, const Topology& topo, const DebugFacts& debug,
                                       const PredictionReport* ring_only, double tolerance, const NcclVersion& version);

}  // namespace ccsim
