// The nccl-tests table of a prediction: byte-compatible rows, ccsim's facts as "# " preamble lines.
#include "report/render.h"

#include "common/text.h"
#include "common/units.h"

namespace ccsim {

std::vector<std::string> prediction_preamble(const PredictionReport& report) {
  const ReportFacts& f = report.facts;
  std::vector<std::string> pre = {
      "# ccsim " + f.ccsim_version + " prediction, not a measurement: " + f.collective + " on " + f.topology_name +
          ", " + std::to_string(f.nodes) + " node(s) x " + std::to_string(f.gpus_per_node) +
          " GPUs = " + std::to_string(f.nranks) + " ranks",
      "# model: " + f.model,
      (f.p2p ? "# NCCL (" + f.cost_model + ", P2P: no tuner) picks: " : "# NCCL tuner (" + f.cost_model + ") picks: ") +
          f.nccl_choice,
      "# predicted as: " + f.predicted_as,
  };
  if (f.p2p) {
    // The ring's alpha-beta says nothing about grouped send/recv.
    pre.push_back("# P2P: NCCL's channels, LL/Simple rule and chunks per message, PXN across nodes, CPU proxy "
                  "cost per network message (docs/collectives.md)");
  } else {
    pre.push_back("# ring alpha-beta (" + f.ring_protocol + "): launch " + strprintf("%.2f", f.launch_s * 1e6) +
                  " us, alpha " + strprintf("%.2f", f.alpha_s * 1e6) + " us/step, beta " +
                  strprintf("%.2f", f.beta_Bps / 1e9) + " GB/s per step, knee S* = n*alpha*beta = " +
                  format_bytes(f.knee_bytes));
    pre.push_back("# ring bottleneck (closed form): " + f.bottleneck);
    if (f.ring_channel_bound_GBps > 0 && f.ring_channel_bound_GBps < f.beta_Bps / 1e9)
      pre.push_back("# ring channels across nodes: " + std::to_string(f.ring_channel_bound_channels) + " x " +
                    strprintf("%.2f", f.ring_channel_bound_GBps / f.ring_channel_bound_channels) + " GB/s = " +
                    strprintf("%.1f", f.ring_channel_bound_GBps) +
                    " GB/s busbw at most (node.gpu.net_ring_channel_GBps: one thread block's copy per channel), "
                    "below the links' beta");
  }
  const LaunchMode& mode = f.launch;
  if (mode.gpus_per_thread > 1 || mode.blocking || mode.graph_launches > 0) {
    // How the host's launches show in the reported times (scenarios/launch_mode.h).
    std::string effect;
    if (mode.graph_launches > 0) {
      effect = " per iteration, replayed from a CUDA graph (-G): only the first of " +
               std::to_string(mode.iters * mode.graph_launches) + " iterations waits for them";
    } else if (mode.blocking) {
      effect = ", added to every iteration (-z 1: each waits for the one before)";
    } else {
      std::size_t bound = 0;
      for (const auto& z : report.sizes) bound += z.launch_bound ? 1 : 0;
      effect = " per iteration bound " + std::to_string(bound) + " of " + std::to_string(report.sizes.size()) +
               " sizes; the first of " + std::to_string(mode.iters) + " iterations waits for them";
    }
    pre.push_back("# launch mode: " + std::to_string(mode.threads) + " thread(s) x " +
                  std::to_string(mode.gpus_per_thread) + " GPUs (-t, -g): " + std::to_string(mode.gpus_per_thread) +
                  " serial launches x " + strprintf("%.2f", f.host_launch_s * 1e6) + " us (node.cpu.launch_us) = " +
                  strprintf("%.2f", host_launch_time_s(mode, f.host_launch_s) * 1e6) + " us of host time" + effect +
                  (f.host_launch_per_channel_s > 0
                       ? strprintf("; each launch %.3f us more per channel NCCL runs (node.cpu.launch_us_per_channel)",
                                   f.host_launch_per_channel_s * 1e6)
                       : std::string()));
  }
  for (const auto& e : f.nccl_env) pre.push_back("# NCCL environment: " + e);
  if (!f.calibration_file.empty()) {
    const std::string applied = join(f.calibration_overrides);
    pre.push_back("# calibration: " + f.calibration_file +
                  (f.calibration_class.empty() ? " (no ring class: NCCL's choice is predicted on the calibrated topology)"
                                               : " (class " + f.calibration_class + ")") +
                  (applied.empty() ? "" : "; set " + applied));
    for (const auto& note : f.calibration_notes) pre.push_back("# calibration note: " + note);
  }
  if (!f.busiest_links_at_largest_size.empty() && !report.sizes.empty()) {
    const ReportLink& l = f.busiest_links_at_largest_size.front();
    pre.push_back("# busiest link at " + format_bytes(static_cast<double>(report.sizes.back().row.size_bytes)) +
                  " (engine): " + l.from + " -> " + l.to + " (" + l.label + "), " +
                  strprintf("%.0f", 100 * l.utilization) + "% of its bandwidth over the operation");
  }
  return pre;
}

std::string render_prediction_table(const PredictionReport& report) {
  return format_nccl_tests_output(report.facts.table_header, prediction_preamble(report), report.rows());
}

}  // namespace ccsim
