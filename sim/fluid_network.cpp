#include "sim/fluid_network.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ccsim {

int FluidNetwork::add_constraint(double capacity_Bps) {
  if (!(capacity_Bps > 0)) throw std::invalid_argument("FluidNetwork: a constraint needs a positive capacity");
  constraints_.push_back({});
  constraints_.back().capacity = capacity_Bps;
  return static_cast<int>(constraints_.size()) - 1;
}

void FluidNetwork::start(const std::vector<int>& constraints, double bytes, double latency_s, double bound_Bps,
                         std::uint32_t tag) {
  std::uint32_t id;
  if (!free_flows_.empty()) {
    id = free_flows_.back();
    free_flows_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(state_.size());
    state_.emplace_back();
    info_.emplace_back();
    position_.push_back(-1);
    active_.push_back(0);
  }
  FlowInfo& f = info_[id];
  const auto needed = static_cast<std::uint32_t>(constraints.size() + (bound_Bps > 0 ? 1 : 0));
  if (needed > f.pool_capacity) {  // a fresh slot at the end; the old one (if any) stays unused
    f.pool_begin = static_cast<std::uint32_t>(constraint_pool_.size());
    f.pool_capacity = needed;
    constraint_pool_.resize(constraint_pool_.size() + needed);
  }
  f.pool_size = needed;
  std::copy(constraints.begin(), constraints.end(), constraint_pool_.begin() + f.pool_begin);
  // A bound is a constraint of the flow's own: max-min freezes the flow at the bound as it would at
  // a link that only this flow crosses.
  f.own_bound = -1;
  if (bound_Bps > 0) {
    if (free_bounds_.empty()) {
      f.own_bound = add_constraint(bound_Bps);
    } else {  // a finished flow's bound, idle since (its rate_sum is back to zero)
      f.own_bound = free_bounds_.back();
      free_bounds_.pop_back();
      Constraint& b = constraints_[static_cast<std::size_t>(f.own_bound)];
      b.capacity = bound_Bps;
      b.rate_sum = 0;
    }
    constraint_pool_[f.pool_begin + needed - 1] = f.own_bound;
  }
  FlowState& st = state_[id];
  st.bytes_left = std::max(0.0, bytes);
  st.since = now_ + std::max(0.0, latency_s);
  st.rate = 0;
  st.done_date = kNever;
  f.tag = tag;
  ++f.version;
  position_[id] = -1;
  active_[id] = 0;
  latency_ends_.push({st.since, id, f.version});
}

bool FluidNetwork::same_date(double a, double b) const {
  // Dates computed along different paths for one instant differ in their last bits.
  return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b)) + 1e-18;
}

void FluidNetwork::activate_due() {
  while (!latency_ends_.empty() && due(latency_ends_.top().key)) {
    const Entry e = latency_ends_.top();
    latency_ends_.pop();
    if (info_[e.id].version != e.version) continue;
    active_[e.id] = 1;
    state_[e.id].since = now_;
    dirty_from_ = 0;  // an arrival can lower rates at any level
  }
}

double FluidNetwork::next_event() {
  activate_due();
  if (dirty_from_ >= 0) solve_from(dirty_from_);
  double next = kNever;
  for (std::uint32_t id : unlimited_)
    if (active_[id]) next = std::min(next, state_[id].done_date);
  for (const Saturation& s : order_) next = std::min(next, s.first_done);
  if (!latency_ends_.empty()) next = std::min(next, latency_ends_.top().key);
  return next;
}

void FluidNetwork::advance_to(double date, std::vector<std::uint32_t>& done) {
  if (date < now_) throw std::logic_error("FluidNetwork: time runs backwards");
  now_ = date;
  // The flows due now: in the saturations whose earliest completion is due, and the unlimited ones.
  due_.clear();
  for (std::size_t s = 0; s < order_.size(); ++s) {
    if (!due(order_[s].first_done)) continue;
    const std::size_t end = s + 1 < order_.size() ? order_[s + 1].flows_begin : order_flows_.size();
    for (std::size_t j = order_[s].flows_begin; j < end; ++j) {
      const std::uint32_t id = order_flows_[j];
      if (active_[id] && due(state_[id].done_date)) due_.push_back(id);
    }
  }
  for (std::uint32_t id : unlimited_)
    if (active_[id] && due(state_[id].done_date)) due_.push_back(id);
  // In order of completion date, then id: the order rate sums are updated in.
  std::sort(due_.begin(), due_.end(), [&](std::uint32_t a, std::uint32_t b) {
    const double da = state_[a].done_date, db = state_[b].done_date;
    return da != db ? da < db : a < b;
  });
  const std::size_t first = done.size();
  for (std::uint32_t id : due_) {
    const FlowInfo& f = info_[id];
    const double rate = state_[id].rate;
    const int* cs = constraint_pool_.data() + f.pool_begin;  // data(): a flow may have no constraints
    for (std::uint32_t q = 0; q < f.pool_size; ++q) constraints_[static_cast<std::size_t>(cs[q])].rate_sum -= rate;
    // Nothing that saturated below this flow's level changes (see the header).
    if (dirty_from_ < 0 || position_[id] < dirty_from_) dirty_from_ = std::max(0, position_[id]);
    active_[id] = 0;
    ++info_[id].version;
    done.push_back(f.tag);
    free_flows_.push_back(id);
    if (f.own_bound >= 0) free_bounds_.push_back(f.own_bound);
  }
  std::sort(done.begin() + static_cast<std::ptrdiff_t>(first), done.end());
  unlimited_.erase(std::remove_if(unlimited_.begin(), unlimited_.end(), [&](std::uint32_t id) { return !active_[id]; }),
                   unlimited_.end());
  activate_due();
}

// Adds a re-solved flow to the suffix: its rate leaves its constraints (what stays is the frozen
// flows': Constraint::fixed) and it joins each constraint's list of unfrozen flows. The suffix
// arrays are sized beforehand (Suffix), so this writes through plain pointers.
void FluidNetwork::gather(Suffix& out, std::uint32_t flow, double rate, const int* constraints, std::uint32_t count) {
  const std::uint32_t j = out.flows++;
  out.id[j] = flow;
  out.old_rate[j] = rate;
  for (std::uint32_t q = 0; q < count; ++q) {
    const int c = constraints[q];
    const std::uint32_t entry = out.entries++;
    out.constraint[entry] = c;
    out.owner[entry] = j;
    out.next[entry] = kEndOfList;
    Constraint& x = constraints_[static_cast<std::size_t>(c)];
    x.rate_sum -= rate;
    if (x.stamp != out.stamp) {
      x.stamp = out.stamp;
      x.unfrozen = 0;
      x.open_first = entry;
      touched_.push_back(c);
    } else {
      out.next[x.open_last] = entry;
    }
    x.open_last = entry;
    ++x.unfrozen;
  }
  out.begin[j + 1] = out.entries;
}

// Progressive filling of every flow frozen at saturation `k` or later (and every new flow: k = 0),
// the flows frozen before it keeping their rates. The re-solved flows are gathered into the suffix
// arrays first (from the saturation order's own copy of their constraints, read in sequence).
void FluidNetwork::solve_from(int k) {
  dirty_from_ = -1;
  ++solves_;
  ++stamp_;
  if (k > static_cast<int>(order_.size())) k = static_cast<int>(order_.size());
  // order_flows_[cut..] are the flows frozen at saturation k or later.
  const std::size_t cut = static_cast<std::size_t>(k) < order_.size() ? order_[static_cast<std::size_t>(k)].flows_begin
                                                                       : order_flows_.size();
  // Upper bounds of the suffix's flows and (flow, constraint) entries, to size its arrays once.
  std::size_t max_flows = 0, max_entries = 0;
  if (k == 0) {
    max_flows = state_.size();
    max_entries = constraint_pool_.size();
  } else {
    max_flows = order_flows_.size() - cut;
    max_entries = order_begin_.back() - order_begin_[cut];
  }
  const auto fit = [](auto& v, std::size_t size) {
    if (v.size() < size) v.resize(size);
  };
  fit(suffix_, max_flows);
  fit(old_rate_, max_flows);
  fit(suffix_begin_, max_flows + 1);
  fit(suffix_constraints_, max_entries);
  fit(suffix_owner_, max_entries);
  fit(suffix_next_, max_entries);
  Suffix out{suffix_.data(),      old_rate_.data(),     suffix_begin_.data(), suffix_constraints_.data(),
             suffix_owner_.data(), suffix_next_.data(), 0,                    0,
             stamp_};
  out.begin[0] = 0;
  touched_.clear();
  if (k == 0) {
    for (std::uint32_t i = 0; i < state_.size(); ++i)
      if (active_[i]) gather(out, i, state_[i].rate, constraint_pool_.data() + info_[i].pool_begin, info_[i].pool_size);
  } else {
    // A flow in order_flows_[cut..] that is still active was frozen by the saturation it is listed
    // under (a flow's id is reused only after it ends, and an arrival re-solves everything).
    std::size_t s = static_cast<std::size_t>(k);
    for (std::size_t j = cut; j < order_flows_.size(); ++j) {
      while (s + 1 < order_.size() && order_[s + 1].flows_begin <= j) ++s;
      const std::uint32_t i = order_flows_[j];
      if (active_[i])
        gather(out, i, order_[s].level, order_constraints_.data() + order_begin_[j], order_begin_[j + 1] - order_begin_[j]);
    }
  }
  if (k == 0) unlimited_.clear();  // re-gathered with every other active flow
  const std::size_t n = out.flows;
  order_.resize(static_cast<std::size_t>(k));
  order_flows_.resize(cut);
  order_begin_.resize(cut + 1);
  order_constraints_.resize(order_begin_.back());
  flows_resolved_ += n;
  const int* sc = suffix_constraints_.data();
  const std::uint32_t* sb = suffix_begin_.data();

  const std::vector<int>& touched = touched_;
  for (int c : touched) {
    Constraint& x = constraints_[static_cast<std::size_t>(c)];
    if (k == 0) x.rate_sum = 0;  // every active flow is re-solved: clears rounding drift
    x.fixed = x.rate_sum;
  }

  new_position_.assign(n, -1);
  new_rate_.resize(n);
  const auto later = [](const Entry& a, const Entry& b) { return a > b; };
  levels_.clear();
  for (int c : touched) {
    Constraint& x = constraints_[static_cast<std::size_t>(c)];
    levels_.push_back({(x.capacity - x.fixed) / x.unfrozen, static_cast<std::uint32_t>(c), 0});
  }
  std::make_heap(levels_.begin(), levels_.end(), later);
  double last_level = order_.empty() ? 0.0 : order_.back().level;
  while (!levels_.empty()) {
    std::pop_heap(levels_.begin(), levels_.end(), later);
    const Entry e = levels_.back();
    levels_.pop_back();
    Constraint& x = constraints_[e.id];
    if (x.unfrozen == 0) continue;
    // Keys are lazy: a flow frozen elsewhere only raises the levels of its other constraints (it
    // freezes at the current minimum), so a key is a lower bound of its constraint's level. A
    // constraint whose level moved since its key goes back with the level it has now.
    const double current = (x.capacity - x.fixed) / x.unfrozen;
    if (current != e.key) {
      levels_.push_back({current, e.id, 0});
      std::push_heap(levels_.begin(), levels_.end(), later);
      continue;
    }
    // Levels never decrease in exact arithmetic; rounding must not make one negative.
    const double level = std::max(e.key, last_level);
    last_level = level;
    const int position = static_cast<int>(order_.size());
    order_.push_back({level, static_cast<std::uint32_t>(order_flows_.size()), kNever});
    for (std::uint32_t entry = x.open_first; entry != kEndOfList; entry = suffix_next_[entry]) {
      const std::uint32_t j = suffix_owner_[entry];
      if (new_position_[j] >= 0) continue;
      new_position_[j] = position;
      new_rate_[j] = level;
      order_flows_.push_back(suffix_[j]);
      for (std::uint32_t q = sb[j]; q < sb[j + 1]; ++q) {
        order_constraints_.push_back(sc[q]);
        if (static_cast<std::uint32_t>(sc[q]) == e.id) continue;
        Constraint& y = constraints_[static_cast<std::size_t>(sc[q])];
        y.fixed += level;
        --y.unfrozen;
      }
      order_begin_.push_back(static_cast<std::uint32_t>(order_constraints_.size()));
    }
    x.fixed += x.unfrozen * level;  // now every active flow's rate on it
    x.unfrozen = 0;
  }
  for (int c : touched) {
    Constraint& x = constraints_[static_cast<std::size_t>(c)];
    x.rate_sum = x.fixed;
  }

  // New rates: bytes left at the old rate up to now, then the completion date at the new one.
  for (std::size_t j = 0; j < n; ++j) {
    const std::uint32_t id = suffix_[j];
    FlowState& st = state_[id];
    if (new_position_[j] < 0) {  // crosses no constraint: nothing limits it
      new_position_[j] = static_cast<int>(order_.size());
      new_rate_[j] = kNever;
      unlimited_.push_back(id);
    }
    position_[id] = new_position_[j];
    st.rate = new_rate_[j];
    if (st.rate != old_rate_[j]) {
      st.bytes_left = std::max(0.0, st.bytes_left - old_rate_[j] * (now_ - st.since));
      st.since = now_;
      st.done_date = st.bytes_left <= 0 ? now_ : now_ + st.bytes_left / st.rate;
    }
    if (new_position_[j] < static_cast<int>(order_.size())) {
      double& first = order_[static_cast<std::size_t>(new_position_[j])].first_done;
      first = std::min(first, st.done_date);
    }
  }
}

}  // namespace ccsim
