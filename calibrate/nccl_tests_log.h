// Data model and parser for NVIDIA nccl-tests output (all_reduce_perf, all_gather_perf, ...).
// The parser works by structure: it finds the column header line(s) of each result table, derives the
// column layout from the header names and parses the rows below it, ignoring unrelated lines
// (NCCL INFO lines, hostnames, provenance comments, mpirun --tag-output prefixes).
#pragma once
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace ccsim {

// How nccl-tests formats the numbers of a row.
//   Current: nccl-tests >= ~2.14 (getFloatStr): time "%7.2f" below 1e4 us, "%7.1f" below 1e5, "%7.0f" below
//            1e7, else "%7.1e"; algbw/busbw "%6.2f"/"%6.1f"/"%6.0f"/"%6.0e" by the same rule; #wrong "%6g"
//            (column header "busbw  #wrong", trailing space).
//   Legacy:  older nccl-tests: time "%7.2f" below 100 us, "%7.1f" below 1e4, else "%7.0f"; algbw/busbw "%6.2f";
//            #wrong "%5g" (column header "busbw #wrong").
enum class NcclTestsStyle { Current, Legacy };

struct NcclTestsRow {
  std::uint64_t size_bytes = 0;
  std::uint64_t count = 0;
  std::string type;   // "float", "half", "bfloat16", ...
  std::string redop;  // "sum", "none", ...
  int root = -1;      // -1 when printed as -1; also -1 when the layout has no root column
  double oop_time_us = 0, oop_algbw_GBps = 0, oop_busbw_GBps = 0;
  long oop_wrong = 0;  // -1 when printed "N/A"
  double ip_time_us = 0, ip_algbw_GBps = 0, ip_busbw_GBps = 0;
  long ip_wrong = 0;  // -1 when printed "N/A"
  int line = 0;       // 1-based line in the source file (0 for rows not read from a file)
};

struct NcclTestsRun {
  std::string collective;    // "all_reduce" etc. when known, else ""
  // Every collective a comment or an echoed command of this run names, once each, in the order of
  // their latest mention ("... all_reduce_perf, all_gather_perf ..." in a note gives both; a command
  // naming one of them again moves it last). The test header's ("# Collective test starting: ...")
  // stays first. `collective` is the first mention (or the test header's). Inference keeps `collective`
  // where it fits the table, else takes the last of these that does (calibrate/nccl_tests_infer.cpp).
  std::vector<std::string> named_collectives;
  std::string nccl_version;  // "2.26.2+cuda12.8" from an "NCCL version ..." line; else derived from
                             // "nccl-library=22902" ("2.29.2"); else ""
  std::string nccl_tests_version;  // "2.17.8" from "# nccl-tests version 2.17.8 ..." if present
  // From the "# nThread ..." header line when present (0 / "" otherwise).
  int nthread = 0, ngpus = 0;
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::string step;  // "2(factor)" or "1048576(bytes)"
  int warmup_iters = 0, iters = 0;
  int agg_iters = -1, validation = -1, graph = -1;  // -1 when not printed (older versions)
  // -z / --blocking of an echoed command line ("... all_reduce_perf ... -z 1"): the header does not
  // print it. -1 when no such line says.
  int blocking = -1;
  // -R / --local_register of an echoed command line: 1 registers the user buffers with NCCL (its
  // zero-copy paths), 2 as symmetric windows (NCCL 2.27+'s symmetric kernels). Not in the header either;
  // -1 when no line says.
  int local_register = -1;
  // The NCCL_* settings of the run's environment ("NCCL_ALGO=Ring"), as a JSON result file records them
  // (calibrate/nccl_tests_json.h); empty for text output, which does not print its environment.
  std::vector<std::string> nccl_env;
  std::vector<std::string> devices;  // "#  Rank  0 Group  0 Pid ..." lines, verbatim after the leading "# "
  int ranks = 0;                     // number of device lines (0 if none)
  std::vector<NcclTestsRow> rows;
  bool has_avg_busbw = false;
  double avg_busbw_GBps = 0;
  // Layout of the table as found.
  bool has_type = true, has_redop = true, has_root = true, has_in_place = true;
  std::string wrong_column = "#wrong";  // "#wrong" or "error"
  NcclTestsStyle style = NcclTestsStyle::Current;  // guessed from the column header spacing
  int header_line = 0;                             // line of the column-name header
  // No column-name header above the rows (a pasted table): read with nccl-tests' current 13 columns.
  bool column_header_implied = false;
};

// Parses every run in a log (a file may hold several runs, each with its own header and table).
// Throws InputError(filename, "line N: ...") for a malformed data row (truncated, non-numeric field,
// wrong number of fields), a table header without rows, and InputError(filename, ...) for a log
// without any table.
// A JSON result file (nccl-tests -J) is read as such (calibrate/nccl_tests_json.h).
std::vector<NcclTestsRun> parse_nccl_tests_log(std::istream& in, const std::string& filename);
// InputError if the file cannot be read.
std::vector<NcclTestsRun> parse_nccl_tests_file(const std::string& path);

// A log file and its runs, read once for everything that looks at it (validate reads the device
// lists to choose the hardware, then validates the same runs).
struct NcclTestsFile {
  std::string path;
  std::vector<NcclTestsRun> runs;
};
std::vector<NcclTestsFile> parse_nccl_tests_files(const std::vector<std::string>& paths);

// "all_reduce_perf_mpi" / "./build/all_reduce_perf" / "all_reduce" -> "all_reduce"; "" when not a known
// nccl-tests collective.
std::string nccl_tests_collective_from_name(const std::string& name);

// nccl-tests' -z (--blocking) among a command's arguments: "-z 1", "-z1", "--blocking 1",
// "--blocking=1" (getopt_long's spellings), the last one given winning as in getopt: 1 or 0; -1 when
// none is given.
int nccl_tests_blocking_flag(const std::vector<std::string>& args);

// nccl-tests' -R (--local_register) among a command's arguments, spelled as -z is: its value (0, 1, 2);
// -1 when none is given.
int nccl_tests_local_register_flag(const std::vector<std::string>& args);

// nccl-tests' -d all and -o all print every datatype and reduction op in one table, a sweep each: one
// run per (type, op), in the table's order, as if each had been run alone (`run` itself when it holds one).
std::vector<NcclTestsRun> split_runs_by_type_and_op(NcclTestsRun run);

// NCCL's version code as nccl-tests prints it ("nccl-library=22902", JSON "nccl_version": 22902) ->
// "2.29.2"; codes below 20900 are the old major*1000 + minor*100 + patch ("2804" -> "2.8.4").
std::string nccl_version_from_code(long code);

}  // namespace ccsim
