// Data model and parser for perftest output (linux-rdma/perftest: ib_write_bw, ib_read_bw, ib_send_bw,
// ib_atomic_bw, ib_write_lat, ib_read_lat, ib_send_lat, ib_atomic_lat).
// The parser works by structure: the test title line ("RDMA_Write BW Test"), the parameter block
// ("Device : mlx5_0", "Link type : Ethernet", "Mtu : 1024[B]"), and the result table, whose column layout is
// derived from the column names of its header ("#bytes #iterations BW peak[Gb/sec] ..."). Unrelated lines
// (CUDA set-up messages, QP addresses, provenance comments, wrapper-script output) are ignored.
#pragma once
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace ccsim {

// One row of a result table. Fields a table does not have stay -1.
struct PerftestSample {
  std::uint64_t bytes = 0;
  std::uint64_t iterations = 0;
  // Bandwidth tests, always in Gb/s (10^9 bit/s) whatever the printed unit (MB/sec = 2^20 bytes/s in perftest).
  double bw_peak_Gbps = -1, bw_avg_Gbps = -1, msg_rate_Mpps = -1;
  // Latency tests, in the run's `units`: microseconds ("usec"), or CPU cycles ("cycles", --report-cycles).
  double t_min_us = -1, t_max_us = -1, t_typical_us = -1, t_avg_us = -1, t_stdev_us = -1, p99_us = -1, p999_us = -1;
  int line = 0;  // 1-based line in the source
};

struct PerftestRun {
  std::string test;           // "ib_write_bw", "ib_read_lat", ... ("" if neither a title line nor a tool name was found)
  std::string title;          // the title line as printed, e.g. "RDMA_Write BW Test" ("" if absent)
  bool is_bandwidth = false;  // from the table's columns
  bool bidirectional = false; // "Bidirectional" in the title
  std::string device;         // "mlx5_0" ("" if the parameter block is absent)
  std::string link_type;      // "IB" or "Ethernet" as printed ("" if absent)
  std::string transport;      // "Transport type": "IB" (verbs) ...
  std::string connection;     // "Connection type": "RC", "UC", "UD", ...
  int mtu = 0;                // bytes, 0 if absent
  int num_qps = 0;            // "Number of qps", 0 if absent
  bool use_cuda = false;      // GPU buffers (--use_cuda / --use_rocm messages before the table)
  std::string gpu_name;       // "Tesla T4" from "device name = [...]", "" if absent
  std::string units;          // "Gb/sec", "MB/sec" (bw tables, as printed) or "usec" / "cycles" (lat tables)
  std::vector<std::string> columns;  // column names as found in the header
  std::vector<PerftestSample> samples;
  int header_line = 0;        // line of the column header
  int index = 0;              // 0-based position of the table in the file
  // Which side printed the table. perftest runs as a server (no host argument) and a client; both print the
  // banner, the parameters and a table. The server prints "Waiting for client to connect..." first: a table
  // after that banner (up to the next table) is the server's. In a half-duplex bandwidth test the server's
  // row is the client's report sent over (write_bw.c: xchg_bw_reports, then print_full_bw_report of the
  // remote report; with -a only the last size's); in a latency test each side times its own ping-pong.
  bool server = false;
  // 2 when the server's and the client's output interleave line by line in this table (pasted from one
  // terminal running both): two identical column headers, then the rows of both sides in any order.
  int sides = 1;
  int cut_line = 0;           // the file's last line when it ends inside the table (no closing '----' line: cut short?)
};

// Parses every run of a log (a file may hold several runs, e.g. a server and a client, or a sweep of tests).
// Throws InputError(filename, "line N: ...") for a malformed row (truncated, extra or non-numeric fields),
// an unknown bandwidth unit, a table header without rows; InputError(filename, ...) for a log without any
// perftest table.
std::vector<PerftestRun> parse_perftest_log(std::istream& in, const std::string& filename);
// InputError if the file cannot be read.
std::vector<PerftestRun> parse_perftest_file(const std::string& path);

// The measurements of a parsed log, each once (docs/importers.md, "perftest: server and client"):
//  * a server's table is dropped when the file also holds a table of the same test not marked as the
//    server's (the client's);
//  * a table whose every row equals a row of another table of the same test (the server's copy of the
//    client's report, a paste repeated) is dropped, the longer (or earlier) one kept;
//  * in a table where both sides interleave (sides 2), the rows of one size are merged into one: equal
//    rows once, differing ones (latency tests: each side's own timing) averaged field by field, which
//    does not depend on which side's line came first.
// `notes` (may be null) receives one line per dropped table or merged size, naming the lines.
std::vector<PerftestRun> select_perftest_runs(const std::vector<PerftestRun>& runs, std::vector<std::string>* notes);

}  // namespace ccsim
