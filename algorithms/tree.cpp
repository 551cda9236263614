#include "algorithms/tree.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "algorithms/ring.h"
#include "topologies/routing.h"
#include "algorithms/nccl_model.h"

namespace ccsim {

BtreeLinks nccl_btree(int nranks, int rank) {
  // ncclGetBtree (NCCL src/graph/trees.cc), restated. `bit` is the lowest set bit of rank (for
  // rank 0: the first power of two >= nranks).
  BtreeLinks l;
  int bit = 1;
  for (; bit < nranks; bit <<= 1)
    if (bit & rank) break;
  if (rank == 0) {
    l.down1 = nranks > 1 ? bit >> 1 : -1;  // the root has a single child
    return l;
  }
  int up = (rank ^ bit) | (bit << 1);
  if (up >= nranks) up = rank ^ bit;
  l.up = up;
  int lowbit = bit >> 1;
  l.down0 = lowbit == 0 ? -1 : rank - lowbit;
  int down1 = lowbit == 0 ? -1 : rank + lowbit;
  while (down1 >= nranks) {
    down1 = lowbit == 0 ? -1 : rank + lowbit;
    lowbit >>= 1;
  }
  l.down1 = down1;
  return l;
}

BtreeLinks nccl_dtree(int nranks, int rank, int which) {
  if (which == 0) return nccl_btree(nranks, rank);
  BtreeLinks out;
  if (nranks % 2 == 1) {  // shift by one rank
    const BtreeLinks b = nccl_btree(nranks, (rank - 1 + nranks) % nranks);
    out.up = b.up == -1 ? -1 : (b.up + 1) % nranks;
    out.down0 = b.down0 == -1 ? -1 : (b.down0 + 1) % nranks;
    out.down1 = b.down1 == -1 ? -1 : (b.down1 + 1) % nranks;
  } else {  // mirror
    const BtreeLinks b = nccl_btree(nranks, nranks - 1 - rank);
    out.up = b.up == -1 ? -1 : nranks - 1 - b.up;
    out.down0 = b.down0 == -1 ? -1 : nranks - 1 - b.down0;
    out.down1 = b.down1 == -1 ? -1 : nranks - 1 - b.down1;
  }
  return out;
}

int TreeFamily::depth() const {
  int best = 0;
  for (std::size_t v = 0; v < parent_node.size(); ++v) {
    int d = 0;
    for (int u = static_cast<int>(v); parent_node[u] >= 0; u = parent_node[u]) ++d;
    best = std::max(best, d);
  }
  return best;
}

int TreePlan::total_channels() const {
  int c = 0;
  for (const auto& f : families) c += f.channels;
  return c;
}

StepTiming tree_step_timing(Proto p) { return nccl_step_timing(Algo::Tree, p); }

NodeTree nccl_node_tree(int nodes, int which) {
  NodeTree t;
  t.parent.assign(nodes, -1);
  t.children.assign(nodes, {});
  for (int v = 0; v < nodes; ++v) {
    const BtreeLinks l = nccl_dtree(nodes, v, which);
    t.parent[v] = l.up;
    if (l.up < 0) t.root = v;
    if (l.down0 >= 0) t.children[v].push_back(l.down0);
    if (l.down1 >= 0) t.children[v].push_back(l.down1);
  }
  t.top_down.push_back(t.root);
  for (std::size_t i = 0; i < t.top_down.size(); ++i)
    for (int ch : t.children[t.top_down[i]]) t.top_down.push_back(ch);
  return t;
}

TreePlan plan_trees(const Topology& topo, int channels) {
  TreePlan plan;
  const int gpus = topo.gpus_per_node();
  const int nodes = topo.num_nodes();
  const int nics = topo.nics_per_node();
  if (nodes > 1 && nics <= 0) throw std::invalid_argument("multi-node tree needs at least one NIC per node");
  const int rails = std::max(1, nics);
  const int per_family = std::max(1, channels / (2 * rails));
  const NodeTree node_trees[2] = {nccl_node_tree(nodes, 0), nccl_node_tree(nodes, 1)};
  for (int rail = 0; rail < rails; ++rail) {
    int head = nics > 0 ? first_gpu_on_rail(topo, rail) : -1;
    if (head < 0) head = rail % gpus;
    const std::vector<int> chain = node_chain(topo, head, -1);
    for (int tree = 0; tree < 2; ++tree) {
      TreeFamily f;
      f.tree = tree;
      f.rail = nodes > 1 ? rail : -1;
      f.channels = per_family;
      f.chain = chain;
      f.root_node = node_trees[tree].root;
      f.parent_node = node_trees[tree].parent;
      f.child_nodes = node_trees[tree].children;
      plan.families.push_back(f);
    }
  }
  return plan;
}

namespace {


// A family's tree over ranks: parent and children of every rank, and a top-down order.
struct RankTree {
  int root = -1;
  std::vector<int> parent;
  std::vector<std::vector<int>> children;
  std::vector<int> top_down;  // BFS from the root
};

RankTree rank_tree(const Topology& topo, const TreeFamily& f) {
  const int gpn = topo.gpus_per_node();
  const int nodes = topo.num_nodes();
  if (static_cast<int>(f.chain.size()) != gpn || static_cast<int>(f.parent_node.size()) != nodes)
    throw std::invalid_argument("tree family does not match the topology");
  RankTree t;
  const int n = topo.num_gpus();
  t.parent.assign(n, -1);
  t.children.assign(n, {});
  for (int v = 0; v < nodes; ++v) {
    const int head = v * gpn + f.chain[0];
    for (int i = 1; i < gpn; ++i) {
      const int r = v * gpn + f.chain[i], up = v * gpn + f.chain[i - 1];
      t.parent[r] = up;
      t.children[up].push_back(r);
    }
    if (f.parent_node[v] >= 0) {
      const int up = f.parent_node[v] * gpn + f.chain[0];
      t.parent[head] = up;
    } else {
      t.root = head;
    }
  }
  // Children of a head: its chain successor first, then the heads of its child nodes in tree order.
  for (int v = 0; v < nodes; ++v)
    for (int c : f.child_nodes[v]) t.children[v * gpn + f.chain[0]].push_back(c * gpn + f.chain[0]);
  t.top_down.push_back(t.root);
  for (std::size_t i = 0; i < t.top_down.size(); ++i)
    for (int c : t.children[t.top_down[i]]) t.top_down.push_back(c);
  if (static_cast<int>(t.top_down.size()) != n) throw std::invalid_argument("tree does not cover all ranks");
  return t;
}

}  // namespace

double nccl_tree_chunk_bytes(Proto p, double size_bytes, int channels, int nodes, int ranks, std::int64_t buffer_bytes) {
  const std::int64_t slot = buffer_bytes / nccl230::kSteps;  // one slot of the buffer
  std::int64_t chunk = 0, grain = 512;
  switch (p) {
    case Proto::Simple: chunk = slot; grain = 512; break;
    case Proto::LL: chunk = slot / 2; grain = 16; break;
    case Proto::LL128: chunk = slot / 16 * 15; grain = 32 * 8 / 16 * 15 * 8; break;
  }
  if (p == Proto::LL128 && nodes > 0) {
    const double ppn = static_cast<double>(ranks) / nodes;
    const double steps = 1 + nccl_log2i(static_cast<std::uint64_t>(nodes)) + 0.1 * ppn;
    const auto bytes = static_cast<std::uint64_t>(std::max(0.0, size_bytes));
    const auto per = [&](std::int64_t c) {  // integer division, as in NCCL
      return static_cast<double>(bytes / static_cast<std::uint64_t>(std::max(1, channels) * c));
    };
    while (per(chunk) < steps * 64 / ppn && chunk > 131072) chunk /= 2;
    while (per(chunk) < steps * 16 / ppn && chunk > 32768) chunk /= 2;
  }
  return static_cast<double>(chunk / grain * grain);
}

TreeScheduleOptions tree_options(Proto p) {
  TreeScheduleOptions o;
  o.proto = p;
  o.timing = tree_step_timing(p);
  // NCCL's Tree all_reduce efficiency (0.92 of the links, nccl230::kTreeAllReduceEfficiency), charged as
  // extra bytes on every link the tree uses. NCCL's per-channel ceiling is scaled by the same factor
  // where it is applied (channel_rate_cap_Bps x wire_factor), so the data rate is min(links x 0.92,
  // ceiling), as in NCCL's model.
  o.wire_factor = ring_protocol(p).wire_factor / nccl230::kTreeAllReduceEfficiency;
  o.flow_control_slots = 0;  // see TreeScheduleOptions: a credit would cost a full step latency here
  o.fifo_connections = true;
  o.launch_wave = 1 << 30;  // FIFO: a chunk without dependencies waits for the launch, whatever its index
  return o;
}

namespace {

// Data bytes per chunk and channel at a size: the options' fixed chunk, or NCCL's rule.
double tree_chunk_bytes(const Topology& topo, int channels, double size_bytes, const TreeScheduleOptions& options) {
  return options.chunk_bytes > 0
             ? options.chunk_bytes
             : nccl_tree_chunk_bytes(options.proto, size_bytes, channels, topo.num_nodes(), topo.num_gpus(),
                                     nccl_buffer_bytes(topo, options.proto));
}

}  // namespace

int tree_chunks(const Topology& topo, const TreePlan& plan, double size_bytes, const TreeScheduleOptions& options) {
  if (plan.families.empty()) return 1;
  const int channels = std::max(1, plan.total_channels());
  const double per_channel = size_bytes / channels;
  const double c = std::ceil(per_channel / tree_chunk_bytes(topo, channels, size_bytes, options));
  return clamp_chunks(c, options.max_chunks);
}

double tree_channel_cap_Bps(const NcclTopoSummary& summary, const TreePlan& plan, Proto p, double size_bytes) {
  const double busbw_GBps = nccl_busbw_ceiling_GBps(summary, Func::AllReduce, Algo::Tree, p, size_bytes);
  return busbw_GBps / 2 * 1e9 / std::max(1, plan.total_channels());
}

double tree_chunk_cap_bytes(const Topology& topo, const TreePlan& plan, const TreeScheduleOptions& options) {
  if (plan.families.empty()) return 0;
  const int channels = std::max(1, plan.total_channels());
  // The nominal chunk: that of a size far past LL128's halving thresholds (1e18 B still fits NCCL's
  // integer byte count).
  const double nominal = tree_chunk_bytes(topo, channels, 1e18, options);
  const double cap = std::max(1, options.max_chunks) * nominal * channels;
  return tree_chunk_bytes(topo, channels, cap / 2, options) == nominal ? cap : 0.0;
}

std::vector<TreeSizeGroup> tree_schedules_for_sizes(const Topology& topo, const TreePlan& plan,
                                                    const std::string& collective,
                                                    const std::vector<double>& sizes_bytes,
                                                    const TreeScheduleOptions& options) {
  std::vector<TreeSizeGroup> groups;
  for (std::size_t i = 0; i < sizes_bytes.size(); ++i) {
    const int c = tree_chunks(topo, plan, sizes_bytes[i], options);
    auto it = std::find_if(groups.begin(), groups.end(), [c](const TreeSizeGroup& g) { return g.chunks == c; });
    if (it == groups.end()) {
      groups.push_back({});
      it = groups.end() - 1;
      it->chunks = c;
    }
    it->indices.push_back(i);
  }
  for (auto& g : groups) {
    double largest = 0;
    for (auto i : g.indices) largest = std::max(largest, sizes_bytes[i]);
    TreeScheduleOptions o = options;
    o.max_chunks = g.chunks;  // the group's chunk count, whatever the reference size would give
    o.chunk_bytes = std::max(largest, 1.0) / std::max(1, plan.total_channels()) / g.chunks;
    g.schedule = tree_schedule(topo, plan, collective, std::max(largest, 1.0), o);
  }
  return groups;
}

Schedule tree_schedule(const Topology& topo, const TreePlan& plan, const std::string& collective, double size_bytes,
                       const TreeScheduleOptions& options) {
  if (collective != "all_reduce") throw std::invalid_argument("no tree schedule for collective '" + collective + "'");
  Schedule s;
  s.collective = collective;
  s.algorithm = "tree";
  s.nranks = topo.num_gpus();
  s.size_bytes = size_bytes;
  // Families 2r and 2r+1 ride NIC rail r: a rail rotation maps them onto the next rail's (when the
  // chains rotate with the rails too, which the symmetry proof checks).
  s.families_follow_rails = topo.nics_per_node() > 0 && static_cast<int>(plan.families.size()) == 2 * topo.nics_per_node();
  s.families_per_rail = 2;
  s.fifo_connections = options.fifo_connections;
  // NCCL's ceiling (a channel's rate, whatever the links): Simple copies whole chunks hop by hop, so
  // every connection across nodes is capped (each family crosses nodes with all its bytes). LL and
  // LL128 forward lines as they arrive, so the stream pays the rate once, where it enters: the chain
  // tails' connections (every later hop depends on them).
  (options.proto == Proto::Simple ? s.inter_node_channel_cap_Bps : s.source_channel_cap_Bps) =
      options.channel_rate_cap_Bps * options.wire_factor;
  const int n = s.nranks;
  if (n < 2 || plan.families.empty()) return s;
  const int families = static_cast<int>(plan.families.size());
  const int gpn = topo.gpus_per_node();

  // Per family: the rank tree and the delay of every rank's hop to its parent (up) and of every
  // parent -> rank hop (down), computed once.
  std::vector<RankTree> trees;
  std::vector<std::vector<double>> up_delay(families), down_delay(families);
  std::vector<std::vector<int>> hop_rail(families);
  for (int f = 0; f < families; ++f) {
    trees.push_back(rank_tree(topo, plan.families[f]));
    up_delay[f].assign(n, 0);
    down_delay[f].assign(n, 0);
    hop_rail[f].assign(n, -1);
    for (int r = 0; r < n; ++r) {
      const int p = trees[f].parent[r];
      if (p < 0) continue;
      const int rail = (p / gpn != r / gpn) ? plan.families[f].rail : -1;
      hop_rail[f][r] = rail;
      up_delay[f][r] = step_software_delay_s(topo, options.timing, r, p, rail);
      down_delay[f][r] = step_software_delay_s(topo, options.timing, p, r, rail);
    }
  }

  // Every family carries 1/F of the buffer (with the protocol's flags), split in `chunks` pieces that
  // travel one after the other through every connection.
  const int chunks = tree_chunks(topo, plan, size_bytes, options);
  const double chunk_bytes = size_bytes / families * options.wire_factor / chunks;
  // Per family and chunk: the record of r -> parent(r) (up) and parent(r) -> r (down).
  std::vector<std::vector<std::vector<std::uint32_t>>> up_rec(families), down_rec(families);
  for (int f = 0; f < families; ++f) {
    up_rec[f].assign(chunks, std::vector<std::uint32_t>(n, 0));
    down_rec[f].assign(chunks, std::vector<std::uint32_t>(n, 0));
  }
  const int slots = options.flow_control_slots;
  for (int k = 0; k < chunks; ++k) {
    for (int f = 0; f < families; ++f) {
      const RankTree& t = trees[f];
      auto& up = up_rec[f][k];
      auto& down = down_rec[f][k];
      const auto make = [&](int src, int dst, int child, double delay) {
        Transfer x;
        x.src = src;
        x.dst = dst;
        x.rail = hop_rail[f][child];
        x.bytes = chunk_bytes;
        x.delay_s = delay;
        x.step = k;
        x.family = f;
        x.channels = plan.families[f].channels;
        x.chunks = 1;
        return x;
      };
      // Flow control: the receiver frees chunk k - slots's buffer once it has passed that chunk on
      // (sent it up, or for the root and on the way down, sent it to its first child); a leaf
      // writes received data straight to its output and never holds a slot back.
      const int old = k - slots;
      const auto freed_up = [&](int receiver, std::vector<std::uint32_t>& deps) {
        if (slots <= 0 || old < 0) return;
        if (receiver != t.root) deps.push_back(up_rec[f][old][receiver]);
        else if (!t.children[receiver].empty()) deps.push_back(down_rec[f][old][t.children[receiver].front()]);
      };
      const auto freed_down = [&](int receiver, std::vector<std::uint32_t>& deps) {
        if (slots <= 0 || old < 0 || t.children[receiver].empty()) return;
        deps.push_back(down_rec[f][old][t.children[receiver].front()]);
      };
      // Reduce: a rank sends chunk k up once it has chunk k from all its children.
      for (auto it = t.top_down.rbegin(); it != t.top_down.rend(); ++it) {
        const int r = *it;
        if (r == t.root) continue;
        std::vector<std::uint32_t> deps;
        for (int c : t.children[r]) deps.push_back(up[c]);
        const bool first_wave = deps.empty() && k < options.launch_wave;
        freed_up(t.parent[r], deps);
        double delay = up_delay[f][r];
        if (first_wave) delay += options.timing.launch_s;
        up[r] = s.add(make(r, t.parent[r], r, delay), deps);
      }
      // Broadcast: the root sends chunk k down once it has reduced it; the others once they received it.
      for (int r : t.top_down) {
        std::vector<std::uint32_t> base;
        if (r == t.root) {
          for (int c : t.children[r]) base.push_back(up[c]);
        } else {
          base.push_back(down[r]);
        }
        for (int c : t.children[r]) {
          std::vector<std::uint32_t> deps = base;
          freed_down(c, deps);
          down[c] = s.add(make(r, c, c, down_delay[f][c]), deps);
        }
      }
    }
  }
  return s;
}

}  // namespace ccsim
