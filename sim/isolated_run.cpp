#include "sim/isolated_run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "common/error.h"
#include "common/child_result.h"

namespace ccsim {

namespace {

// Message framing: common/child_result.h (a status byte, then the payload).

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::FILE* err = nullptr;  // the child's stderr: SimGrid's aborts print backtraces there
};

// The child's stderr, whole; rewound and closed.
std::string take_stderr(std::FILE* err) {
  std::string text;
  if (!err) return text;
  std::rewind(err);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, err)) > 0 && text.size() < (1u << 20);) text.append(buf, n);
  std::fclose(err);
  return text;
}

// One line for an error message: the first line of the child's stderr that is not a backtrace.
std::string first_meaningful_line(const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    const auto b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    line = line.substr(b);
    if (line.rfind("Backtrace", 0) == 0 || line.rfind("0x", 0) == 0 || line[0] == '#' || line[0] == '-') continue;
    if (line.size() > 200) line = line.substr(0, 200) + "...";
    return line;
  }
  return "";
}

Child start(const std::function<std::string()>& job) {
  int fds[2];
  // Buffered output would otherwise be written twice, once by each process.
  std::fflush(nullptr);
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  // An unnamed temporary: whatever SimGrid prints (an xbt error, an abort's backtrace) is kept
  // out of the user's terminal and summarised in one line if the child fails.
  std::FILE* err = std::tmpfile();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    if (err) ::dup2(::fileno(err), 2);
    finish_child_with(fds[1], job);
  }
  ::close(fds[1]);
  return Child{pid, fds[0], err};
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
  const std::string err = take_stderr(child.err);
  if (data.empty()) {
    const std::string said = first_meaningful_line(err);
    const std::string tail = said.empty() ? "" : " (" + said + ")";
    if (WIFSIGNALED(wstatus))
      throw std::runtime_error("simulation process died with signal " + std::to_string(WTERMSIG(wstatus)) + tail);
    throw std::runtime_error("simulation process ended without a result" + tail);
  }
  if (!err.empty()) std::fwrite(err.data(), 1, err.size(), stderr);  // a successful child's warnings
  const char status = data[0];
  std::string payload = data.substr(1);
  if (status == 'I') throw InputError("", payload);
  if (status != 'O') throw std::runtime_error(payload);
  return payload;
}

}  // namespace

std::vector<std::string> run_isolated(const std::vector<std::function<std::string()>>& jobs, int parallel,
                                      std::size_t progress_after) {
  parallel = std::max(1, parallel);
  std::vector<std::string> results(jobs.size());
  std::vector<Child> running(jobs.size());
  std::size_t next = 0;
  const bool progress = jobs.size() > progress_after;
  std::size_t reported_tenths = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    while (next < jobs.size() && next < i + static_cast<std::size_t>(parallel)) {
      running[next] = start(jobs[next]);
      ++next;
    }
    results[i] = finish(running[i]);
    if (progress && (i + 1) * 10 / jobs.size() > reported_tenths) {
      reported_tenths = (i + 1) * 10 / jobs.size();
      std::fprintf(stderr, "ccsim: progress: %zu/%zu simulations done\n", i + 1, jobs.size());
    }
  }
  return results;
}

}  // namespace ccsim
