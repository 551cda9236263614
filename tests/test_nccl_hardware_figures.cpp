// NCCL's hardware figures (topologies/nccl_hardware_figures.h) against NCCL 2.30's src/graph/topo.h
// and topo.cc, and their two readers: the description's defaults and the tuner's PCIe-only search.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "algorithms/nccl_channels.h"
#include "common/error.h"
#include "test_helpers.h"
#include "topologies/nccl_hardware_figures.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

TEST(NcclHardwareFigures, NvlinkEfficiencyIsNcclsPerLinkFigureOverTheSignallingRate) {
  // SM60_NVLINK_BW 18.0 of P100's 20 GB/s; SM70/SM80 20.0 of 25; SM90 20.6 of 25; SM100 40.1 of 50.
  EXPECT_DOUBLE_EQ(nccl_nvlink_efficiency(1), 0.9);
  EXPECT_DOUBLE_EQ(nccl_nvlink_efficiency(2), 0.8);
  EXPECT_DOUBLE_EQ(nccl_nvlink_efficiency(3), 0.8);
  EXPECT_DOUBLE_EQ(nccl_nvlink_efficiency(4), 0.824);
  EXPECT_DOUBLE_EQ(nccl_nvlink_efficiency(5), 0.802);
  EXPECT_DOUBLE_EQ(nccl_nvlink_efficiency(0), 0.8);  // not stated
}

TEST(NcclHardwareFigures, ComputeCapabilityAndNvlsEfficiencyFollowTheArch) {
  EXPECT_EQ(compcap_from_arch("sm90"), 90);
  EXPECT_EQ(compcap_from_arch("sm_100a"), 100);
  EXPECT_EQ(compcap_from_arch("unknown"), 0);
  EXPECT_EQ(compcap_from_arch("sm99999999999"), 0);  // not an int overflow
  EXPECT_DOUBLE_EQ(nccl_nvls_efficiency(90), 0.85);
  EXPECT_DOUBLE_EQ(nccl_nvls_efficiency(100), 0.74);
  EXPECT_DOUBLE_EQ(nccl_nvls_efficiency(0), 0.85);  // unknown arch: the tuner's sm90
  EXPECT_DOUBLE_EQ(nccl_nvlink_bw_per_link(86), 12.0);
}

TEST(NcclHardwareFigures, InterCpuBandwidthFollowsNcclsCpuModelDetection) {
  // topo.cc: family 6, modelid >= 0xCF ERP (40), >= 0x8F SRP (22), >= 0x55 SKL (10), else BDW (6).
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("intel", 0xCF), 40.0);  // Emerald Rapids (Xeon 8570)
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("intel", 0x8F), 22.0);  // Sapphire Rapids (Xeon 8480C)
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("intel", 0xAD), 22.0);  // Granite Rapids: SYS[22.0] (NVIDIA/nccl#2107)
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("intel", 0x6A), 10.0);  // Ice Lake-SP
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("intel", 0x55), 10.0);  // Skylake-SP / Cascade Lake
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("intel", 0x4F), 6.0);   // Broadwell-EP
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("intel", 0), 10.0);     // model not stated
  // AMD by CPUID family since NCCL 2.30.5 (commit 2f1c174, NVIDIA/nccl#2441): Zen 1/2 16, Zen 3/4 24, Zen 5 32.
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("amd", 49), 16.0);      // family not stated: NCCL's one figure before
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("amd", 0, 23), 16.0);   // Rome (EPYC 7742)
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("amd", 0, 24), 16.0);   // #2441's workaround: family 24 is taken as Zen 1/2
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("amd", 17, 25), 24.0);  // Genoa (#2441's EPYC 9534: family 25, model 17)
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("amd", 2, 26), 32.0);   // Turin (EPYC 9575F)
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("arm", 0), 6.0);        // ARM_BW
}

// The generic PCIe server puts 4 GPUs on each of 2 sockets, 2 per switch, so its worst GPU pair is SYS
// and pairs under different switches of one socket are PHB: the tuner's per-GPU channel bandwidth is
// min(GPU PCIe / (6/5 on Intel: INTEL_P2P_OVERHEAD on the PHB hops), inter-CPU) in NCCL units.
std::string pcie_only_channel_note(const std::vector<std::string>& sets) {
  nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
  set_node_count(spec, 1);
  for (const std::string& a : sets) apply_override(spec, a, "test");
  const NcclTopoSummary s = summarize_for_nccl(build_topology(spec, "pcie-gen4-8gpu"));
  const auto it = std::find_if(s.notes.begin(), s.notes.end(),
                               [](const std::string& n) { return n.rfind("PCIe-only node:", 0) == 0; });
  return it == s.notes.end() ? std::string() : *it;
}

bool note_says(const std::vector<std::string>& sets, const std::string& what) {
  const std::string note = pcie_only_channel_note(sets);
  if (note.find(what) != std::string::npos) return true;
  ADD_FAILURE() << "expected \"" << what << "\" in: " << note;
  return false;
}

TEST(NcclHardwareFigures, TunerBoundsCrossSocketChannelsByTheCpuModel) {
  // PCIe Gen5 x16: NCCL's 48 GB/s, 40 after the Intel overhead, so the socket figure binds below it.
  const std::string gen5 = "node.pcie.generation=5";
  EXPECT_TRUE(note_says({gen5, "node.cpu.model_id=143"}, "channel bandwidth 22.0 GB/s (GPU PCIe 48.0)"));  // SRP
  EXPECT_TRUE(note_says({gen5, "node.cpu.model_id=207"}, "channel bandwidth 40.0 GB/s"));  // ERP 40 = 48 / 1.2
  EXPECT_TRUE(note_says({gen5, "node.cpu.model_id=106"}, "channel bandwidth 10.0 GB/s"));  // Ice Lake: SKL
  EXPECT_TRUE(note_says({gen5, "node.cpu.model_id=79"}, "channel bandwidth 6.0 GB/s"));    // Broadwell
  // Gen4 (24 GB/s): Emerald Rapids' 40 does not bind, the PCIe links at 24 / 1.2 = 20 do; AMD: 16.
  EXPECT_TRUE(note_says({"node.cpu.model_id=207"}, "channel bandwidth 20.0 GB/s (GPU PCIe 24.0)"));
  EXPECT_TRUE(note_says({"node.cpu.vendor=amd"}, "channel bandwidth 16.0 GB/s"));
}

TEST(NcclHardwareFigures, IntelRootComplexOverheadOnlyOnIntelPhbPaths) {
  // One socket, two switches: GPU pairs across the switches go through the CPU's host bridge (PHB).
  const std::vector<std::string> one_socket = {"node.cpu.sockets=1"};
  EXPECT_TRUE(note_says(one_socket, "channel bandwidth 20.0 GB/s (GPU PCIe 24.0), intra path PHB"));  // 24 / 1.2
  EXPECT_TRUE(note_says({"node.cpu.sockets=1", "node.cpu.vendor=amd"}, "channel bandwidth 24.0 GB/s"));
  // Both GPUs under one switch (PIX): no CPU on the path, no overhead.
  EXPECT_TRUE(note_says({"node.cpu.sockets=1", "node.gpu.count=2", "node.pcie.switches_per_socket=1", "node.nic.count=0"},
                        "channel bandwidth 24.0 GB/s (GPU PCIe 24.0), intra path PIX"));
}

TEST(NcclHardwareFigures, CpuModelIdIsRangeChecked) {
  nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
  apply_override(spec, "node.cpu.model_id=0", "test");
  try {
    build_topology(spec, "pcie-gen4-8gpu");
    FAIL() << "model_id 0 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model_id"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ccsim
