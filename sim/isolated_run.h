// SimGrid keeps one engine and one platform per process. Each simulation therefore runs in a forked
// child that builds its own platform, simulates, and sends its result back through a pipe; the parent
// never touches SimGrid. This also lets independent simulations (the sizes of a sweep) use both cores.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace ccsim {

// Runs each job in its own child process, at most `parallel` at a time, and returns what each job
// returned, in order. An exception in a job is rethrown in the parent as std::runtime_error with its
// message (InputError keeps its type).
std::vector<std::string> run_isolated(const std::vector<std::function<std::string()>>& jobs, int parallel);

}  // namespace ccsim
