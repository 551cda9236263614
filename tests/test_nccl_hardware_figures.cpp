// NCCL's hardware figures (topologies/nccl_hardware_figures.h) against NCCL 2.30's src/graph/topo.h
// and topo.cc, and their two readers: the description's defaults and the tuner's PCIe-only search.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "algorithms/nccl_channels.h"
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
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("amd", 49), 16.0);      // AMD_BW, any model in 2.30
  EXPECT_DOUBLE_EQ(nccl_inter_cpu_bw("arm", 0), 6.0);        // ARM_BW
}

// The generic PCIe Gen4 server puts 4 GPUs on each of 2 sockets, so its worst GPU pair is SYS: the
// tuner's per-GPU channel bandwidth is min(GPU PCIe 24, switch uplink 24, inter-CPU) in NCCL units.
std::string pcie_only_channel_note(int model_id) {
  nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
  set_node_count(spec, 1);
  apply_override(spec, "node.cpu.model_id=" + std::to_string(model_id), "test");
  const NcclTopoSummary s = summarize_for_nccl(build_topology(spec, "pcie-gen4-8gpu"));
  const auto it = std::find_if(s.notes.begin(), s.notes.end(),
                               [](const std::string& n) { return n.rfind("PCIe-only node:", 0) == 0; });
  return it == s.notes.end() ? std::string() : *it;
}

TEST(NcclHardwareFigures, TunerBoundsCrossSocketChannelsByTheCpuModel) {
  EXPECT_NE(pcie_only_channel_note(0x8F).find("channel bandwidth 22.0 GB/s (GPU PCIe 24.0)"), std::string::npos)
      << pcie_only_channel_note(0x8F);
  EXPECT_NE(pcie_only_channel_note(0xCF).find("channel bandwidth 24.0 GB/s"), std::string::npos);  // PCIe binds
  EXPECT_NE(pcie_only_channel_note(0x6A).find("channel bandwidth 10.0 GB/s"), std::string::npos);  // the preset's
  EXPECT_NE(pcie_only_channel_note(0x4F).find("channel bandwidth 6.0 GB/s"), std::string::npos);
}

TEST(NcclHardwareFigures, CpuModelIdIsRangeChecked) {
  nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
  apply_override(spec, "node.cpu.model_id=0", "test");
  try {
    build_topology(spec, "pcie-gen4-8gpu");
    FAIL() << "model_id 0 accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("model_id"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ccsim
