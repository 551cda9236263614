#include "topologies/nvlink_mesh.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace ccsim {

bool nvlink_mesh(const Topology& topo) { return topo.nccl_p2p && !topo.nvlink_peer_links.empty(); }

int nvlink_links(const Topology& topo, int a, int b) {
  const int g = topo.gpus_per_node();
  if (!nvlink_mesh(topo) || a < 0 || b < 0 || a >= g || b >= g) return 0;
  return topo.nvlink_peer_links[static_cast<std::size_t>(a) * g + b];
}

namespace {

// The depth-first searches below stop after this many steps: a 16-GPU mesh without a Hamiltonian
// path explores up to 15! partial paths. Counted steps keep the answer deterministic; a search cut
// short answers "none", and the callers fall back (a mixed NVLink/PCIe ring, the GPU index order).
constexpr long kSearchSteps = 1000000;

// Depth-first search for a Hamiltonian path over the joined pairs (links[a * g + b]). Next GPU: the
// most links, then the lowest index (NCCL's search sorts its candidate next GPUs by the bandwidth
// left on the link; deterministic ties).
class MeshSearch {
 public:
  MeshSearch(int gpus, const std::vector<int>& cap) : g_(gpus), cap_(cap), used_(static_cast<std::size_t>(gpus), false) {}

  bool find(int first, int last, std::vector<int>& order) {
    order.assign(1, first);
    steps_ = 0;
    std::fill(used_.begin(), used_.end(), false);
    used_[static_cast<std::size_t>(first)] = true;
    return extend(last, order);
  }

 private:
  int arc(int a, int b) const { return cap_[static_cast<std::size_t>(a) * g_ + b]; }

  bool extend(int last, std::vector<int>& order) {
    if (++steps_ > kSearchSteps) return false;
    const int at = order.back();
    if (static_cast<int>(order.size()) == g_) return last < 0 || at == last;
    std::vector<int> next;
    for (int b = 0; b < g_; ++b)
      if (!used_[static_cast<std::size_t>(b)] && arc(at, b) > 0 && (b != last || static_cast<int>(order.size()) == g_ - 1))
        next.push_back(b);
    std::stable_sort(next.begin(), next.end(), [&](int x, int y) { return arc(at, x) > arc(at, y); });
    for (int b : next) {
      used_[static_cast<std::size_t>(b)] = true;
      order.push_back(b);
      if (extend(last, order)) return true;
      order.pop_back();
      used_[static_cast<std::size_t>(b)] = false;
    }
    return false;
  }

  int g_;
  const std::vector<int>& cap_;
  std::vector<bool> used_;
  long steps_ = 0;
};

// Every Hamiltonian cycle of the joined pairs, once per direction pair (from GPU 0, its second GPU
// below its last), at most `limit` of them.
std::vector<std::vector<int>> hamiltonian_cycles(int g, const std::vector<int>& joined, std::size_t limit) {
  std::vector<std::vector<int>> cycles;
  std::vector<int> order{0};
  std::vector<bool> used(static_cast<std::size_t>(g), false);
  used[0] = true;
  auto arc = [&](int a, int b) { return joined[static_cast<std::size_t>(a) * g + b] > 0; };
  long steps = 0;
  std::function<void()> extend = [&] {
    if (cycles.size() >= limit || ++steps > kSearchSteps) return;
    const int at = order.back();
    if (static_cast<int>(order.size()) == g) {
      if (arc(at, 0) && order[1] < order.back()) cycles.push_back(order);
      return;
    }
    for (int b = 1; b < g; ++b) {
      if (used[static_cast<std::size_t>(b)] || !arc(at, b)) continue;
      used[static_cast<std::size_t>(b)] = true;
      order.push_back(b);
      extend();
      order.pop_back();
      used[static_cast<std::size_t>(b)] = false;
    }
  };
  extend();
  return cycles;
}

// The largest multiset of cycles whose uses of every pair stay within its capacity: a depth-first
// search over the cycles in order, bounded by the capacity left at the GPU with the least (every
// cycle takes two of a GPU's units) and by a node budget.
class CyclePacking {
 public:
  CyclePacking(int g, std::vector<int> cap, const std::vector<std::vector<int>>& cycles, int max_count)
      : g_(g), cap_(std::move(cap)), cycles_(cycles), max_(max_count) {}

  std::vector<int> best() {
    search(0);
    return best_;
  }

 private:
  bool fits(const std::vector<int>& c) const {
    for (int i = 0; i < g_; ++i)
      if (cap_[idx(c[i], c[(i + 1) % g_])] <= 0) return false;
    return true;
  }
  void take(const std::vector<int>& c, int d) {
    for (int i = 0; i < g_; ++i) {
      cap_[idx(c[i], c[(i + 1) % g_])] -= d;
      cap_[idx(c[(i + 1) % g_], c[i])] -= d;
    }
  }
  std::size_t idx(int a, int b) const { return static_cast<std::size_t>(a) * g_ + b; }
  int bound() const {
    int least = -1;
    for (int v = 0; v < g_; ++v) {
      int units = 0;
      for (int b = 0; b < g_; ++b) units += cap_[idx(v, b)];
      least = least < 0 ? units : std::min(least, units);
    }
    return static_cast<int>(chosen_.size()) + least / 2;
  }
  void search(std::size_t from) {
    if (chosen_.size() > best_.size()) best_ = chosen_;
    if (static_cast<int>(best_.size()) >= max_ || ++nodes_ > kNodeBudget) return;
    if (bound() <= static_cast<int>(best_.size())) return;
    for (std::size_t k = from; k < cycles_.size(); ++k) {
      if (!fits(cycles_[k])) continue;
      take(cycles_[k], 1);
      chosen_.push_back(static_cast<int>(k));
      search(k);  // a cycle may be taken again while its pairs have capacity
      chosen_.pop_back();
      take(cycles_[k], -1);
      if (static_cast<int>(best_.size()) >= max_ || nodes_ > kNodeBudget) return;
    }
  }

  static constexpr long kNodeBudget = 200000;
  int g_;
  std::vector<int> cap_;
  const std::vector<std::vector<int>>& cycles_;
  int max_;
  long nodes_ = 0;
  std::vector<int> chosen_, best_;
};

}  // namespace

std::vector<std::vector<int>> nvlink_mesh_rings(const Topology& topo, double channels_per_link, int max_rings) {
  std::vector<std::vector<int>> rings;
  const int g = topo.gpus_per_node();
  if (!nvlink_mesh(topo) || g < 3 || max_rings < 1) return rings;
  std::vector<int> cap(topo.nvlink_peer_links.size(), 0);
  for (std::size_t i = 0; i < cap.size(); ++i)
    cap[i] = static_cast<int>(std::floor(topo.nvlink_peer_links[i] * channels_per_link + 1e-9));
  // The links are full duplex and their capacities symmetric, so a ring and its reverse take one
  // channel of each direction of the same pairs: pack undirected cycles, then run each both ways.
  const std::vector<std::vector<int>> cycles = hamiltonian_cycles(g, cap, 5000);
  CyclePacking packing(g, cap, cycles, (max_rings + 1) / 2);
  for (int k : packing.best()) {
    const std::vector<int>& c = cycles[static_cast<std::size_t>(k)];
    rings.push_back(c);
    std::vector<int> back{c[0]};
    for (int i = g - 1; i > 0; --i) back.push_back(c[static_cast<std::size_t>(i)]);
    if (static_cast<int>(rings.size()) < max_rings) rings.push_back(back);
  }
  return rings;
}

double gpu_nvlink_Bps(const Topology& topo, VertexId gpu) {
  double bw = 0;
  for (auto [it, end] = boost::out_edges(gpu, topo.graph()); it != end; ++it)
    if (topo.link(*it).kind == LinkKind::NvLink) bw += topo.link(*it).bandwidth_Bps;
  return bw;
}

int nvlink_relay_gpu(const Topology& topo, int a, int b) {
  if (!nvlink_mesh(topo) || nvlink_links(topo, a, b) > 0) return -1;
  int via = -1, best = 0;
  for (int c = 0; c < topo.gpus_per_node(); ++c) {
    const int both = std::min(nvlink_links(topo, a, c), nvlink_links(topo, c, b));
    if (both > best) {
      best = both;
      via = c;
    }
  }
  return via;
}

std::vector<int> nvlink_mixed_ring(const Topology& topo) {
  const int g = topo.gpus_per_node();
  if (!nvlink_mesh(topo)) return {};
  // Every pair allowed, joined pairs first (by their links).
  std::vector<int> rank(topo.nvlink_peer_links.size());
  for (std::size_t i = 0; i < rank.size(); ++i) rank[i] = topo.nvlink_peer_links[i] + 1;
  for (int a = 0; a < g; ++a) rank[static_cast<std::size_t>(a) * g + a] = 0;
  MeshSearch search(g, rank);
  std::vector<int> order;
  if (!search.find(0, -1, order)) return {};
  return order;
}

std::vector<int> nvlink_mesh_path(const Topology& topo, int first, int last) {
  const int g = topo.gpus_per_node();
  std::vector<int> order;
  if (!nvlink_mesh(topo) || first < 0 || first >= g || last >= g || (g > 1 && last == first)) return {};
  MeshSearch search(g, topo.nvlink_peer_links);
  if (!search.find(first, last, order)) return {};
  return order;
}

}  // namespace ccsim
