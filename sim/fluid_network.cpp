#include "sim/fluid_network.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ccsim {

void FluidNetwork::CompletionHeap::place(std::size_t i, std::uint32_t flow) {
  heap_[i] = flow;
  slot_[flow] = static_cast<std::int64_t>(i);
}

void FluidNetwork::CompletionHeap::up(std::size_t i) {
  const std::uint32_t flow = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!before(flow, heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, flow);
}

void FluidNetwork::CompletionHeap::down(std::size_t i) {
  const std::uint32_t flow = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], flow)) break;
    place(i, heap_[child]);
    i = child;
  }
  place(i, flow);
}

void FluidNetwork::CompletionHeap::set(std::uint32_t flow, double date) {
  if (flow >= slot_.size()) {
    slot_.resize(flow + 1, -1);
    date_.resize(flow + 1, 0.0);
  }
  date_[flow] = date;
  if (slot_[flow] < 0) {
    heap_.push_back(flow);
    up(heap_.size() - 1);
    return;
  }
  const auto i = static_cast<std::size_t>(slot_[flow]);
  up(i);
  down(static_cast<std::size_t>(slot_[flow]));
}

void FluidNetwork::CompletionHeap::erase(std::uint32_t flow) {
  if (flow >= slot_.size() || slot_[flow] < 0) return;
  const auto i = static_cast<std::size_t>(slot_[flow]);
  slot_[flow] = -1;
  const std::uint32_t last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  place(i, last);
  up(i);
  down(static_cast<std::size_t>(slot_[last]));
}

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
    id = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[id];
  f.constraints = constraints;
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
    f.constraints.push_back(f.own_bound);
  }
  f.bytes_left = std::max(0.0, bytes);
  f.since = now_ + std::max(0.0, latency_s);
  f.rate = 0;
  f.tag = tag;
  ++f.version;
  f.position = -1;
  f.active = false;
  latency_ends_.push({f.since, id, f.version});
}

bool FluidNetwork::same_date(double a, double b) const {
  // Dates computed along different paths for one instant differ in their last bits.
  return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b)) + 1e-18;
}

void FluidNetwork::activate_due() {
  while (!latency_ends_.empty() && (latency_ends_.top().key <= now_ || same_date(latency_ends_.top().key, now_))) {
    const Entry e = latency_ends_.top();
    latency_ends_.pop();
    Flow& f = flows_[e.id];
    if (f.version != e.version) continue;
    f.active = true;
    f.since = now_;
    dirty_from_ = 0;  // an arrival can lower rates at any level
  }
}

double FluidNetwork::next_event() {
  activate_due();
  if (dirty_from_ >= 0) solve_from(dirty_from_);
  double next = kNever;
  if (!completions_.empty()) next = completions_.top_date();
  if (!latency_ends_.empty()) next = std::min(next, latency_ends_.top().key);
  return next;
}

void FluidNetwork::advance_to(double date, std::vector<std::uint32_t>& done) {
  if (date < now_) throw std::logic_error("FluidNetwork: time runs backwards");
  now_ = date;
  const std::size_t first = done.size();
  while (!completions_.empty()) {
    const double when = completions_.top_date();
    if (!(when <= now_ || same_date(when, now_))) break;
    const std::uint32_t id = completions_.top();
    completions_.erase(id);
    Flow& f = flows_[id];
    for (int c : f.constraints) constraints_[static_cast<std::size_t>(c)].rate_sum -= f.rate;
    // Nothing that saturated below this flow's level changes (see the header).
    if (dirty_from_ < 0 || f.position < dirty_from_) dirty_from_ = std::max(0, f.position);
    f.active = false;
    ++f.version;
    done.push_back(f.tag);
    free_flows_.push_back(id);
    if (f.own_bound >= 0) free_bounds_.push_back(f.own_bound);
  }
  std::sort(done.begin() + static_cast<std::ptrdiff_t>(first), done.end());
  activate_due();
}

// Progressive filling of every flow frozen at saturation `k` or later (and every new flow: k = 0),
// the flows frozen before it keeping their rates.
void FluidNetwork::solve_from(int k) {
  dirty_from_ = -1;
  ++solves_;
  ++stamp_;
  if (k > static_cast<int>(order_.size())) k = static_cast<int>(order_.size());
  // order_flows_[cut..] are the flows frozen at saturation k or later.
  const std::size_t cut = static_cast<std::size_t>(k) < order_.size() ? order_[static_cast<std::size_t>(k)].flows_begin
                                                                       : order_flows_.size();
  std::vector<std::uint32_t>& suffix = suffix_;
  suffix.clear();
  if (k == 0) {
    for (std::uint32_t i = 0; i < flows_.size(); ++i)
      if (flows_[i].active) suffix.push_back(i);
  } else {
    for (std::size_t j = cut; j < order_flows_.size(); ++j) {
      const std::uint32_t i = order_flows_[j];
      if (flows_[i].active && flows_[i].position >= k) suffix.push_back(i);
    }
  }
  order_.resize(static_cast<std::size_t>(k));
  order_flows_.resize(cut);
  flows_resolved_ += suffix.size();

  // The re-solved flows' rates leave their constraints; what stays is the frozen flows' (fixed).
  std::vector<double>& old_rate = old_rate_;
  old_rate.resize(suffix.size());
  for (std::size_t j = 0; j < suffix.size(); ++j) {
    Flow& f = flows_[suffix[j]];
    old_rate[j] = f.rate;
    for (int c : f.constraints) constraints_[static_cast<std::size_t>(c)].rate_sum -= f.rate;
    f.position = -1;
  }
  std::vector<int>& touched = touched_;
  touched.clear();
  for (std::uint32_t i : suffix)
    for (int c : flows_[i].constraints) {
      Constraint& x = constraints_[static_cast<std::size_t>(c)];
      if (x.stamp != stamp_) {
        x.stamp = stamp_;
        if (k == 0) x.rate_sum = 0;  // every active flow is re-solved: clears rounding drift
        x.fixed = x.rate_sum;
        x.open.clear();
        x.unfrozen = 0;
        touched.push_back(c);
      }
      x.open.push_back(i);
      ++x.unfrozen;
    }
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
    order_.push_back({level, static_cast<std::uint32_t>(order_flows_.size())});
    for (std::uint32_t i : x.open) {
      Flow& f = flows_[i];
      if (f.position >= 0) continue;
      f.position = position;
      f.rate = level;
      order_flows_.push_back(i);
      for (int c : f.constraints) {
        if (static_cast<std::uint32_t>(c) == e.id) continue;
        Constraint& y = constraints_[static_cast<std::size_t>(c)];
        y.fixed += level;
        --y.unfrozen;
      }
    }
    x.unfrozen = 0;
  }

  // New rates: bytes left at the old rate up to now, then the completion date at the new one.
  for (std::size_t j = 0; j < suffix.size(); ++j) {
    Flow& f = flows_[suffix[j]];
    if (f.position < 0) {  // crosses no constraint: nothing limits it
      f.position = static_cast<int>(order_.size());
      f.rate = kNever;
    }
    for (int c : f.constraints) constraints_[static_cast<std::size_t>(c)].rate_sum += f.rate;
    if (f.rate == old_rate[j]) continue;
    f.bytes_left = std::max(0.0, f.bytes_left - old_rate[j] * (now_ - f.since));
    f.since = now_;
    completions_.set(suffix[j], f.bytes_left <= 0 ? now_ : now_ + f.bytes_left / f.rate);
  }
}

}  // namespace ccsim
