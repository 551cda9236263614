// Parser for NCCL_DEBUG=INFO logs (any NCCL_DEBUG_SUBSYS). Lines are recognised by the "NCCL INFO" marker,
// whatever precedes it ("host:pid:tid [dev] ", mpirun "[1,0]<stdout>:", srun "0: " ...); the version line is
// also recognised without the marker ("NCCL version 2.20.3+cuda12.2", as rank 0 prints it). Everything else
// (application output, nccl-tests tables, warnings) is ignored.
#pragma once
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ccsim {

struct NcclDebugInfo {
  std::string nccl_version;  // "2.20.3+cuda12.2" ("" if not logged)
  // From "comm 0x.. rank R nRanks N nNodes M localRanks L localRank l MNNVL x" (NCCL >= 2.19) or
  // "comm 0x.. rank R nranks N ... - Init COMPLETE"; the communicator with the most ranks. -1: not logged.
  int nranks = -1, nnodes = -1, local_ranks = -1;
  int num_comms = 0;  // distinct communicators seen
  // From "16 coll channels, 0 collnet channels, 16 nvls channels, 16 p2p channels, 2 p2p channels per peer"
  // (the first such line); -1: not logged.
  int coll_channels = -1, collnet_channels = -1, nvls_channels = -1, p2p_channels = -1, p2p_channels_per_peer = -1;
  // "NVLS multicast support is [not] available", or nvls channels > 0; collnet channels > 0. Empty: not logged.
  std::optional<bool> nvls_enabled, collnet_enabled;
  // Ring order per channel, from "Channel 00/16 :    0   7   6 ..." (or older "Ring 00 : 0 1 2"), first
  // occurrence of each channel: rings[c] = "0 7 6 ..." (single spaces), ring_ranks[c] the same as integers.
  std::vector<std::string> rings;
  std::vector<std::vector<int>> ring_ranks;
  // Every "Trees [0] 15/-1/-1->14->13 [1] ..." line (text after "Trees "), in file order (one per rank and
  // communicator), and older "Tree 0 : -1 -> 0 -> 1/-1/-1" lines (text after "Tree ").
  std::vector<std::string> trees;
  // GPUDirect RDMA per NIC: "NET/IB : GPU Direct RDMA Enabled|Disabled for HCA 0 'mlx5_0'",
  // "GPU Direct RDMA Enabled|Disabled for GPU ... / HCA 0 ...", and connections "via NET/IB/0/GDRDMA"
  // (true) or "via NET/IB/0" (false unless some connection of that NIC used GDRDMA). Key: the NIC name when
  // logged ("mlx5_0"), else "<network>/<dev>" ("AWS Libfabric/0").
  std::map<std::string, bool> gdr_by_nic;
  std::vector<std::string> nics;  // from "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ...": "mlx5_0:1/IB"
  std::string transport;     // "IB", "Socket", "AWS Libfabric", ... from "Using network X"
  std::string net_plugin;    // "aws-ofi-nccl 1.9.2-aws" (NET/OFI Initializing ...), "Loaded net plugin X" ... ("" if none)
  std::string tuner_plugin;  // "nccl_ofi_tuner" from "Using tuner plugin: 'x'" ("" if none)

  struct Choice {
    std::string collective;  // "AllReduce", "Broadcast", ... ("" when the line does not name it)
    std::uint64_t bytes = 0;
    std::string algorithm;   // canonical: "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"
    std::string protocol;    // canonical: "LL", "LL128", "Simple"
    int channels = -1;       // channel{Lo..Hi} -> Hi-Lo+1, or "nchannels N"; -1 if not logged
    double time_us = -1;     // "time T" of older TUNING lines, -1 if not logged
    int line = 0;
  };
  // Per-call decisions: "Broadcast: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}" (NCCL >= 2.19,
  // TUNING), older "1048576 Bytes -> Algo 1 proto 2 time 28.4" (numeric ids, TUNING) and COLL lines carrying
  // "algo X proto Y nchannels N".
  std::vector<Choice> choices;

  // The TUNING table ("Algorithm | Tree | Ring ...", "Protocol | LL | LL128 | Simple ...", then
  // "AllReduce | lat/ bw | ..."): model latency (us) and bandwidth (GB/s) per collective, algorithm and
  // protocol; the first table of the log only.
  struct TuningEntry {
    std::string collective, algorithm, protocol;
    double latency_us = 0, bandwidth_GBps = 0;
  };
  std::vector<TuningEntry> tuning;

  // Lines longer than kMaxLineChars (common/text.h) other than ring lines: not matched against NCCL's
  // message formats (std::regex would overflow the stack on them); the first of them.
  int long_lines = 0, first_long_line = 0;
  int info_lines = 0;  // number of "NCCL INFO" lines read
};

// Throws InputError(filename, ...) when the file has no NCCL line at all, and InputError(filename,
// "line N: ...") for a recognised line that is garbled (e.g. a TUNING table row with the wrong number of cells
// or a non-numeric value, a choice line with a malformed size).
NcclDebugInfo parse_nccl_debug_log(std::istream& in, const std::string& filename);
NcclDebugInfo parse_nccl_debug_file(const std::string& path);

}  // namespace ccsim
