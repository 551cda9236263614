// Writer for nccl-tests style output (the layout of all_reduce_perf & co), so that existing parsers and
// plotting scripts read ccsim's predictions unchanged. Table lines are byte-compatible with nccl-tests.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/nccl_tests_log.h"

namespace ccsim {

struct NcclTestsHeader {
  int nthread = 1;
  int ngpus = 1;
  std::uint64_t min_bytes = 0, max_bytes = 0;
  std::string step = "2(factor)";  // "2(factor)" or "1048576(bytes)"
  int warmup_iters = 5, iters = 20, agg_iters = 1, validation = 1, graph = 0;  // validation 0: #wrong prints "N/A"
  // Optional: when set (e.g. "all_reduce_perf"), "# Collective test starting: X" is printed before the
  // "# nThread" line and "# Collective test concluded: X" at the end, as nccl-tests >= 2.17 does.
  std::string program_name;
  NcclTestsStyle style = NcclTestsStyle::Current;
};

// The whole nccl-tests style output:
//   [# Collective test starting: X]
//   # nThread ... graph: 0
//   <preamble lines>            (each should start with "# "; "# " is prepended when it does not start with '#')
//   #
//   <column header: "out-of-place / in-place" line, column names, units>
//   <rows>
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : X
//   #
//   [# Collective test concluded: X]
std::string format_nccl_tests_output(const NcclTestsHeader& header, const std::vector<std::string>& preamble,
                                     const std::vector<NcclTestsRow>& rows);

// The three column-header lines (no "#" line before them), each ending in '\n'.
std::string format_nccl_tests_column_header(NcclTestsStyle style = NcclTestsStyle::Current);

// One data line (no newline), byte-compatible with nccl-tests. A wrong count of -1 prints "N/A".
std::string format_nccl_tests_row(const NcclTestsRow& row, NcclTestsStyle style = NcclTestsStyle::Current);

// nccl-tests' getFloatStr(): "%*.2f" when the integer part has fewer than width-2 digits, "%*.1f" below
// width-1 digits, "%*.0f" below width+1 digits, else "%*.1e" (width >= 7) or "%*.0e".
std::string format_nccl_number(double v, int width);
// Older nccl-tests time column: "%7.2f" below 100 us, "%7.1f" below 10000 us, else "%7.0f".
std::string format_nccl_time_legacy(double us);

// Mean busbw over all rows, out-of-place and in-place, as nccl-tests' "Avg bus bandwidth" (0 for no rows).
double avg_bus_bandwidth(const std::vector<NcclTestsRow>& rows);

// nccl-tests' busbw = algbw * factor, the registry's (algorithms/collectives.h): all_reduce 2(n-1)/n;
// all_gather, reduce_scatter, alltoall, gather, scatter (n-1)/n; broadcast, reduce, sendrecv,
// hypercube 1. InputError for other names or nranks < 1.
double busbw_factor(const std::string& collective, int nranks);

}  // namespace ccsim
