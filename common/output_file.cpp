#include "common/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <vector>

#include "common/error.h"

namespace ccsim {

namespace {

std::string errno_text() { return std::strerror(errno); }

// False (errno set) on failure.
bool write_all(int fd, const std::string& content) {
  const char* p = content.data();
  std::size_t left = content.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  return true;
}

void write_special(const std::string& path, const std::string& content, bool fifo) {
  // A FIFO without a reader would block the open forever: O_NONBLOCK makes it fail with ENXIO.
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | (fifo ? O_NONBLOCK : 0));
  if (fd < 0) {
    if (errno == ENXIO) throw InputError(path, "the FIFO has no reader; start its reader first");
    throw InputError(path, "cannot open for writing (" + errno_text() + ")");
  }
  if (fifo) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const bool ok = write_all(fd, content);
  const std::string err = ok ? "" : errno_text();
  ::close(fd);
  if (!ok) throw InputError(path, "write failed (" + err + ")");
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  if (path.empty()) throw InputError("--output", "empty file name");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw InputError(path, "is a directory; give a file name");
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISBLK(st.st_mode)) {
      if (S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)) throw InputError(path, "is a block device or socket; refusing to write to it");
      write_special(path, content, S_ISFIFO(st.st_mode));
      return;
    }
  }
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string pattern = dir + "/." + base + ".ccsim-XXXXXX";
  std::vector<char> tmpl(pattern.begin(), pattern.end());
  tmpl.push_back('\0');
  // mkstemp: O_CREAT | O_EXCL with a random name, so a planted file or link is never written through.
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw InputError(path, "cannot create a file in " + dir + " (" + errno_text() + ")");
  const std::string tmp(tmpl.data());
  // mkstemp's 0600 would make outputs private; give the mode an ordinary creat() would.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  const bool ok = write_all(fd, content);
  const std::string err = ok ? "" : errno_text();
  if (::close(fd) != 0 || !ok) {
    ::unlink(tmp.c_str());
    throw InputError(path, "write failed (" + (ok ? errno_text() : err) + ")");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string e = errno_text();
    ::unlink(tmp.c_str());
    throw InputError(path, "cannot move the written file into place (" + e + ")");
  }
}

void write_output(const std::string& path, const std::string& content) {
  if (path.empty())
    std::cout << content << std::flush;
  else
    write_file_atomically(path, content);
}

}  // namespace ccsim
