#include "common/child_result.h"

#include <unistd.h>

#include "common/error.h"
#include "common/fd_write.h"

namespace ccsim {

void finish_child_with(int fd, const std::function<std::string()>& job) {
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
  write_all_fd(fd, &status, 1);
  write_all_fd(fd, payload.data(), payload.size());
  ::close(fd);
  ::_exit(0);
}

}  // namespace ccsim
