// nccl-tests' JSON result file (`-J FILE`, --output_file; nccl-tests 2.17+, src/util.cu: "version" 2), read
// into the same runs as its text output (calibrate/nccl_tests_log.h), so that predict, validate and
// calibrate take either. The file holds one run: its arguments and environment, "nccl_version" (NCCL's
// version code), "config" (nThread, nGpus, sizes, iterations and the device list), and "results", one
// object per size with "out_of_place" and "in_place" times ("time", or "cpu_time" under -C 1), bandwidths
// and wrong-element counts. Its NCCL_* environment is kept (NcclTestsRun::nccl_env): unlike the text
// output, the file says which NCCL settings the run was made with.
#pragma once
#include <string>
#include <vector>

#include "calibrate/nccl_tests_log.h"

namespace ccsim {

// True when `text` starts (after blanks and a UTF-8 byte-order mark) with '{': nccl-tests' text output
// never does.
bool looks_like_nccl_tests_json(const std::string& text);

// The run(s) of one JSON result file (one per datatype and op of -d all / -o all, as the text
// parser splits them). InputError(filename: PLACE, ...) for malformed JSON (line and column; a file
// cut short, as a run killed before nccl-tests closed it leaves it, says so) and for a field that is
// missing or not a measurement (its JSON path, e.g. "/results/3/out_of_place/time").
std::vector<NcclTestsRun> parse_nccl_tests_json(const std::string& text, const std::string& filename);

}  // namespace ccsim
