#include "algorithms/ring.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "algorithms/collectives.h"
#include "topologies/nvlink_mesh.h"
#include "topologies/routing.h"

namespace ccsim {

int RingPlan::total_channels() const {
  int c = 0;
  for (const auto& f : families) c += f.channels;
  return c;
}

int ring_steps(const std::string& collective, int nranks) {
  const CollectiveInfo* info = find_collective(collective);
  if (info && info->ring_step_multiple > 0) return info->ring_step_multiple * (nranks - 1);
  throw std::invalid_argument("no ring schedule for collective '" + collective + "'");
}

namespace {

// Local GPU order inside one node entering at `entry` and leaving at `exit`: entry first, exit last,
// the others in index order after the entry (index order follows PCIe locality because GPUs are
// numbered switch by switch).
std::vector<int> node_order(int gpus, int entry, int exit) {
  std::vector<int> order{entry};
  for (int k = 1; k < gpus; ++k) {
    const int g = (entry + k) % gpus;
    if (g != exit) order.push_back(g);
  }
  if (exit != entry) order.push_back(exit);
  return order;
}

// The GPU other than `entry` that is closest to NIC `rail` (path class, then index).
int closest_exit(const Topology& topo, int entry, int rail) {
  const int gpus = topo.gpus_per_node();
  if (gpus == 1) return entry;
  int best = -1;
  PathClass best_class = PathClass::Net;
  for (int k = 1; k < gpus; ++k) {
    const int g = (entry + k) % gpus;
    const PathClass c = path_class(topo, topo.gpu(g), topo.nic(0, rail));
    if (best < 0 || c < best_class) {
      best = g;
      best_class = c;
    }
  }
  return best;
}

}  // namespace

std::vector<int> node_chain(const Topology& topo, int first, int last) {
  const int gpus = topo.gpus_per_node();
  if (gpus > 2 && nvlink_mesh(topo)) {
    std::vector<int> chain = last >= 0 ? nvlink_mesh_path(topo, first, last) : std::vector<int>{};
    if (chain.empty()) chain = nvlink_mesh_path(topo, first, -1);
    if (!chain.empty()) return chain;
  }
  return node_order(gpus, first, last >= 0 ? last : (first + gpus - 1) % gpus);
}

RingPlan plan_rings(const Topology& topo, int channels) {
  RingPlan plan;
  const int gpus = topo.gpus_per_node();
  const int nodes = topo.num_nodes();
  if (nodes == 1 && gpus > 2 && nvlink_mesh(topo)) {
    // GPUs joined pair by pair: one family per ring the pairs hold (each ring one channel per
    // link unit), the channels spread over them.
    const std::vector<std::vector<int>> rings = nvlink_mesh_rings(topo, 1.0, std::max(1, channels));
    const int count = static_cast<int>(rings.size());
    for (int i = 0; i < count; ++i) {
      RingFamily f;
      f.order = rings[static_cast<std::size_t>(i)];
      f.channels = std::max(1, channels / count + (i < channels % count ? 1 : 0));
      plan.families.push_back(f);
    }
    if (!plan.families.empty()) return plan;
    // Pairs that hold no ring (bridged pairs): one ring over the joined pairs where it can, PCIe between.
    RingFamily f;
    f.order = nvlink_mixed_ring(topo);
    f.channels = std::max(1, channels);
    if (!f.order.empty()) {
      plan.families.push_back(f);
      return plan;
    }
  }
  if (nodes == 1) {
    RingFamily f;
    f.order = node_order(gpus, 0, gpus - 1);
    f.channels = std::max(1, channels);
    plan.families.push_back(f);
    return plan;
  }
  const int rails = topo.nics_per_node();
  if (rails <= 0) throw std::invalid_argument("multi-node ring needs at least one NIC per node");
  const int per_family = std::max(1, channels / rails);
  for (int rail = 0; rail < rails; ++rail) {
    int entry = first_gpu_on_rail(topo, rail);
    if (entry < 0) entry = rail % gpus;
    // With NVLink the exit GPU reaches the rail's NIC through PXN (NVLink to the NIC's own GPU), so
    // any exit works: take the GPU before the entry, which keeps the families rotations of each
    // other. Without NVLink, and on GPUs joined pair by pair (no PXN between unjoined GPUs), the exit
    // should sit close to the NIC.
    const bool pxn = !(gpus > 2 && nvlink_mesh(topo)) && (topo.has_nvswitch || topo.nvlinks_per_gpu > 0);
    const int exit = pxn ? (entry + gpus - 1) % gpus : closest_exit(topo, entry, rail);
    const std::vector<int> local = node_chain(topo, entry, exit);
    RingFamily f;
    f.rail = rail;
    f.channels = per_family;
    for (int node = 0; node < nodes; ++node)
      for (int g : local) f.order.push_back(node * gpus + g);
    plan.families.push_back(f);
  }
  return plan;
}


RingLayout ring_layout(const Topology& topo, const RingPlan& plan, const std::string& collective, double size_bytes,
                       const RingScheduleOptions& options) {
  RingLayout L;
  const int n = topo.num_gpus();
  if (n < 2) return L;
  L.steps = ring_steps(collective, n);
  const int families = static_cast<int>(plan.families.size());
  const int gpn = topo.gpus_per_node();
  // Per family and position: hop rail and fixed delay, computed once.
  L.hops.resize(static_cast<std::size_t>(families));
  for (int f = 0; f < families; ++f) {
    const auto& fam = plan.families[f];
    if (static_cast<int>(fam.order.size()) != n) throw std::invalid_argument("ring order does not cover all ranks");
    for (int p = 0; p < n; ++p) {
      const int src = fam.order[p];
      const int dst = fam.order[(p + 1) % n];
      const int rail = (src / gpn != dst / gpn) ? fam.rail : -1;
      L.hops[f].push_back({src, dst, rail, step_software_delay_s(topo, options.timing, src, dst, rail)});
    }
  }
  // Every step moves one block of S/n, split evenly over the families, then over channels and chunks.
  // The protocol's flags travel with the data: LL doubles the bytes on the wire, LL128 adds 1/15.
  L.block_per_family = size_bytes / n / families * options.wire_factor;
  // NCCL moves each channel's share of a step in chunks of kSimpleChunkBytes.
  L.chunks_per_channel.resize(static_cast<std::size_t>(families));
  for (int f = 0; f < families; ++f)
    L.chunks_per_channel[f] = std::max(
        1, static_cast<int>(std::ceil(L.block_per_family / plan.families[f].channels / kSimpleChunkBytes)));
  // One record per (src, dst, rail, family, step) unless expanded: every family order is a
  // permutation of the ranks, so a source appears once per family and step.
  for (const auto& fam : plan.families) {
    std::vector<bool> seen(static_cast<std::size_t>(n), false);
    for (int r : fam.order) {
      if (r < 0 || r >= n || seen[static_cast<std::size_t>(r)]) throw std::invalid_argument("ring order is not a permutation of the ranks");
      seen[static_cast<std::size_t>(r)] = true;
    }
  }
  return L;
}

int ring_pieces(const RingLayout& layout, const RingPlan& plan, const RingScheduleOptions& options, int family) {
  return options.expand_channels_and_chunks ? plan.families[family].channels * layout.chunks_per_channel[family] : 1;
}

Transfer ring_record(const RingLayout& layout, const RingPlan& plan, const RingScheduleOptions& options, int family,
                     int position, int step, int piece) {
  const RingLayout::Hop& hop = layout.hops[family][position];
  const bool expand = options.expand_channels_and_chunks;
  const int pieces = ring_pieces(layout, plan, options, family);
  Transfer t;
  t.src = hop.src;
  t.dst = hop.dst;
  t.rail = hop.rail;
  t.bytes = layout.block_per_family / pieces;
  t.delay_s = hop.delay_s + (step == 0 ? options.timing.launch_s : 0.0);
  t.step = step;
  t.family = family;
  t.lane = piece;
  t.channels = expand ? 1 : plan.families[family].channels;
  t.chunks = expand ? 1 : layout.chunks_per_channel[family];
  return t;
}

double ring_channel_cap_Bps(const NcclTopoSummary& summary, const RingPlan& plan, Proto p, double size_bytes) {
  return nccl_busbw_ceiling_GBps(summary, Func::AllReduce, Algo::Ring, p, size_bytes) * 1e9 / std::max(1, plan.total_channels());
}

double net_ring_channels_bound_Bps(const Topology& topo, const NcclTopoSummary& summary, double size_bytes) {
  if (topo.num_nodes() < 2 || topo.net_ring_channel_Bps <= 0) return 0;
  // NCCL's running channels: NCCL_MIN_CTAS and the like raise them, small operations run fewer.
  return topo.net_ring_channel_Bps * nccl_running_channels(summary, Algo::Ring, Proto::Simple, size_bytes);
}

double ring_replay_channel_cap_Bps(const Topology& topo, const NcclTopoSummary& summary, const RingPlan& plan, Proto p,
                                   double size_bytes) {
  const double cap = ring_channel_cap_Bps(summary, plan, p, size_bytes);
  const double bound = p == Proto::Simple ? net_ring_channels_bound_Bps(topo, summary, size_bytes) : 0.0;
  if (bound <= 0) return cap;
  // Spread over the plan's channels: each stands for that share of NCCL's.
  const double block = bound / std::max(1, plan.total_channels());
  return cap > 0 ? std::min(cap, block) : block;
}

void set_ring_schedule_caps(Schedule& s, const RingScheduleOptions& options) {
  s.cap_every_connection(options.channel_rate_cap_Bps * options.wire_factor);
}

Schedule ring_schedule(const Topology& topo, const RingPlan& plan, const std::string& collective, double size_bytes,
                       const RingScheduleOptions& options) {
  Schedule s;
  set_ring_schedule_caps(s, options);
  s.collective = collective;
  s.algorithm = "ring";
  s.nranks = topo.num_gpus();
  s.size_bytes = size_bytes;
  s.families_follow_rails = topo.num_nodes() > 1;
  const int n = s.nranks;
  if (n < 2) return s;
  const RingLayout layout = ring_layout(topo, plan, collective, size_bytes, options);
  const int steps = layout.steps;
  const int families = static_cast<int>(plan.families.size());
  s.keys_unique = !options.expand_channels_and_chunks;
  std::size_t records = 0;
  for (int f = 0; f < families; ++f)
    records += static_cast<std::size_t>(n) * static_cast<std::size_t>(ring_pieces(layout, plan, options, f));
  s.transfers.reserve(records * static_cast<std::size_t>(steps));
  s.deps.reserve(records * static_cast<std::size_t>(steps));
  std::vector<std::vector<std::uint32_t>> previous(families), current(families);
  for (int step = 0; step < steps; ++step) {
    for (int f = 0; f < families; ++f) {
      const int pieces = ring_pieces(layout, plan, options, f);
      current[f].assign(static_cast<std::size_t>(n) * pieces, 0);
      for (int p = 0; p < n; ++p) {
        for (int piece = 0; piece < pieces; ++piece) {
          const Transfer t = ring_record(layout, plan, options, f, p, step, piece);
          const std::uint32_t dep =
              step > 0 ? previous[f][static_cast<std::size_t>((p + n - 1) % n) * pieces + piece] : 0;
          current[f][static_cast<std::size_t>(p) * pieces + piece] = s.add(t, &dep, step > 0 ? 1 : 0);
        }
      }
    }
    std::swap(previous, current);
  }
  return s;
}

int default_ring_channels(const Topology& topo) {
  // GPUs joined pair by pair: every ring the pairs hold, doubled as NCCL doubles its ring channels
  // for collectives (the rings run in parallel over different links; through an NVSwitch one
  // family carries them all).
  if (topo.num_nodes() == 1 && topo.gpus_per_node() > 2 && nvlink_mesh(topo))
    return 2 * std::max<int>(1, static_cast<int>(nvlink_mesh_rings(topo, 1.0, kNcclMaxChannels / 2).size()));
  return 2 * std::max(1, topo.num_nodes() > 1 ? topo.nics_per_node() : 1);
}

}  // namespace ccsim
