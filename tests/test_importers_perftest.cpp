// perftest importer tests on real logs (tests/data/samples/) and on broken inputs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/perftest_log.h"
#include "common/error.h"

using namespace ccsim;

namespace {

std::string sample(const std::string& name) { return std::string(CCSIM_SOURCE_DIR) + "/tests/data/samples/" + name; }

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<PerftestRun> parse(const std::string& text, const std::string& file = "bw.txt") {
  std::istringstream in(text);
  return parse_perftest_log(in, file);
}

void expect_error(const std::string& text, const std::string& expected_part) {
  try {
    parse(text, "bad.txt");
    FAIL() << "no error, expected: " << expected_part;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(expected_part), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("bad.txt: ", 0), 0u) << e.what();
  }
}

std::string replace_line(const std::string& text, const std::string& starts, const std::string& with) {
  std::istringstream in(text);
  std::string out, l;
  bool done = false;
  while (std::getline(in, l)) {
    if (!done && l.rfind(starts, 0) == 0) {
      out += with + "\n";
      done = true;
    } else {
      out += l + "\n";
    }
  }
  EXPECT_TRUE(done) << starts;
  return out;
}

int line_of(const std::string& text, const std::string& starts) {
  std::istringstream in(text);
  std::string l;
  int n = 0;
  while (std::getline(in, l)) {
    ++n;
    if (l.rfind(starts, 0) == 0) return n;
  }
  return -1;
}

}  // namespace

TEST(PerftestLog, WriteBwCudaSweep) {
  auto runs = parse_perftest_file(sample("perftest_5.txt"));
  ASSERT_EQ(runs.size(), 1u);
  const auto& r = runs[0];
  EXPECT_EQ(r.test, "ib_write_bw");
  EXPECT_EQ(r.title, "RDMA_Write BW Test");
  EXPECT_TRUE(r.is_bandwidth);
  EXPECT_FALSE(r.bidirectional);
  EXPECT_EQ(r.device, "mlx5_0");
  EXPECT_EQ(r.link_type, "Ethernet");
  EXPECT_EQ(r.transport, "IB");
  EXPECT_EQ(r.connection, "RC");
  EXPECT_EQ(r.mtu, 1024);
  EXPECT_EQ(r.num_qps, 2);
  EXPECT_TRUE(r.use_cuda);
  EXPECT_EQ(r.gpu_name, "Tesla T4");
  EXPECT_EQ(r.units, "Gb/sec");
  ASSERT_EQ(r.samples.size(), 23u);  // -a: 2 B .. 8 MiB
  EXPECT_EQ(r.samples[0].bytes, 2u);
  EXPECT_EQ(r.samples[0].iterations, 10000u);
  EXPECT_DOUBLE_EQ(r.samples[0].bw_peak_Gbps, 0.044399);
  EXPECT_DOUBLE_EQ(r.samples[0].bw_avg_Gbps, 0.044359);
  EXPECT_DOUBLE_EQ(r.samples[0].msg_rate_Mpps, 2.772442);
  EXPECT_EQ(r.samples[9].bytes, 1024u);
  EXPECT_DOUBLE_EQ(r.samples[9].bw_peak_Gbps, 17.34);
  EXPECT_DOUBLE_EQ(r.samples[9].bw_avg_Gbps, 17.33);
  EXPECT_EQ(r.samples.back().bytes, 8388608u);
  EXPECT_DOUBLE_EQ(r.samples.back().bw_avg_Gbps, 22.99);
  EXPECT_DOUBLE_EQ(r.samples.back().msg_rate_Mpps, 0.000343);
  EXPECT_EQ(r.samples[0].t_avg_us, -1);  // no latency columns in a bw table
}

TEST(PerftestLog, ReadLatWithPercentiles) {
  auto runs = parse_perftest_file(sample("perftest_8.txt"));
  ASSERT_EQ(runs.size(), 1u);
  const auto& r = runs[0];
  EXPECT_EQ(r.test, "ib_read_lat");  // no title line in this excerpt: taken from the wrapper's tool name
  EXPECT_FALSE(r.is_bandwidth);
  EXPECT_EQ(r.units, "usec");
  ASSERT_EQ(r.samples.size(), 1u);
  const auto& s = r.samples[0];
  EXPECT_EQ(s.bytes, 2u);
  EXPECT_EQ(s.iterations, 1000u);
  EXPECT_DOUBLE_EQ(s.t_min_us, 5.35);
  EXPECT_DOUBLE_EQ(s.t_max_us, 11.78);
  EXPECT_DOUBLE_EQ(s.t_typical_us, 5.49);
  EXPECT_DOUBLE_EQ(s.t_avg_us, 5.50);
  EXPECT_DOUBLE_EQ(s.t_stdev_us, 0.18);
  EXPECT_DOUBLE_EQ(s.p99_us, 5.74);
  EXPECT_DOUBLE_EQ(s.p999_us, 11.78);
  EXPECT_EQ(s.bw_avg_Gbps, -1);
}

TEST(PerftestLog, MegabytesPerSecondAndSeveralRuns) {
  const std::string text =
      "                    Send BW Test\n"
      " Dual-port       : OFF\t\tDevice         : mlx5_2\n"
      " Link type       : IB\n"
      " Mtu             : 4096[B]\n"
      "---------------------------------------------------------------------------------------\n"
      " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
      " 65536      1000             11000.00            10000.00          0.160000\n"
      "---------------------------------------------------------------------------------------\n"
      "                    RDMA_Write Latency Test\n"
      " Device         : mlx5_3\n"
      " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]\n"
      "Conflicting CPU frequency values detected: 1500.000000 != 3000.000000. CPU Frequency is not max.\n"
      " 2       1000          1.03           3.86         1.06\n"
      " 4       1000          1.04           3.90         1.07\n";
  auto runs = parse(text);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].test, "ib_send_bw");
  EXPECT_EQ(runs[0].device, "mlx5_2");
  EXPECT_EQ(runs[0].link_type, "IB");
  EXPECT_EQ(runs[0].mtu, 4096);
  EXPECT_EQ(runs[0].units, "MB/sec");
  EXPECT_FALSE(runs[0].use_cuda);
  // perftest's MB/sec is 2^20 bytes/s.
  EXPECT_NEAR(runs[0].samples[0].bw_avg_Gbps, 10000.0 * 1048576 * 8 / 1e9, 1e-9);
  EXPECT_NEAR(runs[0].samples[0].bw_peak_Gbps, 11000.0 * 1048576 * 8 / 1e9, 1e-9);
  EXPECT_EQ(runs[1].test, "ib_write_lat");
  EXPECT_EQ(runs[1].device, "mlx5_3");
  ASSERT_EQ(runs[1].samples.size(), 2u);
  EXPECT_DOUBLE_EQ(runs[1].samples[1].t_typical_us, 1.07);
  EXPECT_EQ(runs[1].samples[1].t_avg_us, -1);  // older perftest: no t_avg column
}

TEST(PerftestLog, BrokenInputsNameFileAndLine) {
  const std::string good = read_all(sample("perftest_5.txt"));
  int row = line_of(good, " 1024 ");
  ASSERT_GT(row, 0);
  // Truncated row (last field cut off).
  expect_error(replace_line(good, " 1024 ", " 1024       10000            17.34              17.33"),
               "line " + std::to_string(row) + ": perftest row has 4 fields");
  // Garbage number.
  expect_error(replace_line(good, " 1024 ", " 1024       10000            17.3x4              17.33              2.115637"),
               "line " + std::to_string(row) + ": column 'BW peak[Gb/sec]': expected a number, got '17.3x4'");
  // Garbage inside the table.
  expect_error(replace_line(good, " 1024 ", "segfault (core dumped)"), "line " + std::to_string(row) + ": unexpected text");
  // Unknown unit.
  expect_error(" #bytes #iterations BW peak[furlongs/sec] BW average[furlongs/sec] MsgRate[Mpps]\n 2 10 1 1 1\n",
               "line 1: unknown bandwidth unit 'furlongs/sec'");
  // Header without rows (file cut right after the header).
  expect_error(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n", "has no rows");
  // Empty file / no table.
  expect_error("", "no perftest result table found");
  expect_error("Couldn't connect to 10.0.0.1:18515\n", "no perftest result table found");
}
