// The typed report of `ccsim validate`: a measured nccl-tests log against ccsim's prediction of the
// same run. Rendered by report/validation_text.cpp (table), report/json.cpp (JSON), report/csv.cpp
// (CSV) and report/html.h (HTML). Built by validate() (scenarios/validate.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/prediction_report.h"

namespace ccsim {

// What the log says about its run, and how each fact was found (users must be able to check).
struct LogFacts {
  std::string file;
  int run_index = 0;               // 0-based run inside the file (a log may hold several)
  std::string collective;          // "all_reduce"
  std::string collective_source;   // "named in the log (...)", "table: redop 'sum', root -1, busbw/algbw 1.7500", "--collective"
  int ranks = 0;
  std::string ranks_source;        // "device list", "busbw/algbw 1.7500 = 2(n-1)/n with n = 8", "--ranks"
  int processes = 0;               // distinct (host, pid) in the device list; 0 when the log has none
  int gpus_per_process = 0;        // nGpus x nThread (-g, -t): one process driving several GPUs pays their launches serially
  int threads_per_process = 0;
  // nccl-tests' timing loop from the header ("iters: 20 agg iters: 1 ... graph: 0"); nccl-tests'
  // defaults (20, 1, 0) where the header does not print them. scenarios/launch_mode.h.
  int iters = 20, agg_iters = 1, graph_launches = 0;
  bool blocking = false;  // -z 1, read from an echoed command line (the header does not print it)
  int hosts = 0;                   // distinct hosts in the device list; 0 when the log has none
  std::string nccl_version;        // "2.26.2+cuda12.8", "" when not printed
  std::string nccl_tests_version;  // "2.17.8", "" when not printed
  // NCCL_* settings of the run's environment as the log records them (nccl-tests' JSON result file);
  // empty for text output. Named by validate's causes, not applied to the prediction (--env applies).
  std::vector<std::string> nccl_env;
  std::string datatype, op;        // from the rows ("float", "sum"; op "" for collectives that do not reduce)
  int root = -1;                   // -1 for collectives without a root
  bool has_out_of_place = true, has_in_place = true;
  std::vector<std::string> notes;  // what the log lacks or contradicts ("no device list: ranks from ...")
};

// What an NCCL_DEBUG=INFO log of the same run (--nccl-debug) says, as far as the causes use it.
struct DebugFacts {
  bool present = false;
  std::string file;
  int p2p_ipc_connections = 0;     // "via P2P/IPC", "via P2P/direct pointer", "via P2P/CUMEM"
  int shm_connections = 0;         // "via SHM/..." (host-staged)
  int net_gdr_connections = 0;     // "via NET/IB/.../GDRDMA"
  int net_connections = 0;         // "via NET/..." without GDRDMA (staged through host memory)
  int channels = 0;                // largest "N coll channels" / channel count printed
  bool nvls = false;               // NVLS multicast set up
  std::vector<std::string> algorithms;  // algorithms NCCL printed as chosen / enabled, if it did
  // NCCL's per-call choices as it printed them (TUNING lines "AllReduce: 4194304 Bytes -> Algo RING proto
  // LL128 ...", older "4194304 Bytes -> Algo 1 proto 1 time ..."; calibrate/nccl_debug_log.h), the first
  // line of each collective and size.
  struct Choice {
    std::string collective;  // NCCL's name ("AllReduce"), "" when the line does not name it
    std::uint64_t bytes = 0; // NCCL's bytes: count x type size (AllGather/ReduceScatter: per rank in 2.19+)
    std::string algorithm, protocol;  // canonical, as ccsim prints them ("Ring", "LL128")
  };
  std::vector<Choice> choices;
  std::vector<std::string> env;    // NCCL_* settings NCCL echoed ("NCCL_ALGO set by environment to Ring")
  // The tuner plugin NCCL loaded ("TUNER/Plugin: Using nccl_ofi_tuner (v3)" -> "nccl_ofi_tuner (v3)"); empty
  // when it printed none or used its internal tuner.
  std::string tuner_plugin;
  // The network devices NCCL listed ("NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ..."), as
  // "mlx5_0:1/RoCE"; empty when it listed none.
  std::vector<std::string> nics;
  // What a network plugin said of the host (aws-ofi-nccl, "NET/OFI ..." lines): the cloud instance it
  // found ("Running on p5.48xlarge platform, Setting NCCL_TOPO_FILE ...": "p5.48xlarge"; older plugins
  // "P4d"), the libfabric provider ("Selected Provider is efa ...": "efa"), the NICs it found ("(found 32
  // nics)") and its multi-rail groups ("NIC group 7 device #3 ...": 8), each one device to NCCL; 0 when
  // not printed.
  std::string net_platform, net_provider;
  std::string net_name;  // the network NCCL runs on ("Using network IB", "AWS Libfabric", "gIB", "FasTrak", "Socket")
  int net_nics_found = 0, net_nic_groups = 0;
  // The network latency the plugin reports to NCCL ("NET/OFI Internode latency set at 35.0 us"); 0: not printed.
  double net_plugin_latency_us = 0;
  // The network devices the plugin hands NCCL per process: its groups, else the NICs it found; 0: unknown.
  int net_devices() const { return net_nic_groups > 0 ? net_nic_groups : net_nics_found; }
};

// One size: measured against predicted.
struct ValidatedSize {
  std::uint64_t size_bytes = 0;
  double measured_time_us = 0;      // out-of-place when the log has it, else in-place
  double measured_busbw_GBps = 0;
  std::optional<double> measured_in_place_time_us;
  double predicted_time_us = 0;
  double predicted_busbw_GBps = 0;
  double error = 0;                 // measured / predicted time - 1: > 0 slower than predicted
  bool within_tolerance = false;
  bool latency_side = false;        // below the knee S* (latency dominates), else the bandwidth side
  std::string nccl_algorithm, nccl_protocol;  // what ccsim's tuner assumed NCCL picks
  std::string predicted;            // how ccsim predicted it (ReportSize::predicted)
  int line = 0;                     // the row's line in the log
};

enum class Verdict { NoSizes, Within, Slower, Faster, Mixed };
const char* to_string(Verdict v);

// The verdict of one side of the knee.
struct SideVerdict {
  std::string side;          // "latency" or "bandwidth"
  int sizes = 0;             // sizes on this side (bandwidth side: the largest sizes only, see docs/validate.md)
  int within = 0;            // of which within the tolerance
  double median_error = 0;   // median of ValidatedSize::error over them
  double worst_error = 0;    // the error of largest magnitude
  Verdict verdict = Verdict::NoSizes;
};

// A likely cause of a large error: what in the numbers points to it and what to check next.
struct LikelyCause {
  std::string id;        // stable key: "no-p2p-host-staged", "gdr-off", "nic-missing", "nvls-off", ...
  std::string title;     // "P2P disabled: traffic staged through host memory (SHM)"
  std::string evidence;  // "bandwidth side: busbw plateaus at 4.00 GB/s, 0.21 of the predicted 19.2 ..."
  std::string next;      // "run nvidia-smi topo -p2p r; check ACS ..."
  bool informational = false;  // true: explains a deviation that is not an error (e.g. busbw above the ring limit)
};

// One run of one log, validated.
struct ValidatedRun {
  LogFacts log;
  PredictionReport prediction;      // ccsim's prediction of the same sweep on the given hardware
  std::vector<ValidatedSize> sizes;
  double knee_bytes = 0;            // S* of the prediction, the latency / bandwidth boundary
  SideVerdict latency, bandwidth;
  std::vector<LikelyCause> causes;
  bool pass = false;                // every size within the tolerance
};

struct ValidationReport {
  std::string ccsim_version;
  double tolerance_pct = 0;
  std::string hardware;             // "--topology dgx-h100 --nodes 2" as given, in words
  std::vector<std::string> nccl_env; // --env: what each NCCL setting did (topologies/nccl_env.h)
  DebugFacts debug;
  std::vector<ValidatedRun> runs;
  bool pass = false;                // every run passes: exit status 0
};

}  // namespace ccsim
