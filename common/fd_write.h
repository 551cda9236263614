// Writing a whole buffer to a file descriptor (a pipe from a child process to its parent),
// retrying interrupted and partial writes. Errors end the write silently: the reader sees a short
// message and reports it.
#pragma once
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace ccsim {

inline void write_all_fd(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t w = ::write(fd, data, size);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data += w;
    size -= static_cast<std::size_t>(w);
  }
}

}  // namespace ccsim
