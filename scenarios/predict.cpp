#include "scenarios/predict.h"

#include <algorithm>

#include "algorithms/ring.h"
#include "common/error.h"
#include "scenarios/nccl_tests_table.h"
#include "scenarios/nccl_types.h"

namespace ccsim {

std::vector<std::uint64_t> sweep_sizes(const SizeSweep& sweep) {
  std::vector<std::uint64_t> sizes;
  if (sweep.min_bytes > sweep.max_bytes)
    throw InputError("-b", "minimum size " + std::to_string(sweep.min_bytes) + " is greater than maximum size (-e) " +
                               std::to_string(sweep.max_bytes));
  if (sweep.step_factor <= 1 && sweep.step_bytes == 0 && sweep.min_bytes != sweep.max_bytes)
    throw InputError("-i", "step of 0 bytes with -f <= 1 would never reach -e");
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

void nccl_tests_size_and_count(const std::string& collective, std::uint64_t requested, int type_size, int nranks,
                               std::uint64_t* size_bytes, std::uint64_t* count) {
  const std::uint64_t ts = static_cast<std::uint64_t>(type_size);
  if (collective == "all_gather" || collective == "reduce_scatter") {
    const std::uint64_t per_rank = requested / ts / static_cast<std::uint64_t>(nranks);
    *count = per_rank;
    *size_bytes = per_rank * ts * static_cast<std::uint64_t>(nranks);
  } else {
    *count = requested / ts;
    *size_bytes = *count * ts;
  }
}

Prediction predict(const Topology& topo, const PredictRequest& req) {
  if (req.collective != "all_reduce" && req.collective != "all_gather" && req.collective != "reduce_scatter")
    throw InputError("--collective", "'" + req.collective +
                                         "' is not available yet (available: all_reduce, all_gather, reduce_scatter)");
  const int type_size = datatype_size(req.datatype);
  check_nccl_op(req.op);
  const int n = topo.num_gpus();
  const std::vector<std::uint64_t> requested = sweep_sizes(req.sweep);

  const int channels = req.channels > 0 ? req.channels : 2 * std::max(1, topo.num_nodes() > 1 ? topo.nics_per_node() : 1);
  const RingPlan plan = plan_rings(topo, channels);
  Prediction out;
  out.alpha_beta = ring_alpha_beta(topo, plan, req.timing);
  out.knee_bytes = knee_bytes(n, out.alpha_beta);

  std::vector<std::uint64_t> sizes, counts;
  for (auto r : requested) {
    std::uint64_t s, c;
    nccl_tests_size_and_count(req.collective, r, type_size, n, &s, &c);
    sizes.push_back(s);
    counts.push_back(c);
  }

  std::vector<double> times_s(sizes.size(), 0.0);
  if (req.model == PredictModel::ClosedForm) {
    for (std::size_t i = 0; i < sizes.size(); ++i)
      times_s[i] = ring_closed_form_time_s(req.collective, n, static_cast<double>(sizes[i]), out.alpha_beta);
  } else {
    // One reference schedule, scaled to every size by the engine (ring schedules are linear in S).
    RingScheduleOptions opts;
    opts.timing = req.timing;
    const double reference = static_cast<double>(std::max<std::uint64_t>(1, sizes.back()));
    const Schedule schedule = ring_schedule(topo, plan, req.collective, reference, opts);
    std::vector<double> sizes_d(sizes.begin(), sizes.end());
    out.sim = simulate_sweep(topo, schedule, sizes_d, req.engine);
    for (std::size_t i = 0; i < sizes.size(); ++i) times_s[i] = out.sim[i].time_s;
  }

  const double factor = busbw_factor(req.collective, n);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    NcclTestsRow row;
    row.size_bytes = sizes[i];
    row.count = counts[i];
    row.type = req.datatype;
    row.redop = (req.collective == "all_gather") ? "none" : req.op;
    row.root = -1;
    const double us = times_s[i] * 1e6;
    const double algbw = us > 0 ? static_cast<double>(sizes[i]) / 1e3 / us : 0.0;  // GB/s
    row.oop_time_us = row.ip_time_us = us;
    row.oop_algbw_GBps = row.ip_algbw_GBps = algbw;
    row.oop_busbw_GBps = row.ip_busbw_GBps = algbw * factor;
    row.oop_wrong = row.ip_wrong = 0;
    out.rows.push_back(row);
  }

  nlohmann::json meta;
  meta["ccsim_version"] = CCSIM_VERSION;
  meta["prediction"] = req.model == PredictModel::Engine ? "engine (SimGrid flow-level, max-min sharing)"
                                                         : "closed-form alpha-beta";
  meta["collective"] = req.collective;
  meta["algorithm"] = "ring";
  meta["protocol"] = "Simple";
  meta["step_constants"] = kStepTimingSource;
  meta["nranks"] = n;
  meta["nodes"] = topo.num_nodes();
  meta["gpus_per_node"] = topo.gpus_per_node();
  meta["channels"] = plan.total_channels();
  meta["ring_families"] = plan.families.size();
  meta["alpha_us"] = out.alpha_beta.alpha_s * 1e6;
  meta["beta_GBps"] = out.alpha_beta.beta_Bps / 1e9;
  meta["launch_us"] = out.alpha_beta.launch_s * 1e6;
  meta["knee_bytes"] = out.knee_bytes;
  meta["bottleneck"] = out.alpha_beta.bottleneck;
  meta["datatype"] = req.datatype;
  meta["op"] = req.op;
  if (!out.sim.empty() && !out.sim.back().links.empty()) {
    // The busiest link directions at the largest size: what limits the bandwidth bill.
    nlohmann::json busiest = nlohmann::json::array();
    const SimResult& last = out.sim.back();
    for (std::size_t i = 0; i < last.links.size() && i < 5; ++i) {
      const LinkStat& l = last.links[i];
      busiest.push_back({{"from", l.from},
                         {"to", l.to},
                         {"link", l.label},
                         {"bandwidth_GBps", l.bandwidth_Bps / 1e9},
                         {"bytes", l.bytes},
                         {"busy_us", l.busy_s * 1e6},
                         {"utilization", last.time_s > 0 ? l.bytes / l.bandwidth_Bps / last.time_s : 0.0}});
    }
    meta["busiest_links_at_largest_size"] = busiest;
    meta["engine"] = {{"transfers", last.transfers},
                      {"flows_simulated", last.flows_simulated},
                      {"symmetry_order", last.symmetry_order},
                      {"merge_bundle", last.merge_bundle}};
  }
  meta["topology"] = topo.spec;
  out.metadata = meta;
  return out;
}

}  // namespace ccsim
