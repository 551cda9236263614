#include "sim/isolated_run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "common/error.h"
#include "common/fd_write.h"

namespace ccsim {

namespace {

// Message framing: one status byte ('O' ok, 'I' input error, 'E' other error) then the payload.

struct Child {
  pid_t pid = -1;
  int fd = -1;
};

Child start(const std::function<std::string()>& job) {
  int fds[2];
  // Buffered output would otherwise be written twice, once by each process.
  std::fflush(nullptr);
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    char status = 'O';
    std::string payload;
    try {
      payload = job();
    } catch (const InputError& e) {
      status = 'I';
      payload = e.what();
    } catch (const std::exception& e) {
      status = 'E';
      payload = e.what();
    }
    write_all_fd(fds[1], &status, 1);
    write_all_fd(fds[1], payload.data(), payload.size());
    ::close(fds[1]);
    ::_exit(0);  // skip static destructors: SimGrid's teardown is not needed
  }
  ::close(fds[1]);
  return Child{pid, fds[0]};
}

std::string finish(Child child) {
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const ssize_t r = ::read(child.fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    data.append(buf, static_cast<std::size_t>(r));
  }
  ::close(child.fd);
  int wstatus = 0;
  while (::waitpid(child.pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (data.empty()) {
    if (WIFSIGNALED(wstatus))
      throw std::runtime_error("simulation process died with signal " + std::to_string(WTERMSIG(wstatus)));
    throw std::runtime_error("simulation process ended without a result");
  }
  const char status = data[0];
  std::string payload = data.substr(1);
  if (status == 'I') throw InputError("", payload);
  if (status != 'O') throw std::runtime_error(payload);
  return payload;
}

}  // namespace

std::vector<std::string> run_isolated(const std::vector<std::function<std::string()>>& jobs, int parallel) {
  parallel = std::max(1, parallel);
  std::vector<std::string> results(jobs.size());
  std::vector<Child> running(jobs.size());
  std::size_t next = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    while (next < jobs.size() && next < i + static_cast<std::size_t>(parallel)) {
      running[next] = start(jobs[next]);
      ++next;
    }
    results[i] = finish(running[i]);
  }
  return results;
}

}  // namespace ccsim
