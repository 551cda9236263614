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

// ---- One size, and server and client in one file (issue 11) ----

TEST(PerftestLog, DefaultWriteBwIsOneSize) {
  // perftest's defaults (perftest_parameters.h): DEF_SIZE_BW 65536, DEF_ITERS_WB 5000 for ib_write_bw.
  auto runs = parse_perftest_file(sample("perftest_write_bw_1size.txt"));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].test, "ib_write_bw");
  EXPECT_FALSE(runs[0].server);
  EXPECT_EQ(runs[0].sides, 1);
  ASSERT_EQ(runs[0].samples.size(), 1u);
  EXPECT_EQ(runs[0].samples[0].bytes, 65536u);
  EXPECT_EQ(runs[0].samples[0].iterations, 5000u);
  // 11023.48 MB/sec printed, perftest's MB = 2^20 bytes.
  EXPECT_NEAR(runs[0].samples[0].bw_avg_Gbps, 11023.48 * 1048576 * 8 / 1e9, 1e-9);
}

TEST(PerftestLog, DefaultSendLatIsOneSize) {
  auto runs = parse_perftest_file(sample("perftest_send_lat_1size.txt"));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].test, "ib_send_lat");
  ASSERT_EQ(runs[0].samples.size(), 1u);
  EXPECT_EQ(runs[0].samples[0].bytes, 2u);  // DEF_SIZE_LAT
  EXPECT_EQ(runs[0].samples[0].iterations, 1000u);
  EXPECT_DOUBLE_EQ(runs[0].samples[0].t_typical_us, 1.34);
  EXPECT_DOUBLE_EQ(runs[0].samples[0].t_max_us, 4.08);
}

TEST(PerftestLog, ServerThenClientBlocks) {
  auto runs = parse_perftest_file(sample("perftest_write_bw_server_client.txt"));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(runs[0].server);   // after "Waiting for client to connect..."
  EXPECT_FALSE(runs[1].server);  // the client's
  EXPECT_EQ(runs[0].device, "rxe0");
  std::vector<std::string> notes;
  auto used = select_perftest_runs(runs, &notes);
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0].index, 1);  // the client's table
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("the server's ib_write_bw table of line " + std::to_string(runs[0].header_line)), std::string::npos)
      << notes[0];
}

TEST(PerftestLog, ServerAndClientLinesInterleaved) {
  auto runs = parse_perftest_file(sample("perftest_write_bw_interleaved.txt"));
  ASSERT_EQ(runs.size(), 1u);  // one table, two headers
  EXPECT_EQ(runs[0].sides, 2);
  EXPECT_FALSE(runs[0].server);
  ASSERT_EQ(runs[0].samples.size(), 2u);  // the client's row, then the server's copy after the client's '----'
  std::vector<std::string> notes;
  auto used = select_perftest_runs(runs, &notes);
  ASSERT_EQ(used.size(), 1u);
  ASSERT_EQ(used[0].samples.size(), 1u);
  EXPECT_NEAR(used[0].samples[0].bw_avg_Gbps, 827.84 * 1048576 * 8 / 1e9, 1e-9);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("2 rows read as 1 size(s)"), std::string::npos) << notes[0];
}

TEST(PerftestLog, InterleavedLatencySidesAreAveraged) {
  // SYNTHETIC (format: perftest_parameters.h RESULT_FMT_LAT / REPORT_FMT_LAT): ib_write_lat -a cut to two
  // sizes, server and client in one terminal; each side times its own ping-pong, so their rows differ.
  const std::string text =
      "************************************\n"
      "* Waiting for client to connect... *\n"
      "************************************\n"
      "                    RDMA_Write Latency Test\n"
      "                    RDMA_Write Latency Test\n"
      " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
      " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
      " 2       1000          1.24           3.11         1.26     \t       1.26        \t0.02   \t\t1.29    \t\t3.11   \n"
      " 2       1000          1.22           3.05         1.28     \t       1.30        \t0.03   \t\t1.33    \t\t3.05   \n"
      " 4       1000          1.25           3.20         1.27     \t       1.27        \t0.02   \t\t1.30    \t\t3.20   \n"
      " 4       1000          1.25           3.20         1.27     \t       1.27        \t0.02   \t\t1.30    \t\t3.20   \n"
      "---------------------------------------------------------------------------------------\n"
      "---------------------------------------------------------------------------------------\n";
  auto runs = parse(text);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].sides, 2);
  auto used = select_perftest_runs(runs, nullptr);
  ASSERT_EQ(used.size(), 1u);
  ASSERT_EQ(used[0].samples.size(), 2u);
  EXPECT_NEAR(used[0].samples[0].t_typical_us, (1.26 + 1.28) / 2, 1e-12);
  EXPECT_NEAR(used[0].samples[0].t_avg_us, (1.26 + 1.30) / 2, 1e-12);
  EXPECT_DOUBLE_EQ(used[0].samples[1].t_typical_us, 1.27);  // equal rows: once
  // The same lines with the two sides' rows swapped give the same numbers.
  std::string swapped = text;
  const std::string a = " 2       1000          1.24", b = " 2       1000          1.22";
  const std::size_t pa = swapped.find(a), pb = swapped.find(b);
  const std::string la = swapped.substr(pa, swapped.find('\n', pa) - pa + 1);
  const std::string lb = swapped.substr(pb, swapped.find('\n', pb) - pb + 1);
  swapped = swapped.substr(0, pa) + lb + la + swapped.substr(pb + lb.size());
  auto used2 = select_perftest_runs(parse(swapped), nullptr);
  EXPECT_DOUBLE_EQ(used2[0].samples[0].t_typical_us, used[0].samples[0].t_typical_us);
}

TEST(PerftestLog, ServersCopyOfTheLastSizeIsUsedOnce) {
  // A -a sweep's server prints only the client's report of the last size (write_bw.c exchanges the
  // reports once, after the sweep). Pasted without the server's banner, the copy is told by its row.
  const std::string client = read_all(sample("perftest_5.txt"));
  const std::string server_copy =
      " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
      " 8388608    10000            23.01              22.99              0.000343\n"
      "---------------------------------------------------------------------------------------\n";
  auto runs = parse(server_copy + client);
  ASSERT_EQ(runs.size(), 2u);
  std::vector<std::string> notes;
  auto used = select_perftest_runs(runs, &notes);
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0].samples.size(), 23u);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("repeats rows"), std::string::npos) << notes[0];
}
