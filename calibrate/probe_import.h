// ccsim's own probe documents (docs/probes.md) as calibration inputs:
//  * ccsim-probe-nccl: the runs of NCCL's own choice ("default" combination) of all_reduce,
//    all_gather and reduce_scatter are ring curves, as nccl-tests logs are;
//  * ccsim-probe-verbs: its tables are perftest's (the same NIC latency and bandwidth rules);
//  * ccsim-probe-cuda: the host_kernel test's 1-block read rate is NCCL's SHM channel rate.
// Its other tests (copies, launch) are not read: docs/calibration.md says what each could set.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/calibration.h"

namespace ccsim {

struct ProbeDocument {
  std::string path;
  std::string probe;  // "cuda", "nccl" or "verbs"
  nlohmann::json doc;
};

// InputError(path, ...) for text that is not JSON (line and column), a document that does not have
// the probe schema (calibrate/probes/probe_schema.h: its first problem), and an error document (the
// probe measured nothing: its first error).
ProbeDocument parse_probe_document(const std::string& path, const std::string& text);

// nccl probe: one curve per ring collective of the default combination. The time of a size is
// time_us_host_avg (the batch's host time per call, what nccl-tests prints), else time_us_median.
// Ranks from the samples, nodes from the distinct ranks[].hostname, GPUs per thread = ranks /
// parameters.processes (one process drives all its GPUs through ncclCommInitAll); --ranks and
// --nodes must agree, --class and --collective apply as for nccl-tests logs.
std::vector<RingCurve> ring_curves_from_nccl_probe(const ProbeDocument& probe, const NcclTestsOptions& options);

// verbs probe: its samples as perftest tables (test = perftest_equivalent), then add_perftest_runs.
void add_verbs_probe(Calibration& cal, const ProbeDocument& probe);

// cuda probe: the median over GPUs of host_kernel read at 1 block (bw_per_block_GBps) -> cal.shm.
// InputError when the document has no such sample (the probe ran without --tests host_kernel).
void add_cuda_probe(Calibration& cal, const ProbeDocument& probe);

}  // namespace ccsim
