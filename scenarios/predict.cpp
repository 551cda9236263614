#include "scenarios/predict.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <utility>

#include "algorithms/collectives.h"
#include "algorithms/custom_allreduce.h"
#include "algorithms/nccl_channels.h"
#include "algorithms/p2p.h"
#include "algorithms/ring.h"
#include "algorithms/step_timing.h"
#include "common/units.h"
#include "common/error.h"
#include "common/text.h"
#include "scenarios/collective_schedule.h"
#include "scenarios/nccl_tests_table.h"
#include "algorithms/nccl_types.h"
#include "scenarios/replay.h"
#include "sim/steady_state.h"

namespace ccsim {

namespace {

// Refuses sweeps that would stall after one size or exceed the documented limits (docs/errors.md),
// before any size is materialised: `-i 1` from 0 to 1T would be 10^12 rows.
void check_sweep_limits(const SizeSweep& sweep) {
  if (sweep.max_bytes > kMaxSweepBytes)
    throw InputError("-e", "maximum size " + std::to_string(sweep.max_bytes) + " bytes is above ccsim's limit of 1 PiB (" +
                               std::to_string(kMaxSweepBytes) + " bytes; no GPU holds such a buffer)");
  if (sweep.min_bytes >= sweep.max_bytes) return;
  std::uint64_t count = 0;
  if (sweep.step_factor > 1) {
    // nccl-tests multiplies in double and truncates: a factor too small for -b never grows it.
    const auto next = static_cast<std::uint64_t>(static_cast<double>(sweep.min_bytes) * sweep.step_factor);
    if (next <= sweep.min_bytes)
      throw InputError("-f", strprintf("step factor %.17g does not grow -b %llu (it rounds back to %llu): the sweep would "
                                       "stop after one size; use a larger -b or -f, or -i",
                                       sweep.step_factor, static_cast<unsigned long long>(sweep.min_bytes),
                                       static_cast<unsigned long long>(next)));
    count = static_cast<std::uint64_t>(std::log(static_cast<double>(sweep.max_bytes) / sweep.min_bytes) /
                                       std::log(sweep.step_factor)) + 1;
  } else if (sweep.step_bytes > 0) {
    count = (sweep.max_bytes - sweep.min_bytes) / sweep.step_bytes + 1;
  }
  if (count > kMaxSweepSizes)
    throw InputError(sweep.step_factor > 1 ? "-f" : "-i",
                     "the sweep from -b to -e has " + std::to_string(count) + " sizes, above ccsim's limit of " +
                         std::to_string(kMaxSweepSizes) + " (use a larger step)");
}

}  // namespace

std::vector<std::uint64_t> sweep_sizes(const SizeSweep& sweep) {
  std::vector<std::uint64_t> sizes;
  if (sweep.min_bytes > sweep.max_bytes)
    throw InputError("-b", "minimum size " + std::to_string(sweep.min_bytes) + " is greater than maximum size (-e) " +
                               std::to_string(sweep.max_bytes));
  if (sweep.step_factor <= 1 && sweep.step_bytes == 0 && sweep.min_bytes != sweep.max_bytes)
    throw InputError("-i", "step of 0 bytes with -f <= 1 would never reach -e");
  check_sweep_limits(sweep);
  for (std::uint64_t size = sweep.min_bytes; size <= sweep.max_bytes;) {
    sizes.push_back(size);
    std::uint64_t next;
    if (sweep.step_factor > 1)
      next = static_cast<std::uint64_t>(static_cast<double>(size) * sweep.step_factor);
    else
      next = size + sweep.step_bytes;
    if (next <= size) break;  // size 0 with a factor, or overflow
    size = next;
  }
  return sizes;
}

std::string summarize_ranges(const std::vector<std::uint64_t>& sizes, const std::vector<std::string>& labels) {
  std::string out;
  for (std::size_t i = 0; i < sizes.size();) {
    std::size_t j = i;
    while (j + 1 < sizes.size() && labels[j + 1] == labels[i]) ++j;
    if (!out.empty()) out += "; ";
    out += labels[i] + " " + format_bytes(static_cast<double>(sizes[i]));
    if (j > i) out += ".." + format_bytes(static_cast<double>(sizes[j]));
    i = j + 1;
  }
  return out;
}

std::string calibration_class_for(const Topology& topo) {
  if (topo.num_nodes() > 1) return "net";
  return topo.nvlinks_per_gpu > 0 && topo.nccl_p2p ? "nvlink" : "pcie";
}

namespace {

ReportLink report_link(const LinkStat& l, double operation_s) {
  ReportLink r;
  r.from = l.from;
  r.to = l.to;
  r.label = l.label;
  r.link_class = to_string(l.kind);
  r.bandwidth_GBps = l.bandwidth_Bps / 1e9;
  r.bytes = l.bytes;
  r.busy_us = l.busy_s * 1e6;
  r.utilization = operation_s > 0 ? l.bytes / l.bandwidth_Bps / operation_s : 0.0;
  return r;
}

// The latency term of NCCL's cost model for its pick (nccl_costs' row of the chosen pair).
double latency_term_us(const TunerChoice& nccl) {
  for (const auto& row : nccl.table)
    if (row.algo == nccl.algo && row.proto == nccl.proto && row.time_us > 0) return row.eff_latency_us;
  return -1;
}

// The typed report of a prediction: the facts the table's preamble and the JSON/CSV metadata print,
// and per size the row, NCCL's choice and what was predicted.
PredictionReport build_report(const Topology& topo, const PredictRequest& req, const Prediction& p, const RingPlan& plan,
                              const std::vector<std::uint64_t>& sizes, const std::string& cal_class) {
  const bool engine = req.model == PredictModel::Engine;
  const bool p2p = is_p2p_collective(req.collective);
  PredictionReport report;
  ReportFacts& f = report.facts;
  f.ccsim_version = CCSIM_VERSION;
  f.table_header.program_name = req.collective + "_perf";
  f.model = engine ? std::string("engine (SimGrid flow-level, max-min sharing) replaying ") +
                         (p2p ? "NCCL's P2P send/recv" : req.calibration ? "the calibrated ring" : "the tuner's choice")
            : p2p             ? std::string("closed form: ccsim's P2P model (NCCL has no P2P cost model)")
            : req.calibration ? std::string("closed form of the calibrated ring (launch + steps x alpha + bytes / (beta x efficiency))")
                              : "closed form: " + req.nccl_version.label() + " cost model of the tuner's choice";
  f.collective = req.collective;
  f.topology_name = topo.name;
  f.cost_model = req.nccl_version.label();
  f.step_constants = kStepTimingSource;
  f.p2p = p2p;
  std::vector<std::string> nccl_labels, sim_labels;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto& c = p.choices[i];
    nccl_labels.push_back(p2p ? c.simulated : std::string(to_string(c.nccl_algo)) + "/" + to_string(c.nccl_proto));
    sim_labels.push_back(c.simulated);
    ReportSize s;
    s.row = p.rows[i];
    s.nccl_algorithm = p2p ? "P2P" : to_string(c.nccl_algo);
    s.nccl_protocol = to_string(c.nccl_proto);
    s.nccl_model_time_us = c.nccl_time_us;
    if (!p2p && !c.custom && c.nccl_latency_us >= 0 && c.nccl_time_us > 0)
      s.latency_share = c.nccl_latency_us / c.nccl_time_us;
    s.predicted = c.simulated;
    s.replayed_algorithm = c.custom ? "custom" : p2p ? "P2P" : to_string(c.sim_algo);
    s.replayed_protocol = c.custom ? "" : to_string(c.sim_proto);
    s.by_engine = engine && c.by_engine;
    if (i < p.sim.size() && !p.sim[i].links.empty()) s.busiest_link = report_link(p.sim[i].links.front(), p.sim[i].time_s);
    report.sizes.push_back(std::move(s));
  }
  f.nccl_choice = summarize_ranges(sizes, nccl_labels);
  f.predicted_as = summarize_ranges(sizes, sim_labels);
  if (req.calibration) f.calibration_class = cal_class;
  if (req.calibration) {
    const auto it = req.calibration->classes.find(cal_class);
    if (it != req.calibration->classes.end() && it->second.gpus_per_thread != std::max(1, req.launch.gpus_per_thread))
      f.calibration_notes.push_back("class " + cal_class + " was fitted on a run with " +
                                    std::to_string(it->second.gpus_per_thread) +
                                    " GPU(s) per thread (-g); this prediction is for -g " +
                                    std::to_string(std::max(1, req.launch.gpus_per_thread)) +
                                    ": the fitted latency side includes the other mode's host launches");
  }
  f.algo_filter = req.filter.algo_text;
  f.proto_filter = req.filter.proto_text;
  f.nranks = topo.num_gpus();
  f.nodes = topo.num_nodes();
  f.gpus_per_node = topo.gpus_per_node();
  f.channels = plan.total_channels();
  f.ring_families = static_cast<int>(plan.families.size());
  f.ring_protocol = to_string(p.choices.back().ring_proto);
  f.launch_s = p.alpha_beta.launch_s;
  f.alpha_s = p.alpha_beta.alpha_s;
  f.beta_Bps = p.alpha_beta.beta_Bps;
  f.knee_bytes = p.knee_bytes;
  f.bottleneck = p.alpha_beta.bottleneck;
  f.datatype = req.datatype;
  f.op = req.op;
  f.launch = normalized(req.launch);
  f.host_launch_s = topo.host_launch_s;
  f.host_launch_per_channel_s = topo.host_launch_per_channel_s;
  f.table_header.nthread = f.launch.threads;
  f.table_header.ngpus = f.launch.gpus_per_thread;
  f.table_header.iters = f.launch.iters;
  f.table_header.agg_iters = f.launch.agg_iters;
  f.table_header.graph = f.launch.graph_launches;
  if (!p.sim.empty() && !p.sim.back().links.empty()) {
    // The busiest link directions at the largest size: what limits the bandwidth bill.
    const SimResult& last = p.sim.back();
    for (std::size_t i = 0; i < last.links.size() && i < 5; ++i)
      f.busiest_links_at_largest_size.push_back(report_link(last.links[i], last.time_s));
    f.has_engine_stats = true;
    f.transfers = last.transfers;
    f.flows_simulated = last.flows_simulated;
    f.symmetry_order = last.symmetry_order;
    f.merge_bundle = last.merge_bundle;
  }
  f.topology_spec = topo.spec;
  return report;
}

// The filter with every algorithm but Ring removed: the engine's protocol choice.
AlgoProtoFilter ring_only(const AlgoProtoFilter& f, Func func) {
  AlgoProtoFilter r = f;
  for (int a = 0; a < kNumAlgos; ++a)
    if (a != static_cast<int>(Algo::Ring)) r.algo[static_cast<int>(func)][a] = false;
  return r;
}

// What is predicted for one size: vLLM's custom all-reduce (--algo custom, below its limit), NCCL's
// P2P path (sendrecv, alltoall), or NCCL's tuner choice, replayed by the engine where it can be.
SizeChoice choice_for_size(const Topology& topo, const NcclTopoSummary& summary, const PredictRequest& req,
                           const ReplayContext& ctx, Func func, std::uint64_t size) {
  SizeChoice c;
  const bool engine = req.model == PredictModel::Engine;
  const ReduceOperand operand{req.datatype, req.op};  // what decides whether NVLS can run (choose)
  if (req.custom_allreduce && static_cast<double>(size) < CustomAllreduceOptions{}.max_bytes) {
    const TunerChoice nccl = choose(summary, func, size, req.filter, operand);
    c.nccl_algo = nccl.algo;  // what NCCL would have run, for the report
    c.nccl_proto = c.ring_proto = nccl.proto;
    c.nccl_time_us = nccl.time_us;
    c.custom = true;
    c.simulated = std::string("custom all-reduce/") +
                  to_string(vllm_custom_ar_variant(topo.num_gpus(), static_cast<double>(size)));
    return c;
  }
  if (is_p2p_collective(req.collective)) {
    c.p2p = true;  // grouped send/recv: no NCCL algorithm, no tuner
    c.nccl_proto = c.ring_proto = c.sim_proto = p2p_protocol(topo, summary, req.collective, static_cast<double>(size));
    c.simulated = std::string("P2P/") + to_string(c.nccl_proto);
    return c;
  }
  const TunerChoice nccl = choose(summary, func, size, req.filter, operand);
  c.nccl_algo = nccl.algo;
  c.nccl_proto = nccl.proto;
  c.nccl_time_us = nccl.time_us;
  c.nccl_latency_us = latency_term_us(nccl);
  const bool ring_allowed = req.filter.allows(func, Algo::Ring, Proto::Simple) ||
                            req.filter.allows(func, Algo::Ring, Proto::LL) || req.filter.allows(func, Algo::Ring, Proto::LL128);
  c.ring_proto = nccl.algo == Algo::Ring ? nccl.proto
                 : ring_allowed          ? choose(summary, func, size, ring_only(req.filter, func), operand).proto
                                         : Proto::Simple;
  std::string why;
  if (req.calibration) {
    // The measured curve already contains whatever NCCL chose on that machine: replay the ring.
    c.sim_algo = Algo::Ring;
    c.sim_proto = Proto::Simple;
    c.simulated = engine ? "Ring (calibrated)" : "Ring closed form (calibrated)";
  } else {
    c.sim_algo = nccl.algo;
    c.sim_proto = nccl.proto;
    c.simulated = std::string(to_string(nccl.algo)) + "/" + to_string(nccl.proto);
    if (engine && !engine_replays(ctx, nccl.algo, &why)) {
      // Not replayable here: NCCL's cost model of its own choice, which predicts the algorithm NCCL
      // runs (replaying another algorithm instead would not).
      c.by_engine = false;
      c.simulated += " (NCCL cost model: " + why + ")";
    }
  }
  return c;
}

// Engine results for every size the engine replays: sizes with the same (algorithm, protocol) are
// grouped by their recipe (one schedule scaled to all, per structure key, or per size); sizes past a
// chunked recipe's chunk cap extend the pipeline simulated at the cap and half of it; the custom
// all-reduce gets one schedule per size; all run in one pool of child processes.
template <class Efficiency>
std::vector<SimResult> simulate_choices(const ReplayContext& ctx, const std::vector<std::uint64_t>& sizes,
                                        const std::vector<SizeChoice>& choices, Efficiency efficiency,
                                        const EngineOptions& engine) {
  std::vector<std::pair<Algo, Proto>> keys;
  for (const auto& c : choices)
    if (c.by_engine && !c.custom && std::find(keys.begin(), keys.end(), std::make_pair(c.sim_algo, c.sim_proto)) == keys.end())
      keys.emplace_back(c.sim_algo, c.sim_proto);
  std::deque<Schedule> schedules;  // SweepJob points into it: a deque never moves its elements
  std::vector<std::vector<std::size_t>> indices;  // per job: the sizes it gives directly
  std::vector<SweepJob> jobs;
  // Sizes past a recipe's chunk cap: jobs at the cap and half of it, and the sizes they extend to.
  struct Extension {
    std::size_t half_job = 0, full_job = 0;  // jobs whose first size is the cap's half, the cap
    double cap_bytes = 0;
    std::vector<std::size_t> members;
  };
  std::vector<Extension> extensions;
  const auto add_job = [&](Schedule schedule, int pipeline_depth, bool fluid_solver, std::vector<double> sizes_bytes,
                           std::vector<std::size_t> members) {
    schedules.push_back(std::move(schedule));
    SweepJob job;
    job.schedule = &schedules.back();
    job.pipeline_depth = pipeline_depth;
    job.fluid_solver = fluid_solver;
    job.sizes_bytes = std::move(sizes_bytes);
    jobs.push_back(std::move(job));
    indices.push_back(std::move(members));
    return jobs.size() - 1;
  };
  for (const auto& key : keys) {
    const ReplayRecipe recipe = replay_recipe(ctx, key.first, key.second);
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < sizes.size(); ++i)
      if (choices[i].by_engine && !choices[i].custom && choices[i].sim_algo == key.first && choices[i].sim_proto == key.second) idx.push_back(i);
    // A calibrated efficiency e(S) < 1 stretches the bandwidth term: simulate S / e(S) bytes.
    auto simulated_bytes = [&](std::size_t i) {
      return static_cast<double>(sizes[i]) / efficiency(static_cast<double>(sizes[i]));
    };
    // Groups of sizes that share one schedule, built at the group's largest size and scaled to each.
    std::vector<std::pair<long, std::vector<std::size_t>>> groups;
    Extension extension;
    extension.cap_bytes = recipe.chunk_cap_bytes;
    for (auto i : idx) {
      if (extension.cap_bytes > 0 && simulated_bytes(i) > extension.cap_bytes) {
        extension.members.push_back(i);
        continue;
      }
      const long group = recipe.structure_key(simulated_bytes(i));
      auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == group; });
      if (g == groups.end()) g = groups.insert(groups.end(), {group, {}});
      g->second.push_back(i);
    }
    std::vector<std::pair<double, std::size_t>> built_at;  // (size a job's schedule was built at, job)
    for (auto& [group, members] : groups) {
      std::vector<double> group_sizes;
      for (auto i : members) group_sizes.push_back(simulated_bytes(i));
      const double build_size = std::max(1.0, group_sizes.back());
      // The largest size first: an extension can reuse the job built at its reference size.
      std::reverse(group_sizes.begin(), group_sizes.end());
      std::reverse(members.begin(), members.end());
      built_at.emplace_back(build_size, add_job(recipe.build(build_size), recipe.pipeline_depth, recipe.fluid_solver,
                                                std::move(group_sizes), std::move(members)));
    }
    if (!extension.members.empty()) {
      const auto job_at = [&](double size) {
        for (const auto& [built, job] : built_at)
          if (built == size) return job;
        return add_job(recipe.build(size), recipe.pipeline_depth, recipe.fluid_solver, {size}, {});
      };
      extension.half_job = job_at(extension.cap_bytes / 2);
      extension.full_job = job_at(extension.cap_bytes);
      extensions.push_back(std::move(extension));
    }
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (!choices[i].custom) continue;
    const double size = static_cast<double>(sizes[i]);
    // One transfer per (peer, reader) and stage: no slots to share.
    add_job(custom_allreduce_schedule(*ctx.topo, size, CustomAllreduceOptions{}), 1, false, {size}, {i});
  }
  const auto results = simulate_sweeps(*ctx.topo, jobs, engine);
  std::vector<SimResult> out(sizes.size());
  for (std::size_t k = 0; k < jobs.size(); ++k)
    for (std::size_t j = 0; j < indices[k].size(); ++j) out[indices[k][j]] = results[k][j];
  for (const Extension& e : extensions)
    for (auto i : e.members)
      out[i] = extend_pipeline(results[e.half_job][0], results[e.full_job][0], e.cap_bytes,
                               static_cast<double>(sizes[i]) / efficiency(static_cast<double>(sizes[i])));
  return out;
}

}  // namespace

Prediction predict(const Topology& topo, const PredictRequest& req) {
  const CollectiveInfo& info = collective_info(req.collective);
  const bool chain = info.shape == CollectiveShape::Chain, p2p = info.shape == CollectiveShape::P2P;
  if (req.calibration && (chain || p2p))
    throw InputError("--calibration", "calibrations describe ring all_reduce / all_gather / reduce_scatter; '" +
                                          req.collective + "' is predicted from the topology only");
  if (chain && (req.root < 0 || req.root >= topo.num_gpus()))
    throw InputError("-r", "root " + std::to_string(req.root) + " is not a rank of this " +
                               std::to_string(topo.num_gpus()) + "-rank communicator (valid: 0.." +
                               std::to_string(topo.num_gpus() - 1) + ")");
  const int type_size = datatype_size(req.datatype);
  if (req.op == "all") throw InputError("-o", "'all' is one sweep per op; this prediction takes one op");
  check_nccl_op(req.op);
  const int n = topo.num_gpus();
  const std::vector<std::uint64_t> requested = req.sizes.empty() ? sweep_sizes(req.sweep) : req.sizes;
  // P2P collectives have no NCCL tuner function; their choice is NCCL's per-message protocol rule.
  const Func func = info.tuner_func.value_or(Func::AllReduce);
  NcclTopoSummary summary = summarize_for_nccl(topo);
  summary.nccl_version = req.nccl_version;

  std::vector<std::uint64_t> sizes, counts;
  for (auto r : requested) {
    std::uint64_t s, c;
    collective_size_and_count(info, r, type_size, n, &s, &c);
    sizes.push_back(s);
    counts.push_back(c);
  }

  Prediction out;
  const bool engine = req.model == PredictModel::Engine;
  ReplayContext ctx;
  ctx.topo = &topo;
  ctx.collective = req.collective;
  ctx.ring_channels = req.channels;
  ctx.calibrated_timing = req.calibration ? &req.calibrated_timing : nullptr;
  ctx.summary = &summary;
  ctx.root = req.root;
  ctx.orbit_schedules = req.engine.exploit_symmetry;
  const CustomAllreduceOptions custom_options;
  if (req.custom_allreduce) {
    if (req.collective != "all_reduce")
      throw InputError("--algo", "custom is vLLM's custom all-reduce; it does not run " + req.collective);
    if (req.calibration) throw InputError("--calibration", "a calibration describes NCCL's ring, not --algo custom");
    check_custom_allreduce(topo, 0.0, custom_options);  // the topology rules (node, GPU count, P2P)
  }
  for (auto size : sizes) out.choices.push_back(choice_for_size(topo, summary, req, ctx, func, size));

  const int channels = req.channels > 0 ? req.channels : default_ring_channels(topo);
  const RingPlan plan = plan_rings(topo, channels);
  const std::string cal_class = calibration_class_for(topo);
  auto efficiency = [&](double size) {
    return req.calibration ? calibration_efficiency(*req.calibration, cal_class, size) : 1.0;
  };
  {
    // The ring's alpha-beta and knee, for the report (Ring's protocol at the largest size).
    RingProtocol last = ring_protocol(out.choices.back().ring_proto);
    if (!is_chain_collective(req.collective))
      last.timing = multi_node_ring_timing(last.timing, last.proto, topo.num_nodes(), summary.net_overhead_us);
    if (req.calibration) {
      last.timing = req.calibrated_timing;
      last.wire_factor = 1.0;
    }
    out.alpha_beta = ring_alpha_beta(topo, plan, last.timing, last.wire_factor);
    out.knee_bytes = knee_bytes(n, out.alpha_beta);
  }

  // NCCL's model times the tuner's choice, except where NCCL's search fell back to its 0.1 GB/s graph
  // (NcclGraphInfo::searchFallback: a figure for the tuner, not a rate): there the ring's alpha-beta
  // over the links, with the protocol of the size, times the ring and tree graph's algorithms.
  std::map<Proto, AlphaBeta> fallback_alpha_beta;
  const auto model_time_s = [&](std::size_t i) {
    const SizeChoice& c = out.choices[i];
    if (!summary.ring.searchFallback || (c.nccl_algo != Algo::Ring && c.nccl_algo != Algo::Tree)) return c.nccl_time_us * 1e-6;
    auto ab = fallback_alpha_beta.find(c.ring_proto);
    if (ab == fallback_alpha_beta.end()) {
      RingProtocol p = ring_protocol(c.ring_proto);
      if (!is_chain_collective(req.collective))
        p.timing = multi_node_ring_timing(p.timing, p.proto, topo.num_nodes(), summary.net_overhead_us);
      ab = fallback_alpha_beta.emplace(c.ring_proto, ring_alpha_beta(topo, plan, p.timing, p.wire_factor)).first;
    }
    return ring_closed_form_time_s(req.collective, n, static_cast<double>(sizes[i]), ab->second);
  };

  std::vector<double> times_s(sizes.size(), 0.0);
  if (!engine && req.calibration) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const double s = static_cast<double>(sizes[i]);
      AlphaBeta ab = out.alpha_beta;
      ab.beta_Bps *= efficiency(s);
      times_s[i] = ring_closed_form_time_s(req.collective, n, s, ab);
    }
  } else if (!engine && p2p) {
    // NCCL has no P2P cost model: ccsim's closed form of the P2P schedule (algorithms/p2p.h); for
    // alltoall without its n(n-1) messages.
    const P2pConfig cfg = nccl_p2p_config(topo, summary);
    for (std::size_t i = 0; i < sizes.size(); ++i)
      times_s[i] = req.collective == "alltoall"
                       ? alltoall_closed_form_time_s(topo, cfg, static_cast<double>(sizes[i]))
                       : p2p_closed_form_time_s(topo, collective_schedule(topo, summary, req.collective,
                                                                          static_cast<double>(sizes[i]), req.root,
                                                                          Proto::Simple, channels)
                                                          .schedule);
  } else if (!engine) {
    for (std::size_t i = 0; i < sizes.size(); ++i)
      times_s[i] = out.choices[i].custom
                       ? custom_allreduce_time_s(topo, static_cast<double>(sizes[i]), custom_options)
                       : model_time_s(i);
  } else {
    out.sim = simulate_choices(ctx, sizes, out.choices, efficiency, req.engine);
    for (std::size_t i = 0; i < sizes.size(); ++i)
      times_s[i] = out.choices[i].by_engine ? out.sim[i].time_s : model_time_s(i);
  }

  // nccl-tests' timing loop: -g N launches N kernels per iteration from one thread, overlapped with
  // the previous iteration's device work, and the first iteration waits for its launches
  // (scenarios/launch_mode.h).
  // A launch costs node.cpu.launch_us plus node.cpu.launch_us_per_channel for each channel NCCL runs
  // the collective on at this size (nccl_channels_threads; sendrecv, alltoall and the custom
  // all-reduce: none counted), per collective of an -m group.
  std::vector<bool> launch_bound(sizes.size(), false);
  std::vector<int> nccl_channels(sizes.size(), 0);
  const std::vector<double> device_times_s = times_s;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const SizeChoice& c = out.choices[i];
    if (!c.p2p && !c.custom)
      nccl_channels[i] = nccl_running_channels(summary, c.nccl_algo, c.nccl_proto, static_cast<double>(sizes[i]));
    const double launch_s = group_launch_s(topo.host_launch_s, topo.host_launch_per_channel_s, nccl_channels[i], req.launch);
    launch_bound[i] = host_bound(times_s[i], req.launch, launch_s);
    times_s[i] = timed_iteration_s(times_s[i], req.launch, launch_s);
  }

  const double factor = collective_busbw_factor(info, n);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    NcclTestsRow row;
    row.size_bytes = sizes[i];
    row.count = counts[i];
    row.type = req.datatype;
    row.redop = collective_redop_column(info, req.op);
    row.root = collective_root_column(info, req.root);
    const double us = times_s[i] * 1e6;
    const double algbw = us > 0 ? static_cast<double>(sizes[i]) / 1e3 / us : 0.0;  // GB/s
    row.oop_time_us = row.ip_time_us = us;
    row.oop_algbw_GBps = row.ip_algbw_GBps = algbw;
    row.oop_busbw_GBps = row.ip_busbw_GBps = algbw * factor;
    row.oop_wrong = row.ip_wrong = 0;
    out.rows.push_back(row);
  }

  out.report = build_report(topo, req, out, plan, sizes, cal_class);
  out.report.facts.nccl_coll_channels = summary.coll_channels;
  const SizeChoice& last_choice = out.choices.back();
  if (last_choice.sim_algo == Algo::Ring && last_choice.sim_proto == Proto::Simple && !last_choice.p2p &&
      !last_choice.custom && !req.calibration) {
    const double largest = static_cast<double>(sizes.back());
    out.report.facts.ring_channel_bound_GBps = net_ring_channels_bound_Bps(topo, summary, largest) / 1e9;
    if (out.report.facts.ring_channel_bound_GBps > 0)
      out.report.facts.ring_channel_bound_channels = nccl_running_channels(summary, Algo::Ring, Proto::Simple, largest);
  }
  for (std::size_t i = 0; i < sizes.size() && i < out.report.sizes.size(); ++i) {
    out.report.sizes[i].launch_bound = launch_bound[i];
    out.report.sizes[i].nccl_channels = nccl_channels[i];
    out.report.sizes[i].device_time_us = device_times_s[i] * 1e6;
  }
  return out;
}

Prediction predict_operands(const Topology& topo, const PredictRequest& request, const std::vector<ReduceOperand>& operands) {
  const CollectiveInfo& info = collective_info(request.collective);
  std::map<std::pair<int, bool>, Prediction> by_group;
  Prediction out;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    const ReduceOperand& o = operands[i];
    const std::pair<int, bool> group = {datatype_size(o.datatype), nvls_reduction_unsupported(o).empty()};
    auto it = by_group.find(group);
    if (it == by_group.end()) {
      PredictRequest one = request;
      one.datatype = o.datatype;
      one.op = o.op;
      it = by_group.emplace(group, predict(topo, one)).first;
    }
    std::vector<ReportSize> sizes = it->second.report.sizes;
    for (ReportSize& z : sizes) {
      z.row.type = o.datatype;
      z.row.redop = collective_redop_column(info, o.op);
    }
    if (i == 0) {
      out = it->second;
      out.report.sizes.clear();
    }
    out.report.sizes.insert(out.report.sizes.end(), sizes.begin(), sizes.end());
  }
  out.report.facts.datatype = request.datatype;
  out.report.facts.op = request.op;
  return out;
}

}  // namespace ccsim
