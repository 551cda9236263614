#include "workloads/workload.h"

#include <algorithm>
#include <stdexcept>

#include "sim/split.h"

namespace ccsim {
namespace {

// Schedule-wide replay settings must agree: the composed schedule has one of each.
bool same_replay_settings(const Schedule& a, const Schedule& b) {
  return a.nranks == b.nranks && a.fifo_connections == b.fifo_connections &&
         a.transfer_rate_cap_Bps == b.transfer_rate_cap_Bps &&
         a.inter_node_channel_cap_Bps == b.inter_node_channel_cap_Bps &&
         a.intra_node_channel_cap_Bps == b.intra_node_channel_cap_Bps &&
         a.source_channel_cap_Bps == b.source_channel_cap_Bps;
}

int max_step(const Schedule& s) {
  int m = -1;
  for (const Transfer& t : s.transfers) m = std::max(m, t.step);
  return m;
}

Transfer marker_at(int rank, int step, double delay_s) {
  Transfer m;
  m.src = m.dst = rank;
  m.step = step;
  m.delay_s = delay_s;
  return m;
}

}  // namespace

Schedule compose_workload(const std::vector<WorkloadOp>& ops, std::vector<ComposedRange>* ranges) {
  if (ops.empty()) throw std::invalid_argument("workload: no operation");
  Schedule out;
  const Schedule& first = ops.front().schedule;
  out.collective = "workload";
  out.algorithm = "composed";
  out.nranks = first.nranks;
  out.fifo_connections = first.fifo_connections;
  out.transfer_rate_cap_Bps = first.transfer_rate_cap_Bps;
  out.inter_node_channel_cap_Bps = first.inter_node_channel_cap_Bps;
  out.intra_node_channel_cap_Bps = first.intra_node_channel_cap_Bps;
  out.source_channel_cap_Bps = first.source_channel_cap_Bps;
  const auto n = static_cast<std::size_t>(out.nranks);
  std::vector<ComposedRange> range;
  std::vector<std::pair<int, std::size_t>> origin;  // per composed record: (operation, its index) or (-1, marker)
  int step_base = 0;
  std::vector<std::uint32_t> deps;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const WorkloadOp& op = ops[k];
    const Schedule& s = op.schedule;
    if (!same_replay_settings(first, s))
      throw std::invalid_argument("workload: operation '" + op.name + "' has other replay settings than the first");
    if (!s.switches.empty()) throw std::invalid_argument("workload: operation '" + op.name + "' has switch endpoints");
    if (op.start != WorkloadOp::Start::AtZero && (op.after < 0 || op.after >= static_cast<int>(k)))
      throw std::invalid_argument("workload: operation '" + op.name + "' must follow an earlier operation");
    ComposedRange here;
    here.gate_begin = out.transfers.size();

    // The gate(s) this operation's dependency-free records wait for: one barrier, or one per rank.
    std::vector<std::int64_t> gate(n, -1);
    if (op.start != WorkloadOp::Start::AtZero) {
      const std::size_t b = range[static_cast<std::size_t>(op.after)].begin, e = range[static_cast<std::size_t>(op.after)].end;
      if (op.start == WorkloadOp::Start::AfterBarrier) {
        deps.clear();
        for (std::size_t i = b; i < e; ++i) deps.push_back(static_cast<std::uint32_t>(i));
        const auto barrier = out.add(marker_at(0, step_base, op.gap_s), deps);
        origin.emplace_back(-1, 0);
        std::fill(gate.begin(), gate.end(), static_cast<std::int64_t>(barrier));
      } else {
        std::vector<std::vector<std::uint32_t>> touching(n);
        for (std::size_t i = b; i < e; ++i)
          out.for_each_finish_rank(i, [&](int rank) {
            if (rank < out.nranks) touching[static_cast<std::size_t>(rank)].push_back(static_cast<std::uint32_t>(i));
          });
        for (std::size_t r = 0; r < n; ++r) {
          gate[r] = out.add(marker_at(static_cast<int>(r), step_base, op.gap_s), touching[r]);
          origin.emplace_back(-1, 0);
        }
      }
      ++step_base;
    }
    // The operation's own records, dependencies shifted; roots wait for their source rank's gate.
    const auto offset = static_cast<std::uint32_t>(out.transfers.size());
    here.begin = offset;
    // Each operation keeps its own message-issue rate (or none) over its shifted steps.
    if (!s.gpu_issue_caps.empty() || !out.gpu_issue_caps.empty()) {
      if (s.gpu_issue_caps.empty() || s.gpu_issue_caps.front().first > 0) out.gpu_issue_caps.emplace_back(step_base, 0.0);
      for (const auto& [step, rate] : s.gpu_issue_caps) out.gpu_issue_caps.emplace_back(step + step_base, rate);
    }
    for (std::size_t j = 0; j < s.transfers.size(); ++j) {
      const Transfer& t = s.transfers[j];
      origin.emplace_back(static_cast<int>(k), j);
      deps.assign(s.deps_of(t), s.deps_of(t) + t.dep_count);
      for (auto& d : deps) d += offset;
      if (t.dep_count == 0 && t.src < out.nranks && gate[static_cast<std::size_t>(t.src)] >= 0)
        deps.push_back(static_cast<std::uint32_t>(gate[static_cast<std::size_t>(t.src)]));
      Transfer c = t;
      c.step += step_base;
      out.add(c, deps);
    }
    step_base += max_step(s) + 1;
    here.end = out.transfers.size();
    range.push_back(here);
  }
  // Finish attribution (Schedule::finish_ranks): kept record by record once any operation has its own;
  // a marker counts for its rank.
  const bool attributed = std::any_of(ops.begin(), ops.end(), [](const WorkloadOp& op) { return !op.schedule.finish_begin.empty(); });
  if (attributed) {
    for (std::size_t i = 0; i < out.transfers.size(); ++i) {
      out.finish_begin.push_back(static_cast<std::uint32_t>(out.finish_ranks.size()));
      const auto [op, j] = origin[i];
      if (op < 0)
        out.finish_ranks.push_back(out.transfers[i].src);
      else
        ops[static_cast<std::size_t>(op)].schedule.for_each_finish_rank(j, [&](int rank) { out.finish_ranks.push_back(rank); });
    }
    out.finish_begin.push_back(static_cast<std::uint32_t>(out.finish_ranks.size()));
  }
  if (ranges) *ranges = std::move(range);
  return out;
}

WorkloadResult simulate_workload(const Topology& topo, const std::vector<WorkloadOp>& ops, EngineOptions options) {
  WorkloadResult w;
  w.composed = compose_workload(ops, &w.ranges);
  options.record_transfers = true;
  options.exploit_symmetry = false;
  options.merge_identical = false;
  if (options.split_independent) {
    std::vector<std::size_t> cuts;  // the barriers between operations
    for (std::size_t k = 0; k < ops.size(); ++k)
      if (ops[k].start == WorkloadOp::Start::AfterBarrier) cuts.push_back(w.ranges[k].gate_begin);
    w.sim = simulate_split(topo, w.composed, options, cuts);
  } else {
    w.sim = simulate_one(topo, w.composed, options);
  }
  const auto n = static_cast<std::size_t>(w.composed.nranks);
  for (std::size_t k = 0; k < ops.size(); ++k) {
    OpTiming op;
    op.name = ops[k].name;
    op.rank_start_s.assign(n, 0.0);
    op.rank_finish_s.assign(n, 0.0);
    const ComposedRange& range = w.ranges[k];
    // Start: time zero, or the end of the gate each rank waits for (one barrier, or its own marker).
    for (std::size_t i = range.gate_begin; i < range.begin; ++i) {
      const double gate_end = w.sim.transfer_end_s[i];
      if (ops[k].start == WorkloadOp::Start::AfterBarrier)
        std::fill(op.rank_start_s.begin(), op.rank_start_s.end(), gate_end);
      else
        op.rank_start_s[static_cast<std::size_t>(w.composed.transfers[i].src)] = gate_end;
    }
    op.start_s = n ? *std::min_element(op.rank_start_s.begin(), op.rank_start_s.end()) : 0.0;
    for (std::size_t i = range.begin; i < range.end; ++i) {
      const double e = w.sim.transfer_end_s[i];
      op.finish_s = std::max(op.finish_s, e);
      w.composed.for_each_finish_rank(i, [&](int rank) {
        if (rank >= 0 && static_cast<std::size_t>(rank) < n)
          op.rank_finish_s[static_cast<std::size_t>(rank)] = std::max(op.rank_finish_s[static_cast<std::size_t>(rank)], e);
      });
    }
    w.ops.push_back(std::move(op));
  }
  return w;
}

}  // namespace ccsim
