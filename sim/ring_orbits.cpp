#include "sim/ring_orbits.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/symmetry.h"

namespace ccsim {

namespace {

int mod(int a, int m) { return ((a % m) + m) % m; }

struct RingView {
  const Topology& topo;
  const RingPlan& plan;
  const RingLayout& layout;
  int n, families, gpn, rails;
  bool families_follow_rails;
  std::vector<std::vector<int>> position;  // per family: rank -> its position in the family's order

  RingView(const Topology& t, const RingPlan& p, const RingLayout& l)
      : topo(t), plan(p), layout(l), n(t.num_gpus()), families(static_cast<int>(p.families.size())),
        gpn(t.gpus_per_node()), rails(std::max(1, t.nics_per_node())), families_follow_rails(t.num_nodes() > 1) {
    position.assign(static_cast<std::size_t>(families), std::vector<int>(static_cast<std::size_t>(n), 0));
    for (int f = 0; f < families; ++f)
      for (int q = 0; q < n; ++q) position[f][plan.families[f].order[q]] = q;
  }
  // Image family under r, as find_quotient maps it (families_per_rail is 1 for rings).
  int image_family(int f, Rotation r) const { return families_follow_rails ? mod(f + r.local, families) : f; }
};

// The whole schedule maps onto itself under r when every hop (f, p) maps onto a hop of the image
// family with the image destination and rail and the same delay, channels and chunks, at a constant
// position offset per family (then the dependency on (f, p - 1) in the previous step maps onto the
// image's), and every hop's route maps onto its image's route. Bytes are equal for every record.
bool ring_invariant(const RingView& v, Rotation r) {
  for (int f = 0; f < v.families; ++f) {
    const int f2 = v.image_family(f, r);
    if (v.plan.families[f].channels != v.plan.families[f2].channels ||
        v.layout.chunks_per_channel[f] != v.layout.chunks_per_channel[f2])
      return false;
    int offset = -1;
    for (int p = 0; p < v.n; ++p) {
      const RingLayout::Hop& h = v.layout.hops[f][p];
      const int p2 = v.position[f2][rotate_gpu_rank(v.topo, h.src, r)];
      const RingLayout::Hop& h2 = v.layout.hops[f2][p2];
      const int d = mod(p2 - p, v.n);
      if (offset < 0) offset = d;
      const int rail2 = h.rail >= 0 ? mod(h.rail + r.local, v.rails) : h.rail;
      if (d != offset || h2.dst != rotate_gpu_rank(v.topo, h.dst, r) || h2.rail != rail2 || h2.delay_s != h.delay_s)
        return false;
      if (!gpu_route_invariant(v.topo, h.src, h.dst, h.rail, r)) return false;
    }
  }
  return true;
}

}  // namespace

std::optional<Schedule> ring_orbit_schedule(const Topology& topo, const RingPlan& plan, const std::string& collective,
                                            double size_bytes, const RingScheduleOptions& options,
                                            std::size_t max_records, std::size_t* records_needed) {
  if (records_needed) *records_needed = 0;
  if (options.expand_channels_and_chunks || topo.num_gpus() < 2) return std::nullopt;
  const RingLayout layout = ring_layout(topo, plan, collective, size_bytes, options);
  const RingView v(topo, plan, layout);
  // The same generators, tried in the same order and under the same conditions, as find_quotient.
  int shift = fabric_node_shift(topo);
  if (shift > 0 && !ring_invariant(v, Rotation{shift, 0})) shift = 0;
  const bool rails_fit = !v.families_follow_rails || v.families == topo.nics_per_node();
  const bool rail_rotation = fabric_rail_rotation(topo) && rails_fit && ring_invariant(v, Rotation{0, 1});
  if (shift == 0 && !rail_rotation) return std::nullopt;

  // Representatives: the records whose source lies in nodes [0, shift) (any node without node
  // rotation) with local index 0 (any, without rail rotation), in ring_schedule's order.
  const auto representative = [&](int rank) {
    return (shift == 0 || rank / v.gpn < shift) && (!rail_rotation || rank % v.gpn == 0);
  };
  std::vector<std::vector<int>> slot(static_cast<std::size_t>(v.families), std::vector<int>(static_cast<std::size_t>(v.n), -1));
  int per_step = 0;
  for (int f = 0; f < v.families; ++f)
    for (int p = 0; p < v.n; ++p)
      if (representative(layout.hops[f][p].src)) slot[f][p] = per_step++;
  // The representative of hop (f, p)'s orbit: the rotation that brings its source to a representative one.
  std::vector<std::vector<int>> rep_slot(slot.size(), std::vector<int>(static_cast<std::size_t>(v.n), -1));
  for (int f = 0; f < v.families; ++f)
    for (int p = 0; p < v.n; ++p) {
      const int src = layout.hops[f][p].src;
      Rotation r;
      if (shift > 0) r.nodes = -(src / v.gpn / shift) * shift;
      if (rail_rotation) r.local = -(src % v.gpn);
      const int f2 = v.image_family(f, r);
      rep_slot[f][p] = slot[f2][v.position[f2][rotate_gpu_rank(topo, src, r)]];
      if (rep_slot[f][p] < 0) return std::nullopt;  // not reached: the rotation lands on a representative source
    }

  const std::size_t records = static_cast<std::size_t>(per_step) * static_cast<std::size_t>(layout.steps);
  if (records > max_records) {
    if (records_needed) *records_needed = records;
    return std::nullopt;
  }
  Schedule s;
  set_ring_schedule_caps(s, options);
  s.collective = collective;
  s.algorithm = "ring";
  s.nranks = v.n;
  s.size_bytes = size_bytes;
  s.families_follow_rails = v.families_follow_rails;
  s.keys_unique = true;
  s.orbit_node_shift = shift;
  s.orbit_rail_rotation = rail_rotation;
  s.orbit_order = (shift > 0 ? topo.num_nodes() / shift : 1) * (rail_rotation ? v.gpn : 1);
  s.orbit_full_records = static_cast<std::size_t>(v.n) * static_cast<std::size_t>(v.families) *
                         static_cast<std::size_t>(layout.steps);
  s.transfers.reserve(records);
  s.deps.reserve(records);
  for (int step = 0; step < layout.steps; ++step)
    for (int f = 0; f < v.families; ++f)
      for (int p = 0; p < v.n; ++p) {
        if (slot[f][p] < 0) continue;
        const std::uint32_t dep = step > 0 ? static_cast<std::uint32_t>((step - 1) * per_step + rep_slot[f][(p + v.n - 1) % v.n]) : 0;
        s.add(ring_record(layout, plan, options, f, p, step, 0), &dep, step > 0 ? 1 : 0);
      }
  return s;
}

Schedule ring_schedule_for_engine(const Topology& topo, const RingPlan& plan, const std::string& collective,
                                  double size_bytes, const RingScheduleOptions& options) {
  if (std::optional<Schedule> s = ring_orbit_schedule(topo, plan, collective, size_bytes, options)) return std::move(*s);
  return ring_schedule(topo, plan, collective, size_bytes, options);
}

}  // namespace ccsim
