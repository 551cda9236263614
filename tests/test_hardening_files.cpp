// Files (issue 13): inputs are read once with a size limit (pipes work, devices and silent FIFOs
// do not hang), outputs never replace a device or FIFO and never write through a planted link, and
// a failed write to stdout is an error, not exit 0.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <thread>

#include "common/error.h"
#include "common/input_file.h"
#include "common/output_file.h"
#include "hardening_helpers.h"
#include "tests/input_error_of.h"

namespace ccsim {
namespace {

using hardening::ccsim;
using hardening::expect_input_error;
using hardening::slurp;
using hardening::temp_path;
using hardening::write_temp;

std::string error_of(const std::function<void()>& f) { return testing::input_error_of(f); }

TEST(HardeningFiles, InputsRefuseDirectoriesDevicesAndOversizedFiles) {
  EXPECT_EQ(error_of([] { read_input_file("/tmp", "topology file"); }), "/tmp: is a directory, not a topology file");
  EXPECT_EQ(error_of([] { read_input_file("/dev/zero", "log"); }),
            "/dev/zero: is a device, not a log (give a regular file or a pipe)");
  const std::string big = write_temp("big.txt", std::string(2 << 20, 'x'));
  EXPECT_EQ(error_of([&] { read_input_file(big, "log", 1 << 20); }), big + ": log is larger than ccsim's input limit of 1 MiB");
  EXPECT_EQ(read_input_file(big, "log").size(), 2u << 20);
  // Through the commands: one line, exit 2, for every reader.
  expect_input_error(ccsim("predict --topology /tmp"), {"/tmp: is a directory, not a topology file"});
  expect_input_error(ccsim("predict --calibration /dev/urandom"), {"/dev/urandom: is a device"});
  expect_input_error(ccsim("topo --from-nccl-xml /tmp"), {"/tmp: is a directory"});
  expect_input_error(ccsim("topo --from-nvidia-smi /dev/zero"), {"/dev/zero: is a device"});
  expect_input_error(ccsim("calibrate /dev/zero -o " + temp_path("c.json")), {"/dev/zero: is a device"});
}

TEST(HardeningFiles, ASilentFifoIsGivenUpOn) {
  const std::string fifo = temp_path("silent.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] { read_input_file(fifo, "log", kMaxInputBytes, 1); }),
            fifo + ": no data from the pipe for 1 s (0 bytes read); is its writer running?");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  ::unlink(fifo.c_str());
}

TEST(HardeningFiles, APipeIsReadOnce) {
  // calibrate read its input twice (to sniff the format, then to parse): a pipe was empty the second time.
  const std::string log = std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/a100x8-1node-allreduce.txt";
  const std::string out = temp_path("pipe_calib.json");
  const std::string err = temp_path("pipe_calib.err");
  const std::string cmd = "cat " + log + " | timeout 60 " + CCSIM_BINARY + " calibrate /dev/stdin -o " + out + " >/dev/null 2>" + err;
  const int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(err);
  EXPECT_NE(slurp(out).find("\"nvlink\""), std::string::npos);
  std::remove(out.c_str());
}

TEST(HardeningFiles, OutputToADeviceOrFifoWritesThroughWithoutReplacingIt) {
  // (As root, the old rename replaced --output /dev/null system-wide; the test uses a FIFO, which
  // takes the same path as a device, so that a regression cannot damage the machine it runs on.)
  // A FIFO with a reader gets the table; the FIFO is still a FIFO.
  struct stat st {};
  const std::string fifo = temp_path("out.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto w = ccsim("all_reduce_perf -b 1M -e 1M --model closed-form --output " + fifo);
  reader.join();
  EXPECT_EQ(w.code, 0) << w.err;
  EXPECT_NE(got.find("1048576"), std::string::npos);
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  // Without a reader: an error, not a hang.
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M --model closed-form --output " + fifo), {"FIFO has no reader"});
  ::unlink(fifo.c_str());
  expect_input_error(ccsim("all_reduce_perf -b 1M -e 1M --model closed-form --output /tmp"), {"/tmp: is a directory"});
}

TEST(HardeningFiles, APlantedLinkAtTheOldTemporaryNameIsNotWrittenThrough) {
  const std::string victim = write_temp("victim.txt", "precious\n");
  const std::string out = temp_path("out.json");
  ASSERT_EQ(::symlink(victim.c_str(), (out + ".tmp-ccsim").c_str()), 0);
  const auto r = ccsim("all_reduce_perf -b 1M -e 1M --model closed-form --format json --output " + out);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(victim), "precious\n");
  EXPECT_NE(slurp(out).find("\"rows\""), std::string::npos);
  // The temporary is gone and the output has an ordinary file's mode (not mkstemp's 0600).
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
  std::remove((out + ".tmp-ccsim").c_str());
  std::remove(out.c_str());
  std::remove(victim.c_str());
}

TEST(HardeningFiles, AFailedWriteToStdoutIsAnError) {
  for (const std::string cmd : {"all_reduce_perf -b 1M -e 1M --model closed-form", "topo dgx-h100",
                                 "explain -b 1M", "schedule -b 1M --dump"}) {
    const auto r = ccsim(cmd, ">/dev/full");
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_EQ(r.err, "ccsim: error: standard output: write failed (disk full, or a closed or unwritable output?)\n") << cmd;
  }
}

}  // namespace
}  // namespace ccsim
