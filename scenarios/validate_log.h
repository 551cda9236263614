// What an nccl-tests log says about its own run, read from the log alone (never from its file name):
// the collective (its "# Collective test starting" line or the command echoed in the log; for logs
// without either, the table: the redop and root columns and busbw/algbw against the rank count, through
// calibrate/nccl_tests_infer.h, which `ccsim calibrate` uses too), the
// ranks and how they map to processes and hosts (device list, nThread, nGpus), the datatype, op and
// root, which of the out-of-place / in-place halves were measured, and the versions. `ccsim validate`
// builds its prediction from these facts; only the hardware comes from the command line.
#pragma once
#include <string>

#include "calibrate/nccl_tests_infer.h"  // infer_collective, busbw_ratio: shared with ccsim calibrate
#include "calibrate/nccl_tests_log.h"
#include "report/validation_report.h"

namespace ccsim {

// What the command line may add where a log is silent (0 / "": not given). A given value wins over
// the log's when both exist; the facts then note the disagreement.
struct LogOverrides {
  std::string collective;
  int ranks = 0;
  int gpus_per_node = 0;  // the topology's, to turn ranks into nodes when the log has no device list
};

// One device line, "Rank  3 Group  0 Pid  31706 on host-1 device  3 [0000:b5:00] NVIDIA GeForce RTX 2080 Ti".
struct DeviceLine {
  int rank = -1;
  std::string pid, host, gpu_name;
  int device = -1;
};
// False when the text is not a device line.
bool parse_device_line(const std::string& text, DeviceLine* out);

// What a run's device lines say of its ranks and hosts. nccl-tests prints one line per rank, ranks
// 0..n-1 in order; a log pasted in part (an excerpt keeping the first and last lines, or only the last
// one: the GB200 racks' logs) lists fewer lines than its highest rank says, and then its lines count
// neither the ranks nor the hosts.
struct DeviceList {
  int lines = 0;          // parsable device lines
  int ranks = 0;          // highest rank + 1 over them (0: no parsable line)
  int gpus_per_host = 0;  // highest local device index + 1 over them: the GPUs a host holds at least
  int hosts = 0;          // distinct hosts over them
  int processes = 0;      // distinct (host, Pid) over them
  // Lines for fewer ranks than the highest rank says: the list is cut.
  bool abbreviated() const { return ranks > lines; }
};
DeviceList device_list_of(const NcclTestsRun& run);

// The facts of run `run_index` of `file`. InputError(file, ...) when the collective or the rank
// count cannot be told (naming what would tell it: --collective, --ranks), and for a log cut short
// (a factor sweep stopping before maxBytes without the closing "Avg bus bandwidth" line).
LogFacts infer_log_facts(const NcclTestsRun& run, const std::string& file, int run_index, const LogOverrides& overrides);

}  // namespace ccsim
