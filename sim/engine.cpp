#include "sim/engine.h"

#include <simgrid/s4u.hpp>

#include <boost/heap/fibonacci_heap.hpp>

#include <algorithm>
#include <vector>
#include <sstream>
#include <cmath>
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "algorithms/endpoint_route.h"
#include "common/error.h"
#include "common/text.h"
#include "sim/fluid_network.h"
#include "sim/isolated_run.h"
#include "sim/merge.h"
#include "sim/symmetry.h"
#include "algorithms/shm_two_way.h"
#include "topologies/routing.h"

namespace sg4 = simgrid::s4u;

namespace ccsim {

namespace {

// CCSIM_SIMGRID_CFG (docs/engine.md): one SimGrid `KEY:VALUE` among the solver settings the engine's
// comparisons vary, with a value SimGrid accepts and that keeps times physical. Anything else is
// refused here, in one line: SimGrid's xbt aborted the child on an unknown value (signal 6), and a
// latency factor of 1e300 printed 8e300 us with exit 0.
std::string checked_simgrid_cfg(const std::string& cfg) {
  struct Key {
    const char* name;
    const char* kind;  // "choice" (values in `choices`), "bool", or "number" in [lo, hi] (lo excluded if open)
    std::vector<std::string> choices;
    double lo, hi;
    bool lo_open;
  };
  static const std::vector<std::string> bools = {"yes", "no", "true", "false", "on", "off", "1", "0"};
  static const std::vector<Key> keys = {
      {"network/model", "choice", {"CM02", "LV08"}, 0, 0, false},
      {"network/optim", "choice", {"Full", "Lazy"}, 0, 0, false},
      {"network/maxmin-selective-update", "bool", bools, 0, 0, false},
      // Only off: ccsim's star platform declares no reverse routes, and SimGrid aborts with it on.
      {"network/crosstraffic", "choice", {"0", "no", "false", "off"}, 0, 0, false},
      {"network/latency-factor", "number", {}, 0, 10, true},
      {"network/bandwidth-factor", "number", {}, 0, 1, true},
      {"network/weight-S", "number", {}, 0, 1e6, false},
      {"surf/precision", "number", {}, 1e-15, 1e-2, false},
      {"maxmin/precision", "number", {}, 1e-15, 1e-2, false},
  };
  const auto colon = cfg.find(':');
  const std::string key = cfg.substr(0, colon);
  const std::string value = colon == std::string::npos ? "" : cfg.substr(colon + 1);
  std::string valid;
  const Key* found = nullptr;
  for (const auto& k : keys) {
    if (key == k.name) found = &k;
    valid += (valid.empty() ? "" : ", ") + std::string(k.name);
  }
  if (!found || colon == std::string::npos)
    throw InputError("CCSIM_SIMGRID_CFG", "expected KEY:VALUE with KEY one of " + valid + " (got '" +
                                              cut_for_message(cfg) + "')");
  const std::string got = " (got '" + cut_for_message(value) + "')";
  const std::string kind = found->kind;
  if (kind != "number") {
    if (std::find(found->choices.begin(), found->choices.end(), value) == found->choices.end()) {
      std::string list;
      for (const auto& c : found->choices) list += (list.empty() ? "" : ", ") + c;
      throw InputError("CCSIM_SIMGRID_CFG", key + " must be one of " + list + got);
    }
    return cfg;
  }
  char* end = nullptr;
  const double v = value.empty() ? 0 : std::strtod(value.c_str(), &end);
  const bool number = !value.empty() && end == value.c_str() + value.size() && std::isfinite(v);
  if (!number || (found->lo_open ? !(v > found->lo) : !(v >= found->lo)) || !(v <= found->hi)) {
    std::ostringstream range;
    range << (found->lo_open ? "(" : "[") << found->lo << ", " << found->hi << "]";
    throw InputError("CCSIM_SIMGRID_CFG", key + " must be a number in " + range.str() + got);
  }
  return cfg;
}

// CCSIM_PROFILE=1 prints the wall time of each engine phase on stderr (docs/performance.md).
double prof_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
void prof(const char* what, double& t) {
  if (!std::getenv("CCSIM_PROFILE")) return;
  const double n = prof_now();
  std::fprintf(stderr, "[profile] %s %.3f s\n", what, n - t);
  t = n;
}

// SimGrid moves whole bytes; schedules may split a small buffer into fractions of a byte. Scaling
// bytes and bandwidths by the same factor keeps every time unchanged and keeps 1/1024 B resolution.
constexpr double kByteScale = 1024.0;

// ---- result serialization (child -> parent) ----
class Writer {
 public:
  void num(double v) { buf_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void str(const std::string& s) {
    num(static_cast<double>(s.size()));
    buf_.append(s);
  }
  void nums(const std::vector<double>& v) {
    num(static_cast<double>(v.size()));
    buf_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
  }
  std::string take() { return std::move(buf_); }

 private:
  std::string buf_;
};

class Reader {
 public:
  explicit Reader(const std::string& b) : buf_(b) {}
  double num() {
    double v;
    std::memcpy(&v, buf_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string str() {
    const auto n = static_cast<std::size_t>(num());
    std::string s = buf_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::vector<double> nums() {
    const auto n = static_cast<std::size_t>(num());
    std::vector<double> v(n);
    // An empty vector's data() may be null, and memcpy from or to null is undefined even for 0 bytes
    // (UBSan's finding, docs/sanitizers.md).
    if (n > 0) std::memcpy(v.data(), buf_.data() + pos_, n * sizeof(double));
    pos_ += n * sizeof(double);
    return v;
  }

 private:
  const std::string& buf_;
  std::size_t pos_ = 0;
};

std::string serialize(const SimResult& r) {
  Writer w;
  w.num(r.time_s);
  w.nums(r.rank_finish_s);
  w.nums(r.transfer_start_s);
  w.nums(r.transfer_end_s);
  w.num(static_cast<double>(r.links.size()));
  for (const auto& l : r.links) {
    w.str(l.from);
    w.str(l.to);
    w.str(l.label);
    w.num(static_cast<double>(static_cast<int>(l.kind)));
    w.num(l.bandwidth_Bps);
    w.num(l.bytes);
    w.num(l.busy_s);
  }
  w.num(static_cast<double>(r.transfers));
  w.num(static_cast<double>(r.flows_simulated));
  w.num(r.symmetry_order);
  w.num(r.merge_bundle);
  return w.take();
}

SimResult deserialize(const std::string& data) {
  Reader rd(data);
  SimResult r;
  r.time_s = rd.num();
  r.rank_finish_s = rd.nums();
  r.transfer_start_s = rd.nums();
  r.transfer_end_s = rd.nums();
  const auto links = static_cast<std::size_t>(rd.num());
  for (std::size_t i = 0; i < links; ++i) {
    LinkStat l;
    l.from = rd.str();
    l.to = rd.str();
    l.label = rd.str();
    l.kind = static_cast<LinkKind>(static_cast<int>(rd.num()));
    l.bandwidth_Bps = rd.num();
    l.bytes = rd.num();
    l.busy_s = rd.num();
    r.links.push_back(std::move(l));
  }
  r.transfers = static_cast<std::size_t>(rd.num());
  r.flows_simulated = static_cast<std::size_t>(rd.num());
  r.symmetry_order = static_cast<int>(rd.num());
  r.merge_bundle = static_cast<int>(rd.num());
  return r;
}

// Starts due at a later simulated time, with SimGrid's public S4U API only (docs/engine.md, "The
// agenda"). The replay runs the engine up to the earliest entry (Engine::run_until: the solver's
// next step is bounded by that date, exactly as a kernel timer bounds it) and fires the entries
// whose date has come. An entry added while the engine runs, earlier than the date it runs to, ends
// that run after the current step: an Exec without a host can never start, so vetoable_start()
// puts it in the set Engine::track_vetoed_activities watches, and a non-empty set stops the run.
// Entries fire in the order SimGrid fired its timers: the same heap (a Fibonacci heap ordered by
// date alone) under the same pushes and pops, and due entries before the step's completions.
class Agenda {
 public:
  // `id` fires at `date` (> now).
  void add(double date, std::uint32_t id) {
    heap_.push({date, id});
    if (running_ && (bound_ < 0 || date < bound_) && vetoed_.empty()) stopper_->vetoable_start();
  }
  bool empty() const { return heap_.empty(); }
  double next_date() const { return heap_.top().first; }
  // Pops and fires every entry whose date has come (<= now), earliest first.
  template <class Fire> void fire_due(double now, Fire&& fire) {
    while (!heap_.empty() && now >= heap_.top().first) {
      const std::uint32_t id = heap_.top().second;
      heap_.pop();
      fire(id);
    }
  }
  // Runs the simulation to its end; `fire` may add entries and start activities.
  template <class Fire> void run(const sg4::Engine& engine, Fire&& fire) {
    stopper_ = sg4::Exec::init();  // no host: never assigned, so every vetoable_start() is vetoed
    engine.track_vetoed_activities(&vetoed_);
    for (;;) {
      const bool bounded = !heap_.empty();
      bound_ = bounded ? heap_.top().first : -1.0;
      running_ = true;
      if (bounded)
        engine.run_until(bound_);
      else
        engine.run();
      running_ = false;
      const bool stopped = !vetoed_.empty();
      vetoed_.clear();
      fire_due(sg4::Engine::get_clock(), fire);
      if (!bounded && !stopped) break;  // nothing left to simulate and nothing added meanwhile
    }
    engine.track_vetoed_activities(nullptr);
    stopper_ = nullptr;
  }

 private:
  struct Later {
    bool operator()(const std::pair<double, std::uint32_t>& a, const std::pair<double, std::uint32_t>& b) const {
      return a.first > b.first;
    }
  };
  boost::heap::fibonacci_heap<std::pair<double, std::uint32_t>, boost::heap::compare<Later>> heap_;
  std::set<sg4::Activity*> vetoed_;
  sg4::ExecPtr stopper_;
  double bound_ = -1.0;  // the date the engine runs to (-1: to the end)
  bool running_ = false;
};

// A resource of the platform, shared max-min by the flows that cross it: a link direction (or a
// merged set of them), a connection's cap, or a GPU's issue rate.
struct Resource {
  double bandwidth_Bps = 0;  // scaled by kByteScale
  std::string name;
};

// Everything the replay shares during one simulation. The replay has no actors: transfers are
// started from SimGrid's completion callbacks (maestro context) and from the agenda, which costs
// no context switch, semaphore or actor stack per transfer (docs/engine.md, "event-driven replay").
struct Replay {
  std::vector<std::uint32_t> reps;            // representative transfer ids (merged schedule)
  std::vector<int> route_of;                  // per rep index: route index
  std::vector<double> bytes, delay;           // per rep index
  std::vector<int> pending;                   // per rep index: unfinished dependencies + lane slot
  std::vector<double> ready_at;               // per rep index: latest dependency end
  std::vector<std::uint32_t> succ_begin, succ; // CSR successors (rep indices)
  std::vector<std::int64_t> slot_next;        // per rep index: the lane's transfer that waits for this
                                              // one's pipeline slot (-1: none)
  std::vector<double> start, end;             // per rep index
  std::vector<double> route_delay;            // per route: fixed delay folded into the route's latency
  std::vector<double> route_latency_s;        // per route: that delay + its links' latencies
  std::vector<double> route_bound_Bps;        // per route: each flow's rate bound (0: none), scaled
  std::vector<std::vector<int>> route_resources;  // per route: the Resources it crosses
  std::vector<sg4::Host*> route_src, route_dst;
  std::vector<sg4::CommPtr> comms;            // per rep index while in flight
  sg4::CommPtr finished;                      // the last completed comm, released at the next completion
  Agenda agenda;                              // transfers (and markers) waiting for their ready time
  FluidNetwork* fluid = nullptr;              // with EngineOptions::fluid_solver: the network
};

// An agenda entry that begins a started transfer's bandwidth phase once its route latency is over.
constexpr std::uint32_t kBeginBandwidthPhase = 1u << 31;

double clock_of(const Replay* R) { return R->fluid ? R->fluid->now() : sg4::Engine::get_clock(); }

// The bytes of a started transfer begin to move: a SimGrid comm without latency, so that SimGrid's
// CM02 model, which weights each flow's max-min share by the inverse of its route latency (a
// flow with none counts as latency 1 s), shares every link equally between the flows on it.
void begin_bandwidth_phase(Replay* R, std::uint32_t t) {
  const auto route = static_cast<std::size_t>(R->route_of[t]);
  sg4::CommPtr c = sg4::Comm::sendto_init(R->route_src[route], R->route_dst[route]);
  c->set_payload_size(static_cast<std::uint64_t>(R->bytes[t] * kByteScale + 0.5));
  c->set_data(&R->reps[t]);  // any stable per-transfer address: the callback recovers t from it
  c->start();
  R->comms[t] = std::move(c);
}

// Starts transfer t now: its route latency (fixed delay and links), then its bytes.
void start_now(Replay* R, std::uint32_t t) {
  const auto route = static_cast<std::size_t>(R->route_of[t]);
  const double now = clock_of(R);
  R->start[t] = now;
  const double latency = R->route_latency_s[route];
  if (R->fluid) {
    R->fluid->start(R->route_resources[route], static_cast<double>(static_cast<std::uint64_t>(R->bytes[t] * kByteScale + 0.5)),
                    latency, R->route_bound_Bps[route], t);
  } else if (latency > 0) {
    R->agenda.add(now + latency, t | kBeginBandwidthPhase);
  } else {
    begin_bandwidth_phase(R, t);
  }
}

// All dependencies of t are done at the current time: start it once its ready time has come. The
// route's common fixed delay is part of its latency; only the excess (the launch cost of a first
// step) is waited for here, after the last data dependency (not after the pipeline slot).
void complete_marker(Replay* R, std::uint32_t t);

void launch(Replay* R, std::uint32_t t) {
  const double now = clock_of(R);
  if (R->route_of[t] < 0) {  // a marker: no route, no bytes
    const double ready = R->ready_at[t] + R->delay[t];
    if (ready > now)
      R->agenda.add(ready, t);
    else
      complete_marker(R, t);
    return;
  }
  const double ready = R->ready_at[t] + R->delay[t] - R->route_delay[R->route_of[t]];
  if (ready > now)
    R->agenda.add(ready, t);
  else
    start_now(R, t);
}

// An agenda entry whose time has come.
void fire(Replay* R, std::uint32_t t) {
  if (t & kBeginBandwidthPhase)
    begin_bandwidth_phase(R, t & ~kBeginBandwidthPhase);
  else if (R->route_of[t] < 0)
    complete_marker(R, t);
  else
    start_now(R, t);
}

void release_successors(Replay* R, std::uint32_t t);

// A marker (Transfer::is_marker) moves no bytes: it ends the moment its dependencies are done and its
// delay has passed, without SimGrid. It never touches R->finished: it may complete inside another
// transfer's completion callback.
void complete_marker(Replay* R, std::uint32_t t) {
  R->start[t] = R->end[t] = clock_of(R);
  release_successors(R, t);
}

void on_transfer_done(Replay* R, std::uint32_t t) {
  R->end[t] = clock_of(R);
  R->finished = std::move(R->comms[t]);  // releases the previous completion, whose callback is over
  release_successors(R, t);
}

void release_successors(Replay* R, std::uint32_t t) {
  const double now = R->end[t];
  for (std::uint32_t k = R->succ_begin[t]; k < R->succ_begin[t + 1]; ++k) {
    const std::uint32_t s = R->succ[k];
    R->ready_at[s] = std::max(R->ready_at[s], now);
    if (--R->pending[s] == 0) launch(R, s);
  }
  if (R->slot_next[t] >= 0) {
    const auto s = static_cast<std::uint32_t>(R->slot_next[t]);
    if (--R->pending[s] == 0) launch(R, s);
  }
}

double union_length(std::vector<std::pair<double, double>>& iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, cur_s = 0, cur_e = -1;
  bool open = false;
  for (const auto& [s, e] : iv) {
    if (!open || s > cur_e) {
      if (open) total += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
      open = true;
    } else {
      cur_e = std::max(cur_e, e);
    }
  }
  if (open) total += cur_e - cur_s;
  return total;
}

// What does not depend on the size: merged records and the symmetry quotient. Both are invariant
// under scaling every byte count by the same factor, so a sweep prepares them once.
struct Prepared {
  const Schedule* original = nullptr;
  MergedSchedule merged;
  Quotient q;
  // Per record of sched(): the SHM two-way weight of its bytes (algorithms/shm_two_way.h), the same for
  // every size a sweep scales the schedule to.
  std::vector<double> shm_weight;
  const Schedule& sched() const { return merged.schedule_or(*original); }
};

Prepared prepare(const Topology& topo, const Schedule& original, const EngineOptions& options) {
  double pt = prof_now();
  Prepared p;
  p.original = &original;
  if (original.orbit_order > 1) {
    // Orbit representatives (sim/ring_orbits.h, sim/p2p_orbits.h): the generator proved the quotient;
    // its records are unique by key, so nothing merges.
    if (!options.exploit_symmetry)
      throw std::logic_error("an orbit-representative schedule needs EngineOptions::exploit_symmetry");
    p.merged = unmerged(original);
    p.q = orbit_quotient(original);
    p.shm_weight = shm_two_way_weights(topo, p.sched());
    prof("quotient (generated)", pt);
    return p;
  }
  p.merged = options.merge_identical ? merge_identical_transfers(original) : unmerged(original);
  prof("merge", pt);
  p.q = options.exploit_symmetry ? find_quotient(topo, p.sched()) : identity_quotient(p.sched());
  p.shm_weight = shm_two_way_weights(topo, p.sched());
  prof("quotient", pt);
  return p;
}

// Replays on SimGrid: one platform link per resource (without latency: start_now waits for it on
// the agenda), a pair of hosts per route, the agenda driving Engine::run_until.
void replay_simgrid(Replay& R, const std::vector<Resource>& resources, const std::vector<std::uint32_t>& roots,
                    double& pt) {
  std::vector<std::string> args = {"ccsim",
                                   "--log=root.thres:critical",
                                   "--cfg=network/model:CM02",
                                   "--cfg=network/optim:Full",
                                   "--cfg=network/latency-factor:1",
                                   "--cfg=network/bandwidth-factor:1",
                                   "--cfg=network/TCP-gamma:0",
                                   "--cfg=network/crosstraffic:0",
                                   "--cfg=contexts/stack-size:128"};
  if (const char* extra = std::getenv("CCSIM_SIMGRID_CFG")) args.push_back("--cfg=" + checked_simgrid_cfg(extra));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  sg4::Engine engine(&argc, argv.data());
  auto* zone = sg4::create_star_zone("cluster");
  std::vector<sg4::Link*> links;
  for (const Resource& res : resources) links.push_back(zone->create_link(res.name, res.bandwidth_Bps)->seal());
  for (std::size_t r = 0; r < R.route_resources.size(); ++r) {
    // Names built by appends: GCC 12 warns falsely (-Wrestrict) on "s" + std::to_string(r) here.
    std::string name = std::to_string(r);
    auto* src = zone->create_host(name.insert(0, 1, 's'), 1e9);
    name[0] = 'd';
    auto* dst = zone->create_host(name, 1e9);
    std::vector<sg4::LinkInRoute> path;
    // A per-flow bound is a FATPIPE link: each flow limited to its bandwidth, never their sum
    // (Comm::set_rate would do, but SimGrid 3.32 refuses it on a host-to-host comm).
    if (R.route_bound_Bps[r] > 0)
      path.emplace_back(zone->create_link("cap" + name.substr(1), R.route_bound_Bps[r])
                            ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                            ->seal());
    for (int res : R.route_resources[r]) path.emplace_back(links[static_cast<std::size_t>(res)]);
    zone->add_route(src->get_netpoint(), nullptr, nullptr, nullptr, path, false);
    zone->add_route(nullptr, dst->get_netpoint(), nullptr, nullptr, {}, false);
    R.route_src.push_back(src);
    R.route_dst.push_back(dst);
  }
  zone->seal();
  R.comms.resize(R.reps.size());
  const auto fire_entry = [&R](std::uint32_t t) { fire(&R, t); };
  sg4::Activity::on_completion_cb([&R, &fire_entry](const sg4::Activity& a) {
    R.agenda.fire_due(sg4::Engine::get_clock(), fire_entry);  // entries due at this step first, as SimGrid's timers were
    on_transfer_done(&R, static_cast<std::uint32_t>(a.get_data<std::uint32_t>() - R.reps.data()));
  });
  for (std::uint32_t i : roots) launch(&R, i);
  prof("platform+launch", pt);
  R.agenda.run(engine, fire_entry);
}

// Replays on sim/fluid_network.h: the same resources as its constraints, the same latencies, bounds
// and order of events.
void replay_fluid(Replay& R, const std::vector<Resource>& resources, const std::vector<std::uint32_t>& roots,
                  double& pt) {
  FluidNetwork net;
  for (const Resource& res : resources) net.add_constraint(res.bandwidth_Bps);  // ids are the resources' indices
  R.comms.resize(R.reps.size());
  R.fluid = &net;
  const auto fire_entry = [&R](std::uint32_t t) { fire(&R, t); };
  for (std::uint32_t i : roots) launch(&R, i);
  prof("platform+launch", pt);
  std::vector<std::uint32_t> done;
  for (;;) {
    double next = net.next_event();
    if (!R.agenda.empty()) next = std::min(next, R.agenda.next_date());
    if (next == FluidNetwork::kNever) break;
    done.clear();
    net.advance_to(next, done);
    R.agenda.fire_due(next, fire_entry);  // entries due at this date first, as in the SimGrid replay
    for (std::uint32_t t : done) on_transfer_done(&R, t);
  }
  R.fluid = nullptr;
  if (std::getenv("CCSIM_PROFILE"))
    std::fprintf(stderr, "[profile] fluid: %zu solves, %zu flows re-solved\n", net.solves(), net.flows_resolved());
}

// finish[k] = max over the group's elements g of finish[g^-1 k]: the ranks' finish times of a
// schedule of orbit representatives, spread over the images.
void spread_over_orbits(const Topology& topo, const Quotient& q, std::vector<double>* finish) {
  const std::vector<double> reps = *finish;
  const int node_steps = q.node_shift > 0 ? topo.num_nodes() / q.node_shift : 1;
  const int local_steps = q.rail_rotation ? topo.gpus_per_node() : 1;
  for (int rank = 0; rank < static_cast<int>(reps.size()); ++rank) {
    if (reps[rank] == 0) continue;
    for (int m = 0; m < node_steps; ++m)
      for (int l = 0; l < local_steps; ++l) {
        double& f = (*finish)[static_cast<std::size_t>(rotate_gpu_rank(topo, rank, Rotation{m * q.node_shift, l}))];
        f = std::max(f, reps[rank]);
      }
  }
}

SimResult run_in_this_process(const Topology& topo, const Prepared& prep, double byte_factor,
                              const EngineOptions& options) {
  const Schedule& original = *prep.original;
  const Schedule& sched = prep.sched();
  const MergedSchedule& merged = prep.merged;
  const Quotient& q = prep.q;
  SimResult result;
  const bool orbits = original.orbit_order > 1;
  result.transfers = orbits ? original.orbit_full_records : original.transfers.size();
  if (orbits && options.record_transfers)
    throw std::logic_error("an orbit-representative schedule has no per-transfer times");
  result.rank_finish_s.assign(static_cast<std::size_t>(original.nranks), 0.0);
  if (original.transfers.empty()) return result;
  result.merge_bundle = merged.bundle;
  result.symmetry_order = q.order;
  // Orbit size / order of a folded link: 1 unless a rotation fixes it (switch endpoints only).
  std::map<LinkDirectionKey, double> share_memo;
  const auto folded_link_share = [&](const Hop& canonical) {
    if (sched.switches.empty() || q.order == 1) return 1.0;
    const LinkDirectionKey k = link_direction_key(topo, canonical);
    auto it = share_memo.find(k);
    if (it == share_memo.end())
      it = share_memo.emplace(k, static_cast<double>(link_orbit_size(topo, canonical, q)) / q.order).first;
    return it->second;
  };

  double pt = prof_now();
  Replay R;
  R.reps = q.reps;
  const std::size_t nrep = R.reps.size();
  std::vector<int> rep_index(sched.transfers.size(), -1);
  for (std::size_t i = 0; i < nrep; ++i) rep_index[R.reps[i]] = static_cast<int>(i);

  // Routes, folded onto their orbit representatives.
  // A route is (src, dst, rail); a connection under a cap (Schedule::inter_node_channel_cap_Bps,
  // source_channel_cap_Bps) is a route of its own per family and lane, so that the cap binds the
  // connection's pipelined flows together.
  std::map<std::tuple<int, int, int, int, int, bool, int>, int> route_id;
  std::vector<std::vector<Hop>> routes;
  std::vector<double> flow_cap_Bps;        // per route: each flow's cap (transfer_rate_cap_Bps; 0: none)
  std::vector<double> connection_cap_Bps;  // per route: the flows' total cap (0: none)
  std::vector<std::pair<int, int>> route_issue;  // per route: the GPU whose issue resource it crosses and
                                                 // the Schedule::gpu_issue_caps entry ((-1, -1): none)
  R.route_of.resize(nrep);
  const int gpn = topo.gpus_per_node();
  for (std::size_t i = 0; i < nrep; ++i) {
    const auto& t = sched.transfers[R.reps[i]];
    if (t.is_marker()) {
      R.route_of[i] = -1;
      continue;
    }
    const bool between_gpus = t.src < sched.nranks && t.dst < sched.nranks;
    const bool source = t.dep_count == 0 && sched.source_channel_cap_Bps > 0;
    // NCCL's SHM transport caps each of its channels (Topology::shm_channel_Bps); a merged record
    // stands for `bundle` connections, as the schedule's caps already say (sim/merge.cpp).
    const double shm = between_gpus ? nccl_shm_channel_Bps(topo, t.src, t.dst) * merged.bundle : 0.0;
    const double channel_cap = sched.connection_channel_cap_Bps(between_gpus, between_gpus && t.src / gpn != t.dst / gpn, source, shm);
    const bool capped_connection = channel_cap > 0;
    const int issue = t.src < sched.nranks ? sched.gpu_issue_cap_index(t.step) : -1;
    const auto key = std::make_tuple(t.src, t.dst, t.rail, capped_connection ? t.family : -1,
                                     capped_connection ? t.lane : -1, source, issue);
    auto it = route_id.find(key);
    if (it == route_id.end()) {
      std::vector<Hop> hops;
      // Switch endpoints (NVLS) route along the graph; find_quotient never folds such schedules.
      for (const Hop& h : transfer_route(topo, sched, t.src, t.dst, t.rail)) hops.push_back(canonical_hop(topo, h, q));
      it = route_id.emplace(key, static_cast<int>(routes.size())).first;
      routes.push_back(std::move(hops));
      flow_cap_Bps.push_back(sched.transfer_rate_cap_Bps);
      connection_cap_Bps.push_back(channel_cap * t.channels);
      route_issue.emplace_back(issue >= 0 ? t.src : -1, issue);
    }
    R.route_of[i] = it->second;
  }

  // Dependencies between representatives.
  R.bytes.resize(nrep);
  R.delay.resize(nrep);
  R.pending.assign(nrep, 0);
  R.ready_at.assign(nrep, 0.0);
  std::vector<std::vector<std::uint32_t>> succ(nrep);
  // FIFO connections: the route's physical latency joins the fixed delay, waited for before the
  // bytes move, so that it overlaps with the connection's previous transfer (links carry no latency).
  const bool fifo = sched.fifo_connections;
  std::vector<double> route_latency(routes.size(), 0.0);
  if (fifo)
    for (std::size_t r = 0; r < routes.size(); ++r) route_latency[r] = route_latency_s(topo, routes[r]);
  for (std::size_t i = 0; i < nrep; ++i) {
    const auto& t = sched.transfers[R.reps[i]];
    R.bytes[i] = t.bytes * byte_factor * prep.shm_weight[R.reps[i]];
    R.delay[i] = t.delay_s + (R.route_of[i] >= 0 ? route_latency[R.route_of[i]] : 0.0);
    std::vector<std::uint32_t> deps;
    for (std::uint32_t k = 0; k < t.dep_count; ++k) deps.push_back(static_cast<std::uint32_t>(rep_index[q.rep_of[sched.deps_of(t)[k]]]));
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    R.pending[i] = static_cast<int>(deps.size());
    for (auto d : deps) succ[d].push_back(static_cast<std::uint32_t>(i));
  }
  R.succ_begin.push_back(0);
  for (auto& s : succ) {
    R.succ.insert(R.succ.end(), s.begin(), s.end());
    R.succ_begin.push_back(static_cast<std::uint32_t>(R.succ.size()));
  }

  prof("deps", pt);
  // Connections (lanes) and their pipeline slots: the j-th transfer of a lane waits for the slot of
  // the (j - depth)-th (NCCL_STEPS slots per connection).
  std::map<std::tuple<int, int, int, int, int>, std::vector<std::uint32_t>> lanes;
  for (std::size_t i = 0; i < nrep; ++i) {
    const auto& t = sched.transfers[R.reps[i]];
    if (t.is_marker()) continue;
    lanes[std::make_tuple(t.src, t.dst, t.rail, t.family, t.lane)].push_back(static_cast<std::uint32_t>(i));
  }
  R.slot_next.assign(nrep, -1);
  const std::size_t depth = fifo ? 1 : static_cast<std::size_t>(std::max(1, options.pipeline_depth));
  for (const auto& [key, items] : lanes)
    for (std::size_t j = depth; j < items.size(); ++j) {
      R.slot_next[items[j - depth]] = items[j];
      ++R.pending[items[j]];
    }

  // ---- the platform: the resources each route crosses ----
  // One resource per link direction: a shared-duplex link is one resource for both directions.
  // Link directions that exactly the same routes cross (a GPU's PCIe uplink, its switch's port to
  // the NIC, the NIC's port to the fabric, for a rail of an all-to-all) are one resource: in
  // max-min the narrowest of them binds whenever any would, so the others are constraints that
  // never bind but that the solver walks at every event. A route that crosses a link direction
  // twice keeps that one unmerged. Latencies are the routes' (summed over their links), not the
  // resources'.
  std::vector<Resource> resources;
  R.route_resources.assign(routes.size(), {});
  std::map<LinkDirectionKey, int> resource_of;
  std::map<LinkDirectionKey, bool> merged_link;  // part of a set of two or more
  std::map<LinkDirectionKey, int> uniform_multiplicity;  // crossed k > 1 times by every route crossing it
  {
    std::map<LinkDirectionKey, std::vector<int>> crossing;  // per link direction: the routes, ascending
    std::map<LinkDirectionKey, Hop> hop_of;
    for (std::size_t r = 0; r < routes.size(); ++r)
      for (const Hop& h : routes[r]) {
        const LinkDirectionKey k = link_direction_key(topo, h);
        crossing[k].push_back(static_cast<int>(r));
        hop_of.emplace(k, h);
      }
    // A link direction that every route crossing it crosses the same k > 1 times (host memory on a
    // staged route: written, then read, one shared-duplex budget) is one crossing at 1/k of its
    // capacity: sum_f k x_f <= C is sum_f x_f <= C / k. SimGrid's zones drop a link repeated in a
    // route, which would count such a route once (docs/engine.md "Links crossed twice").
    for (const auto& [k, rs] : crossing) {
      if (std::adjacent_find(rs.begin(), rs.end()) == rs.end()) continue;
      int m = -1;
      bool uniform = true;
      for (std::size_t i = 0; i < rs.size();) {
        std::size_t j = i;
        while (j < rs.size() && rs[j] == rs[i]) ++j;
        const int c = static_cast<int>(j - i);
        if (m < 0) m = c;
        else if (m != c) uniform = false;
        i = j;
      }
      if (uniform) uniform_multiplicity.emplace(k, m);
    }
    std::map<std::vector<int>, std::vector<LinkDirectionKey>> by_routes;
    for (const auto& [k, rs] : crossing) {
      if (std::adjacent_find(rs.begin(), rs.end()) != rs.end())
        by_routes[{-1 - static_cast<int>(by_routes.size())}].push_back(k);  // a set of its own
      else
        by_routes[rs].push_back(k);
    }
    for (const auto& [rs, keys] : by_routes) {
      Resource res;
      for (const LinkDirectionKey& k : keys) {
        const Hop& h = hop_of.at(k);
        const Link& l = topo.link(h.edge);
        if (!(l.bandwidth_Bps > 0)) throw std::runtime_error("link '" + l.label + "' has no bandwidth");
        // A folded link that a rotation fixes stands for fewer real links than its flows' orbits:
        // its share of the capacity (sim/symmetry.h).
        const auto mult = uniform_multiplicity.find(k);
        const double c = l.bandwidth_Bps * folded_link_share(h) * kByteScale /
                         (mult != uniform_multiplicity.end() ? mult->second : 1);
        res.bandwidth_Bps = res.bandwidth_Bps > 0 ? std::min(res.bandwidth_Bps, c) : c;
      }
      res.name = "l" + std::to_string(resources.size());
      for (const LinkDirectionKey& k : keys) {
        resource_of.emplace(k, static_cast<int>(resources.size()));
        merged_link.emplace(k, keys.size() > 1);
      }
      resources.push_back(std::move(res));
    }
  }
  std::map<std::pair<int, int>, int> issue_resources;  // per (source GPU, Schedule::gpu_issue_caps entry)
  // A route's fixed delay: the smallest of its transfers' (the rest is waited for before they start).
  R.route_delay.assign(routes.size(), fifo ? 0.0 : -1.0);
  for (std::size_t i = 0; i < nrep && !fifo; ++i) {
    if (R.route_of[i] < 0) continue;
    double& d = R.route_delay[R.route_of[i]];
    d = d < 0 ? R.delay[i] : std::min(d, R.delay[i]);
  }
  R.route_latency_s.assign(routes.size(), 0.0);
  R.route_bound_Bps.assign(routes.size(), 0.0);
  for (std::size_t r = 0; r < routes.size(); ++r) {
    std::vector<int>& path = R.route_resources[r];
    R.route_delay[r] = std::max(0.0, R.route_delay[r]);
    // FIFO connections carry their physical latency in the delay already (see above).
    R.route_latency_s[r] = R.route_delay[r] + (fifo ? 0.0 : route_latency_s(topo, routes[r]));
    // Schedule::transfer_rate_cap_Bps: each flow limited individually, never their sum.
    if (flow_cap_Bps[r] > 0) R.route_bound_Bps[r] = flow_cap_Bps[r] * kByteScale;
    // A connection's cap: a resource of its own, shared by the connection's flows in flight.
    if (connection_cap_Bps[r] > 0) {
      path.push_back(static_cast<int>(resources.size()));
      resources.push_back({connection_cap_Bps[r] * kByteScale, "connection" + std::to_string(r)});
    }
    if (route_issue[r].first >= 0) {
      // The source GPU's message-issue resource, shared by all its transfers (Schedule::gpu_issue_caps).
      auto [it, fresh] = issue_resources.try_emplace(route_issue[r], static_cast<int>(resources.size()));
      if (fresh) {
        const double rate = sched.gpu_issue_caps[static_cast<std::size_t>(route_issue[r].second)].second;
        resources.push_back({rate * kByteScale,
                             "issue" + std::to_string(route_issue[r].first) + "." + std::to_string(route_issue[r].second)});
      }
      path.push_back(it->second);
    }
    const std::size_t own = path.size();
    for (const Hop& h : routes[r]) {
      const LinkDirectionKey k = link_direction_key(topo, h);
      const int res = resource_of.at(k);
      if ((merged_link.at(k) || uniform_multiplicity.count(k) > 0) &&
          std::find(path.begin() + static_cast<std::ptrdiff_t>(own), path.end(), res) != path.end())
        continue;  // the merged set's resource (or a k-times crossing at 1/k) is on the path already
      path.push_back(res);
    }
  }

  if (nrep >= kBeginBandwidthPhase) throw std::runtime_error("too many transfers for one simulation (2^31)");
  R.start.assign(nrep, 0.0);
  R.end.assign(nrep, 0.0);
  // The roots first, then launch them: a root marker completes at once and may start other transfers,
  // which a single pass would then start a second time.
  std::vector<std::uint32_t> roots;
  for (std::uint32_t i = 0; i < nrep; ++i)
    if (R.pending[i] == 0) roots.push_back(i);
  if (options.fluid_solver)
    replay_fluid(R, resources, roots, pt);
  else
    replay_simgrid(R, resources, roots, pt);
  prof("run", pt);
  result.flows_simulated = nrep;
  for (std::size_t i = 0; i < nrep; ++i)
    if (R.pending[i] != 0) throw std::runtime_error("schedule deadlocked: a transfer never became ready");

  // ---- results: every transfer reads its times off its representative ----
  auto rep_of_original = [&](std::size_t i) {
    const std::uint32_t m = merged.merged_of[i];
    return static_cast<std::size_t>(rep_index[q.rep_of[m]]);
  };
  if (options.record_transfers) {
    result.transfer_start_s.resize(original.transfers.size());
    result.transfer_end_s.resize(original.transfers.size());
  }
  for (std::size_t i = 0; i < original.transfers.size(); ++i) {
    const std::size_t r = rep_of_original(i);
    const auto& t = original.transfers[i];
    if (t.is_marker()) {
      if (options.record_transfers) result.transfer_start_s[i] = result.transfer_end_s[i] = R.end[r];
      continue;
    }
    result.time_s = std::max(result.time_s, R.end[r]);
    const auto finish = [&](int rank) {
      if (rank < original.nranks) result.rank_finish_s[rank] = std::max(result.rank_finish_s[rank], R.end[r]);
    };
    original.for_each_finish_rank(i, finish);
    if (options.record_transfers) {
      result.transfer_start_s[i] = R.start[r];
      result.transfer_end_s[i] = R.end[r];
    }
  }

  // Orbit representatives: each rank finishes when the latest of its images' representatives does
  // (the max over the orbit, as when every record is read off its representative).
  if (orbits) spread_over_orbits(topo, q, &result.rank_finish_s);

  // Per link direction: bytes and busy time on the representative, shared by its whole orbit.
  struct Acc {
    double bytes = 0;
    std::vector<std::pair<double, double>> busy;
  };
  std::map<LinkDirectionKey, Acc> acc;
  for (std::size_t i = 0; i < nrep; ++i) {
    if (R.route_of[i] < 0) continue;
    for (const Hop& h : routes[R.route_of[i]]) {
      Acc& a = acc[link_direction_key(topo, h)];
      a.bytes += R.bytes[i];
      a.busy.emplace_back(R.start[i], R.end[i]);
    }
  }
  std::map<LinkDirectionKey, double> busy_of;
  for (auto& [k, a] : acc) busy_of[k] = union_length(a.busy);
  const Graph& g = topo.graph();
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    const Link& l = g[*it];
    for (int dir = 1; dir >= 0; --dir) {
      if (l.shared_duplex && dir == 0) break;
      const Hop real{*it, dir == 1};
      const LinkDirectionKey ck = link_direction_key(topo, canonical_hop(topo, real, q));
      const auto found = acc.find(ck);
      if (found == acc.end()) continue;
      LinkStat s;
      const VertexId a = boost::source(*it, g), b = boost::target(*it, g);
      s.from = topo.vertex(dir == 1 ? a : b).name;
      s.to = topo.vertex(dir == 1 ? b : a).name;
      s.label = l.label;
      s.kind = l.kind;
      s.bandwidth_Bps = l.bandwidth_Bps;
      s.bytes = found->second.bytes / folded_link_share(canonical_hop(topo, real, q));
      s.busy_s = busy_of[ck];
      result.links.push_back(std::move(s));
    }
  }
  prof("results", pt);
  std::stable_sort(result.links.begin(), result.links.end(), [](const LinkStat& x, const LinkStat& y) {
    const double ux = x.bytes / x.bandwidth_Bps, uy = y.bytes / y.bandwidth_Bps;
    if (ux != uy) return ux > uy;
    return std::tie(x.from, x.to) < std::tie(y.from, y.to);
  });
  // Inputs are bounded (docs/topology.md, Limits) so that no time is infinite; should one be, it is
  // an internal error, never a row of "inf" printed with exit 0.
  if (!std::isfinite(result.time_s))
    throw std::runtime_error("the simulated time is not finite (a rate or delay outside the documented limits)");
  return result;
}

}  // namespace

std::vector<SimResult> simulate(const Topology& topo, const std::vector<Schedule>& schedules,
                                const EngineOptions& options) {
  std::vector<Prepared> prepared;
  for (const auto& s : schedules) prepared.push_back(prepare(topo, s, options));
  std::vector<SimResult> results(prepared.size());
  const auto parallel = static_cast<std::size_t>(std::max(1, options.parallel_jobs));
  if (options.fluid_solver && prepared.size() > parallel) {
    // The fluid solver keeps no global state, so simulations need no process each: one child per
    // core runs a share of them (largest first onto the least loaded), which saves a fork, and the
    // copy of a large parent's page tables (an MoE layer's routing), per simulation.
    std::vector<std::size_t> order(prepared.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return prepared[a].sched().transfers.size() > prepared[b].sched().transfers.size();
    });
    std::vector<std::vector<std::size_t>> share(parallel);
    std::vector<std::size_t> load(parallel, 0);
    for (std::size_t i : order) {
      const auto k = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
      share[k].push_back(i);
      load[k] += prepared[i].sched().transfers.size() + 1;
    }
    std::vector<std::function<std::string()>> jobs;
    for (const auto& mine : share)
      jobs.emplace_back([&topo, &prepared, &options, &mine] {
        Writer w;
        for (std::size_t i : mine) w.str(serialize(run_in_this_process(topo, prepared[i], 1.0, options)));
        return w.take();
      });
    const std::vector<std::string> data = run_isolated(jobs, options.parallel_jobs);
    for (std::size_t k = 0; k < share.size(); ++k) {
      Reader rd(data[k]);
      for (std::size_t i : share[k]) results[i] = deserialize(rd.str());
    }
    return results;
  }
  std::vector<std::function<std::string()>> jobs;
  for (const auto& p : prepared)
    jobs.emplace_back([&topo, &p, &options] { return serialize(run_in_this_process(topo, p, 1.0, options)); });
  const std::vector<std::string> data = run_isolated(jobs, options.parallel_jobs);
  for (std::size_t i = 0; i < data.size(); ++i) results[i] = deserialize(data[i]);
  return results;
}

std::vector<SimResult> simulate_sweep(const Topology& topo, const Schedule& reference,
                                      const std::vector<double>& sizes_bytes, const EngineOptions& options) {
  return simulate_sweeps(topo, {SweepJob{&reference, sizes_bytes, options.pipeline_depth}}, options).front();
}

namespace {

// Same records in the same order with the same dependencies; bytes and delays may differ.
bool same_structure(const Schedule& a, const Schedule& b) {
  if (a.transfers.size() != b.transfers.size() || a.deps != b.deps || a.nranks != b.nranks ||
      a.families_follow_rails != b.families_follow_rails || a.switches != b.switches ||
      a.families_per_rail != b.families_per_rail || a.fifo_connections != b.fifo_connections ||
      a.transfer_rate_cap_Bps != b.transfer_rate_cap_Bps || a.inter_node_channel_cap_Bps != b.inter_node_channel_cap_Bps ||
      a.intra_node_channel_cap_Bps != b.intra_node_channel_cap_Bps ||
      a.source_channel_cap_Bps != b.source_channel_cap_Bps || a.gpu_issue_caps != b.gpu_issue_caps ||
      a.finish_begin != b.finish_begin || a.finish_ranks != b.finish_ranks || a.orbit_order != b.orbit_order ||
      a.orbit_node_shift != b.orbit_node_shift || a.orbit_rail_rotation != b.orbit_rail_rotation ||
      a.orbit_full_records != b.orbit_full_records)
    return false;
  for (std::size_t i = 0; i < a.transfers.size(); ++i) {
    const Transfer &x = a.transfers[i], &y = b.transfers[i];
    if (x.src != y.src || x.dst != y.dst || x.rail != y.rail || x.family != y.family || x.step != y.step ||
        x.lane != y.lane || x.dep_begin != y.dep_begin || x.dep_count != y.dep_count)
      return false;
  }
  return true;
}

// A quotient found for one schedule holds for another of the same structure when every transfer
// still has its representative's bytes and delay (the only attributes the proof compares).
bool quotient_still_holds(const Quotient& q, const Schedule& s) {
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const Transfer &t = s.transfers[i], &r = s.transfers[q.rep_of[i]];
    if (t.bytes != r.bytes || t.delay_s != r.delay_s) return false;
  }
  return true;
}

}  // namespace

std::vector<std::vector<SimResult>> simulate_sweeps(const Topology& topo, const std::vector<SweepJob>& sweeps,
                                                    const EngineOptions& options) {
  // Preparation once per distinct structure: schedules that differ only in bytes and delays (the
  // protocols of one algorithm) share the merge and symmetry analysis when it still holds.
  std::vector<Prepared> prepared;
  std::vector<EngineOptions> per_sweep;
  for (const SweepJob& job : sweeps) {
    EngineOptions o = options;
    o.pipeline_depth = job.pipeline_depth;
    o.fluid_solver = options.fluid_solver || job.fluid_solver;
    per_sweep.push_back(o);
    const Prepared* reuse = nullptr;
    for (const Prepared& p : prepared)
      if (!p.merged.merged && same_structure(*p.original, *job.schedule) && quotient_still_holds(p.q, *job.schedule))
        reuse = &p;
    if (reuse) {
      Prepared copy = *reuse;
      copy.original = job.schedule;
      copy.shm_weight = shm_two_way_weights(topo, copy.sched());  // its own records' roles
      prepared.push_back(std::move(copy));
    } else {
      prepared.push_back(prepare(topo, *job.schedule, o));
    }
  }
  // Every size of every sweep in one pool of child processes.
  std::vector<std::function<std::string()>> jobs;
  for (std::size_t k = 0; k < sweeps.size(); ++k) {
    const Schedule& reference = *sweeps[k].schedule;
    for (double size : sweeps[k].sizes_bytes) {
      const double factor = reference.size_bytes > 0 ? size / reference.size_bytes : 0.0;
      const Prepared* p = &prepared[k];
      const EngineOptions* o = &per_sweep[k];
      jobs.emplace_back([&topo, p, factor, o] { return serialize(run_in_this_process(topo, *p, factor, *o)); });
    }
  }
  const std::vector<std::string> data = run_isolated(jobs, options.parallel_jobs);
  std::vector<std::vector<SimResult>> results(sweeps.size());
  std::size_t next = 0;
  for (std::size_t k = 0; k < sweeps.size(); ++k)
    for (std::size_t i = 0; i < sweeps[k].sizes_bytes.size(); ++i) results[k].push_back(deserialize(data[next++]));
  return results;
}

SimResult simulate_one(const Topology& topo, const Schedule& schedule, const EngineOptions& options) {
  return simulate(topo, {schedule}, options).front();
}

}  // namespace ccsim
