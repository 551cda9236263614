// A flow-level network with max-min fair sharing, solved incrementally (docs/engine.md, "The fluid
// solver"): the same model as the SimGrid replay (CM02 with its corrections off: a flow spends its
// route's latency, then shares every constraint it crosses max-min fairly with the flows in their
// bandwidth phase, each flow at most its own rate bound), for systems of thousands of flows.
//
// Why not SimGrid for those: its solver re-solves the whole system at every event, walking every
// constraint once per saturation level, so a skewed all-to-all rail of n flows costs about n^2.6
// (EP512's 4k-flow rails took 10 s each, EP1024's 16k-flow rails several minutes). Progressive
// filling saturates constraints in increasing order of level; a flow that leaves at level L
// changes nothing that saturated below L, so after a completion only the flows frozen at L or above
// are re-solved (the order of saturations is kept from one solve to the next). The flows that
// finish first are the fast ones, high in that order, so a re-solve usually touches few flows.
//
// Deterministic: results depend on the flows and their start dates, not on the order of calls
// within one date.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

namespace ccsim {

class FluidNetwork {
 public:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  // A resource shared max-min by the flows that cross it (bytes per second, > 0).
  int add_constraint(double capacity_Bps);

  // A flow of `bytes` that starts now over `constraints` (ids from add_constraint, each at most
  // once), spends `latency_s` first, and never goes faster than `bound_Bps` (0: no bound). `tag` is
  // what completions report.
  void start(const std::vector<int>& constraints, double bytes, double latency_s, double bound_Bps,
             std::uint32_t tag);

  double now() const { return now_; }
  // The date of the next completion or end of a latency (kNever when nothing is in flight).
  double next_event();
  // Moves the clock to `date` (now <= date <= next_event()) and appends the tags of the flows that
  // complete at that date to `done`, in ascending tag order.
  void advance_to(double date, std::vector<std::uint32_t>& done);

  std::size_t solves() const { return solves_; }
  std::size_t flows_resolved() const { return flows_resolved_; }

 private:
  struct Flow {
    std::vector<int> constraints;
    double bytes_left = 0;  // at `since`
    double since = 0;
    double rate = 0;
    std::uint32_t tag = 0;
    std::uint32_t version = 0;  // bumps at every start and end (a reused slot's stale latency entry)
    int position = -1;          // index in order_ of the saturation that froze it (-1: not yet solved)
    int own_bound = -1;         // the constraint that carries its rate bound (-1: none)
    bool active = false;        // in the bandwidth phase
  };
  struct Constraint {
    double capacity = 0;
    double rate_sum = 0;              // rates of the active flows that cross it
    std::vector<std::uint32_t> open;  // during a solve: unfrozen flows crossing it
    int unfrozen = 0;
    double fixed = 0;                 // during a solve: rates of the frozen flows crossing it
    std::uint32_t stamp = 0;          // the solve that last touched it
  };
  struct Saturation {
    double level;
    std::uint32_t flows_begin;  // into order_flows_
  };
  // A date and a flow (with the flow's version), or a level and a constraint.
  struct Entry {
    double key;
    std::uint32_t id, version;
    bool operator>(const Entry& o) const { return key != o.key ? key > o.key : id > o.id; }
  };
  using MinHeap = std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>>;

  void solve_from(int position);
  void activate_due();
  bool same_date(double a, double b) const;

  double now_ = 0;
  std::vector<Constraint> constraints_;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_flows_;
  std::vector<int> free_bounds_;  // bound constraints of finished flows, reused by later ones
  // The flows in their bandwidth phase by completion date: a binary heap indexed by flow, so that
  // a new rate moves the flow's entry instead of leaving a stale one behind.
  class CompletionHeap {
   public:
    void set(std::uint32_t flow, double date);
    void erase(std::uint32_t flow);
    bool empty() const { return heap_.empty(); }
    std::uint32_t top() const { return heap_.front(); }
    double top_date() const { return date_[heap_.front()]; }

   private:
    bool before(std::uint32_t a, std::uint32_t b) const {
      return date_[a] != date_[b] ? date_[a] < date_[b] : a < b;
    }
    void place(std::size_t i, std::uint32_t flow);
    void up(std::size_t i);
    void down(std::size_t i);
    std::vector<std::uint32_t> heap_;
    std::vector<double> date_;
    std::vector<std::int64_t> slot_;  // per flow: index in heap_ (-1: absent)
  };

  MinHeap latency_ends_;  // (date the bandwidth phase begins, flow)
  CompletionHeap completions_;
  std::vector<Entry> levels_;  // during a solve, a min-heap of (a lower bound of the level, constraint)
  // Scratch of solve_from, kept to reuse its memory.
  std::vector<std::uint32_t> suffix_;
  std::vector<double> old_rate_;
  std::vector<int> touched_;
  std::vector<Saturation> order_;
  std::vector<std::uint32_t> order_flows_;
  int dirty_from_ = -1;  // the first saturation to redo (-1: none); 0 after an arrival
  std::uint32_t stamp_ = 0;
  std::size_t solves_ = 0, flows_resolved_ = 0;
};

}  // namespace ccsim
