// SimGrid keeps one engine and one platform per process. Each simulation therefore runs in a forked
// child that builds its own platform, simulates, and sends its result back through a pipe; the parent
// never touches SimGrid. This also lets independent simulations (the sizes of a sweep) use both cores.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ccsim {

// Above this many simulations in one call (the long sweeps `predict` warns about, kWarnSweepSizes),
// progress goes to stderr: one plain line at each tenth done, so a long run is never silent.
inline constexpr std::size_t kProgressAfterJobs = 1000;

// Runs each job in its own child process, at most `parallel` at a time, and returns what each job
// returned, in order. An exception in a job is rethrown in the parent as std::runtime_error with its
// message (InputError keeps its type). More than `progress_after` jobs: progress lines on stderr.
std::vector<std::string> run_isolated(const std::vector<std::function<std::string()>>& jobs, int parallel,
                                      std::size_t progress_after = kProgressAfterJobs);

}  // namespace ccsim
