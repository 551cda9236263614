// The hardware a log's device list names (scenarios/log_gpu_preset.h): GPU architecture by name, the
// preset `ccsim validate` takes without --topology, and the note when a given topology's GPUs differ.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.h"
#include "real_log_helpers.h"
#include "scenarios/log_gpu_preset.h"

namespace ccsim {
namespace {

const std::string kLogs = std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/";

TEST(LogGpuPreset, ArchitectureFromTheGpuName) {
  EXPECT_EQ(gpu_arch_from_name("Tesla V100-SXM2-16GB"), "sm70");
  EXPECT_EQ(gpu_arch_from_name("Tesla T4"), "sm75");
  EXPECT_EQ(gpu_arch_from_name("NVIDIA GeForce RTX 2080 Ti"), "sm75");
  EXPECT_EQ(gpu_arch_from_name("A100-SXM4-40GB"), "sm80");
  EXPECT_EQ(gpu_arch_from_name("NVIDIA A10G"), "sm86");
  EXPECT_EQ(gpu_arch_from_name("NVIDIA GeForce RTX 4090"), "sm89");
  EXPECT_EQ(gpu_arch_from_name("NVIDIA L40S"), "sm89");
  EXPECT_EQ(gpu_arch_from_name("NVIDIA H100 80GB HBM3"), "sm90");
  EXPECT_EQ(gpu_arch_from_name("NVIDIA B200"), "sm100");
  EXPECT_EQ(gpu_arch_from_name("NVIDIA B300 SXM6 AC"), "sm100");  // Blackwell Ultra, NCCL's >= SM100 constants
  EXPECT_EQ(gpu_arch_from_name("NVIDIA GeForce RTX 5090"), "sm120");
  EXPECT_EQ(gpu_arch_from_name("Radeon Instinct MI250X"), "");
}

TEST(LogGpuPreset, SxmBoardsAndTheGenericPcieServerForCards) {
  EXPECT_EQ(hardware_for_gpu("Tesla V100-SXM2-16GB", 8, 1).preset, "dgx1-v100");
  EXPECT_EQ(hardware_for_gpu("NVIDIA H200", 8, 2).preset, "dgx-h200");
  EXPECT_EQ(hardware_for_gpu("NVIDIA H100 80GB HBM3", 8, 4).preset, "dgx-h100");
  // Cards: their host is not in the name, so the generic PCIe server with the card's architecture and
  // PCIe generation (Hopper Gen5, Turing Gen3, Ada as the preset's L40S), no NICs on one host.
  const LogHardware h100_pcie = hardware_for_gpu("NVIDIA H100 PCIe", 8, 1);
  EXPECT_EQ(h100_pcie.preset, "pcie-gen4-8gpu");
  EXPECT_EQ(h100_pcie.sets, (std::vector<std::string>{"node.gpu.arch=sm90", "node.pcie.generation=5", "node.nic.count=0"}));
  EXPECT_EQ(hardware_for_gpu("NVIDIA H100 NVL", 4, 2).sets,
            (std::vector<std::string>{"node.gpu.count=4", "node.gpu.arch=sm90", "node.pcie.generation=5"}));
  EXPECT_EQ(hardware_for_gpu("NVIDIA L40S", 8, 1).sets, (std::vector<std::string>{"node.nic.count=0"}));
  EXPECT_EQ(hardware_for_gpu("NVIDIA GeForce RTX 2080 Ti", 2, 1).sets,
            (std::vector<std::string>{"node.gpu.count=2", "node.gpu.arch=sm75", "node.pcie.generation=3", "node.nic.count=0"}));
  EXPECT_EQ(hardware_for_gpu("Radeon RX 7900", 2, 1).preset, "");  // no NVIDIA architecture
  // SXM boards whose names hold a card's ("A100-SXM4" holds "A10") stay boards; a PCIe A100 is a card.
  EXPECT_EQ(hardware_for_gpu("NVIDIA A100-SXM4-80GB", 8, 2).preset, "hgx-a100");
  EXPECT_EQ(hardware_for_gpu("NVIDIA A100 80GB PCIe", 8, 1).preset, "pcie-gen4-8gpu");
  EXPECT_EQ(hardware_for_gpu("NVIDIA H200 NVL", 4, 1).preset, "pcie-gen4-8gpu");
  // A800: hgx-a100 with 8 of its 12 NVLinks; H20: H100's NVLink4 (after "H200", which holds "H20");
  // an SXM H100 without HBM3 in its name is dgx-h100's.
  EXPECT_EQ(hardware_for_gpu("NVIDIA A800-SXM4-80GB", 8, 1).preset, "hgx-a100");
  EXPECT_EQ(hardware_for_gpu("NVIDIA A800-SXM4-80GB", 8, 2).sets, std::vector<std::string>{"node.nvlink.links_per_gpu=8"});
  EXPECT_EQ(hardware_for_gpu("NVIDIA A800-SXM4-80GB", 4, 1).sets,
            (std::vector<std::string>{"node.gpu.count=4", "node.nic.count=0", "node.nvlink.links_per_gpu=8"}));
  EXPECT_EQ(hardware_for_gpu("NVIDIA A800 80GB PCIe", 2, 1).preset, "pcie-gen4-8gpu");
  const LogHardware h20 = hardware_for_gpu("NVIDIA H20", 8, 2);
  EXPECT_EQ(h20.preset, "dgx-h100");
  EXPECT_NE(h20.why.find("node.nic.Gbps="), std::string::npos) << h20.why;
  EXPECT_EQ(hardware_for_gpu("NVIDIA H100 SXM5 64GB", 8, 1).preset, "dgx-h100");
  EXPECT_EQ(hardware_for_gpu("NVIDIA L20", 8, 1).sets, (std::vector<std::string>{"node.nic.count=0"}));
  // GB200 / GB300 trays: the run's trays as one NVLink domain up to a rack's 18, whole racks beyond.
  EXPECT_EQ(hardware_for_gpu("NVIDIA GB200", 4, 18).sets, std::vector<std::string>{});
  EXPECT_EQ(hardware_for_gpu("NVIDIA GB200", 4, 36).preset, "gb200-nvl72");
  EXPECT_EQ(hardware_for_gpu("NVIDIA GB300", 4, 16).sets, std::vector<std::string>{"node.nvlink.domain_size=16"});
  EXPECT_NE(hardware_for_gpu("NVIDIA GB300", 4, 16).why.find("node.nic.Gbps=800"), std::string::npos);
  EXPECT_EQ(hardware_for_gpu("NVIDIA GB200", 4, 1).sets,
            (std::vector<std::string>{"node.nvlink.domain_size=1", "node.nic.count=0"}));
  EXPECT_EQ(hardware_for_gpu("NVIDIA GB200", 4, 32).preset, "");  // 32 trays: not whole racks of 18
  EXPECT_EQ(hardware_for_gpu("NVIDIA GB200", 2, 4).preset, "");
  // HGX B300: dgx-b200's NVLink5; on several hosts the report asks for its NICs.
  EXPECT_EQ(hardware_for_gpu("NVIDIA B300 SXM6 AC", 8, 1).preset, "dgx-b200");
  const LogHardware b300 = hardware_for_gpu("NVIDIA B300 SXM6 AC", 8, 2);
  EXPECT_EQ(b300.preset, "dgx-b200");
  EXPECT_NE(b300.why.find("node.nic.Gbps=800"), std::string::npos) << b300.why;
  // GH200: one to four superchips of a gh200-quad node, each with its NIC and 6 NVLinks to each other.
  const LogHardware gh200_one = hardware_for_gpu("NVIDIA GH200 480GB", 1, 2);
  EXPECT_EQ(gh200_one.preset, "gh200-quad");
  EXPECT_EQ(gh200_one.sets, (std::vector<std::string>{"node.gpu.count=1", "node.nvlink.peers=null", "node.nic.count=1"}));
  EXPECT_EQ(hardware_for_gpu("NVIDIA GH200 120GB", 4, 2).sets, std::vector<std::string>{});
  EXPECT_EQ(hardware_for_gpu("NVIDIA GH200 120GB", 3, 1).sets,
            (std::vector<std::string>{"node.gpu.count=3", "node.nvlink.peers=[[0,1,6],[0,2,6],[1,2,6]]", "node.nic.count=0"}));
  EXPECT_EQ(hardware_for_gpu("NVIDIA GH200 120GB", 8, 2).preset, "");
  // Fewer GPUs of an NVSwitch node on one host: a smaller node without NICs; not on DGX-1's joined
  // pairs (which 4 of them is not known).
  const LogHardware twelve = hardware_for_gpu("Tesla V100-SXM3-32GB", 12, 1);
  EXPECT_EQ(twelve.preset, "dgx2-v100");
  EXPECT_EQ(twelve.sets, (std::vector<std::string>{"node.gpu.count=12", "node.nic.count=0"}));
  EXPECT_EQ(hardware_for_gpu("Tesla V100-SXM2-16GB", 4, 1).preset, "");
  // Hopper SXM four to a host on several hosts: the HGX 4-GPU board (NVLink pair by pair, 6 links, no
  // NVSwitch, one NIC per GPU), as on SURF's Snellius (its log prints "NVIDIA H100"); on one host four
  // of an 8-GPU NVSwitch node, as above.
  const std::vector<std::string> four_gpu_board = {"node.gpu.count=4", "node.nvlink.nvswitch=false", "node.nvlink.nvls=false",
                                                   "node.nvlink.peers=[[0,1,6],[0,2,6],[0,3,6],[1,2,6],[1,3,6],[2,3,6]]",
                                                   "node.nic.count=4"};
  EXPECT_EQ(hardware_for_gpu("NVIDIA H100 80GB HBM3", 4, 2).sets, four_gpu_board);
  EXPECT_EQ(hardware_for_gpu("NVIDIA H200", 4, 3).sets, four_gpu_board);
  const LogHardware snellius = testing::hardware_of_real_log("snellius-h100x8-2node-4gpu-4xndr200-ib-allgather-nccl2.22.3.txt");
  EXPECT_EQ(snellius.preset, "dgx-h100");
  EXPECT_EQ(snellius.sets, four_gpu_board);
  EXPECT_NE(snellius.why.find("HGX 4-GPU board"), std::string::npos) << snellius.why;
  EXPECT_NE(snellius.why.find("node.nic.Gbps="), std::string::npos) << snellius.why;
  EXPECT_EQ(hardware_for_gpu("NVIDIA H100 80GB HBM3", 4, 1).sets, (std::vector<std::string>{"node.gpu.count=4", "node.nic.count=0"}));
  // HGX A100 4-GPU (Perlmutter, Polaris): 4 NVLink3 links per pair.
  const LogHardware a100_four = hardware_for_gpu("NVIDIA A100-SXM4-40GB", 4, 8);
  EXPECT_EQ(a100_four.preset, "hgx-a100");
  EXPECT_EQ(a100_four.sets[3], "node.nvlink.peers=[[0,1,4],[0,2,4],[0,3,4],[1,2,4],[1,3,4],[2,3,4]]");
}

// Without --topology, validate predicts the 2019 V100 log on dgx1-v100 (its bandwidth side +4%, as
// with --topology dgx1-v100), not on the dgx-h100 default.
TEST(LogGpuPreset, ValidateWithoutTopologyTakesTheLogsGpus) {
  const auto r = testing::run_ccsim("validate " + kLogs + "v100x8-hybrid-cube-mesh-allreduce-g8.txt --format json");
  ASSERT_NE(r.code, 2) << r.err;
  EXPECT_NE(r.out.find("--topology dgx1-v100 (from the log's devices: 8 x Tesla V100-SXM2-16GB on one host"), std::string::npos)
      << r.out.substr(0, 400);
  const auto dgx2 = testing::run_ccsim("validate " + kLogs + "dgx2-v100x12-reduce-g12.txt");
  EXPECT_NE(dgx2.code, 2) << dgx2.err;  // 1: some sizes outside the tolerance, as with the flags given
  EXPECT_NE(dgx2.out.find("--topology dgx2-v100 --set node.gpu.count=12 --set node.nic.count=0 (from the log's devices"),
            std::string::npos);
}

// OCI's two GB300 trays (tests/data/nccl-tests/oci-gb300-2tray-8gpu-allreduce-nccl2.28.7.txt) with the four
// device lines its source elided restored: 4 per host on 2 hosts, predicted on gb200-nvl72 as one NVLink
// domain of the 2 trays, the hardware line asking for GB300's NICs.
TEST(LogGpuPreset, ValidateWithoutTopologyTakesGraceBlackwellTraysAsOneDomain) {
  std::string text = testing::read_text_file(kLogs + "oci-gb300-2tray-8gpu-allreduce-nccl2.28.7.txt");
  const std::string elided = "...\n";
  const std::size_t at = text.find(elided);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, elided.size(),
               "#  Rank  2 Group  0 Pid 566237 on   GPU-5188 device  2 [0018:06:00] NVIDIA GB300\n"
               "#  Rank  3 Group  0 Pid 566238 on   GPU-5188 device  3 [0019:06:00] NVIDIA GB300\n"
               "#  Rank  4 Group  0 Pid 561672 on    GPU-205 device  0 [0008:06:00] NVIDIA GB300\n"
               "#  Rank  5 Group  0 Pid 561673 on    GPU-205 device  1 [0009:06:00] NVIDIA GB300\n");
  const auto r = testing::run_ccsim("validate " + testing::write_temp_file("gb300-2tray.txt", text));
  ASSERT_NE(r.code, 2) << r.err;
  EXPECT_NE(r.out.find("--topology gb200-nvl72 --set node.nvlink.domain_size=2 (from the log's devices: 4 x NVIDIA GB300 per "
                       "tray on 2 trays, taken as NVLink domains of 2 trays"),
            std::string::npos)
      << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("node.nic.Gbps=800"), std::string::npos);
}

// CoreWeave's 20 NVL72 racks as their source printed them: one device line, "Rank 1439 ... device 3 ...
// NVIDIA GB200", for 1440 ranks. The cut list gives 4 GPUs per tray (device 3) over ranks 0-1439: 360
// trays, NVLink domains of a rack's 18; the prediction is the accuracy table's row, which passes the
// same description as flags (docs/accuracy.md: bandwidth side +149%, a known miss).
TEST(LogGpuPreset, ValidateWithoutTopologyReadsACutDeviceList) {
  const auto r = testing::run_ccsim("validate " + kLogs + "coreweave-gb200-nvl72-20rack-1440gpu-allreduce.txt --model closed-form");
  ASSERT_NE(r.code, 2) << r.err;
  EXPECT_NE(r.out.find("--topology gb200-nvl72 (from the log's devices: 4 x NVIDIA GB200 per tray on 360 trays, taken as "
                       "NVLink domains of 18 trays"),
            std::string::npos)
      << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("1440 ranks [the highest rank listed (1439)]"), std::string::npos);
  const auto flags = testing::run_ccsim("validate " + kLogs +
                                        "coreweave-gb200-nvl72-20rack-1440gpu-allreduce.txt --model closed-form "
                                        "--topology gb200-nvl72 --ranks 1440 --nodes 360");
  const auto side = [](const std::string& out) { return out.substr(out.find("# bandwidth side"), 120); };
  EXPECT_EQ(side(r.out), side(flags.out));
  // The run's measured 406 GB/s busbw at 16 GiB is under half of NCCL's model of NVLSTree (913).
  EXPECT_NE(side(r.out).find("slower than predicted"), std::string::npos) << side(r.out);
}

// rccl-tests prints nccl-tests' table; on AMD GPUs the report says the prediction is not RCCL's.
TEST(LogGpuPreset, ValidateSaysAmdGpusRunRccl) {
  std::string text = testing::read_text_file(kLogs + "h100x32-4node-ndr-allreduce-nccl2.26.2.txt");
  for (std::size_t at; (at = text.find("NVIDIA H100 80GB HBM3")) != std::string::npos;)
    text.replace(at, std::string("NVIDIA H100 80GB HBM3").size(), "AMD Instinct MI300X");
  const auto r = testing::run_ccsim("validate " + testing::write_temp_file("mi300x.txt", text));
  ASSERT_NE(r.code, 2) << r.err;
  EXPECT_NE(r.out.find("the log's GPUs are AMD Instinct MI300X: AMD GPUs run RCCL"), std::string::npos) << r.out.substr(0, 800);
}

TEST(LogGpuPreset, ValidateNotesATopologyOfOtherGpus) {
  const auto r = testing::run_ccsim("validate " + kLogs + "v100x8-hybrid-cube-mesh-allreduce-g8.txt --topology dgx-h100");
  EXPECT_NE(r.out.find("the log's GPUs are Tesla V100-SXM2-16GB (sm70) but the topology describes H100-SXM5-80GB (sm90)"),
            std::string::npos)
      << r.out.substr(0, 600);
}

// Some of each host's GPUs on several hosts (GKE's pods of one H200 and one NIC, NVIDIA's
// dranet page): the node's links through its NVSwitch for that many GPUs, a NIC each.
TEST(LogGpuPreset, SomeOfEachHostsGpusOnSeveralHosts) {
  const LogHardware one = hardware_for_gpu("NVIDIA H200", 1, 2);
  EXPECT_EQ(one.preset, "dgx-h200");
  EXPECT_EQ(one.sets, (std::vector<std::string>{"node.gpu.count=1", "node.nic.count=1"}));
  EXPECT_NE(one.why.find("1 of the node's 8 GPUs, each with a NIC of its own assumed"), std::string::npos) << one.why;
  EXPECT_EQ(hardware_for_gpu("NVIDIA B200", 2, 4).sets,
            (std::vector<std::string>{"node.gpu.count=2", "node.nic.count=2"}));
  // Four H100 to a host stay the HGX 4-GPU board; the DGX-1's cube mesh is no NVSwitch to take a subset of.
  const LogHardware board = hardware_for_gpu("NVIDIA H100 80GB HBM3", 4, 2);
  EXPECT_EQ(board.sets.front(), "node.gpu.count=4");
  EXPECT_EQ(board.sets.at(1), "node.nvlink.nvswitch=false");  // the board's rule, not the NVSwitch subset's
  EXPECT_TRUE(hardware_for_gpu("Tesla V100-SXM2-16GB", 2, 2).preset.empty());
}

// The NICs NCCL lists in its INFO lines: their count where it fits the host's GPUs, their link layer
// where every one says the same.
DebugFacts listing(const std::vector<std::string>& nics) {
  DebugFacts d;
  d.nics = nics;
  return d;
}

TEST(LogGpuPreset, NicsFromTheLogsNcclLines) {
  DebugFacts d;
  for (int i = 0; i < 16; ++i) d.nics.push_back("mlx5_" + std::to_string(i) + ":1/RoCE");
  const LogHardware roce = nics_from_debug(d, 8);
  EXPECT_EQ(roce.sets, (std::vector<std::string>{"node.nic.count=16", "node.nic.transport=roce"}));
  EXPECT_TRUE(roce.preset.empty());
  const LogHardware three = nics_from_debug(listing({"mlx5_0:1/IB", "mlx5_1:1/IB", "mlx5_2:1/IB"}), 8);
  EXPECT_EQ(three.sets, (std::vector<std::string>{"node.nic.transport=ib"}));  // 3 NICs fit no layout of 8 GPUs
  const LogHardware mixed = nics_from_debug(listing({"mlx5_0:1/IB", "mlx5_1:1/RoCE"}), 8);
  EXPECT_EQ(mixed.sets, (std::vector<std::string>{"node.nic.count=2"}));
  EXPECT_TRUE(nics_from_debug(DebugFacts{}, 8).sets.empty());
}

// validate without --topology on a two-host log whose own NCCL lines list 16 RoCE devices (OCI's A100
// log, with NCCL's "NET/IB : Using" line as NCCL_DEBUG=INFO prints it): the A100 preset, then its NICs.
TEST(LogGpuPreset, ValidateWithoutTopologyTakesTheNicsNcclListed) {
  std::string text = testing::read_text_file(kLogs + "oci-bm-gpu4.8-a100-2node-roce-allreduce.txt");
  std::string using_line = "nccl-allreduce-job0-mpiworker-0:43:43 [0] NCCL INFO NET/IB : Using";
  for (int i = 0; i < 16; ++i) using_line += " [" + std::to_string(i) + "]mlx5_" + std::to_string(i) + ":1/RoCE";
  using_line += " ; OOB eth0:10.0.0.2<0>\n";
  text.insert(text.find("# nThread"), "nccl-allreduce-job0-mpiworker-0:43:43 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n" +
                                          using_line);
  const std::string path = testing::write_temp_file("oci-a100-with-nccl-lines.txt", text);
  const auto r = testing::run_ccsim("validate " + path);
  ASSERT_NE(r.code, 2) << r.err;
  EXPECT_NE(r.out.find("--topology hgx-a100 --set node.nic.count=16 --set node.nic.transport=roce (from the log's devices: "
                       "8 x NVIDIA A100-SXM4-40GB per host on 2 hosts; NICs from the log's NCCL lines: 16 NICs, RoCE"),
            std::string::npos)
      << r.out.substr(0, 600);
}

}  // namespace
}  // namespace ccsim
