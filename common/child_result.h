// The child's side of a forked job (sim/isolated_run.h, cli/process_pool.h): the job's result goes
// to the parent through a pipe as one status byte ('O' ok, 'I' an InputError, 'E' any other
// exception) followed by the payload (the result, or the error's text).
#pragma once
#include <functional>
#include <string>

namespace ccsim {

// Runs `job`, writes its framed result to `fd`, closes it and exits the process with status 0
// without running static destructors (SimGrid's teardown is not needed in a child).
[[noreturn]] void finish_child_with(int fd, const std::function<std::string()>& job);

}  // namespace ccsim
