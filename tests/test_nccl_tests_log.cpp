// Parser tests against real nccl-tests logs (copied into tests/data/nccl-tests/).
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/nccl_tests_infer.h"
#include "calibrate/nccl_tests_log.h"
#include "common/error.h"

using namespace ccsim;

namespace {

std::string data_path(const std::string& name) { return std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/" + name; }

std::vector<std::string> read_lines(const std::string& name) {
  std::ifstream f(data_path(name));
  std::vector<std::string> lines;
  std::string l;
  while (std::getline(f, l)) lines.push_back(l);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

NcclTestsRun only_run(const std::string& name) {
  auto runs = parse_nccl_tests_file(data_path(name));
  EXPECT_EQ(runs.size(), 1u);
  return runs.at(0);
}

// Expects parse_nccl_tests_log(text) to throw an InputError naming `file` and "line N".
void expect_error_at(const std::string& text, const std::string& file, int line, const std::string& detail_part = "") {
  std::istringstream in(text);
  try {
    parse_nccl_tests_log(in, file);
    FAIL() << "expected InputError for line " << line;
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), file);
    std::string prefix = file + ": line " + std::to_string(line) + ": ";
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    if (!detail_part.empty()) {
      EXPECT_NE(std::string(e.what()).find(detail_part), std::string::npos) << e.what();
    }
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

}  // namespace

TEST(NcclTestsLog, A100AllReduceLegacy) {
  auto r = only_run("a100x8-1node-allreduce.txt");
  EXPECT_EQ(r.collective, "all_reduce");
  EXPECT_EQ(r.nccl_version, "");
  EXPECT_EQ(r.nthread, 1);
  EXPECT_EQ(r.ngpus, 8);
  EXPECT_EQ(r.min_bytes, 8u);
  EXPECT_EQ(r.max_bytes, 4294967296u);
  EXPECT_EQ(r.step, "2(factor)");
  EXPECT_EQ(r.warmup_iters, 5);
  EXPECT_EQ(r.iters, 20);
  EXPECT_EQ(r.agg_iters, 1);
  EXPECT_EQ(r.validation, 1);
  EXPECT_EQ(r.graph, 0);
  EXPECT_EQ(r.ranks, 0);
  EXPECT_TRUE(r.devices.empty());
  EXPECT_EQ(r.style, NcclTestsStyle::Legacy);
  EXPECT_TRUE(r.has_redop && r.has_root && r.has_type && r.has_in_place);
  ASSERT_EQ(r.rows.size(), 30u);
  const auto& first = r.rows.front();
  EXPECT_EQ(first.size_bytes, 8u);
  EXPECT_EQ(first.count, 2u);
  EXPECT_EQ(first.type, "float");
  EXPECT_EQ(first.redop, "sum");
  EXPECT_EQ(first.root, -1);
  EXPECT_DOUBLE_EQ(first.oop_time_us, 40.12);
  EXPECT_DOUBLE_EQ(first.ip_time_us, 38.85);
  EXPECT_EQ(first.oop_wrong, 0);
  EXPECT_EQ(first.ip_wrong, 0);
  EXPECT_EQ(first.line, 11);
  const auto& last = r.rows.back();
  EXPECT_EQ(last.size_bytes, 4294967296u);
  EXPECT_EQ(last.count, 1073741824u);
  EXPECT_DOUBLE_EQ(last.oop_time_us, 32336);
  EXPECT_DOUBLE_EQ(last.oop_algbw_GBps, 132.82);
  EXPECT_DOUBLE_EQ(last.oop_busbw_GBps, 232.44);
  EXPECT_DOUBLE_EQ(last.ip_time_us, 32455);
  EXPECT_DOUBLE_EQ(last.ip_busbw_GBps, 231.59);
  EXPECT_EQ(last.line, 40);
  EXPECT_DOUBLE_EQ(r.rows[19].oop_time_us, 103.8);  // "  103.8"
  EXPECT_EQ(r.rows[19].size_bytes, 4194304u);
  EXPECT_DOUBLE_EQ(r.rows[28].oop_time_us, 16330);  // "  16330"
  EXPECT_TRUE(r.has_avg_busbw);
  EXPECT_DOUBLE_EQ(r.avg_busbw_GBps, 66.2058);
}

TEST(NcclTestsLog, H100TwoNodeVersionLine) {
  auto r = only_run("h100x16-2node-ndr-allreduce.txt");
  EXPECT_EQ(r.collective, "all_reduce");  // from all_reduce_perf_mpi on the command line
  EXPECT_EQ(r.nccl_version, "2.26.2+cuda12.8");
  EXPECT_EQ(r.ngpus, 1);
  EXPECT_EQ(r.max_bytes, 17179869184u);
  ASSERT_EQ(r.rows.size(), 32u);
  EXPECT_EQ(r.rows.front().size_bytes, 8u);
  EXPECT_DOUBLE_EQ(r.rows.front().oop_time_us, 68.52);
  EXPECT_EQ(r.rows.back().size_bytes, 17179869184u);
  EXPECT_EQ(r.rows.back().count, 4294967296u);
  EXPECT_DOUBLE_EQ(r.rows.back().oop_time_us, 68652);
  EXPECT_DOUBLE_EQ(r.rows.back().ip_busbw_GBps, 469.10);
  EXPECT_DOUBLE_EQ(r.avg_busbw_GBps, 139.56);
}

TEST(NcclTestsLog, Rtx2080TiDevices) {
  auto r = only_run("rtx2080ti-x2-pcie-noP2P-allreduce.txt");
  EXPECT_EQ(r.collective, "all_reduce");
  EXPECT_EQ(r.ngpus, 2);
  EXPECT_EQ(r.max_bytes, 1073741824u);
  EXPECT_EQ(r.ranks, 2);
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0], " Rank  0 Group  0 Pid  31706 on autodl-container-xxxxx device  0 [0000:b4:00] NVIDIA GeForce RTX 2080 Ti");
  EXPECT_EQ(r.devices[1], " Rank  1 Group  0 Pid  31706 on autodl-container-xxxxx device  1 [0000:b5:00] NVIDIA GeForce RTX 2080 Ti");
  ASSERT_EQ(r.rows.size(), 28u);
  EXPECT_DOUBLE_EQ(r.rows.back().oop_time_us, 268588);
  EXPECT_DOUBLE_EQ(r.rows.back().ip_time_us, 268461);
  EXPECT_DOUBLE_EQ(r.rows[26].oop_time_us, 134330);
  EXPECT_DOUBLE_EQ(r.avg_busbw_GBps, 2.05774);
}

TEST(NcclTestsLog, OlderAllGatherLayout) {
  auto r = only_run("nccltests_all_gather_2.txt");
  EXPECT_EQ(r.collective, "all_gather");
  EXPECT_FALSE(r.has_redop);
  EXPECT_FALSE(r.has_root);
  EXPECT_TRUE(r.has_type);
  EXPECT_EQ(r.wrong_column, "error");
  EXPECT_EQ(r.ngpus, 8);
  EXPECT_EQ(r.min_bytes, 1u);
  EXPECT_EQ(r.max_bytes, 8589934592u);
  EXPECT_EQ(r.agg_iters, -1);  // not printed by this version
  EXPECT_EQ(r.validation, 0);
  EXPECT_EQ(r.ranks, 8);
  EXPECT_EQ(r.devices[7], "  Rank  7 Pid 112372 on localhost device  7 [0x00] A100-SXM4-40GB");
  ASSERT_EQ(r.rows.size(), 34u);  // the "NCCL INFO Launch mode Parallel" line is skipped
  const auto& first = r.rows.front();
  EXPECT_EQ(first.size_bytes, 0u);
  EXPECT_EQ(first.count, 0u);
  EXPECT_EQ(first.type, "float");
  EXPECT_EQ(first.redop, "");
  EXPECT_EQ(first.root, -1);
  EXPECT_EQ(first.oop_wrong, -1);
  EXPECT_EQ(first.ip_wrong, -1);
  EXPECT_DOUBLE_EQ(first.oop_time_us, 34.27);
  const auto& last = r.rows.back();
  EXPECT_EQ(last.size_bytes, 8589934592u);
  EXPECT_EQ(last.count, 268435456u);
  EXPECT_DOUBLE_EQ(last.oop_time_us, 33646);
  EXPECT_DOUBLE_EQ(last.ip_time_us, 32669);
  EXPECT_DOUBLE_EQ(last.ip_busbw_GBps, 230.07);
  EXPECT_DOUBLE_EQ(r.avg_busbw_GBps, 58.2651);
}

TEST(NcclTestsLog, AlltoallCurrentFormat) {
  auto r = only_run("nccltests_alltoall_1.txt");
  EXPECT_EQ(r.collective, "alltoall");
  EXPECT_EQ(r.nccl_tests_version, "2.17.8");
  EXPECT_EQ(r.nccl_version, "2.29.2");  // from nccl-library=22902
  EXPECT_EQ(r.style, NcclTestsStyle::Current);
  EXPECT_EQ(r.ranks, 80);
  EXPECT_EQ(r.min_bytes, 33554432u);
  EXPECT_EQ(r.max_bytes, 68719476736u);  // as printed in the header (before "Reducing maxBytes")
  ASSERT_EQ(r.rows.size(), 10u);
  EXPECT_EQ(r.rows.front().size_bytes, 33553920u);
  EXPECT_EQ(r.rows.front().type, "double");
  EXPECT_EQ(r.rows.front().redop, "none");
  EXPECT_EQ(r.rows.front().oop_wrong, 0);
  EXPECT_EQ(r.rows.front().ip_wrong, -1);  // "N/A"
  EXPECT_DOUBLE_EQ(r.rows[4].oop_time_us, 10656.0);
  EXPECT_DOUBLE_EQ(r.rows[8].oop_time_us, 167847);
  EXPECT_EQ(r.rows.back().size_bytes, 17179868160u);
  EXPECT_DOUBLE_EQ(r.rows.back().ip_time_us, 335382);
  EXPECT_DOUBLE_EQ(r.avg_busbw_GBps, 47.1472);
}

TEST(NcclTestsLog, TableInsideNcclDebugLog) {
  auto r = only_run("nccl_debug_2.txt");
  EXPECT_EQ(r.collective, "all_reduce");
  EXPECT_EQ(r.nccl_version, "2.20.3+cuda12.2");  // the printed one, not the provenance note
  EXPECT_EQ(r.iters, 100);
  EXPECT_EQ(r.ranks, 16);
  EXPECT_EQ(r.devices[15], " Rank 15 Group  0 Pid     37 on test-nccl-worker-1 device  7 [0xca] NVIDIA H100 80GB HBM3");
  ASSERT_EQ(r.rows.size(), 32u);
  EXPECT_EQ(r.rows.front().line, 2925);
  EXPECT_DOUBLE_EQ(r.rows.front().oop_time_us, 65.43);
  EXPECT_DOUBLE_EQ(r.rows.back().oop_time_us, 66154);
  EXPECT_DOUBLE_EQ(r.rows.back().ip_busbw_GBps, 487.59);
  EXPECT_EQ(r.rows.back().size_bytes, 17179869184u);
  EXPECT_DOUBLE_EQ(r.avg_busbw_GBps, 124.343);
}

TEST(NcclTestsLog, SeveralRunsInOneFile) {
  std::string text = join_lines(read_lines("nccltests_alltoall_1.txt")) + join_lines(read_lines("a100x8-1node-allreduce.txt")) +
                     join_lines(read_lines("nccltests_all_gather_2.txt"));
  std::istringstream in(text);
  auto runs = parse_nccl_tests_log(in, "multi.log");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].collective, "alltoall");
  EXPECT_EQ(runs[0].rows.size(), 10u);
  EXPECT_EQ(runs[1].collective, "all_reduce");
  EXPECT_EQ(runs[1].nccl_tests_version, "");
  EXPECT_EQ(runs[1].rows.size(), 30u);
  EXPECT_EQ(runs[1].ngpus, 8);
  EXPECT_EQ(runs[2].collective, "all_gather");
  EXPECT_EQ(runs[2].rows.size(), 34u);
  EXPECT_EQ(runs[2].ranks, 8);
}

TEST(NcclTestsLog, ExponentAndNaNumbers) {
  std::string text =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n"
      "#\n"
      "#                                                              out-of-place                       in-place          \n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)        \n"
      "  1073741824     268435456     float     sum      -1  1.2e+07    0.09    0.17       0  1.3e+07  1e+06    0.17  1.2e+04\n"
      "# Avg bus bandwidth    : 0.17 \n";
  std::istringstream in(text);
  auto runs = parse_nccl_tests_log(in, "exp.txt");
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].rows.size(), 1u);
  const auto& r = runs[0].rows[0];
  EXPECT_DOUBLE_EQ(r.oop_time_us, 1.2e7);
  EXPECT_DOUBLE_EQ(r.ip_time_us, 1.3e7);
  EXPECT_DOUBLE_EQ(r.ip_algbw_GBps, 1e6);
  EXPECT_EQ(r.ip_wrong, 12000);
  EXPECT_EQ(runs[0].collective, "");
  EXPECT_EQ(runs[0].iters, 20);
}

TEST(NcclTestsLog, BrokenInputs) {
  auto lines = read_lines("a100x8-1node-allreduce.txt");
  // Truncated last row (line 40).
  {
    auto l = lines;
    ASSERT_EQ(l[39].substr(0, 12), "  4294967296");
    l[39] = l[39].substr(0, 60);
    l.resize(40);  // file ends in the middle of the row
    expect_error_at(join_lines(l) , "truncated.txt", 40, "fields");
  }
  // Garbage in a numeric field: "103.8" -> "10x.8" on line 30.
  {
    auto l = lines;
    auto p = l[29].find("103.8");
    ASSERT_NE(p, std::string::npos);
    l[29].replace(p, 5, "10x.8");
    expect_error_at(join_lines(l), "garbage.txt", 30, "'10x.8'");
  }
  // Garbage in the size field.
  {
    auto l = lines;
    l[12].replace(10, 2, "3x");
    expect_error_at(join_lines(l), "size.txt", 13, "size");
  }
  // One field too many.
  {
    auto l = lines;
    l[20] += "      0";
    expect_error_at(join_lines(l), "extra.txt", 21, "fields");
  }
  // A header without any row.
  {
    std::vector<std::string> l(lines.begin(), lines.begin() + 10);
    expect_error_at(join_lines(l), "norows.txt", 9, "no data rows");
  }
  // Garbage in the in-place #wrong column.
  {
    auto l = lines;
    l[15].back() = 'x';
    expect_error_at(join_lines(l), "wrong.txt", 16, "#wrong");
  }
}

// Launchers print into the table: Open MPI's aggregated warnings start with a number ("8 more
// processes have sent help message help-mtl-ofi.txt / OFI call fail", in a100x8-1node-allreduce-mpi.txt).
// A line whose second field is a word and whose width is not the table's is text; a row of the
// table's width with a word for its count is still a bad row.
TEST(NcclTestsLog, LauncherMessagesInsideTheTable) {
  const auto lines = read_lines("a100x8-1node-allreduce.txt");
  const std::size_t rows = only_run("a100x8-1node-allreduce.txt").rows.size();
  {
    auto l = lines;
    l.insert(l.begin() + 12, "8 more processes have sent help message help-mtl-ofi.txt / OFI call fail");
    l.insert(l.begin() + 30, "1 more process has sent help message help-mtl-ofi.txt / OFI call fail");
    std::istringstream in(join_lines(l));
    const auto runs = parse_nccl_tests_log(in, "mpi.txt");
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].rows.size(), rows);
  }
  {
    auto l = lines;
    ASSERT_EQ(l[20].substr(0, 12), "        8192");
    const auto p = l[20].find("2048");
    ASSERT_NE(p, std::string::npos);
    l[20].replace(p, 4, "line");
    expect_error_at(join_lines(l), "count.txt", 21);
  }
  EXPECT_EQ(only_run("a100x8-1node-allreduce-mpi.txt").rows.size(), 30u);
}

TEST(NcclTestsLog, NoTableAtAll) {
  std::istringstream in("# nThread 1 nGpus 8 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5 iters: 20\nsome text\n");
  try {
    parse_nccl_tests_log(in, "empty.txt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "empty.txt");
    EXPECT_NE(std::string(e.what()).find("no nccl-tests result table"), std::string::npos);
  }
  std::istringstream in2("");
  EXPECT_THROW(parse_nccl_tests_log(in2, "blank.txt"), InputError);
  EXPECT_THROW(parse_nccl_tests_file(data_path("does-not-exist.txt")), InputError);
}

TEST(NcclTestsLog, CollectiveNames) {
  EXPECT_EQ(nccl_tests_collective_from_name("./build/all_reduce_perf"), "all_reduce");
  EXPECT_EQ(nccl_tests_collective_from_name("reduce_scatter_perf_mpi"), "reduce_scatter");
  EXPECT_EQ(nccl_tests_collective_from_name("sendrecv"), "sendrecv");
  EXPECT_EQ(nccl_tests_collective_from_name("foo_perf"), "");
}

namespace ccsim {
namespace {

// dstack prints nccl-tests' output without the '#' of its comment lines (a real log:
// tests/data/nccl-tests/gcp-a3high-2node-tcpx-allgather-dstack.txt): the run header and the
// column header are still read as such, and the table (8 MiB .. 8 GiB, 11 rows) with them.
TEST(NcclTestsLog, CommentLinesWithoutTheirHash) {
  const auto runs = parse_nccl_tests_file(std::string(CCSIM_SOURCE_DIR) +
                                          "/tests/data/nccl-tests/gcp-a3high-2node-tcpx-allgather-dstack.txt");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].nthread, 1);
  EXPECT_EQ(runs[0].ngpus, 1);
  EXPECT_EQ(runs[0].min_bytes, 8388608u);
  EXPECT_EQ(runs[0].max_bytes, 8589934592u);
  ASSERT_EQ(runs[0].rows.size(), 11u);
  EXPECT_EQ(runs[0].rows.front().size_bytes, 8388608u);
  EXPECT_DOUBLE_EQ(runs[0].rows.back().oop_time_us, 160505);
  EXPECT_TRUE(runs[0].has_avg_busbw);
  // A row is still a row: a table line that starts with a number is data, not a comment.
  std::istringstream in("nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
                        "validation: 1 graph: 0\n"
                        "       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
                        "algbw   busbw #wrong\n"
                        "           8             2     float     sum      -1    12.25    0.00    0.00      0    12.00    "
                        "0.00    0.00      0\n");
  const auto bare = parse_nccl_tests_log(in, "bare.txt");
  ASSERT_EQ(bare.size(), 1u);
  ASSERT_EQ(bare[0].rows.size(), 1u);
  EXPECT_DOUBLE_EQ(bare[0].rows[0].oop_time_us, 12.25);
}

// A note that names several tests (a blog post listing the runs it made) and then the command of this
// run: every name is kept, in the order of its latest mention, and the table decides between them.
// Two 2080 Ti, all_gather: the table (redop none, busbw/algbw 1/2, size = 2 x count x element) fits
// all_gather and alltoall, not all_reduce, which the note names first.
TEST(NcclTestsLog, SeveralNamesAndTheTableDecides) {
  const std::string table =
      "# nThread 1 nGpus 2 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
      "validation: 1 graph: 0\n"
      "#  Rank  0 Group  0 Pid  31745 on autodl-container-xxxxx device  0 [0000:b4:00] NVIDIA GeForce RTX 2080 Ti\n"
      "#  Rank  1 Group  0 Pid  31745 on autodl-container-xxxxx device  1 [0000:b5:00] NVIDIA GeForce RTX 2080 Ti\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n"
      "    33554432       4194304     float    none      -1   5250.2    6.39    3.20      0   5197.6    6.46    3.23      0\n"
      "# Avg bus bandwidth    : 3.2\n";
  const auto infer = [&](const std::string& head) {
    std::istringstream in(head + table);
    const auto runs = parse_nccl_tests_log(in, "notes.txt");
    EXPECT_EQ(runs.size(), 1u);
    return std::make_pair(runs.at(0), infer_collective(runs.at(0), "", 2, "notes.txt", "run 1"));
  };
  const auto [run, ag] = infer("# tests run: all_reduce_perf, all_gather_perf, alltoall_perf\n"
                               "# ./build/all_gather_perf -b 8 -e 1024M -f 2 -g2\n");
  EXPECT_EQ(run.collective, "all_reduce");  // the first mention
  EXPECT_EQ(run.named_collectives, (std::vector<std::string>{"all_reduce", "alltoall", "all_gather"}));
  ASSERT_NE(ag.collective, nullptr);
  EXPECT_EQ(std::string(ag.collective->name), "all_gather");
  EXPECT_EQ(ag.ranks, 2);
  ASSERT_EQ(ag.notes.size(), 1u);
  EXPECT_NE(ag.notes[0].find("names all_reduce first"), std::string::npos) << ag.notes[0];
  // The command of an alltoall run names alltoall last.
  const auto [run2, a2a] = infer("# tests run: all_reduce_perf, all_gather_perf, alltoall_perf\n"
                                 "# ./build/alltoall_perf -b 8 -e 1024M -f 2 -g2\n");
  EXPECT_EQ(std::string(a2a.collective->name), "alltoall");
  // A first name that fits keeps its place, as before: a log naming all_gather only is all_gather.
  const auto [run3, only] = infer("# ./build/all_gather_perf -b 8 -e 1024M -f 2 -g2\n");
  EXPECT_EQ(std::string(only.collective->name), "all_gather");
  EXPECT_TRUE(only.notes.empty());
}

// The "Avg bus bandwidth : x" trailer is read where the phrase is followed by ':'; a comment that only
// mentions it (a note saying the source has no such trailer) is neither an error nor the trailer.
TEST(NcclTestsLog, AvgBusBandwidthOnlyAsTheTrailer) {
  // One run of one row, with a line before it and a line after it.
  const auto one_row = [](const std::string& before, const std::string& after) {
    return before +
           "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
           "validation: 1 graph: 0\n"
           "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
           "busbw #wrong\n"
           "           8             2     float     sum      -1    12.25    0.00    0.00      0    12.00    0.00    "
           "0.00      0\n" +
           after;
  };
  std::istringstream in(one_row("# NOTE: the source has no \"Out of bounds\"/\"Avg bus bandwidth\" trailer\n", ""));
  const auto runs = parse_nccl_tests_log(in, "note.txt");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_FALSE(runs[0].has_avg_busbw);
  std::istringstream trailer(one_row("", "# Avg bus bandwidth    : 2.05774\n"));
  const auto with = parse_nccl_tests_log(trailer, "trailer.txt");
  ASSERT_EQ(with.size(), 1u);
  EXPECT_TRUE(with[0].has_avg_busbw);
  EXPECT_DOUBLE_EQ(with[0].avg_busbw_GBps, 2.05774);
  expect_error_at(one_row("", "# Avg bus bandwidth    : lots\n"), "bad.txt", 4, "Avg bus bandwidth");
}

}  // namespace
}  // namespace ccsim

// Launchers and log collectors that put their own text before every line (shapes as they print them:
// Ray's "(head, rank=0, pid=3808) " before Open MPI's "[1,0]<stdout>:", as SkyPilot's console shows
// a GKE H200 run; kubectl logs --timestamps; kubectl --prefix; docker compose; torchrun; pdsh; Intel
// MPI -prepend-rank; Open MPI's tag indented by a test harness): the same run as without them.
TEST(NcclTestsLog, LaunchersPrefixesBeforeEveryLine) {
  const auto lines = read_lines("oci-bm-gpu4.8-a100-2node-roce-allreduce.txt");
  const NcclTestsRun plain = only_run("oci-bm-gpu4.8-a100-2node-roce-allreduce.txt");
  ASSERT_EQ(plain.rows.size(), 31u);
  ASSERT_EQ(plain.ranks, 16);
  const std::vector<std::string> prefixes = {"(head, rank=0, pid=3808) [1,0]<stdout>:",
                                             "2025-03-04T09:13:21.123456810Z ",
                                             "[pod/nccl-test-launcher-x7k2p/nccl] ",
                                             "nccl-test-1  | ",
                                             "[default0]:",
                                             "gpu-node-017: ",
                                             "[0] ",
                                             "        [1,0]<stdout>:"};
  for (const std::string& prefix : prefixes) {
    std::string text;
    for (const auto& l : lines) text += prefix + l + "\n";
    std::istringstream in(text);
    const auto runs = parse_nccl_tests_log(in, "prefixed.txt");
    ASSERT_EQ(runs.size(), 1u) << prefix;
    EXPECT_EQ(runs[0].ranks, 16) << prefix;
    EXPECT_EQ(runs[0].iters, plain.iters) << prefix;
    EXPECT_EQ(runs[0].nccl_version, plain.nccl_version) << prefix;
    ASSERT_EQ(runs[0].rows.size(), plain.rows.size()) << prefix;
    for (std::size_t i = 0; i < plain.rows.size(); ++i) {
      EXPECT_EQ(runs[0].rows[i].size_bytes, plain.rows[i].size_bytes) << prefix;
      EXPECT_DOUBLE_EQ(runs[0].rows[i].oop_time_us, plain.rows[i].oop_time_us) << prefix;
      EXPECT_DOUBLE_EQ(runs[0].rows[i].ip_busbw_GBps, plain.rows[i].ip_busbw_GBps) << prefix;
    }
  }
}

// nccl-tests' own line for -z 1, a UTF-8 byte-order mark before the first line, and -d all: one table
// holding a sweep per datatype, read as one run per datatype (its rows, in the table's order).
TEST(NcclTestsLog, BlockingLineByteOrderMarkAndSeveralDatatypes) {
  const std::string header =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
      "validation: 1 graph: 0\n";
  const std::string columns =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n";
  const std::string rows =
      "           8             8      int8     sum      -1    12.25    0.00    0.00      0    12.00    0.00    0.00      0\n"
      "          16            16      int8     sum      -1    12.50    0.00    0.00      0    12.10    0.00    0.00      0\n"
      "           8             2     float     sum      -1    13.25    0.00    0.00      0    13.00    0.00    0.00      0\n"
      "          16             4     float     sum      -1    13.50    0.00    0.00      0    13.10    0.00    0.00      0\n";
  std::istringstream in("\xEF\xBB\xBF" + header +
                        "# Blocking Enabled: wait for completion and barrier after each collective \n#\n" + columns + rows);
  const auto runs = parse_nccl_tests_log(in, "dall.txt");
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& r : runs) {
    EXPECT_EQ(r.iters, 20);  // the header, behind the byte-order mark
    EXPECT_EQ(r.blocking, 1);
    ASSERT_EQ(r.rows.size(), 2u);
  }
  EXPECT_EQ(runs[0].rows[0].type, "int8");
  EXPECT_DOUBLE_EQ(runs[0].rows[1].oop_time_us, 12.50);
  EXPECT_EQ(runs[1].rows[0].type, "float");
  EXPECT_EQ(runs[1].rows[0].count, 2u);
  EXPECT_DOUBLE_EQ(runs[1].rows[1].oop_time_us, 13.50);
}

namespace ccsim {
namespace {

// A table pasted without its header lines (an issue quoting only the rows, nccl-tests#167 and #182 do):
// the rows of nccl-tests' current layout are read as such, and the run says its columns were implied.
// Rows of another shape (text, the old 12-column layout) before any header stay unread.
TEST(NcclTestsLog, RowsWithoutTheirColumnHeader) {
  const std::string name = "oci-bm-gpu4.8-a100-2node-roce-allreduce.txt";
  const NcclTestsRun plain = only_run(name);
  ASSERT_FALSE(plain.column_header_implied);
  std::string rows;
  for (const auto& l : read_lines(name)) {
    const std::size_t first = l.find_first_not_of(' ');
    if (first != std::string::npos && std::isdigit(static_cast<unsigned char>(l[first]))) rows += l + "\n";
  }
  std::istringstream in("some text 1 2 3\n" + rows);
  const auto runs = parse_nccl_tests_log(in, "rows.txt");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].column_header_implied);
  EXPECT_EQ(runs[0].header_line, 2);
  ASSERT_EQ(runs[0].rows.size(), plain.rows.size());
  for (std::size_t i = 0; i < plain.rows.size(); ++i) {
    EXPECT_EQ(runs[0].rows[i].size_bytes, plain.rows[i].size_bytes);
    EXPECT_EQ(runs[0].rows[i].redop, "sum");
    EXPECT_DOUBLE_EQ(runs[0].rows[i].oop_time_us, plain.rows[i].oop_time_us);
    EXPECT_DOUBLE_EQ(runs[0].rows[i].ip_busbw_GBps, plain.rows[i].ip_busbw_GBps);
  }
  // The old layout (no root column: 12 fields) is not guessed.
  std::istringstream old("           8             2   float     sum    16.36    0.00    0.00  1e-07    15.99    0.00    0.00  0e+00\n");
  EXPECT_THROW(parse_nccl_tests_log(old, "old.txt"), InputError);
}

}  // namespace
}  // namespace ccsim

// nccl-tests prints size .. root before a collective runs and the times after it; NCCL's own lines,
// written meanwhile (NCCL_DEBUG=INFO, rings connected at their first use since NCCL 2.22), can land
// inside a row. A real one (two Snellius nodes, NCCL 2.22.3): the 2 MiB row's first piece carries an
// NCCL line glued to its root field, and its times stand six lines later.
TEST(NcclTestsLog, RowCutByNcclLinesIsJoined) {
  const NcclTestsRun run = only_run("snellius-h100x8-2node-4gpu-4xndr200-ib-allreduce-nccl2.22.3.txt");
  EXPECT_EQ(run.rows.size(), 31u);
  EXPECT_EQ(run.nccl_version, "2.22.3+cuda12.6");
  const NcclTestsRow* two = nullptr;
  for (const NcclTestsRow& r : run.rows)
    if (r.size_bytes == 2097152) two = &r;
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(two->count, 524288u);
  EXPECT_EQ(two->root, -1);
  EXPECT_DOUBLE_EQ(two->oop_time_us, 87.18);
  EXPECT_DOUBLE_EQ(two->oop_busbw_GBps, 42.10);
  EXPECT_DOUBLE_EQ(two->ip_time_us, 85.11);
  EXPECT_EQ(two->ip_wrong, 0);
  const std::vector<std::string> lines = read_lines("snellius-h100x8-2node-4gpu-4xndr200-ib-allreduce-nccl2.22.3.txt");
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind("     2097152 ", 0) == 0) {
      EXPECT_EQ(two->line, static_cast<int>(i + 1));
    }

  // Cut twice in one row, by an INFO and a WARN line, with other lines between: the same row.
  const std::string head =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  const std::string whole = head + "     1048576        262144     float     sum      -1    69.55   15.08   26.38      0    68.58   15.29   26.76      0\n";
  const std::string cut = head +
                          "     1048576        262144     float     sum      -1h1:10:11 [0] NCCL INFO Connected all rings\n"
                          "h2:12:13 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM\n"
                          "    69.55   15.08   26.38      0node7:20:21 [3] NCCL WARN something\n"
                          "\n"
                          "    68.58   15.29   26.76      0\n";
  std::istringstream a(whole), b(cut);
  const auto ra = parse_nccl_tests_log(a, "whole.log"), rb = parse_nccl_tests_log(b, "cut.log");
  ASSERT_EQ(rb.size(), 1u);
  ASSERT_EQ(rb[0].rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rb[0].rows[0].oop_time_us, ra[0].rows[0].oop_time_us);
  EXPECT_DOUBLE_EQ(rb[0].rows[0].ip_busbw_GBps, 26.76);
  EXPECT_EQ(rb[0].rows[0].line, 2);

  // A host whose name starts with a digit (Lambda's "192-222-52-239") is told from the glued root
  // field by the device list.
  const std::string devices = "#  Rank  0 Group  0 Pid  77 on 192-222-52-239 device  0 [0x06] NVIDIA H100 80GB HBM3\n";
  std::istringstream c(devices + head +
                       "     1048576        262144     float     sum      -1192-222-52-239:77:90 [0] NCCL INFO Connected all rings\n"
                       "    69.55   15.08   26.38      0    68.58   15.29   26.76      0\n");
  const auto rc = parse_nccl_tests_log(c, "digits.log");
  ASSERT_EQ(rc.size(), 1u);
  ASSERT_EQ(rc[0].rows.size(), 1u);
  EXPECT_EQ(rc[0].rows[0].root, -1);
  EXPECT_DOUBLE_EQ(rc[0].rows[0].oop_time_us, 69.55);

  // A first piece whose rest never comes is still a truncated row, reported where it began.
  expect_error_at(head + "     1048576        262144     float     sum      -1h1:10:11 [0] NCCL INFO Connected all rings\n"
                         "# Out of bounds values : 0 OK\n",
                  "cut.log", 2, "truncated line?");
}
