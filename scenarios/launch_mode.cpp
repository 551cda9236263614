// nccl-tests' -g/-t launch mode: the host launch bound of one iteration (scenarios/launch_mode.h).
#include "scenarios/launch_mode.h"

#include <algorithm>

namespace ccsim {

double host_launch_time_s(const LaunchMode& mode, double launch_s) {
  return std::max(1, mode.gpus_per_thread) * launch_s;
}

double launch_bound_time_s(double device_s, const LaunchMode& mode, double launch_s) {
  return std::max(device_s, host_launch_time_s(mode, launch_s));
}

}  // namespace ccsim
