#include "scenarios/moe/transport_schedule.h"

#include <algorithm>
#include <stdexcept>

#include "algorithms/nccl_channels.h"
#include "algorithms/ring.h"
#include "scenarios/replay.h"
#include "topologies/routing.h"

namespace ccsim::moe {
namespace {

// DeepEP's normal kernels move RDMA data in chunks of this many tokens per channel
// (deep_ep/buffer.py get_dispatch_config / get_combine_config: num_max_rdma_chunked_send_tokens, 16-32
// across EP sizes; the pipeline-fill term it sets is a few microseconds).
constexpr double kDeepepRdmaChunkTokens = 20;

Schedule empty_schedule(const Topology& topo, const PhaseTraffic& traffic, const char* algorithm) {
  Schedule s;
  s.collective = std::string("moe_") + phase_name(traffic.phase);
  s.algorithm = algorithm;
  s.nranks = topo.num_gpus();
  return s;
}

int rdma_rail(const Topology& topo, int src) { return nic_for_gpu(topo, src % topo.gpus_per_node()); }

// A flow as a transfer on its link class's route (RDMA on the source GPU's rail, NVLink inside the node).
Transfer flow_transfer(const Topology& topo, const Flow& f, double delay_s) {
  Transfer t;
  t.src = f.src;
  t.dst = f.dst;
  t.rail = f.hop == Hop::Rdma ? rdma_rail(topo, f.src) : -1;
  t.bytes = f.bytes;
  t.delay_s = delay_s;
  return t;
}

// One chunk of `bytes` over a transfer's route on an idle path: its latency plus bytes at its bandwidth.
double chunk_time_s(const Topology& topo, const Transfer& t, double bytes) {
  const Route route = route_between_gpus(topo, t.src, t.dst, t.rail);
  return route_latency_s(topo, route) + bytes / route_bandwidth_Bps(topo, route);
}

Schedule deepep_normal(const Topology& topo, const PhaseTraffic& traffic, const TransportCosts& costs) {
  Schedule s = empty_schedule(topo, traffic, "deepep-normal");
  const double chunk_bytes = costs.forward_chunk_tokens * static_cast<double>(traffic.bytes_per_token);
  const Hop forward_hop = traffic.phase == Phase::Dispatch ? Hop::Nvlink : Hop::Rdma;
  // Stage 0: everything leaves at the kernel's start.
  std::vector<std::vector<std::uint32_t>> inputs(static_cast<std::size_t>(s.nranks));  // per relay
  std::vector<double> first_input_s(static_cast<std::size_t>(s.nranks), 0.0);
  for (const Flow& f : traffic.flows) {
    if (f.stage != 0) continue;
    const Transfer t = flow_transfer(topo, f, costs.deepep_launch_s);
    const auto id = s.add(t, {});
    if (f.hop != forward_hop) {
      inputs[static_cast<std::size_t>(f.dst)].push_back(id);
      // When the relay's first chunk is in.
      const double first = chunk_time_s(topo, t, std::min(chunk_bytes, f.bytes));
      double& earliest = first_input_s[static_cast<std::size_t>(f.dst)];
      earliest = earliest > 0 ? std::min(earliest, first) : first;
    }
  }
  // Per relay, a marker: its last input has arrived.
  std::vector<std::int64_t> arrived(static_cast<std::size_t>(s.nranks), -1);
  for (const Flow& f : traffic.flows) {
    if (f.stage != 1) continue;
    auto& a = arrived[static_cast<std::size_t>(f.src)];
    if (a < 0) {
      Transfer m;
      m.src = m.dst = f.src;
      a = s.add(m, inputs[static_cast<std::size_t>(f.src)]);
    }
  }
  // Stage 1: starts with the relay's first chunk, runs alongside stage 0, and ends no earlier than one
  // chunk on its own hop after the relay's last input (a marker at the receiving rank).
  for (const Flow& f : traffic.flows) {
    if (f.stage != 1) continue;
    const Transfer t = flow_transfer(topo, f, costs.deepep_launch_s + first_input_s[static_cast<std::size_t>(f.src)]);
    s.add(t, {});
    Transfer tail;
    tail.src = tail.dst = f.dst;
    tail.delay_s = chunk_time_s(topo, t, std::min(chunk_bytes, f.bytes));
    s.add(tail, {static_cast<std::uint32_t>(arrived[static_cast<std::size_t>(f.src)])});
  }
  return s;
}

Schedule deepep_low_latency(const Topology& topo, const PhaseTraffic& traffic, const TransportCosts& costs) {
  Schedule s = empty_schedule(topo, traffic, "deepep-ll");
  // Every put carries one token: messages/s x bytes per message is the issue resource's byte rate.
  s.gpu_issue_caps = {{0, costs.gpu_message_rate_per_s * static_cast<double>(traffic.bytes_per_token)}};
  for (const Flow& f : traffic.flows) {
    Transfer t;
    t.src = f.src;
    t.dst = f.dst;
    t.rail = f.hop == Hop::Rdma ? kRailOwnNics : -1;
    t.bytes = f.bytes;
    t.delay_s = costs.deepep_launch_s;
    s.add(t, {});
  }
  return s;
}

Schedule nccl_alltoallv(const Topology& topo, const PhaseTraffic& traffic, const TransportCosts& costs) {
  std::vector<P2pMessage> messages;
  messages.reserve(traffic.flows.size());
  for (const Flow& f : traffic.flows) messages.push_back({f.src, f.dst, f.bytes});
  Schedule s = alltoallv_schedule(topo, costs.p2p, messages);
  s.collective = std::string("moe_") + phase_name(traffic.phase);
  return s;
}

// Megatron's all-gather dispatcher: NCCL's ring all_gather (dispatch) / reduce_scatter (combine) of
// T tokens per rank, Simple protocol (the sizes of a layer are far above the LL thresholds).
Schedule allgather_dispatcher(const Topology& topo, const MoeLayer& layer, const PhaseTraffic& traffic) {
  const double per_rank = static_cast<double>(layer.config.tokens_per_rank) * static_cast<double>(traffic.bytes_per_token);
  const std::string collective = traffic.phase == Phase::Dispatch ? "all_gather" : "reduce_scatter";
  const RingPlan plan = plan_rings(topo, default_ring_channels(topo));
  RingScheduleOptions options;
  options.timing = ring_protocol(Proto::Simple).timing;
  // nccl-tests sizes: the gathered buffer (all_gather) and the input buffer (reduce_scatter) are both
  // EP x the per-rank share.
  Schedule s = ring_schedule(topo, plan, collective, per_rank * topo.num_gpus(), options);
  return s;
}

}  // namespace

TransportCosts transport_costs(const Topology& topo) {
  TransportCosts c;
  const NcclTopoSummary summary = summarize_for_nccl(topo);
  c.p2p = nccl_p2p_config(topo, summary);
  c.deepep_launch_s = nccl230::baseLat[1][static_cast<int>(Proto::LL)] * 1e-6;
  c.gpu_message_rate_per_s = topo.network.message_rate_per_s;
  c.forward_chunk_tokens = kDeepepRdmaChunkTokens;
  return c;
}

Schedule phase_schedule(const Topology& topo, const MoeLayer& layer, const PhaseTraffic& traffic,
                        const TransportCosts& costs) {
  if (topo.num_gpus() != layer.config.ep)
    throw std::invalid_argument("moe: the topology has " + std::to_string(topo.num_gpus()) + " GPUs, EP is " +
                                std::to_string(layer.config.ep));
  switch (traffic.transport) {
    case Transport::DeepepNormal: return deepep_normal(topo, traffic, costs);
    case Transport::DeepepLowLatency: return deepep_low_latency(topo, traffic, costs);
    case Transport::Nccl: return nccl_alltoallv(topo, traffic, costs);
    case Transport::AllGather: return allgather_dispatcher(topo, layer, traffic);
  }
  throw std::logic_error("moe: unknown transport");
}

}  // namespace ccsim::moe
