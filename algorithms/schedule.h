// A Schedule is pure data between the algorithms and the engine: who sends how many bytes to whom,
// after which other transfers, with which fixed delay. It can be printed, diffed and tested without
// the engine. Ranks are global GPU ranks (node * gpus_per_node + local index); endpoints from nranks
// on are switches (Schedule::switches), for algorithms whose switches reduce or replicate data (NVLS).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace ccsim {

struct Transfer {
  int src = 0;            // endpoint: a GPU rank (< nranks) or nranks + k for switches[k]
  int dst = 0;
  int rail = -1;          // NIC index carrying an inter-node transfer on both sides (-1: the source GPU's NIC;
                          // kRailOwnNics: each side its own GPU's NIC, routing.h)
  double bytes = 0;       // bytes moved by this record (all channels and chunks it stands for)
  double delay_s = 0;     // fixed delay between "all dependencies done" and the first byte (protocol/launch)
  int step = 0;           // algorithm step (ring: 0 .. 2(n-1)-1)
  int family = 0;         // ring / tree family: records of different families never merge
  int channels = 1;       // NCCL channels this record stands for (same path and timing)
  int chunks = 1;         // chunks per channel this record stands for
  int lane = 0;           // which (channel, chunk) piece of the family this record is, when expanded:
                          // each lane is its own connection with its own pipeline
  std::uint32_t dep_begin = 0;  // dependencies: Schedule::deps[dep_begin, dep_begin + dep_count)
  std::uint32_t dep_count = 0;
  // A marker (src == dst) moves no bytes and uses no link: it ends `delay_s` after its dependencies,
  // a join point that later records depend on (a rank's barrier between the operations of a workload,
  // a pipeline stage's "all inputs arrived"). It counts toward no rank's finish time.
  bool is_marker() const { return src == dst; }
};

// A 64-bit key that identifies a record by (src, dst, rail, family, step) without collisions:
// 18 bits per rank, 6 for rail + 2, 7 for family, 15 for step. Returns false when a field does not fit.
// (Inline: the engine's passes over million-record schedules call it per record.)
inline bool pack_transfer_key(int src, int dst, int rail, int family, int step, std::uint64_t* key) {
  if (src < 0 || src >= (1 << 18) || dst < 0 || dst >= (1 << 18) || rail < -2 || rail >= 62 || family < 0 ||
      family >= (1 << 7) || step < 0 || step >= (1 << 15))
    return false;
  *key = (static_cast<std::uint64_t>(src) << 46) | (static_cast<std::uint64_t>(dst) << 28) |
         (static_cast<std::uint64_t>(rail + 2) << 22) | (static_cast<std::uint64_t>(family) << 15) |
         static_cast<std::uint64_t>(step);
  return true;
}

// A builder's chunk count: `chunks` (already rounded up) capped at max(1, max_chunks), and at least 1.
inline int clamp_chunks(double chunks, int max_chunks) {
  return static_cast<int>(std::max(1.0, std::min<double>(std::max(1, max_chunks), chunks)));
}

struct Schedule {
  std::string collective;  // "all_reduce", "all_gather", "reduce_scatter"
  std::string algorithm;   // "ring"
  int nranks = 0;
  double size_bytes = 0;   // the nccl-tests "size" this schedule moves
  bool families_follow_rails = false;  // families rotate with the NIC rails: family f belongs to rail
                                       // f / families_per_rail (ring: one family per rail; tree: two)
  int families_per_rail = 1;
  // Each connection (src, dst, rail, family, lane) sends its transfers one at a time, in order (a NIC
  // queue pair, a channel's copy loop); a transfer's fixed delay and the route's latency do not hold
  // the connection, so they overlap with the previous transfer's bytes: a pipelined algorithm then
  // pays per hop delay + bytes / rate for its first chunk and bytes / rate for each later one.
  // false: up to the engine's pipeline_depth transfers in flight, sharing the connection (ring).
  bool fifo_connections = false;
  // > 0: no transfer moves faster than this, whatever the links allow (a copy kernel whose few thread
  // blocks, not the links, limit its remote reads: docs/custom-allreduce.md).
  double transfer_rate_cap_Bps = 0;
  // > 0: no connection (src, dst, rail, family, lane) between GPUs of different nodes moves more
  // bytes per second (on the wire) than this times the NCCL channels its records stand for
  // (Transfer::channels), its transfers in flight together: NCCL's measured kernel and protocol
  // ceilings where they lie below the links (llMaxBws, perChMax*Bws; docs/nccl-model.md "Ceilings in the engine").
  double inter_node_channel_cap_Bps = 0;
  // > 0: the same cap on the connections between GPUs of one node. A ring sets it with the
  // inter-node cap: each of its connections carries the whole stream (NCCL's Ring LL/LL128 ceilings).
  double intra_node_channel_cap_Bps = 0;
  // > 0: the same cap on the connections whose transfers have no dependencies, where a pipeline's
  // data enters (a chain's tail): a stream forwarded as it arrives pays its rate once, not per hop.
  double source_channel_cap_Bps = 0;
  // Caps every connection between GPUs at `Bps` per NCCL channel (rings and chains: each of their
  // connections carries the whole stream).
  void cap_every_connection(double Bps) { inter_node_channel_cap_Bps = intra_node_channel_cap_Bps = Bps; }
  // The cap per NCCL channel on a transfer's connection, the smallest of those above that apply
  // (0: none). `between_gpus`: both ends are ranks (not a switch); `inter_node`: on different nodes;
  // `source`: the transfer has no dependencies; `transport_cap_Bps` > 0: the connection's transport
  // caps each channel too (NCCL's SHM transport, Topology::shm_channel_Bps; the caller scales it
  // as the schedule's own caps are scaled).
  double connection_channel_cap_Bps(bool between_gpus, bool inter_node, bool source, double transport_cap_Bps = 0) const {
    double cap = !between_gpus ? 0.0 : inter_node ? inter_node_channel_cap_Bps : intra_node_channel_cap_Bps;
    auto tighten = [&cap](double c) { if (c > 0) cap = cap > 0 ? std::min(cap, c) : c; };
    if (source) tighten(source_channel_cap_Bps);
    if (between_gpus) tighten(transport_cap_Bps);
    return cap;
  }
  // GPU-initiated messaging (DeepEP's low-latency kernels) is bounded by the messages per second a GPU
  // can post. Each entry (first step, rate): the transfers of that step and later ones (up to the next
  // entry) leaving one GPU also cross that GPU's issue resource of this rate (messages/s x bytes per
  // message), shared by all of them; rate 0: none. Empty: no issue resource. Steps order the entries,
  // so that a composed workload (workloads/workload.h) keeps each operation's own rate.
  std::vector<std::pair<int, double>> gpu_issue_caps;
  // The entry of gpu_issue_caps that covers `step` (-1: none) and its rate.
  int gpu_issue_cap_index(int step) const {
    int found = -1;
    for (std::size_t k = 0; k < gpu_issue_caps.size() && gpu_issue_caps[k].first <= step; ++k)
      found = gpu_issue_caps[k].second > 0 ? static_cast<int>(k) : -1;
    return found;
  }
  // The generator guarantees that no two records share (src, dst, rail, family, step) (tested with
  // the generator). The engine then skips its own uniqueness pass over the records; when false the
  // engine checks (sim/merge.cpp, sim/symmetry.cpp).
  bool keys_unique = false;
  // Orbit representatives only (sim/ring_orbits.h): orbit_order > 1 means `transfers` holds one record
  // per orbit of the rotation group (orbit_node_shift, orbit_rail_rotation; sim/symmetry.h) of a
  // schedule of orbit_full_records records, whose invariance its generator has proven; dependencies
  // point at the representatives of the whole schedule's dependencies. The engine simulates it as it
  // would the whole schedule's quotient, without materializing the other images (docs/engine.md).
  int orbit_order = 1;
  int orbit_node_shift = 0;
  bool orbit_rail_rotation = false;
  std::size_t orbit_full_records = 0;

  // Switch endpoints, by topology vertex name: endpoint nranks + k is the vertex named switches[k]
  // (e.g. "n0.nvswitch", or "n0.nvswitch.sharp" for its reduction units). Transfers to or from a
  // switch follow the preferred graph route (routing.h route_between). Empty for GPU-only schedules.
  std::vector<std::string> switches;
  int num_endpoints() const { return nranks + static_cast<int>(switches.size()); }
  std::vector<Transfer> transfers;      // dependencies always point to earlier transfers
  std::vector<std::uint32_t> deps;
  // Whose finish time (SimResult::rank_finish_s) each record's end counts for. Empty (the default):
  // every record counts for its src and dst. Otherwise a CSR over the records: record i counts for
  // finish_ranks[finish_begin[i] .. finish_begin[i + 1]). P2P schedules that carry the cross-node
  // messages of several GPUs in one record (PXN aggregation, algorithms/p2p.h) name the messages'
  // senders and receiver there, and their NVLink legs to the relay GPU count for nobody.
  std::vector<std::uint32_t> finish_begin;
  std::vector<int> finish_ranks;
  // Calls f(rank) for each rank whose finish time record i's end counts for (see above).
  template <class F>
  void for_each_finish_rank(std::size_t i, F&& f) const {
    if (finish_begin.empty()) {
      f(transfers[i].src);
      if (transfers[i].dst != transfers[i].src) f(transfers[i].dst);
    } else {
      for (std::uint32_t k = finish_begin[i]; k < finish_begin[i + 1]; ++k) f(finish_ranks[k]);
    }
  }

  // Appends a transfer with the given dependencies and returns its index.
  std::uint32_t add(Transfer t, const std::vector<std::uint32_t>& depends_on);
  std::uint32_t add(Transfer t, const std::uint32_t* depends_on, std::uint32_t count);
  const std::uint32_t* deps_of(const Transfer& t) const { return deps.data() + t.dep_begin; }

  // The same schedule for another size: every byte count scaled by new_size / size_bytes
  // (schedules of ring/tree algorithms are linear in the size).
  Schedule scaled_to(double new_size_bytes) const;

  // Bytes leaving each endpoint (GPU ranks, then switches), for checks and reports.
  std::vector<double> bytes_sent_per_rank() const;
  // Bytes arriving at each endpoint (GPU ranks, then switches).
  std::vector<double> bytes_received_per_rank() const;

  // One line per transfer: "#id step family src->dst rail bytes delay_us ch x chunks deps=[..]".
  std::string dump() const;
};

}  // namespace ccsim
