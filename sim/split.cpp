#include "sim/split.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "algorithms/endpoint_route.h"
#include "topologies/routing.h"

namespace ccsim {
namespace {

SplitStats g_stats;

struct UnionFind {
  std::vector<std::uint32_t> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  std::uint32_t find(std::uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void unite(std::uint32_t a, std::uint32_t b) {
    a = find(a), b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

// The engine's route identity (sim/engine.cpp run_in_this_process): records of one route share the
// route's fixed delay, the minimum of their delays.
using RouteKey = std::tuple<int, int, int, int, int, bool, int>;
RouteKey route_key(const Topology& topo, const Schedule& s, const Transfer& t) {
  const int gpn = topo.gpus_per_node();
  const bool between_gpus = t.src < s.nranks && t.dst < s.nranks;
  const bool source = t.dep_count == 0 && s.source_channel_cap_Bps > 0;
  const double shm = between_gpus ? nccl_shm_channel_Bps(topo, t.src, t.dst) : 0.0;
  const bool capped = s.connection_channel_cap_Bps(between_gpus, between_gpus && t.src / gpn != t.dst / gpn, source, shm) > 0;
  const int issue = t.src < s.nranks ? s.gpu_issue_cap_index(t.step) : -1;
  return {t.src, t.dst, t.rail, capped ? t.family : -1, capped ? t.lane : -1, source, issue};
}

// True when every record i < c precedes marker c and every record i > c follows it.
bool is_cut(const Schedule& s, std::size_t c) {
  if (c >= s.transfers.size() || !s.transfers[c].is_marker()) return false;
  std::vector<char> before(c + 1, 0);
  before[c] = 1;
  std::size_t count = 0;
  for (std::size_t i = c + 1; i-- > 0;) {
    if (!before[i]) return false;  // an earlier record that c does not wait for
    ++count;
    const Transfer& t = s.transfers[i];
    for (std::uint32_t k = 0; k < t.dep_count; ++k) before[s.deps_of(t)[k]] = 1;
  }
  std::vector<char> after(s.transfers.size(), 0);
  after[c] = 1;
  for (std::size_t i = c + 1; i < s.transfers.size(); ++i) {
    const Transfer& t = s.transfers[i];
    for (std::uint32_t k = 0; k < t.dep_count && !after[i]; ++k) after[i] = after[s.deps_of(t)[k]];
    if (!after[i]) return false;
  }
  return count == c + 1;
}

}  // namespace

SplitStats last_split_stats() { return g_stats; }

SimResult simulate_split(const Topology& topo, const Schedule& s, EngineOptions options,
                         const std::vector<std::size_t>& cut_candidates) {
  options.exploit_symmetry = false;
  options.merge_identical = false;
  options.record_transfers = true;
  g_stats = {};
  const std::size_t n = s.transfers.size();
  const auto whole = [&] {
    g_stats = {1, 1, n};
    return simulate_one(topo, s, options);
  };
  if (n == 0) return whole();

  // Time segments between verified cuts.
  std::vector<std::size_t> cuts;
  for (std::size_t c : cut_candidates)
    if ((cuts.empty() || c > cuts.back()) && is_cut(s, c)) cuts.push_back(c);
  std::vector<int> segment(n, -1);  // -1: a cut
  {
    int seg = 0;
    std::size_t next = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (next < cuts.size() && i == cuts[next]) {
        ++next, ++seg;
        continue;
      }
      segment[i] = seg;
    }
  }

  // Groups: records that cross a common constraint, or that wait (through markers) for one another.
  UnionFind uf(n);
  std::map<std::tuple<int, std::size_t, std::size_t, int>, std::uint32_t> owner;  // constraint -> a record
  const auto claim = [&](std::tuple<int, std::size_t, std::size_t, int> key, std::uint32_t i) {
    const auto [it, fresh] = owner.emplace(key, i);
    if (!fresh) uf.unite(i, it->second);
  };
  std::vector<std::vector<std::uint32_t>> marker_groups(n);  // per marker: records of its segment it waits for
  for (std::uint32_t i = 0; i < n; ++i) {
    const Transfer& t = s.transfers[i];
    if (segment[i] < 0) continue;
    const int seg = segment[i];
    if (!t.is_marker()) {
      for (const Hop& h : transfer_route(topo, s, t.src, t.dst, t.rail)) {
        const LinkDirectionKey k = link_direction_key(topo, h);
        claim({seg, k.low, k.high, k.dir}, i);
      }
      const int issue = t.src < s.nranks ? s.gpu_issue_cap_index(t.step) : -1;
      if (issue >= 0) claim({seg, static_cast<std::size_t>(t.src), static_cast<std::size_t>(issue), -1 - issue}, i);
    }
    for (std::uint32_t k = 0; k < t.dep_count; ++k) {
      const std::uint32_t d = s.deps_of(t)[k];
      if (segment[d] != seg) continue;
      if (t.is_marker()) {
        if (s.transfers[d].is_marker()) {
          for (std::uint32_t g : marker_groups[d]) marker_groups[i].push_back(g);
        } else {
          marker_groups[i].push_back(d);
        }
      } else if (s.transfers[d].is_marker()) {
        for (std::uint32_t g : marker_groups[d]) uf.unite(i, g);
      } else {
        uf.unite(i, d);
      }
    }
    if (t.is_marker() && marker_groups[i].size() > 1) {  // keep it short: one record per group
      auto& mg = marker_groups[i];
      for (auto& g : mg) g = uf.find(g);
      std::sort(mg.begin(), mg.end());
      mg.erase(std::unique(mg.begin(), mg.end()), mg.end());
    }
  }

  // Per segment and group: the records it simulates (its transfers and the markers they wait for).
  std::vector<double> start(n, 0.0), end(n, 0.0);
  std::vector<char> done(n, 0);
  SimResult out;
  out.transfers = n;
  out.flows_simulated = n;
  out.rank_finish_s.assign(static_cast<std::size_t>(s.nranks), 0.0);
  std::map<std::tuple<std::string, std::string, std::string>, LinkStat> links;
  const int segments = static_cast<int>(cuts.size()) + 1;
  g_stats.segments = static_cast<std::size_t>(segments);
  std::map<RouteKey, double> route_min;  // over the whole schedule
  for (const Transfer& t : s.transfers) {
    if (t.is_marker()) continue;
    const auto [it, fresh] = route_min.emplace(route_key(topo, s, t), t.delay_s);
    if (!fresh) it->second = std::min(it->second, t.delay_s);
  }

  // Per (src, dst, rail): the most records one of its connections carries.
  std::map<std::tuple<int, int, int, int, int>, std::size_t> lane_size;
  std::map<std::tuple<int, int, int>, std::size_t> longest_lane;
  for (const Transfer& t : s.transfers)
    if (!t.is_marker()) ++lane_size[{t.src, t.dst, t.rail, t.family, t.lane}];
  for (const auto& [k, c] : lane_size) {
    auto& m = longest_lane[{std::get<0>(k), std::get<1>(k), std::get<2>(k)}];
    m = std::max(m, c);
  }
  const std::size_t depth = s.fifo_connections ? 1 : static_cast<std::size_t>(std::max(1, options.pipeline_depth));

  // A marker outside every simulation ends when its dependencies are done, plus its delay.
  const auto settle_marker = [&](std::size_t i) {
    const Transfer& t = s.transfers[i];
    double ready = 0;
    for (std::uint32_t k = 0; k < t.dep_count; ++k) ready = std::max(ready, end[s.deps_of(t)[k]]);
    start[i] = end[i] = ready + t.delay_s;
    done[i] = 1;
  };

  std::size_t seg_begin = 0;
  for (int seg = 0; seg < segments; ++seg) {
    const std::size_t seg_end = seg < segments - 1 ? cuts[static_cast<std::size_t>(seg)] : n;
    std::map<std::uint32_t, std::vector<std::uint32_t>> groups;  // root -> its non-marker records
    for (std::size_t i = seg_begin; i < seg_end; ++i)
      if (!s.transfers[i].is_marker()) groups[uf.find(static_cast<std::uint32_t>(i))].push_back(static_cast<std::uint32_t>(i));
    std::vector<Schedule> subs;
    std::vector<std::vector<std::uint32_t>> members;  // per sub: original record of each sub record
    std::vector<char> in_sub(n, 0);
    for (auto& [root, records] : groups) {
      // The markers of this segment that the group's records wait for.
      std::vector<std::uint32_t> need;
      std::vector<std::uint32_t> stack(records.begin(), records.end());
      std::vector<std::uint32_t> marked;
      while (!stack.empty()) {
        const std::uint32_t i = stack.back();
        stack.pop_back();
        const Transfer& t = s.transfers[i];
        for (std::uint32_t k = 0; k < t.dep_count; ++k) {
          const std::uint32_t d = s.deps_of(t)[k];
          if (segment[d] != seg || !s.transfers[d].is_marker() || in_sub[d]) continue;
          in_sub[d] = 1;
          marked.push_back(d);
          need.push_back(d);
          stack.push_back(d);
        }
      }
      std::vector<std::uint32_t> recs = records;
      recs.insert(recs.end(), need.begin(), need.end());
      std::sort(recs.begin(), recs.end());
      for (std::uint32_t d : marked) in_sub[d] = 0;
      // The sub-schedule: the same settings, these records in order, dependencies outside it replaced
      // by markers that end when those records ended (all earlier segments' records are done).
      Schedule sub;
      sub.collective = s.collective;
      sub.algorithm = s.algorithm;
      sub.nranks = s.nranks;
      sub.size_bytes = s.size_bytes;
      sub.families_follow_rails = s.families_follow_rails;
      sub.families_per_rail = s.families_per_rail;
      sub.fifo_connections = s.fifo_connections;
      sub.transfer_rate_cap_Bps = s.transfer_rate_cap_Bps;
      sub.inter_node_channel_cap_Bps = s.inter_node_channel_cap_Bps;
      sub.intra_node_channel_cap_Bps = s.intra_node_channel_cap_Bps;
      sub.source_channel_cap_Bps = s.source_channel_cap_Bps;
      sub.gpu_issue_caps = s.gpu_issue_caps;
      sub.keys_unique = s.keys_unique;
      sub.switches = s.switches;
      std::map<std::uint32_t, std::uint32_t> local;  // original -> sub index
      std::vector<std::uint32_t> member;
      std::vector<std::uint32_t> deps;
      std::map<RouteKey, double> sub_min;
      for (std::uint32_t i : recs) {
        const Transfer& t = s.transfers[i];
        deps.clear();
        for (std::uint32_t k = 0; k < t.dep_count; ++k) {
          const std::uint32_t d = s.deps_of(t)[k];
          const auto it = local.find(d);
          if (it != local.end()) {
            deps.push_back(it->second);
            continue;
          }
          if (segment[d] == seg && !done[d]) return whole();  // cannot happen: grouped together above
          Transfer at;  // a marker at the end of the finished dependency
          at.src = at.dst = t.src < s.nranks ? t.src : 0;
          at.step = t.step;
          at.delay_s = end[d];
          const auto id = sub.add(at, {});
          local[d] = id;
          deps.push_back(id);
          member.push_back(UINT32_MAX);
        }
        local[i] = sub.add(t, deps);
        member.push_back(i);
        if (!t.is_marker()) {
          const auto [it, fresh] = sub_min.emplace(route_key(topo, s, t), t.delay_s);
          if (!fresh) it->second = std::min(it->second, t.delay_s);
        }
      }
      // A route's common delay moves between its latency and the wait before it starts; that is the
      // same time unless a pipeline slot holds a record past its ready time (docs/engine.md).
      for (const auto& [key, d] : sub_min)
        if (route_min.at(key) != d &&
            longest_lane.at({std::get<0>(key), std::get<1>(key), std::get<2>(key)}) > depth)
          return whole();
      subs.push_back(std::move(sub));
      members.push_back(std::move(member));
    }
    if (segments == 1 && subs.size() <= 1) return whole();
    const std::vector<SimResult> results = simulate(topo, subs, options);
    for (std::size_t g = 0; g < results.size(); ++g) {
      const SimResult& r = results[g];
      g_stats.largest = std::max(g_stats.largest, members[g].size());
      for (std::size_t j = 0; j < members[g].size(); ++j) {
        const std::uint32_t i = members[g][j];
        if (i == UINT32_MAX) continue;
        start[i] = r.transfer_start_s[j];
        end[i] = r.transfer_end_s[j];
        done[i] = 1;
      }
      for (const LinkStat& l : r.links) {
        auto [it, fresh] = links.emplace(std::make_tuple(l.from, l.to, l.label), l);
        if (!fresh) {  // the same link in another segment: later in time, so busy times add
          it->second.bytes += l.bytes;
          it->second.busy_s += l.busy_s;
        }
      }
    }
    g_stats.simulations += subs.size();
    // This segment's other markers, then the cut that closes it.
    for (std::size_t i = seg_begin; i < seg_end; ++i)
      if (!done[i]) settle_marker(i);
    if (seg < segments - 1) {
      settle_marker(seg_end);
      seg_begin = seg_end + 1;
    }
  }

  out.transfer_start_s = std::move(start);
  out.transfer_end_s = std::move(end);
  for (std::size_t i = 0; i < n; ++i) {
    if (s.transfers[i].is_marker()) continue;
    const double e = out.transfer_end_s[i];
    out.time_s = std::max(out.time_s, e);
    s.for_each_finish_rank(i, [&](int rank) {
      if (rank >= 0 && rank < s.nranks) out.rank_finish_s[static_cast<std::size_t>(rank)] = std::max(out.rank_finish_s[static_cast<std::size_t>(rank)], e);
    });
  }
  for (auto& [key, l] : links) out.links.push_back(std::move(l));
  // The engine's order: busiest first, then by endpoints.
  std::stable_sort(out.links.begin(), out.links.end(), [](const LinkStat& x, const LinkStat& y) {
    const double ux = x.bytes / x.bandwidth_Bps, uy = y.bytes / y.bandwidth_Bps;
    if (ux != uy) return ux > uy;
    return std::tie(x.from, x.to) < std::tie(y.from, y.to);
  });
  return out;
}

}  // namespace ccsim
