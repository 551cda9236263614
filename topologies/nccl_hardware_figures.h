// NCCL's own figures for the hardware, in one place: what NCCL 2.30 assumes a link or a chip
// delivers (src/graph/topo.h's *_BW constants, topo.cc's CPU model detection and inter-CPU
// bandwidth, tuning.cc's nvlsEfficiency). Two sides read them and must agree:
//  * the description's defaults (topologies/spec.cpp): the NVLink efficiency of a generation and the
//    NVLS efficiency of an arch, so that the engine's links carry what NCCL says the hardware does;
//  * the tuner's model of NCCL's topology search (algorithms/nccl_channels.cpp, nccl_model.cpp).
// Units: GB/s = 1e9 B/s per direction, as NCCL's own figures are.
#pragma once
#include <string>

namespace ccsim {

// The compute capability in an arch string: "sm90" -> 90, "sm_100a" -> 100; 0 if it has no digits
// (or more than 4).
int compcap_from_arch(const std::string& gpu_arch);

// NCCL's per-link NVLink bandwidth of a compute capability (SMxx_NVLINK_BW): 18.0 (sm60), 20.0
// (sm70, sm80), 12.0 (sm86's bridge), 20.6 (sm90), 40.1 (sm100 and later, up to 2.30).
double nccl_nvlink_bw_per_link(int compCap);

// The default achievable fraction of an NVLink generation's per-link signalling rate: NCCL's figure
// for the GPUs of that generation over the rate NVIDIA publishes per link per direction (NVLink1
// P100 20 GB/s, NVLink2-4 25 GB/s, NVLink5 50 GB/s): 18/20, 20/25, 20/25, 20.6/25, 40.1/50. Other
// generations (0: not stated) get 0.8, NVLink2's ratio.
double nccl_nvlink_efficiency(int generation);

// NCCL's PCIe bandwidth (GB/s) for a link the topology describes with `bandwidth_Bps` per direction
// (inverts the topology's 128/130 encoding to lanes x GT/s, then applies NCCL's x100 Mbps table).
double nccl_pci_bw_from_link(double bandwidth_Bps);

// NCCL 2.30's nvlsEfficiency (ncclTunerConstants, tuning.cc): the NVLink data rate multimem
// operations reach as a fraction of P2P traffic's, per arch. Volta and Ampere have no NVLS.
constexpr double kNcclNvlsEfficiencyHopper = 0.85;
constexpr double kNcclNvlsEfficiencyBlackwell = 0.74;
// The figure for a compute capability: Blackwell's from sm100 on, Hopper's below (also for an
// unknown arch, which the tuner takes as sm90).
double nccl_nvls_efficiency(int compCap);

// NCCL 2.30's bandwidth between two CPU sockets for GPU traffic (ncclTopoGetInterCpuBw), in GB/s.
// `vendor` as the description names it ("intel", "amd", "arm", "nvidia", anything else); for Intel,
// `model_id` is the CPUID model of family 6 (lscpu's "Model", /proc/cpuinfo's "model", the
// "modelid" of NCCL's topology dump): >= 0xCF Emerald Rapids ERP_QPI_BW 40, >= 0x8F Sapphire Rapids
// SRP_QPI_BW 22 (Granite Rapids, 0xAD, falls here too), >= 0x55 Skylake-SP and later SKL_QPI_BW 10,
// below Broadwell BDW_QPI_BW 6. `model_id` 0 (not stated): Skylake's 10, ccsim's default before the
// model was described. AMD by `family_id`, the CPUID family (lscpu's "CPU family"), as NCCL 2.30.5+
// does (commit 2f1c174, "Fix AMD inter-CPU bandwidth detection: add per-generation values", quoted in
// NVIDIA/nccl#2441): Zen 1/2 (family 23, and below) 16, Zen 3/4 (25) 24, Zen 5 (26 on) 32; not stated
// (0): 16, NCCL's one AMD figure before. ARM ("arm", "nvidia": Grace): ARM_BW 6. Other vendors: 6, a
// choice of ccsim's (NCCL leaves an x86 CPU of unknown vendor at LOC_BW, i.e. not limiting).
double nccl_inter_cpu_bw(const std::string& vendor, int model_id, int family_id = 0);

// NCCL's getNetOverhead (tuning.cc): the cost of posting a network operation, per CPU vendor as the
// description names it: 2 us on AMD, 1 us otherwise (NCCL_NET_OVERHEAD overrides it in NCCL).
double nccl_net_overhead_us(const std::string& cpu_vendor);

// INTEL_P2P_OVERHEAD (topo.h; applied by search.cc's followPath): an Intel root complex turns GPU
// peer traffic into 64 B PCIe TLPs, so a channel at speed s whose GPU-to-GPU path is PHB (through a
// CPU's host bridge, which NCCL_P2P_DISABLE's detour through the CPU also is) takes 6/5 s of every
// PCIe link on the way. Not across sockets (SYS paths) and not on AMD.
constexpr double kNcclIntelP2pOverhead = 6.0 / 5.0;

}  // namespace ccsim
