// The network a log's plugin lines name (scenarios/log_net_platform.h): aws-ofi-nccl's instance,
// provider and devices as validate's debug facts read them, the network each EC2 family gives, and
// validate without --topology on real AWS logs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "real_log_helpers.h"
#include "scenarios/log_gpu_preset.h"
#include "scenarios/log_net_platform.h"
#include "scenarios/validate_debug.h"

namespace ccsim {
namespace {

const std::string kLogs = std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/";

DebugFacts on(const std::string& platform, const std::string& provider = "efa") {
  DebugFacts d;
  d.net_platform = platform;
  d.net_provider = provider;
  return d;
}

// Two p5.48xlarge on EKS, aws-ofi-nccl 1.9.2: "Running on p5.48xlarge platform", "Selected Provider is efa
// (found 32 nics)" and 8 NIC groups of 4 (the RDMA protocol's devices, one per GPU).
TEST(LogNetPlatform, AwsOfiNcclLinesOfAP5Run) {
  const DebugFacts d = read_debug_facts(kLogs + "nccl_debug_2.txt");
  EXPECT_EQ(d.net_platform, "p5.48xlarge");
  EXPECT_EQ(d.net_provider, "efa");
  EXPECT_EQ(d.net_nics_found, 32);
  EXPECT_EQ(d.net_nic_groups, 8);
  EXPECT_EQ(d.net_devices(), 8);
  EXPECT_DOUBLE_EQ(d.net_plugin_latency_us, 75.0);  // "NET/OFI Internode latency set at 75.0 us"
  // The 2021 plugin on p4d prints the family name and the provider alone.
  const DebugFacts p4d = read_debug_facts(kLogs + "aws-p4d-2node-efa-allreduce-nccl2.8.3.txt");
  EXPECT_EQ(p4d.net_platform, "P4d");
  EXPECT_EQ(p4d.net_provider, "efa");
  EXPECT_EQ(p4d.net_devices(), 0);
}

TEST(LogNetPlatform, EachFamilysNetwork) {
  // p5 on all 8 GPUs: the preset of the instance.
  const LogHardware p5 = network_from_plugin(on("p5.48xlarge"), 8);
  EXPECT_EQ(p5.preset, "aws-p5");
  EXPECT_TRUE(p5.sets.empty());
  // p5e is the same block of the plugin's table (H200 on p5's network).
  EXPECT_EQ(network_from_plugin(on("p5e.48xlarge"), 8).preset, "aws-p5");
  // One GPU per p5 host: not the instance's NIC layout, but its transport and the plugin's exports.
  const LogHardware one = network_from_plugin(on("p5.48xlarge"), 1);
  EXPECT_TRUE(one.preset.empty());
  ASSERT_FALSE(one.sets.empty());
  EXPECT_EQ(one.sets.front(), "node.nic.transport=efa");
  EXPECT_NE(one.why.find("its NICs not taken for 1 GPUs per host"), std::string::npos) << one.why;
  // p4d (older plugins print "P4d"): 4 cards of 100 Gb/s, which its SENDRECV protocol leaves ungrouped.
  const LogHardware p4d = network_from_plugin(on("P4d"), 8);
  EXPECT_TRUE(p4d.preset.empty());
  EXPECT_EQ(p4d.sets, (std::vector<std::string>{"node.nic.count=4", "node.nic.Gbps=100", "node.nic.transport=efa",
                                                "node.nic.latency_us=75"}));
  EXPECT_EQ(network_from_plugin(on("p4de.24xlarge"), 8).sets, p4d.sets);
  // p5en: 3200 Gb/s over 8 GPUs, and the 35 us the plugin reports from p5en on.
  const LogHardware p5en = network_from_plugin(on("p5en.48xlarge"), 8);
  ASSERT_GE(p5en.sets.size(), 4u);
  EXPECT_EQ(p5en.sets[0], "node.nic.count=8");
  EXPECT_EQ(p5en.sets[1], "node.nic.Gbps=400");
  EXPECT_EQ(p5en.sets[2], "node.nic.transport=efa");
  EXPECT_EQ(p5en.sets[3], "node.nic.latency_us=18");  // the plugin tuner's P5en net_lat
  EXPECT_EQ(p5en.sets[4], "node.nic.plugin_latency_us=35");
  // p6-b200: the same NICs and block, `efa`'s default step latency (the tuner model has no p6 figure).
  const LogHardware p6 = network_from_plugin(on("p6-b200.48xlarge"), 8);
  EXPECT_EQ(p6.sets[3], "node.nic.plugin_latency_us=35");
  // A later p instance ccsim has no NIC figures for: the plugin's block without NICs.
  const LogHardware p7 = network_from_plugin(on("p7.48xlarge"), 8);
  EXPECT_EQ(p7.sets.front(), "node.nic.transport=efa");
  EXPECT_EQ(p7.sets[1], "node.nic.plugin_latency_us=35");
  for (const std::string& s : p7.sets) EXPECT_EQ(s.find("node.nic.count"), std::string::npos) << s;
  // p3dn: one NIC without GPUDirect RDMA, 150 us reported.
  const LogHardware p3dn = network_from_plugin(on("p3dn.24xlarge"), 8);
  EXPECT_NE(std::find(p3dn.sets.begin(), p3dn.sets.end(), "node.nic.gpudirect_rdma=false"), p3dn.sets.end());
  EXPECT_NE(std::find(p3dn.sets.begin(), p3dn.sets.end(), "node.nic.plugin_latency_us=150"), p3dn.sets.end());
  // Not an instance of the table (a g-series, or none printed): EFA and the plugin's devices where they fit.
  DebugFacts efa = on("");
  efa.net_nics_found = 32;
  EXPECT_EQ(network_from_plugin(efa, 8).sets, (std::vector<std::string>{"node.nic.count=32", "node.nic.transport=efa"}));
  efa.net_nic_groups = 8;
  EXPECT_EQ(network_from_plugin(efa, 8).sets, (std::vector<std::string>{"node.nic.count=8", "node.nic.transport=efa"}));
  efa.net_nic_groups = 3;
  EXPECT_EQ(network_from_plugin(efa, 8).sets, (std::vector<std::string>{"node.nic.transport=efa"}));
  // Another provider, or no plugin line: nothing.
  EXPECT_TRUE(network_from_plugin(on("", "tcp"), 8).sets.empty());
  EXPECT_TRUE(network_from_plugin(DebugFacts{}, 8).sets.empty());
}

// The latency the plugin printed that it reports to NCCL wins over its table's where they differ.
TEST(LogNetPlatform, ThePrintedPluginLatency) {
  DebugFacts p4d = on("p4d.24xlarge");
  p4d.net_plugin_latency_us = 75;  // as the table: nothing added
  EXPECT_EQ(network_from_plugin(p4d, 8).sets.size(), 4u);
  DebugFacts p5en = on("p5en.48xlarge");
  p5en.net_plugin_latency_us = 40;
  const LogHardware en = network_from_plugin(p5en, 8);
  EXPECT_NE(std::find(en.sets.begin(), en.sets.end(), "node.nic.plugin_latency_us=40"), en.sets.end());
  EXPECT_EQ(std::find(en.sets.begin(), en.sets.end(), "node.nic.plugin_latency_us=35"), en.sets.end());
  DebugFacts g = on("");  // an EFA host outside the table (g7e's plugin printed 35)
  g.net_plugin_latency_us = 35;
  EXPECT_EQ(network_from_plugin(g, 1).sets,
            (std::vector<std::string>{"node.nic.transport=efa", "node.nic.plugin_latency_us=35"}));
}

// The network NCCL names when it is not InfiniBand's verbs transport.
TEST(LogNetPlatform, TheNetworkNcclNames) {
  DebugFacts d;
  d.net_name = "GPUDirectTCPX_v7";
  EXPECT_EQ(network_from_plugin(d, 8).preset, "gcp-a3-high");
  EXPECT_EQ(network_from_plugin(d, 2).sets, (std::vector<std::string>{"node.nic.transport=tcpx"}));
  d.net_name = "FasTrak";
  EXPECT_EQ(network_from_plugin(d, 8).preset, "gcp-a3-mega");
  d.net_name = "gIB";
  EXPECT_EQ(network_from_plugin(d, 8).sets, (std::vector<std::string>{"node.nic.transport=roce"}));
  // InfiniBand's verbs transport is the presets' own; NCCL's sockets on an RDMA host are its fallback
  // when that path failed, a cause to name rather than hardware to predict with.
  for (const char* name : {"IB", "Socket"}) {
    d.net_name = name;
    const LogHardware h = network_from_plugin(d, 8);
    EXPECT_TRUE(h.preset.empty() && h.sets.empty() && h.why.empty()) << name;
  }
}

// Google's A3 Mega all_reduce with the line NCCL prints when the TCPXO plugin loads ("Using network
// FasTrak", as Google's TCPXO guides quote it): validated without flags on the gcp-a3-mega preset, the
// same prediction as --topology gcp-a3-mega (dgx-h100's InfiniBand otherwise).
TEST(LogNetPlatform, ValidateWithoutTopologyOnATcpxoLogIsTheA3MegaPreset) {
  std::string text = testing::read_text_file(kLogs + "gcp-a3mega-2node-allreduce-8B-8G.txt");
  text.insert(text.find("# nThread"), "a3mega-vm-0:606:642 [0] NCCL INFO Using network FasTrak\n");
  const std::string path = testing::write_temp_file("a3mega-with-nccl-lines.txt", text);
  const auto bare = testing::run_ccsim("validate " + path + " --format csv");
  const auto preset = testing::run_ccsim("validate " + path + " --topology gcp-a3-mega --format csv");
  ASSERT_NE(bare.code, 2) << bare.err;
  EXPECT_NE(bare.out.find("# hardware: --topology gcp-a3-mega (from the log's devices: 8 x NVIDIA H100 80GB HBM3 per host "
                          "on 2 hosts; the network from the log's NCCL lines: FasTrak, GPUDirect-TCPXO;"),
            std::string::npos)
      << bare.out.substr(0, 400);
  EXPECT_EQ(bare.out.substr(bare.out.find("\nfile,")), preset.out.substr(preset.out.find("\nfile,")));
}

// GPUDirect RDMA off in the connection lines is a cause validate names, not hardware to predict with: a
// log whose network connections all lack GDRDMA keeps the preset's GDR, so the gdr-off cause can fire.
TEST(LogNetPlatform, GpuDirectRdmaOffIsNotTakenAsHardware) {
  DebugFacts d;
  d.net_connections = 4;
  EXPECT_TRUE(nics_from_debug(d, 8).sets.empty());
  EXPECT_TRUE(network_from_plugin(d, 8).sets.empty());
}

// The p5 log validated as a new user would, without flags: the aws-p5 preset from the plugin's line,
// the same prediction as `--topology aws-p5` (dgx-h100's InfiniBand before: latency side +176%), and
// its bandwidth side within issue 11's 10% (EFA at the preset's 8 x 400 Gb/s: 466-487 GB/s busbw
// measured at 4-16 GiB).
TEST(LogNetPlatform, ValidateWithoutTopologyOnAP5LogIsTheP5Preset) {
  const std::string log = kLogs + "nccl_debug_2.txt";
  const auto bare = testing::run_ccsim("validate " + log + " --format csv");
  const auto preset = testing::run_ccsim("validate " + log + " --topology aws-p5 --format csv");
  ASSERT_NE(bare.code, 2) << bare.err;
  ASSERT_NE(preset.code, 2) << preset.err;
  EXPECT_NE(bare.out.find("# hardware: --topology aws-p5 (from the log's devices: 8 x NVIDIA H100 80GB HBM3 per host on "
                          "2 hosts; the network from aws-ofi-nccl's lines: p5.48xlarge"),
            std::string::npos)
      << bare.out.substr(0, 400);
  const auto rows = [](const std::string& csv) {
    std::istringstream in(csv);
    std::string line, kept;
    while (std::getline(in, line))
      if (line.rfind("#", 0) != 0) kept += line + "\n";
    return kept;
  };
  EXPECT_EQ(rows(bare.out), rows(preset.out));
  std::istringstream in(bare.out);
  std::string line;
  std::vector<double> bandwidth_errors;
  while (std::getline(in, line)) {
    if (line.find(",bandwidth,") == std::string::npos) continue;
    std::vector<std::string> f;
    std::stringstream cells(line);
    for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
    bandwidth_errors.push_back(std::stod(f.at(7)));
  }
  ASSERT_GE(bandwidth_errors.size(), 5u);
  std::sort(bandwidth_errors.begin(), bandwidth_errors.end());
  EXPECT_LT(std::abs(bandwidth_errors[bandwidth_errors.size() / 2]), 0.10);
}

}  // namespace
}  // namespace ccsim
