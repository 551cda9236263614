#include "cli/process_pool.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "common/error.h"
#include "common/child_result.h"

namespace ccsim {

namespace {

// Message framing: common/child_result.h (a status byte, then the payload).

struct Running {
  std::size_t index = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string data;
};

Running start(std::size_t index, const std::function<std::string(std::size_t)>& job) {
  int fds[2];
  std::fflush(nullptr);  // buffered output would otherwise be written by both processes
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    ::setpgid(0, 0);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    finish_child_with(fds[1], [&] { return job(index); });
  }
  ::setpgid(pid, pid);  // also here: no race with a stop before the child ran setpgid itself
  ::close(fds[1]);
  return Running{index, pid, fds[0], {}};
}

void reap(pid_t pid) {
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
}

void stop_all(std::vector<Running>& running) {
  for (auto& r : running) ::kill(-r.pid, SIGTERM);
  for (auto& r : running) {
    ::close(r.fd);
    reap(r.pid);
  }
  running.clear();
}

}  // namespace

PoolOutcome run_process_pool(std::size_t count, const std::function<std::string(std::size_t)>& job, int parallel,
                             const volatile std::sig_atomic_t& stop, const ProcessPoolCallbacks& callbacks) {
  parallel = std::max(1, parallel);
  std::vector<Running> running;
  std::size_t next = 0;
  while (next < count || !running.empty()) {
    if (stop) {
      stop_all(running);
      return PoolOutcome::Interrupted;
    }
    while (next < count && running.size() < static_cast<std::size_t>(parallel)) running.push_back(start(next++, job));
    std::vector<pollfd> fds;
    for (const auto& r : running) fds.push_back({r.fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), 1000);
    if (ready < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (ready <= 0) {
      if (callbacks.tick) callbacks.tick();
      continue;
    }
    for (std::size_t k = fds.size(); k-- > 0;) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Running& r = running[k];
      char buf[1 << 16];
      const ssize_t n = ::read(r.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n > 0) {
        r.data.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      // End of file: the job is over.
      ::close(r.fd);
      reap(r.pid);
      Running finished = std::move(r);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      if (finished.data.empty() || finished.data[0] != 'O') {
        stop_all(running);
        if (finished.data.empty()) throw std::runtime_error("job " + std::to_string(finished.index) + " died without a result");
        if (finished.data[0] == 'I') throw InputError("", finished.data.substr(1));
        throw std::runtime_error(finished.data.substr(1));
      }
      if (callbacks.done) callbacks.done(finished.index, finished.data.substr(1));
      if (callbacks.tick) callbacks.tick();
    }
  }
  return PoolOutcome::Finished;
}

}  // namespace ccsim
