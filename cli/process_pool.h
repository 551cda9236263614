// Runs independent jobs in child processes, at most `parallel` at a time, handing each result to
// the caller as soon as its job finishes (completion order, unlike sim/isolated_run.h, which
// returns in order), so that `ccsim run` can report progress and keep finished variants when it is
// interrupted. Each child leads its own process group: the engine's own children go with it when
// the pool stops it.
#pragma once
#include <csignal>
#include <functional>
#include <string>

namespace ccsim {

struct ProcessPoolCallbacks {
  // A job's result (the string it returned). Called in the parent.
  std::function<void(std::size_t index, const std::string& result)> done;
  // Called about once a second while jobs run, and after each done() (progress display).
  std::function<void()> tick;
};

enum class PoolOutcome { Finished, Interrupted };

// Runs jobs[0..count) with job(i). `stop` is polled (set it from a signal handler): when it becomes
// non-zero, the running children's process groups get SIGTERM, are reaped, and Interrupted is
// returned. A job that throws makes the pool stop the others and rethrow in the parent
// (InputError keeps its type and message).
PoolOutcome run_process_pool(std::size_t count, const std::function<std::string(std::size_t)>& job, int parallel,
                             const volatile std::sig_atomic_t& stop, const ProcessPoolCallbacks& callbacks);

}  // namespace ccsim
