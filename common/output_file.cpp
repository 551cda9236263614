#include "common/output_file.h"

#include <cstdio>
#include <fstream>

#include "common/error.h"

namespace ccsim {

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp-ccsim";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, "cannot open for writing");
    out << content;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw InputError(path, "write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw InputError(path, "cannot rename temporary file into place");
  }
}

}  // namespace ccsim
