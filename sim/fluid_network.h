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
  // Per flow (indexed by id; a finished flow's id is reused). What a re-solve rewrites sits in one
  // 32-byte record; the rest is read at start and end only.
  struct FlowState {
    double bytes_left = 0;  // at `since`
    double since = 0;
    double rate = 0;
    double done_date = kNever;  // the completion date at `rate`
  };
  struct FlowInfo {
    std::uint32_t tag = 0;
    std::uint32_t version = 0;  // bumps at every start and end (a reused slot's stale latency entry)
    int own_bound = -1;         // the constraint that carries its rate bound (-1: none)
    std::uint32_t pool_begin = 0, pool_size = 0, pool_capacity = 0;  // its constraints in constraint_pool_
  };
  struct Constraint {
    double capacity = 0;
    double rate_sum = 0;           // rates of the active flows that cross it
    double fixed = 0;              // during a solve: rates of the frozen flows crossing it
    int unfrozen = 0;              // during a solve: unfrozen flows crossing it
    std::uint32_t open_first = 0;  // during a solve: the re-solved flows crossing it, a list through
    std::uint32_t open_last = 0;   // suffix_next_ (entries of suffix_constraints_), in suffix order
    std::uint32_t stamp = 0;       // the solve that last touched it
  };
  // The s-th saturation of the last solves: its level (the rate of every flow it froze), its flows
  // (order_flows_[flows_begin ..]) and the earliest completion date among them. A flow keeps its
  // rate until its saturation is re-solved, so that earliest flow stays the earliest: no per-flow
  // heap of completion dates is needed, only a scan of the saturations' dates.
  struct Saturation {
    double level;
    std::uint32_t flows_begin;
    double first_done;
  };
  // A date and a flow (with the flow's version), or a level and a constraint.
  struct Entry {
    double key;
    std::uint32_t id, version;
    bool operator>(const Entry& o) const { return key != o.key ? key > o.key : id > o.id; }
  };
  using MinHeap = std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>>;

  static constexpr std::uint32_t kEndOfList = 0xffffffffu;
  void solve_from(int position);
  // The suffix arrays being filled by gather.
  struct Suffix {
    std::uint32_t* id;
    double* old_rate;
    std::uint32_t* begin;  // [flows + 1]
    int* constraint;
    std::uint32_t* owner;
    std::uint32_t* next;
    std::uint32_t flows, entries;
    std::uint32_t stamp;
  };
  void gather(Suffix& out, std::uint32_t flow, double rate, const int* constraints, std::uint32_t count);
  void activate_due();
  bool same_date(double a, double b) const;
  bool due(double date) const { return date <= now_ || same_date(date, now_); }

  double now_ = 0;
  std::vector<Constraint> constraints_;
  std::vector<FlowState> state_;
  std::vector<FlowInfo> info_;
  std::vector<int> position_;           // per flow: the saturation that froze it (-1: none yet)
  std::vector<std::uint8_t> active_;    // per flow: in the bandwidth phase
  std::vector<int> constraint_pool_;    // every flow's constraints (FlowInfo::pool_begin)
  std::vector<std::uint32_t> free_flows_;
  std::vector<int> free_bounds_;  // bound constraints of finished flows, reused by later ones
  MinHeap latency_ends_;          // (date the bandwidth phase begins, flow)
  std::vector<Entry> levels_;     // during a solve, a min-heap of (a lower bound of the level, constraint)

  // The saturation order of the last solves, kept from one solve to the next. order_flows_[i] is
  // the i-th flow frozen; its constraints are order_constraints_[order_begin_[i] .. order_begin_[i+1])
  // (a copy, so that a re-solve reads them in sequence).
  std::vector<Saturation> order_;
  std::vector<std::uint32_t> order_flows_;
  std::vector<std::uint32_t> order_begin_{0};
  std::vector<int> order_constraints_;
  std::vector<std::uint32_t> unlimited_;  // flows that cross no constraint: done at the solve's date

  // Scratch of solve_from, kept to reuse its memory: the re-solved flows (the suffix) in
  // contiguous arrays, so that the saturation loop works on a few kB instead of the whole network.
  std::vector<std::uint32_t> suffix_;        // flow ids
  std::vector<double> old_rate_, new_rate_;  // per suffix flow
  std::vector<int> new_position_;            // per suffix flow (-1: not frozen yet)
  std::vector<std::uint32_t> suffix_begin_;  // per suffix flow, its constraints in suffix_constraints_
  std::vector<int> suffix_constraints_;
  std::vector<std::uint32_t> suffix_owner_;  // per entry of suffix_constraints_: its suffix flow
  std::vector<std::uint32_t> suffix_next_;   // per entry: the next entry of the same constraint
  std::vector<int> touched_;
  std::vector<std::uint32_t> due_;  // scratch of advance_to

  int dirty_from_ = -1;  // the first saturation to redo (-1: none); 0 after an arrival
  std::uint32_t stamp_ = 0;
  std::size_t solves_ = 0, flows_resolved_ = 0;
};

}  // namespace ccsim
