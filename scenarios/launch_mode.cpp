// nccl-tests' launch mode and timing loop: the time it reports per collective (scenarios/launch_mode.h).
#include "scenarios/launch_mode.h"

#include <algorithm>

namespace ccsim {

LaunchMode normalized(const LaunchMode& mode) {
  LaunchMode m = mode;
  m.threads = std::max(1, m.threads);
  m.gpus_per_thread = std::max(1, m.gpus_per_thread);
  m.iters = std::max(1, m.iters);
  m.agg_iters = std::max(1, m.agg_iters);
  m.graph_launches = std::max(0, m.graph_launches);
  return m;
}

double group_launch_s(double launch_s, double launch_per_channel_s, int channels, const LaunchMode& mode) {
  return launch_s + launch_per_channel_s * channels * normalized(mode).agg_iters;
}

double host_launch_time_s(const LaunchMode& mode, double launch_s) {
  return normalized(mode).gpus_per_thread * launch_s;
}

double timed_iteration_s(double device_s, const LaunchMode& mode, double launch_s) {
  const LaunchMode m = normalized(mode);
  const double groups = static_cast<double>(m.iters) * std::max(1, m.graph_launches);
  const double group_device_s = m.agg_iters * device_s;
  const double first_launch_s = host_launch_time_s(m, launch_s);
  if (m.blocking && m.graph_launches == 0) return (first_launch_s + group_device_s) / m.agg_iters;
  // With a CUDA graph the host launches nothing per iteration; the device keeps the pace.
  const double host_period_s = m.graph_launches > 0 ? 0.0 : first_launch_s;
  const double total_s = first_launch_s + group_device_s + (groups - 1) * std::max(host_period_s, group_device_s);
  return total_s / (groups * m.agg_iters);
}

bool host_bound(double device_s, const LaunchMode& mode, double launch_s) {
  const LaunchMode m = normalized(mode);
  if (m.graph_launches > 0) return false;
  return m.blocking || host_launch_time_s(m, launch_s) > m.agg_iters * device_s;
}

}  // namespace ccsim
