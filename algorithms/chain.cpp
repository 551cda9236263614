#include "algorithms/chain.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "common/error.h"

namespace ccsim {

double chain_chunk_wire_bytes(const Topology& topo, Proto p) {
  // One slot of the protocol's buffer: the buffer / NCCL_STEPS.
  return static_cast<double>(nccl_buffer_bytes(topo, p)) / nccl230::kSteps;
}

double chain_forward_unit_wire_bytes(Proto p, int threads, bool multi_node) {
  if (multi_node || threads <= 0) return 0;
  constexpr double kLLLineBytes = 16;                  // union ncclLLFifoLine
  constexpr double kLL128WarpSliceBytes = 32 * 8 * 8;  // WARP_SIZE x NCCL_LL128_SHMEM_ELEMS_PER_THREAD x 8 B
  switch (p) {
    case Proto::LL: return threads * kLLLineBytes;
    case Proto::LL128: return threads / 32 * kLL128WarpSliceBytes;
    case Proto::Simple: return 0;
  }
  return 0;
}

int chain_chunks(const RingPlan& plan, double size_bytes, const ChainScheduleOptions& options) {
  if (plan.families.empty()) return 1;
  const int families = static_cast<int>(plan.families.size());
  const double per_family = size_bytes / static_cast<double>(families) * options.wire_factor;
  // NCCL's broadcast and reduce move one Simple step per chunk (BROADCAST_CHUNKSTEPS = REDUCE_CHUNKSTEPS
  // = 1, src/include/collectives.h), each channel its own chunks. A hop forwards a channel's chunk once
  // it has all arrived; the channels' chunks reach the next GPU one after another, not all at the end,
  // so each is a unit of the pipeline: 8 H800 broadcast 8 MiB in 69.5 us (51 us of it the bytes) and
  // 12 DGX-2 V100 in 133 us (70 us), where 16 or 12 channels' chunks in lockstep would fill every hop
  // with all of them (7 x 51 us more on the H800; docs/accuracy.md "Broadcast and reduce chains").
  const int channels = std::max(1, options.nccl_channels > 0 ? (options.nccl_channels + families - 1) / families
                                                             : plan.families.front().channels);
  const double per_channel = per_family / channels;
  // LL and LL128 pass each round of lines on as it arrives: the pipeline's unit is that round.
  const double unit = options.forward_unit_wire_bytes > 0 ? std::min(options.forward_unit_wire_bytes, options.chunk_wire_bytes)
                                                          : options.chunk_wire_bytes;
  const double c = (options.nccl_channels > 0 ? channels : 1) * std::ceil(per_channel / unit);
  return clamp_chunks(c, options.max_chunks);
}

std::vector<int> chain_order(const RingPlan& plan, int family, const std::string& collective, int root) {
  const auto& order = plan.families.at(static_cast<std::size_t>(family)).order;
  const int n = static_cast<int>(order.size());
  const auto it = std::find(order.begin(), order.end(), root);
  if (it == order.end()) throw std::invalid_argument("root is not on the ring");
  const int p0 = static_cast<int>(it - order.begin());
  std::vector<int> chain;
  // Broadcast: root, next(root), ..., prev(root). Reduce: next(root), ..., prev(root), root.
  const int first = collective == "broadcast" ? p0 : p0 + 1;
  for (int i = 0; i < n; ++i) chain.push_back(order[static_cast<std::size_t>((first + i) % n)]);
  return chain;
}

Schedule chain_schedule(const Topology& topo, const RingPlan& plan, const std::string& collective, double size_bytes,
                        int root, const ChainScheduleOptions& options) {
  if (collective != "broadcast" && collective != "reduce")
    throw std::invalid_argument("no chain schedule for collective '" + collective + "'");
  Schedule s;
  s.collective = collective;
  s.algorithm = "ring";
  s.nranks = topo.num_gpus();
  s.size_bytes = size_bytes;
  s.families_follow_rails = topo.num_nodes() > 1;
  // Every connection of a chain carries the family's whole stream: capping each caps the stream.
  s.cap_every_connection(options.channel_rate_cap_Bps * options.wire_factor);
  const int n = s.nranks;
  if (root < 0 || root >= n)
    throw InputError("-r", "root " + std::to_string(root) + " is not a rank of this " + std::to_string(n) +
                               "-rank communicator (valid: 0.." + std::to_string(n - 1) + ")");
  if (n < 2 || plan.families.empty()) return s;
  const int families = static_cast<int>(plan.families.size());
  const int gpn = topo.gpus_per_node();

  // Per family: the chain's hops (rail and software delay), computed once.
  struct Hop {
    int src, dst, rail;
    double delay_s;
  };
  std::vector<std::vector<Hop>> hops(static_cast<std::size_t>(families));
  for (int f = 0; f < families; ++f) {
    if (static_cast<int>(plan.families[f].order.size()) != n)
      throw std::invalid_argument("ring order does not cover all ranks");
    const std::vector<int> chain = chain_order(plan, f, collective, root);
    for (int h = 0; h + 1 < n; ++h) {
      const int src = chain[h], dst = chain[h + 1];
      const int rail = (src / gpn != dst / gpn) ? plan.families[f].rail : -1;
      hops[f].push_back({src, dst, rail, step_software_delay_s(topo, options.timing, src, dst, rail)});
    }
  }

  const int chunks = chain_chunks(plan, size_bytes, options);
  const double chunk_bytes = size_bytes / families * options.wire_factor / chunks;
  // Per hop three records: head (chunk 0), body (chunks 1..C-2), tail (chunk C-1). The body streams
  // behind the head like NCCL's slots do, the tail cannot leave before the upstream tail arrived, so
  // a hop ends no earlier than its upstream hop plus one chunk. Emitted in that order per family.
  enum Part { kHead, kBody, kTail };
  std::vector<std::array<std::uint32_t, 3>> prev(static_cast<std::size_t>(families));
  for (int f = 0; f < families; ++f) {
    for (int h = 0; h + 1 < n; ++h) {
      const Hop& hop = hops[f][h];
      std::array<std::uint32_t, 3> cur{};
      std::uint32_t last_own = 0;
      for (int part : {kHead, kBody, kTail}) {
        const int nchunks = part == kBody ? chunks - 2 : 1;
        if (nchunks <= 0 || (part == kTail && chunks < 2)) continue;
        Transfer t;
        t.src = hop.src;
        t.dst = hop.dst;
        t.rail = hop.rail;
        t.bytes = chunk_bytes * nchunks;
        t.delay_s = part == kHead ? hop.delay_s + (h == 0 ? options.timing.launch_s : 0.0) : 0.0;
        t.step = part;
        t.family = f;
        t.channels = plan.families[f].channels;
        t.chunks = nchunks;
        std::vector<std::uint32_t> deps;
        if (part != kHead) deps.push_back(last_own);                // in order on this connection
        if (h > 0 && part != kBody) deps.push_back(prev[f][part]);  // the chunk has arrived
        last_own = s.add(t, deps);
        cur[part] = last_own;
      }
      prev[f] = cur;
    }
  }
  return s;
}

double chain_closed_form_time_s(double launch_s, double sum_hop_alpha_s, double sum_hop_c_over_beta_s, int chunks,
                                double chunk_bytes, double min_beta_Bps, double restart_latency_s) {
  const int restarts = chunks >= 3 ? 2 : chunks == 2 ? 1 : 0;
  return launch_s + sum_hop_alpha_s + sum_hop_c_over_beta_s + (chunks - 1) * chunk_bytes / min_beta_Bps +
         restarts * restart_latency_s;
}

}  // namespace ccsim
