// nccl-tests' launch mode and timing loop: the time it reports per collective (scenarios/launch_mode.h).
#include "scenarios/launch_mode.h"

#include <algorithm>

namespace ccsim {

double host_launch_time_s(const LaunchMode& mode, double launch_s) {
  return std::max(1, mode.gpus_per_thread) * launch_s;
}

double timed_iteration_s(double device_s, const LaunchMode& mode, double launch_s) {
  const double groups = static_cast<double>(std::max(1, mode.iters)) * std::max(1, mode.graph_launches);
  const int per_group = std::max(1, mode.agg_iters);
  const double group_device_s = per_group * device_s;
  const double first_launch_s = host_launch_time_s(mode, launch_s);
  if (mode.blocking && mode.graph_launches <= 0) return (first_launch_s + group_device_s) / per_group;
  // With a CUDA graph the host launches nothing per iteration; the device keeps the pace.
  const double host_period_s = mode.graph_launches > 0 ? 0.0 : first_launch_s;
  const double total_s = first_launch_s + group_device_s + (groups - 1) * std::max(host_period_s, group_device_s);
  return total_s / (groups * per_group);
}

bool host_bound(double device_s, const LaunchMode& mode, double launch_s) {
  if (mode.graph_launches > 0) return false;
  return mode.blocking || host_launch_time_s(mode, launch_s) > std::max(1, mode.agg_iters) * device_s;
}

}  // namespace ccsim
