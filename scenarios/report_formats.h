// Machine-readable outputs of nccl-tests style rows: JSON and CSV.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/nccl_tests_log.h"

namespace ccsim {

// The shortest text that reads back to the same double ("nan", "inf", "-inf" for those).
std::string shortest_double_text(double v);
// A CSV field: quoted (with '"' doubled) when it holds ',', '"' or a line break.
std::string csv_field(const std::string& s);

// Column names (with units) shared by the CSV header and the JSON row keys, in this order:
// size_bytes,count,type,redop,root,oop_time_us,oop_algbw_GBps,oop_busbw_GBps,oop_wrong,
// ip_time_us,ip_algbw_GBps,ip_busbw_GBps,ip_wrong
const std::vector<std::string>& report_row_columns();

// {"metadata": <metadata, keys sorted>, "rows": [{"size_bytes": ..., ...}, ...]}, pretty-printed with
// 2-space indent and a final newline. Numbers print as the shortest text that reads back to the same
// double; a wrong count of -1 ("N/A") prints as null.
std::string format_rows_json(const nlohmann::json& metadata, const std::vector<NcclTestsRow>& rows);

// Leading "# key: value" comment lines for each metadata key (strings unquoted, other values as JSON),
// then the header line of report_row_columns(), then one line per row. Doubles print as the shortest
// round-trip text; a wrong count of -1 is an empty field; strings with ',' or '"' are quoted.
std::string format_rows_csv(const nlohmann::json& metadata, const std::vector<NcclTestsRow>& rows);

}  // namespace ccsim
