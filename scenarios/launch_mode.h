// nccl-tests' launch mode (-t threads per process, -g GPUs per thread) and what it costs.
//
// With -g N one host thread drives N GPUs: every iteration it calls ncclGroupStart, one collective on
// each of its N communicators, ncclGroupEnd, so the N kernels are launched one after the other by one
// CPU thread. nccl-tests times `iters` iterations issued back to back with no synchronisation between
// them (common.cu: startColl in a loop, completeColl once after it), so host launches and device work
// overlap: the thread issues iteration k+1 while the GPUs run iteration k. The per-iteration time is
// therefore the larger of the two, not their sum:
//
//   T_iter = max(T_device, N x t_launch)
//
// where T_device is the collective as one process per GPU runs it and t_launch the host CPU time of
// one launch (node.cpu.launch_us). Threads of -t run concurrently, each with its own GPUs, so only
// the GPUs of one thread serialise (contention on the CUDA driver's locks is not modelled).
#pragma once

namespace ccsim {

struct LaunchMode {
  int threads = 1;          // -t: threads per process (nccl-tests' default 1)
  int gpus_per_thread = 1;  // -g: GPUs per thread (nccl-tests' default 1)
};

// Host time one thread spends launching one iteration: gpus_per_thread x launch_s.
double host_launch_time_s(const LaunchMode& mode, double launch_s);

// nccl-tests' per-iteration time: max(device_s, host_launch_time_s(mode, launch_s)).
double launch_bound_time_s(double device_s, const LaunchMode& mode, double launch_s);

}  // namespace ccsim
