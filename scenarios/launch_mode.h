// nccl-tests' launch mode (-t threads per process, -g GPUs per thread) and timing loop (-n iters,
// -m agg_iters, -G cudagraph), and what they add to the time nccl-tests reports per collective.
//
// With -g N one host thread drives N GPUs: every iteration it calls ncclGroupStart, one collective on
// each of its N communicators, ncclGroupEnd, so the N kernels are launched one after the other by one
// CPU thread, H = N x t_launch of host time per iteration (t_launch: node.cpu.launch_us). nccl-tests
// times its iterations issued back to back (common.cu BenchTime: Barrier, start the timer, startColl
// `iters` times, completeColl once, elapsed / (iters x agg_iters)), so the thread issues iteration k+1
// while the GPUs run iteration k and a steady iteration costs the larger of H and the device time D.
// The first iteration cannot overlap: its collective starts only when the thread has launched the last
// of its GPUs' kernels, H after the timer started. Over K iterations (end of iteration j =
// max(launch of j, end of j-1) + D):
//
//   total = H + D + (K - 1) x max(H, D)          T_reported = total / K = max(H, D) + min(H, D) / K
//
// -z 1 (blocking) synchronises the streams after every iteration, so nothing overlaps: K x (H + D)
// (the synchronisation's and the barrier's own latency are not modelled).
// -m M puts M collectives in one group: one kernel per GPU runs them all (device time M x D, host time
// H per group) and nccl-tests divides by K x M. -G G captures the loop in a CUDA graph per GPU and times
// G launches of it: the per-iteration host launches are gone (the graph replays them on the device), and
// only the graph launches' first H remains, over K = iters x G iterations. Threads of -t launch
// concurrently, so only the GPUs of one thread serialise (contention on the CUDA driver's locks is not
// modelled). The stream synchronisation after the loop and the ranks' skew leaving the barrier are not
// modelled either (a few microseconds over K iterations).
#pragma once

namespace ccsim {

struct LaunchMode {
  int threads = 1;          // -t: threads per process (nccl-tests' default 1)
  int gpus_per_thread = 1;  // -g: GPUs per thread (nccl-tests' default 1)
  int iters = 20;           // -n: timed iterations (nccl-tests' default 20)
  int agg_iters = 1;        // -m: collectives per group (nccl-tests' default 1)
  int graph_launches = 0;   // -G: CUDA graph launches of the captured loop (0: no graph, the default)
  bool blocking = false;    // -z 1: every iteration waits for its collective before the next launch
};

// The mode with its counts clamped to what nccl-tests accepts (at least one thread, GPU, iteration and
// collective per group; no negative graph launches): what the functions below and the report use.
LaunchMode normalized(const LaunchMode& mode);

// One GPU's launch of a group (the launch_s the functions below take): launch_s (node.cpu.launch_us)
// plus launch_per_channel_s (node.cpu.launch_us_per_channel) for each channel NCCL runs the
// collective on, per collective of an -m group.
double group_launch_s(double launch_s, double launch_per_channel_s, int channels, const LaunchMode& mode);

// Host time one thread spends launching one group: gpus_per_thread x launch_s.
double host_launch_time_s(const LaunchMode& mode, double launch_s);

// The time nccl-tests reports for one collective whose device time is device_s (formula above).
double timed_iteration_s(double device_s, const LaunchMode& mode, double launch_s);

// Whether the host's launches show in the steady iterations: they set the pace (H > M x D without a
// graph) or add to every iteration (-z 1).
bool host_bound(double device_s, const LaunchMode& mode, double launch_s);

}  // namespace ccsim
