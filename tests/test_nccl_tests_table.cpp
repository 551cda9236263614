// Writer tests: byte-for-byte reproduction of real nccl-tests lines, number fallbacks from nccl-tests'
// getFloatStr(), round trip through the parser, JSON/CSV reports, datatype/op tables.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/nccl_tests_log.h"
#include "common/error.h"
#include "scenarios/nccl_tests_table.h"
#include "algorithms/nccl_types.h"
#include "scenarios/report_formats.h"

using namespace ccsim;

namespace {

std::string data_path(const std::string& name) { return std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/" + name; }

std::vector<std::string> read_lines(const std::string& name) {
  std::ifstream f(data_path(name));
  std::vector<std::string> lines;
  std::string l;
  while (std::getline(f, l)) {
    if (l.rfind("[1,0]<stdout>:", 0) == 0) l = l.substr(14);  // mpirun --tag-output
    lines.push_back(l);
  }
  return lines;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

const char* kLogs[] = {"a100x8-1node-allreduce.txt", "h100x16-2node-ndr-allreduce.txt",
                       "rtx2080ti-x2-pcie-noP2P-allreduce.txt", "nccltests_alltoall_1.txt", "nccl_debug_2.txt"};

}  // namespace

TEST(NcclTestsTable, NumberFormatCurrent) {
  // width 7 (time): %.2f below 1e4, %.1f below 1e5, %.0f below 1e7, else %.1e
  EXPECT_EQ(format_nccl_number(40.12, 7), "  40.12");
  EXPECT_EQ(format_nccl_number(970.33, 7), " 970.33");
  EXPECT_EQ(format_nccl_number(1662.12, 7), "1662.12");
  EXPECT_EQ(format_nccl_number(10656.0, 7), "10656.0");
  EXPECT_EQ(format_nccl_number(84157.5, 7), "84157.5");
  EXPECT_EQ(format_nccl_number(167847, 7), " 167847");
  EXPECT_EQ(format_nccl_number(1234567, 7), "1234567");
  EXPECT_EQ(format_nccl_number(12345678, 7), "1.2e+07");
  EXPECT_EQ(format_nccl_number(1e30, 7), "1.0e+30");
  EXPECT_EQ(format_nccl_number(0.004, 7), "   0.00");
  // width 6 (algbw, busbw): %.2f below 1e3, %.1f below 1e4, %.0f below 1e6, else %.0e
  EXPECT_EQ(format_nccl_number(0, 6), "  0.00");
  EXPECT_EQ(format_nccl_number(232.44, 6), "232.44");
  EXPECT_EQ(format_nccl_number(1234.56, 6), "1234.6");
  EXPECT_EQ(format_nccl_number(12345.6, 6), " 12346");
  EXPECT_EQ(format_nccl_number(123456, 6), "123456");
  EXPECT_EQ(format_nccl_number(1234567, 6), " 1e+06");
  EXPECT_EQ(format_nccl_number(1e300 * 1e300, 6).size(), 6u);  // infinity terminates
}

TEST(NcclTestsTable, NumberFormatLegacyTime) {
  EXPECT_EQ(format_nccl_time_legacy(40.12), "  40.12");
  EXPECT_EQ(format_nccl_time_legacy(103.8), "  103.8");
  EXPECT_EQ(format_nccl_time_legacy(8247.6), " 8247.6");
  EXPECT_EQ(format_nccl_time_legacy(16330), "  16330");
  EXPECT_EQ(format_nccl_time_legacy(268588), " 268588");
}

TEST(NcclTestsTable, RowsReproduceRealLinesByteForByte) {
  int checked = 0;
  for (const char* name : kLogs) {
    auto lines = read_lines(name);
    auto runs = parse_nccl_tests_file(data_path(name));
    for (const auto& run : runs)
      for (const auto& row : run.rows) {
        ASSERT_GE(row.line, 1);
        EXPECT_EQ(format_nccl_tests_row(row, run.style), lines.at(row.line - 1)) << name << " line " << row.line;
        ++checked;
      }
  }
  EXPECT_EQ(checked, 30 + 32 + 28 + 10 + 32);
}

TEST(NcclTestsTable, SpecificRealLines) {
  NcclTestsRow r;
  r.size_bytes = 2147483648; r.count = 536870912; r.type = "float"; r.redop = "sum"; r.root = -1;
  r.oop_time_us = 16330; r.oop_algbw_GBps = 131.51; r.oop_busbw_GBps = 230.13; r.oop_wrong = 0;
  r.ip_time_us = 16349; r.ip_algbw_GBps = 131.35; r.ip_busbw_GBps = 229.87; r.ip_wrong = 0;
  EXPECT_EQ(format_nccl_tests_row(r, NcclTestsStyle::Legacy),
            "  2147483648     536870912     float     sum      -1    16330  131.51  230.13      0    16349  131.35  229.87      0");
  r = NcclTestsRow{};
  r.size_bytes = 4194304; r.count = 1048576; r.type = "float"; r.redop = "sum"; r.root = -1;
  r.oop_time_us = 103.8; r.oop_algbw_GBps = 40.40; r.oop_busbw_GBps = 70.70;
  r.ip_time_us = 102.8; r.ip_algbw_GBps = 40.81; r.ip_busbw_GBps = 71.41;
  EXPECT_EQ(format_nccl_tests_row(r, NcclTestsStyle::Legacy),
            "     4194304       1048576     float     sum      -1    103.8   40.40   70.70      0    102.8   40.81   71.41      0");
  r = NcclTestsRow{};
  r.size_bytes = 8589934080; r.count = 13421772; r.type = "double"; r.redop = "none"; r.root = -1;
  r.oop_time_us = 167847; r.oop_algbw_GBps = 51.18; r.oop_busbw_GBps = 50.54; r.oop_wrong = 0;
  r.ip_time_us = 167426; r.ip_algbw_GBps = 51.31; r.ip_busbw_GBps = 50.66; r.ip_wrong = -1;
  EXPECT_EQ(format_nccl_tests_row(r),
            "  8589934080      13421772    double    none      -1   167847   51.18   50.54       0   167426   51.31   50.66    N/A");
  r.oop_wrong = 1234567;  // "%6g"
  EXPECT_NE(format_nccl_tests_row(r).find("   50.54  1.23457e+06   167426"), std::string::npos);
}

TEST(NcclTestsTable, ColumnHeadersMatchRealLogs) {
  auto legacy = read_lines("a100x8-1node-allreduce.txt");
  EXPECT_EQ(format_nccl_tests_column_header(NcclTestsStyle::Legacy), legacy[7] + "\n" + legacy[8] + "\n" + legacy[9] + "\n");
  auto current = read_lines("nccltests_alltoall_1.txt");
  std::size_t h = 0;
  while (current[h].find("out-of-place") == std::string::npos) ++h;
  EXPECT_EQ(format_nccl_tests_column_header(NcclTestsStyle::Current),
            current[h] + "\n" + current[h + 1] + "\n" + current[h + 2] + "\n");
}

TEST(NcclTestsTable, WholeLegacyOutputReproducesA100Log) {
  auto lines = read_lines("a100x8-1node-allreduce.txt");
  auto run = parse_nccl_tests_file(data_path("a100x8-1node-allreduce.txt")).at(0);
  NcclTestsHeader h;
  h.nthread = run.nthread; h.ngpus = run.ngpus; h.min_bytes = run.min_bytes; h.max_bytes = run.max_bytes;
  h.step = run.step; h.warmup_iters = run.warmup_iters; h.iters = run.iters; h.style = NcclTestsStyle::Legacy;
  auto out = split_lines(format_nccl_tests_output(h, {}, run.rows));
  std::vector<std::string> expected(lines.begin() + 5, lines.end());  // from "# nThread" on
  ASSERT_EQ(out.size(), expected.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (expected[i].rfind("# Avg bus bandwidth", 0) == 0) continue;  // recomputed from rounded busbw
    EXPECT_EQ(out[i], expected[i]) << "line " << i;
  }
  EXPECT_NEAR(avg_bus_bandwidth(run.rows), 66.2058, 0.005);
}

TEST(NcclTestsTable, AvgBusBandwidthOfRealLogs) {
  EXPECT_NEAR(avg_bus_bandwidth(parse_nccl_tests_file(data_path("h100x16-2node-ndr-allreduce.txt")).at(0).rows), 139.56, 0.01);
  EXPECT_NEAR(avg_bus_bandwidth(parse_nccl_tests_file(data_path("nccltests_alltoall_1.txt")).at(0).rows), 47.1472, 0.005);
  EXPECT_EQ(avg_bus_bandwidth({}), 0.0);
}

TEST(NcclTestsTable, OutputParsesBack) {
  NcclTestsHeader h;
  h.ngpus = 8; h.min_bytes = 1024; h.max_bytes = 1073741824ull * 16; h.step = "4(factor)"; h.iters = 50;
  h.program_name = "all_reduce_perf";
  std::vector<NcclTestsRow> rows;
  double t = 12.3456;
  for (std::uint64_t s = 1024; s <= h.max_bytes; s *= 4, t *= 3.7) {
    NcclTestsRow r;
    r.size_bytes = s; r.count = s / 4; r.type = "float"; r.redop = "sum"; r.root = -1;
    r.oop_time_us = t; r.oop_algbw_GBps = s / t / 1e3; r.oop_busbw_GBps = r.oop_algbw_GBps * busbw_factor("all_reduce", 8);
    r.ip_time_us = t * 1.01; r.ip_algbw_GBps = s / r.ip_time_us / 1e3; r.ip_busbw_GBps = r.ip_algbw_GBps * 1.75;
    rows.push_back(r);
  }
  std::string out = format_nccl_tests_output(h, {"# ccsim 0.1.0 prediction: topology dgx-h100 x32", "model: ring"}, rows);
  auto lines = split_lines(out);
  EXPECT_EQ(lines[0], "# Collective test starting: all_reduce_perf");
  EXPECT_EQ(lines[1], "# nThread 1 nGpus 8 minBytes 1024 maxBytes 17179869184 step: 4(factor) warmup iters: 5 iters: 50 agg iters: 1 validation: 1 graph: 0");
  EXPECT_EQ(lines[2], "# ccsim 0.1.0 prediction: topology dgx-h100 x32");
  EXPECT_EQ(lines[3], "# model: ring");
  EXPECT_EQ(lines[4], "#");
  EXPECT_EQ(lines.back(), "# Collective test concluded: all_reduce_perf");

  std::istringstream in(out);
  auto runs = parse_nccl_tests_log(in, "ccsim-output");
  ASSERT_EQ(runs.size(), 1u);
  const auto& run = runs[0];
  EXPECT_EQ(run.collective, "all_reduce");
  EXPECT_EQ(run.style, NcclTestsStyle::Current);
  EXPECT_EQ(run.ngpus, 8);
  EXPECT_EQ(run.max_bytes, h.max_bytes);
  EXPECT_EQ(run.step, "4(factor)");
  EXPECT_EQ(run.iters, 50);
  ASSERT_EQ(run.rows.size(), rows.size());
  auto printed = [](double v, int w) { return std::stod(format_nccl_number(v, w)); };
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& a = rows[i];
    const auto& b = run.rows[i];
    EXPECT_EQ(b.size_bytes, a.size_bytes);
    EXPECT_EQ(b.count, a.count);
    EXPECT_EQ(b.type, a.type);
    EXPECT_EQ(b.redop, a.redop);
    EXPECT_EQ(b.root, a.root);
    EXPECT_DOUBLE_EQ(b.oop_time_us, printed(a.oop_time_us, 7));
    EXPECT_DOUBLE_EQ(b.oop_algbw_GBps, printed(a.oop_algbw_GBps, 6));
    EXPECT_DOUBLE_EQ(b.oop_busbw_GBps, printed(a.oop_busbw_GBps, 6));
    EXPECT_DOUBLE_EQ(b.ip_time_us, printed(a.ip_time_us, 7));
    EXPECT_DOUBLE_EQ(b.ip_busbw_GBps, printed(a.ip_busbw_GBps, 6));
    EXPECT_EQ(b.oop_wrong, 0);
    EXPECT_EQ(b.ip_wrong, 0);
    // Re-formatting the parsed row gives the same line again.
    EXPECT_EQ(format_nccl_tests_row(b), format_nccl_tests_row(a));
  }
  EXPECT_TRUE(run.has_avg_busbw);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", avg_bus_bandwidth(rows));
  EXPECT_DOUBLE_EQ(run.avg_busbw_GBps, std::stod(buf));
}

TEST(NcclTestsTable, BusBwFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor("all_reduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor("all_gather", 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor("reduce_scatter", 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor("alltoall", 80), 79.0 / 80.0);
  EXPECT_DOUBLE_EQ(busbw_factor("gather", 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor("scatter", 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor("broadcast", 16), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor("reduce", 16), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor("sendrecv", 16), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor("hypercube", 16), 1.0);
  EXPECT_THROW(busbw_factor("allreduce", 8), InputError);
  EXPECT_THROW(busbw_factor("all_reduce", 0), InputError);
  // Consistent with the real logs: busbw ~= algbw * factor.
  auto a100 = parse_nccl_tests_file(data_path("a100x8-1node-allreduce.txt")).at(0).rows.back();
  EXPECT_NEAR(a100.oop_algbw_GBps * busbw_factor("all_reduce", 8), a100.oop_busbw_GBps, 0.01);
  auto ag = parse_nccl_tests_file(data_path("nccltests_all_gather_2.txt")).at(0).rows.back();
  EXPECT_NEAR(ag.oop_algbw_GBps * busbw_factor("all_gather", 8), ag.oop_busbw_GBps, 0.01);
  auto a2a = parse_nccl_tests_file(data_path("nccltests_alltoall_1.txt")).at(0).rows.back();
  EXPECT_NEAR(a2a.oop_algbw_GBps * busbw_factor("alltoall", 80), a2a.oop_busbw_GBps, 0.01);
}

TEST(NcclTypes, DatatypesAndOps) {
  EXPECT_EQ(datatype_size("int8"), 1);
  EXPECT_EQ(datatype_size("uint8"), 1);
  EXPECT_EQ(datatype_size("int32"), 4);
  EXPECT_EQ(datatype_size("uint32"), 4);
  EXPECT_EQ(datatype_size("int64"), 8);
  EXPECT_EQ(datatype_size("uint64"), 8);
  EXPECT_EQ(datatype_size("half"), 2);
  EXPECT_EQ(datatype_size("float"), 4);
  EXPECT_EQ(datatype_size("double"), 8);
  EXPECT_EQ(datatype_size("bfloat16"), 2);
  EXPECT_EQ(datatype_size("f8e4m3"), 1);
  try {
    datatype_size("fp32");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fp32"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos);
  }
  EXPECT_EQ(check_nccl_op("sum"), "sum");
  EXPECT_EQ(check_nccl_op("all"), "all");
  EXPECT_TRUE(is_nccl_op("mulsum"));
  EXPECT_FALSE(is_nccl_op("all"));
  EXPECT_THROW(check_nccl_op("add"), InputError);
  // nccl-tests' sweeps for -d / -o: datatypes outer, ops inner; one op for a collective that does not
  // reduce.
  EXPECT_EQ(nccl_tests_operands("half", "max", true).size(), 1u);
  const auto all = nccl_tests_operands("all", "all", true);
  ASSERT_EQ(all.size(), 12u * 6u);
  EXPECT_EQ(all[0].datatype + "/" + all[0].op, "int8/sum");
  EXPECT_EQ(all[5].datatype + "/" + all[5].op, "int8/mulsum");
  EXPECT_EQ(all[6].datatype + "/" + all[6].op, "uint8/sum");
  EXPECT_EQ(nccl_tests_operands("all", "all", false).size(), 12u);
  EXPECT_EQ(nccl_tests_operands("float", "all", true).size(), 6u);
  EXPECT_THROW(nccl_tests_operands("fp32", "sum", true), InputError);
  EXPECT_THROW(nccl_tests_operands("float", "add", true), InputError);
}

TEST(ReportFormats, JsonAndCsv) {
  NcclTestsRow r;
  r.size_bytes = 33553920; r.count = 52428; r.type = "double"; r.redop = "none"; r.root = -1;
  r.oop_time_us = 970.33; r.oop_algbw_GBps = 34.58; r.oop_busbw_GBps = 34.15; r.oop_wrong = 0;
  r.ip_time_us = 980.59; r.ip_algbw_GBps = 34.22; r.ip_busbw_GBps = 33.79; r.ip_wrong = -1;
  nlohmann::json meta = {{"topology", "dgx-h100"}, {"ranks", 80}, {"collective", "alltoall"}};
  std::string js = format_rows_json(meta, {r, r});
  EXPECT_EQ(js, format_rows_json(meta, {r, r}));  // deterministic
  auto doc = nlohmann::ordered_json::parse(js);
  ASSERT_EQ(doc.size(), 2u);
  EXPECT_EQ(doc.begin().key(), "metadata");
  EXPECT_EQ(doc["metadata"]["ranks"], 80);
  ASSERT_EQ(doc["rows"].size(), 2u);
  const auto& row = doc["rows"][0];
  std::vector<std::string> keys;
  for (auto it = row.begin(); it != row.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, report_row_columns());
  EXPECT_EQ(row["size_bytes"], 33553920u);
  EXPECT_EQ(row["oop_time_us"].get<double>(), 970.33);
  EXPECT_EQ(row["oop_wrong"], 0);
  EXPECT_TRUE(row["ip_wrong"].is_null());
  EXPECT_NE(js.find("\"oop_time_us\": 970.33,"), std::string::npos);

  std::string csv = format_rows_csv(meta, {r});
  auto lines = split_lines(csv);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0], "# collective: alltoall");
  EXPECT_EQ(lines[1], "# ranks: 80");
  EXPECT_EQ(lines[2], "# topology: dgx-h100");
  EXPECT_EQ(lines[3],
            "size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps,oop_wrong,ip_time_us,ip_algbw_GBps,"
            "ip_busbw_GBps,ip_wrong");
  EXPECT_EQ(lines[4], "33553920,52428,double,none,-1,970.33,34.58,34.15,0,980.59,34.22,33.79,");
}

TEST(NcclTestsTable, ValidationOffPrintsNA) {
  NcclTestsHeader h;
  h.min_bytes = h.max_bytes = 1024;
  h.validation = 0;
  NcclTestsRow r;
  r.size_bytes = 1024; r.count = 256; r.type = "float"; r.redop = "sum";
  r.oop_time_us = 10; r.ip_time_us = 11;
  auto lines = split_lines(format_nccl_tests_output(h, {}, {r}));
  EXPECT_EQ(lines[5], "        1024           256     float     sum      -1    10.00    0.00    0.00    N/A    11.00    0.00    0.00    N/A");
  EXPECT_EQ(lines[6], "# Out of bounds values : 0 OK");
  EXPECT_EQ(lines[7], "# Avg bus bandwidth    : 0 ");
  EXPECT_EQ(lines[8], "#");
  std::istringstream in(format_nccl_tests_output(h, {}, {r}));
  auto runs = parse_nccl_tests_log(in, "x");
  EXPECT_EQ(runs.at(0).rows.at(0).oop_wrong, -1);
  EXPECT_EQ(runs.at(0).validation, 0);
}

TEST(ReportFormats, CsvMetadataStaysOnOneLine) {
  std::string csv = format_rows_csv(nlohmann::json{{"note", "a\nb"}, {"list", {1, 2}}}, {});
  EXPECT_EQ(csv, "# list: [1,2]\n# note: a b\n"
                 "size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps,oop_wrong,ip_time_us,"
                 "ip_algbw_GBps,ip_busbw_GBps,ip_wrong\n");
}
