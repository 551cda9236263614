// One MoE phase (dispatch or combine) of one transport as a Schedule for the engine: the aggregated flows
// of scenarios/moe/traffic.h become transfers (one per (stage, src, dst): the lever that keeps skewed
// layers fast, since skew breaks the symmetry the collectives use), with each transport's mechanism:
//
//  nccl           grouped ncclSend/ncclRecv with per-peer sizes: NCCL's P2P path (algorithms/p2p.h:
//                 channels, LL below NCCL's threshold per message, PXN, the CPU proxy's cost per message).
//  deepep-normal  stage 0 (RDMA to the relay on the source's rail, NVLink to same-node GPUs) and stage 1
//                 (the relay's NVLink forwarding; in combine its RDMA send back) run concurrently, as
//                 DeepEP's warp-specialised kernels pipeline them chunk by chunk. A forwarding flow
//                 cannot end before the relay's last input has arrived plus one chunk on its own hop:
//                 a marker per forwarding flow (Transfer::is_marker) holds that bound. This is the
//                 deep-pipeline limit of DeepEP's chunked forwarding (docs/moe.md "Pipelining").
//  deepep-ll      one put per (token, expert) pair, GPU-initiated: each GPU posts on its own NIC to
//                 the peer's own NIC (routing.h kRailOwnNics: across rails through the spine); same-node
//                 peers over NVLink unless pure RDMA; every transfer of a GPU also passes that GPU's
//                 message-issue resource (Schedule::gpu_issue_caps: messages/s x bytes per message).
//  allgather      Megatron's all-gather dispatcher: NCCL's ring all_gather of every rank's tokens;
//                 combine is the ring reduce_scatter of the same volume.
#pragma once
#include "algorithms/p2p.h"
#include "algorithms/schedule.h"
#include "scenarios/moe/traffic.h"
#include "topologies/topology.h"

namespace ccsim::moe {

// Fixed and per-message costs of the transports (docs/moe.md "Costs" gives each one's source).
struct TransportCosts {
  double deepep_launch_s = 0;       // DeepEP kernel launch and its grid-wide start (NCCL 2.30's LL launch
                                    // baseLat: a kernel whose data moves with flags)
  double gpu_message_rate_per_s = 0;  // GPU-initiated messages per second a GPU's NIC accepts
                                      // (topology node.nic.message_rate_Mps)
  double forward_chunk_tokens = 0;  // DeepEP normal kernels' RDMA chunk (tokens per chunk and channel)
  P2pConfig p2p;                    // NCCL's P2P configuration (nccl transport; its proxy cost per message)
};

// The costs for a topology: NCCL's P2P configuration from its summary, the message rate from the spec.
TransportCosts transport_costs(const Topology& topo);

// The schedule of one phase. `tokens_per_rank` is T (for the all-gather dispatcher's ring size).
Schedule phase_schedule(const Topology& topo, const MoeLayer& layer, const PhaseTraffic& traffic,
                        const TransportCosts& costs);

}  // namespace ccsim::moe
