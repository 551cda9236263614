// The facts `ccsim validate --nccl-debug` uses from an NCCL_DEBUG=INFO log of the same run: the
// importer's (calibrate/nccl_debug_log.h: channels, NVLS, GPUDirect RDMA per NIC, algorithm choices)
// plus the transport of each peer connection ("Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
// "via SHM/direct/direct", "via NET/IB/0/GDRDMA") and the NCCL_* settings NCCL echoes.
#pragma once
#include <optional>
#include <string>

#include "report/validation_report.h"

namespace ccsim {

// InputError(path, ...) when the file cannot be read or has no NCCL line.
DebugFacts read_debug_facts(const std::string& path);

// The NCCL_DEBUG lines an nccl-tests log carries itself (runs with NCCL_DEBUG=INFO print them among the
// table), for validate without --nccl-debug: the facts, their file named "PATH (its own NCCL_DEBUG
// lines)"; nullopt when the log has no "NCCL INFO" line or they do not parse (a garbled line: the
// log is still validated, without them).
std::optional<DebugFacts> debug_facts_in_log(const std::string& path);

}  // namespace ccsim
