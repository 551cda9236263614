#include "sim/symmetry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <tuple>

#include "algorithms/endpoint_route.h"
#include "common/flat_hash.h"
#include "topologies/routing.h"

namespace ccsim {

namespace {

int mod(int a, int m) { return ((a % m) + m) % m; }

int leaf_groups(const Topology& topo) {
  const int npl = std::max(1, topo.nodes_per_leaf());
  return (topo.num_nodes() + npl - 1) / npl;
}

// Smallest node rotation the fabric allows: 1 with one leaf group, the group size with several
// equal groups; 0 when none (a partial last group) or a single node.
int node_shift_candidate(const Topology& topo) {
  const int nodes = topo.num_nodes();
  if (nodes <= 1) return 0;
  if (leaf_groups(topo) == 1) return 1;
  if (nodes % topo.nodes_per_leaf() != 0) return 0;
  return topo.nodes_per_leaf() < nodes ? topo.nodes_per_leaf() : 0;
}

// Per-node PCIe switches rotate with the GPUs only when there is exactly one per GPU.
bool one_pcie_switch_per_gpu(const Topology& topo) {
  VertexId v;
  const int g = topo.gpus_per_node();
  return topo.find_vertex(VertexKind::PcieSwitch, 0, g - 1, -1, &v) && !topo.find_vertex(VertexKind::PcieSwitch, 0, g, -1, &v);
}

// The endpoint whose local index decides a link's rail-rotation class: GPU, then NIC, then PCIe
// switch, then leaf. Every link has at most one endpoint of its highest-priority kind.
int local_anchor(const Topology& topo, VertexId a, VertexId b) {
  static const VertexKind order[] = {VertexKind::Gpu, VertexKind::Nic, VertexKind::PcieSwitch, VertexKind::LeafSwitch};
  for (VertexKind k : order)
    for (VertexId v : {a, b})
      if (topo.vertex(v).kind == k) return topo.vertex(v).index;
  return -1;
}

int node_anchor(const Topology& topo, VertexId a, VertexId b) {
  int anchor = -1;
  for (VertexId v : {a, b}) {
    const Vertex& x = topo.vertex(v);
    int n = x.node;
    if (n < 0 && x.kind == VertexKind::LeafSwitch && leaf_groups(topo) > 1) n = x.group * topo.nodes_per_leaf();
    if (n >= 0 && (anchor < 0 || n < anchor)) anchor = n;
  }
  return anchor;
}

// Distances between a record and its image that hit recently, most recent first.
using Offsets = std::vector<std::int64_t>;
constexpr std::size_t kMaxOffsets = 16;
constexpr std::int64_t kScanWindow = 1 << 15;

struct Endpoints {
  VertexId from, to;
};

Endpoints endpoints(const Topology& topo, const Hop& h) {
  const Graph& g = topo.graph();
  const VertexId s = boost::source(h.edge, g), t = boost::target(h.edge, g);
  return h.forward ? Endpoints{s, t} : Endpoints{t, s};
}

// Image of a traversal; false if an endpoint or the edge has no image.
bool rotate_hop(const Topology& topo, const Hop& h, Rotation r, Hop* out) {
  const Endpoints e = endpoints(topo, h);
  VertexId a, b;
  if (!rotate_vertex(topo, e.from, r, &a) || !rotate_vertex(topo, e.to, r, &b)) return false;
  const auto [edge, found] = boost::edge(a, b, topo.graph());
  if (!found) return false;
  *out = Hop{edge, a < b};  // edges are stored from the lower to the higher vertex id
  return true;
}

struct Context {
  const Topology& topo;
  const Schedule& schedule;
  int n, gpn, rails, families;
  std::vector<VertexId> switch_vertex;      // per switch endpoint (Schedule::switches), its vertex
  std::vector<int> endpoint_of_vertex;      // per topology vertex: its switch endpoint, or -1

  Context(const Topology& t, const Schedule& s)
      : topo(t), schedule(s), n(s.nranks), gpn(t.gpus_per_node()), rails(std::max(1, t.nics_per_node())),
        families(1) {
    for (const auto& tr : s.transfers) families = std::max(families, tr.family + 1);
    if (!s.switches.empty()) endpoint_of_vertex.assign(boost::num_vertices(t.graph()), -1);
    for (int k = 0; k < static_cast<int>(s.switches.size()); ++k) {
      switch_vertex.push_back(endpoint_vertex(t, s, s.nranks + k));
      endpoint_of_vertex[switch_vertex.back()] = s.nranks + k;
    }
  }

  // Builds the key -> record index; false when two records share a key (images could not be told
  // apart). Schedules whose generator guarantees unique keys never need it unless a probe misses.
  bool build_index() const {
    index_ = std::make_unique<FlatKeyMap>(schedule.transfers.size());
    for (std::uint32_t i = 0; i < schedule.transfers.size(); ++i) {
      const auto& t = schedule.transfers[i];
      std::uint64_t key;
      if (!pack_transfer_key(t.src, t.dst, t.rail, t.family, t.step, &key) || !index_->insert(key, i)) return false;
    }
    return true;
  }

  // Image of an endpoint: a GPU rank, or a switch endpoint (the switch endpoint of the rotated
  // vertex; -1 when the schedule has none).
  int rotate_rank(int rank, Rotation r) const {
    if (rank >= n) {
      VertexId image;
      if (!rotate_vertex(topo, switch_vertex[static_cast<std::size_t>(rank - n)], r, &image)) return -1;
      return endpoint_of_vertex[image];
    }
    const int node = rank / gpn, g = rank % gpn;
    return mod(node + r.nodes, topo.num_nodes()) * gpn + mod(g + r.local, gpn);
  }

  bool image_key(const Transfer& t, Rotation r, std::uint64_t* key) const {
    const int rail = t.rail >= 0 ? mod(t.rail + r.local, rails) : -1;
    const int family =
        schedule.families_follow_rails ? mod(t.family + r.local * schedule.families_per_rail, families) : t.family;
    return pack_transfer_key(rotate_rank(t.src, r), rotate_rank(t.dst, r), rail, family, t.step, key);
  }

  // The record with the image key of record `id`. Generated schedules list rotated records at a few
  // constant distances, so the distances that hit recently are tried first (sequential, cheap),
  // then a window around the record; the hash index (whose random accesses over millions of records
  // dominate) is built only when both miss. Keys must be unique (Schedule::keys_unique or a successful build_index()).
  bool image_near(std::uint32_t id, Rotation r, Offsets* offsets, std::uint32_t* out) const {
    std::uint64_t key;
    if (!image_key(schedule.transfers[id], r, &key)) return false;
    const auto size = static_cast<std::int64_t>(schedule.transfers.size());
    for (std::size_t k = 0; k < offsets->size(); ++k) {
      const std::int64_t guess = static_cast<std::int64_t>(id) + (*offsets)[k];
      if (guess < 0 || guess >= size) continue;
      const Transfer& g = schedule.transfers[static_cast<std::size_t>(guess)];
      std::uint64_t gkey;
      if (pack_transfer_key(g.src, g.dst, g.rail, g.family, g.step, &gkey) && gkey == key) {
        std::rotate(offsets->begin(), offsets->begin() + static_cast<std::ptrdiff_t>(k),
                    offsets->begin() + static_cast<std::ptrdiff_t>(k) + 1);  // most recent first
        *out = static_cast<std::uint32_t>(guess);
        return true;
      }
    }
    if (!index_ && !scan_near(id, key, out)) {
      if (!build_index()) return false;
    }
    if (index_ && !index_->find(key, out)) return false;
    if (offsets->size() < kMaxOffsets) offsets->push_back(0);
    std::rotate(offsets->begin(), offsets->end() - 1, offsets->end());
    offsets->front() = static_cast<std::int64_t>(*out) - static_cast<std::int64_t>(id);
    return true;
  }

  mutable long scans = 0;  // scan_near calls, reported under CCSIM_PROFILE
  bool index_built() const { return index_ != nullptr; }

  // Looks for `key` among the records within kScanWindow of `id` (images of a rotation stay in the
  // same step, and generators emit a step's records together); false when not there.
  bool scan_near(std::uint32_t id, std::uint64_t key, std::uint32_t* out) const {
    ++scans;
    const auto size = static_cast<std::int64_t>(schedule.transfers.size());
    for (std::int64_t d = 1; d <= kScanWindow; ++d)
      for (std::int64_t guess : {static_cast<std::int64_t>(id) + d, static_cast<std::int64_t>(id) - d}) {
        if (guess < 0 || guess >= size) continue;
        const Transfer& g = schedule.transfers[static_cast<std::size_t>(guess)];
        std::uint64_t gkey;
        if (pack_transfer_key(g.src, g.dst, g.rail, g.family, g.step, &gkey) && gkey == key) {
          *out = static_cast<std::uint32_t>(guess);
          return true;
        }
      }
    return false;
  }

 private:
  mutable std::unique_ptr<FlatKeyMap> index_;
};

// The schedule maps onto itself under r: images exist with equal bytes and delay, and dependencies
// map onto dependencies. With unique keys, sigma (record -> record with the image key) is
// injective because the rotation is injective on keys, so it is a permutation of the records.
bool schedule_invariant(const Context& c, Rotation r, std::vector<std::uint32_t>* sigma_out) {
  const Schedule& s = c.schedule;
  const auto count = static_cast<std::uint32_t>(s.transfers.size());
  std::vector<std::uint32_t>& sigma = *sigma_out;
  sigma.resize(count);
  Offsets offset;
  for (std::uint32_t i = 0; i < count; ++i)
    if (!c.image_near(i, r, &offset, &sigma[i])) return false;
  std::vector<std::uint32_t> rotated, expected;
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto& t = s.transfers[i];
    const auto& u = s.transfers[sigma[i]];
    if (u.dep_count != t.dep_count || u.delay_s != t.delay_s ||
        std::fabs(u.bytes - t.bytes) > 1e-12 * std::max(1.0, std::fabs(t.bytes)))
      return false;
    if (t.dep_count == 1) {  // the common case, without the sort
      if (sigma[s.deps_of(t)[0]] != s.deps_of(u)[0]) return false;
      continue;
    }
    rotated.clear();
    for (std::uint32_t k = 0; k < t.dep_count; ++k) rotated.push_back(sigma[s.deps_of(t)[k]]);
    expected.assign(s.deps_of(u), s.deps_of(u) + u.dep_count);
    std::sort(rotated.begin(), rotated.end());
    std::sort(expected.begin(), expected.end());
    if (rotated != expected) return false;
  }
  return true;
}

// An upper bound on the distinct (src, dst, rail) of a schedule, to size a small, cache-friendly
// table: ranks x (rails + 1) destinations per source would be the most any collective here uses;
// when a schedule has more, the table is sized by its records instead.
std::size_t distinct_connections(const Schedule& s) {
  const std::size_t bound = static_cast<std::size_t>(s.nranks) * 64;
  return std::min(bound, s.transfers.size());
}

// Routes of every distinct (src, dst, rail) in the schedule, computed once for all rotations.
class RouteCache {
 public:
  explicit RouteCache(const Context& c) : topo_(c.topo), schedule_(c.schedule), index_(distinct_connections(c.schedule)) {
    std::uint64_t last = ~0ull;
    for (std::uint32_t i = 0; i < c.schedule.transfers.size(); ++i) {
      const auto& t = c.schedule.transfers[i];
      std::uint64_t key;
      if (!pack_transfer_key(t.src, t.dst, t.rail, 0, 0, &key)) {
        ok_ = false;
        return;
      }
      if (key == last) continue;
      last = key;
      if (index_.insert(key, static_cast<std::uint32_t>(routes_.size()))) {
        keys_.push_back({t.src, t.dst, t.rail});
        routes_.push_back(transfer_route(topo_, schedule_, t.src, t.dst, t.rail));
      }
    }
  }
  bool ok() const { return ok_; }
  std::size_t size() const { return routes_.size(); }
  const Route& route(std::size_t i) const { return routes_[i]; }
  const std::tuple<int, int, int>& key(std::size_t i) const { return keys_[i]; }
  // The route of (src, dst, rail): cached when the schedule has it, else computed.
  Route find(int src, int dst, int rail) const {
    std::uint64_t key;
    std::uint32_t i;
    if (pack_transfer_key(src, dst, rail, 0, 0, &key) && index_.find(key, &i)) return routes_[i];
    return transfer_route(topo_, schedule_, src, dst, rail);
  }

 private:
  const Topology& topo_;
  const Schedule& schedule_;
  FlatKeyMap index_;
  std::vector<std::tuple<int, int, int>> keys_;
  std::vector<Route> routes_;
  bool ok_ = true;
};

// A link between a switch and its reduction units (both fixed by the rail rotation).
bool fixed_switch_link(const Topology& topo, const Hop& h) {
  const Endpoints e = endpoints(topo, h);
  const auto fixed = [&](VertexId v) {
    const VertexKind k = topo.vertex(v).kind;
    return k == VertexKind::NvSwitch || k == VertexKind::Reducer;
  };
  return fixed(e.from) && fixed(e.to);
}

// `route` maps under r onto `image`, link for link, onto links of the same kind, bandwidth and
// latency, and r moves every link it uses except those between a switch and its reduction units.
bool route_maps_onto(const Topology& topo, const Route& route, const Route& image, Rotation r) {
  if (route.size() != image.size()) return false;
  for (std::size_t h = 0; h < route.size(); ++h) {
    Hop mapped;
    if (!rotate_hop(topo, route[h], r, &mapped)) return false;
    if (mapped.edge != image[h].edge || mapped.forward != image[h].forward) return false;
    if (mapped.edge == route[h].edge && !fixed_switch_link(topo, route[h])) return false;
    if (!same_link_properties(topo.link(route[h].edge), topo.link(mapped.edge))) return false;
  }
  return true;
}

// Every route maps onto the route of the image transfer, link for link, onto links with the same
// bandwidth and latency. A used link fixed by r is allowed only at a switch that the rotation fixes
// (an NVSwitch's reduction link): the engine gives its folded copy the capacity share of its orbit
// (link_orbit_size); every other used link must move (the action is free on them).
bool routes_invariant(const Context& c, const RouteCache& cache, Rotation r) {
  const Topology& topo = c.topo;
  if (!cache.ok()) return false;
  for (std::size_t i = 0; i < cache.size(); ++i) {
    const auto& [src, dst, rail] = cache.key(i);
    const Route& route = cache.route(i);
    const int image_rail = rail >= 0 ? mod(rail + r.local, c.rails) : -1;
    const int image_src = c.rotate_rank(src, r), image_dst = c.rotate_rank(dst, r);
    if (image_src < 0 || image_dst < 0) return false;
    const Route image = cache.find(image_src, image_dst, image_rail);
    if (!route_maps_onto(topo, route, image, r)) return false;
  }
  return true;
}

}  // namespace

bool rotate_vertex(const Topology& topo, VertexId v, Rotation r, VertexId* out) {
  const Vertex& x = topo.vertex(v);
  int node = x.node, group = x.group, index = x.index;
  if (r.nodes != 0) {
    if (x.node >= 0) {
      node = mod(x.node + r.nodes, topo.num_nodes());
    } else if (x.kind == VertexKind::LeafSwitch && leaf_groups(topo) > 1) {
      if (r.nodes % topo.nodes_per_leaf() != 0) return false;
      group = mod(x.group + r.nodes / topo.nodes_per_leaf(), leaf_groups(topo));
    }
  }
  if (r.local != 0) {
    const int gpn = topo.gpus_per_node();
    switch (x.kind) {
      case VertexKind::Gpu: index = mod(index + r.local, gpn); break;
      case VertexKind::Nic:
      case VertexKind::LeafSwitch:
        if (topo.nics_per_node() != gpn) return false;
        index = mod(index + r.local, gpn);
        break;
      case VertexKind::PcieSwitch:
        if (!one_pcie_switch_per_gpu(topo)) return false;
        index = mod(index + r.local, gpn);
        break;
      case VertexKind::NvSwitch:
      case VertexKind::Reducer:
      case VertexKind::SpineSwitch: break;
      default: return false;  // CPU sockets and host memory do not rotate with the GPUs
    }
  }
  return topo.find_vertex(x.kind, node, index, group, out);
}

Hop canonical_hop(const Topology& topo, const Hop& hop, const Quotient& q) {
  const Endpoints e = endpoints(topo, hop);
  Rotation r;
  if (q.node_shift > 0) {
    const int anchor = node_anchor(topo, e.from, e.to);
    if (anchor >= 0) r.nodes = -(anchor / q.node_shift) * q.node_shift;
  }
  if (q.rail_rotation) {
    const int anchor = local_anchor(topo, e.from, e.to);
    if (anchor >= 0) r.local = -anchor;
  }
  if (r.nodes == 0 && r.local == 0) return hop;
  Hop out;
  return rotate_hop(topo, hop, r, &out) ? out : hop;
}

int link_orbit_size(const Topology& topo, const Hop& hop, const Quotient& q) {
  std::vector<std::pair<EdgeId, bool>> images;
  const int node_steps = q.node_shift > 0 ? topo.num_nodes() / q.node_shift : 1;
  const int local_steps = q.rail_rotation ? topo.gpus_per_node() : 1;
  for (int m = 0; m < node_steps; ++m)
    for (int l = 0; l < local_steps; ++l) {
      Hop image;
      if (!rotate_hop(topo, hop, Rotation{m * q.node_shift, l}, &image)) continue;
      const std::pair<EdgeId, bool> key{image.edge, image.forward};
      if (std::find(images.begin(), images.end(), key) == images.end()) images.push_back(key);
    }
  return std::max<int>(1, static_cast<int>(images.size()));
}

Quotient identity_quotient(const Schedule& schedule) {
  Quotient q;
  const auto n = static_cast<std::uint32_t>(schedule.transfers.size());
  q.rep_of.resize(n);
  q.reps.resize(n);
  for (std::uint32_t i = 0; i < n; ++i) q.rep_of[i] = q.reps[i] = i;
  return q;
}

int fabric_node_shift(const Topology& topo) { return node_shift_candidate(topo); }

bool fabric_rail_rotation(const Topology& topo) {
  const int gpn = topo.gpus_per_node();
  return gpn > 1 && (topo.nics_per_node() == gpn || topo.num_nodes() == 1);
}

int rotate_gpu_rank(const Topology& topo, int rank, Rotation r) {
  const int gpn = topo.gpus_per_node();
  return mod(rank / gpn + r.nodes, topo.num_nodes()) * gpn + mod(rank % gpn + r.local, gpn);
}

bool gpu_route_invariant(const Topology& topo, int src, int dst, int rail, Rotation r) {
  const int rails = std::max(1, topo.nics_per_node());
  const int image_rail = rail >= 0 ? mod(rail + r.local, rails) : rail;
  if (rail < -1) return false;  // kRailOwnNics: not used by the generators that call this
  return route_maps_onto(topo, route_between_gpus(topo, src, dst, rail),
                         route_between_gpus(topo, rotate_gpu_rank(topo, src, r), rotate_gpu_rank(topo, dst, r), image_rail), r);
}

VertexRotation::VertexRotation(const Topology& topo, Rotation r) : topo_(&topo) {
  const std::size_t n = topo.num_vertices();
  image_.resize(n);
  has_image_.assign(n, 0);
  for (std::size_t v = 0; v < n; ++v) has_image_[v] = rotate_vertex(topo, static_cast<VertexId>(v), r, &image_[v]) ? 1 : 0;
}

bool VertexRotation::maps_onto(const Route& route, const Route& image) const {
  if (route.size() != image.size()) return false;
  for (std::size_t h = 0; h < route.size(); ++h) {
    const Endpoints e = endpoints(*topo_, route[h]), f = endpoints(*topo_, image[h]);
    if (!has_image_[e.from] || !has_image_[e.to]) return false;
    // Edges are one per vertex pair, so the image hop is the rotated one when its ends are.
    if (image_[e.from] != f.from || image_[e.to] != f.to) return false;
    const bool fixed = (f.from == e.from && f.to == e.to) || (f.from == e.to && f.to == e.from);
    if (fixed && !fixed_switch_link(*topo_, route[h])) return false;
    if (!same_link_properties(topo_->link(route[h].edge), topo_->link(image[h].edge))) return false;
  }
  return true;
}

Quotient orbit_quotient(const Schedule& schedule) {
  Quotient q = identity_quotient(schedule);
  q.node_shift = schedule.orbit_node_shift;
  q.rail_rotation = schedule.orbit_rail_rotation;
  q.order = schedule.orbit_order;
  return q;
}

Quotient find_quotient(const Topology& topo, const Schedule& schedule) {
  if (schedule.transfers.empty() || schedule.nranks != topo.num_gpus()) return identity_quotient(schedule);
  Context c(topo, schedule);
  // Records must be unique by key, or images cannot be told apart.
  if (!schedule.keys_unique && !c.build_index()) return identity_quotient(schedule);
  Quotient q;
  const RouteCache routes(c);
  const int shift = node_shift_candidate(topo);
  std::vector<std::uint32_t> node_sigma, rail_sigma;  // record -> its image under each generator
  if (shift > 0 && schedule_invariant(c, Rotation{shift, 0}, &node_sigma) && routes_invariant(c, routes, Rotation{shift, 0}))
    q.node_shift = shift;
  const int gpn = topo.gpus_per_node();
  const bool rails_match = topo.nics_per_node() == gpn || topo.num_nodes() == 1;
  if (gpn > 1 && rails_match && (!schedule.families_follow_rails || c.families == topo.nics_per_node() * schedule.families_per_rail) &&
      schedule_invariant(c, Rotation{0, 1}, &rail_sigma) && routes_invariant(c, routes, Rotation{0, 1}))
    q.rail_rotation = true;
  if (q.node_shift == 0 && !q.rail_rotation) return identity_quotient(schedule);
  q.order = (q.node_shift > 0 ? topo.num_nodes() / q.node_shift : 1) * (q.rail_rotation ? gpn : 1);

  // Representative: the image whose source (its destination when the source is a switch, which the
  // rotations fix or move with its node) is in nodes [0, shift) with local index 0 (if rails rotate);
  // every record must be reached exactly once.
  const auto count = static_cast<std::uint32_t>(schedule.transfers.size());
  std::vector<std::uint32_t> reps;
  for (std::uint32_t i = 0; i < count; ++i) {
    const Transfer& t = schedule.transfers[i];
    const int anchor = t.src < schedule.nranks ? t.src : t.dst;
    if (anchor >= schedule.nranks) return identity_quotient(schedule);  // switch to switch: fixed by every rotation
    if ((q.node_shift == 0 || (anchor / gpn) < q.node_shift) && (!q.rail_rotation || anchor % gpn == 0)) reps.push_back(i);
  }
  constexpr std::uint32_t kUnassigned = ~0u;
  q.rep_of.assign(count, kUnassigned);
  const int node_steps = q.node_shift > 0 ? topo.num_nodes() / q.node_shift : 1;
  const int local_steps = q.rail_rotation ? gpn : 1;
  std::size_t assigned = 0;
  // The orbit of a representative, by walking the generators' permutations (verified above).
  for (std::uint32_t r : reps) {
    std::uint32_t x = r;
    for (int m = 0; m < node_steps; ++m) {
      std::uint32_t y = x;
      for (int l = 0; l < local_steps; ++l) {
        if (q.rep_of[y] != kUnassigned) return identity_quotient(schedule);  // not a free action after all
        q.rep_of[y] = r;
        ++assigned;
        if (q.rail_rotation) y = rail_sigma[y];
      }
      if (q.node_shift > 0) x = node_sigma[x];
    }
  }
  if (assigned != count) return identity_quotient(schedule);
  if (std::getenv("CCSIM_PROFILE"))
    std::fprintf(stderr, "[profile] symmetry: %ld window scans, record index %s\n", c.scans,
                 c.index_built() ? "built" : "not needed");
  q.reps = std::move(reps);
  return q;
}

}  // namespace ccsim
