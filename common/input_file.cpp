#include "common/input_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/error.h"

namespace ccsim {

namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string limit_text(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, std::size_t max_bytes,
                            int pipe_idle_seconds) {
  // O_NONBLOCK: opening a FIFO without a writer must not block; reads below wait with poll instead.
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    throw InputError(path, "cannot open " + what + " (" + std::strerror(err) + ")");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw InputError(path, "cannot read " + what + " (" + std::strerror(errno) + ")");
  const bool regular = S_ISREG(st.st_mode);
  const bool pipe = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
  if (S_ISDIR(st.st_mode)) throw InputError(path, "is a directory, not a " + what);
  if (!regular && !pipe)
    throw InputError(path, "is a device, not a " + what + " (give a regular file or a pipe)");
  if (regular && static_cast<std::uint64_t>(st.st_size) > max_bytes)
    throw InputError(path, what + " is larger than ccsim's input limit of " + limit_text(max_bytes));
  std::string text;
  if (regular) text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    if (pipe) {
      pollfd p{fd.get(), POLLIN, 0};
      const int ready = ::poll(&p, 1, pipe_idle_seconds * 1000);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0)
        throw InputError(path, "no data from the pipe for " + std::to_string(pipe_idle_seconds) + " s (" +
                                   std::to_string(text.size()) + " bytes read); is its writer running?");
    }
    const ssize_t r = ::read(fd.get(), buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw InputError(path, "cannot read " + what + " (" + std::strerror(errno) + ")");
    }
    if (r == 0) break;
    if (text.size() + static_cast<std::size_t>(r) > max_bytes)
      throw InputError(path, what + " is larger than ccsim's input limit of " + limit_text(max_bytes));
    text.append(buf, static_cast<std::size_t>(r));
  }
  return text;
}

}  // namespace ccsim
