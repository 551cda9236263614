#pragma once
// What a log's device list says about the hardware: the GPUs' name ("Tesla V100-SXM2-16GB" in
// nccl-tests' "# Rank 0 ... device 0 [0x4f] NAME" lines), their architecture, and the preset whose
// node holds that many of them. `ccsim validate` without --topology predicts on that preset instead
// of dgx-h100 (docs/validate.md "Hardware from the log").
#include <string>
#include <vector>

#include "calibrate/nccl_tests_log.h"
#include "report/validation_report.h"

namespace ccsim {

// The GPU name every device line of the run gives; "" when there are none or they differ.
std::string log_gpu_name(const NcclTestsRun& run);

// GPUs per host of the run's device list (ranks / hosts when every host has as many), and the hosts
// (if `hosts` is given); 0 when unknown. A cut list (fewer lines than its highest rank says) gives the
// highest local device index + 1 per host, over the ranks up to its highest one (a guess the hardware's
// reason says: an excerpt keeping the last line holds both).
int log_gpus_per_host(const NcclTestsRun& run, int* hosts = nullptr);

// The compute capability a GPU name implies ("sm70" for "Tesla V100-SXM2-16GB"); "" when not known.
std::string gpu_arch_from_name(const std::string& gpu_name);

// An AMD GPU's name ("AMD Instinct MI300X", "Radeon ..."): such a log ran RCCL (rccl-tests prints
// nccl-tests' table), whose algorithms and tuner ccsim does not restate.
bool amd_gpu_name(const std::string& gpu_name);

// The hardware a log's GPUs name: a preset and the --set changes that fit it to the run.
struct LogHardware {
  std::string preset;             // "" when the devices name no preset of ccsim's
  std::vector<std::string> sets;  // "node.gpu.count=12", ... applied before the user's --set
  std::string why;                // "from the log's devices: 8 x Tesla V100-SXM2-16GB per host"
};

// The preset of that GPU (SXM boards only: a PCIe card's host is not known from its name) for a run
// of `gpus_per_host` GPUs on each of `hosts` hosts: the preset's node when it has that many GPUs; on
// one host, fewer GPUs of an NVSwitch node (a DGX-2 job on 12 of its 16) as a node of that many
// without NICs; H100/H200/A100 SXM four to a host on several hosts as an HGX 4-GPU board. Empty when
// none fits.
LogHardware hardware_for_gpu(const std::string& gpu_name, int gpus_per_host, int hosts);

// The hardware the logs' device lists agree on (every run of every file); empty when they do not or
// name no preset.
LogHardware hardware_from_logs(const std::vector<NcclTestsFile>& files);

// The NICs NCCL listed in a run's NCCL_DEBUG=INFO lines ("NET/IB : Using [0]mlx5_0:1/RoCE ..."): their
// count per process (node.nic.count, when it fits `gpus_per_host`: a multiple or a divisor) and, when
// every one says the same link layer, the transport (IB -> ib, RoCE -> roce). Not their speed, which
// NCCL does not print there. `preset` stays empty. (GPUDirect RDMA off in the connection lines is not
// taken: it is a cause validate names, not the hardware; docs/validate.md "Likely causes".)
LogHardware nics_from_debug(const DebugFacts& debug, int gpus_per_host);

}  // namespace ccsim
