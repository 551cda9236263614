// NCCL_DEBUG=INFO log importer: real logs (tests/data/samples/) and broken inputs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "calibrate/nccl_debug_log.h"
#include "common/error.h"

using namespace ccsim;

namespace {

std::string sample(const std::string& name) { return std::string(CCSIM_SOURCE_DIR) + "/tests/data/samples/" + name; }

NcclDebugInfo parse(const std::string& text, const std::string& file = "log.txt") {
  std::istringstream in(text);
  return parse_nccl_debug_log(in, file);
}

void expect_error(const std::string& text, const std::string& part) {
  try {
    parse(text, "bad.log");
    FAIL() << "no error, expected: " << part;
  } catch (const InputError& e) {
    std::string w = e.what();
    EXPECT_EQ(w.rfind("bad.log: ", 0), 0u) << w;
    EXPECT_NE(w.find(part), std::string::npos) << w;
  }
}

}  // namespace

TEST(NcclDebugLog, AwsP5TwoNodesEfaNvls) {
  auto d = parse_nccl_debug_file(sample("nccl_debug_2.txt"));
  // The log itself prints 2.20.3 (the file name of the source says 2.22.3); the log is what counts.
  EXPECT_EQ(d.nccl_version, "2.20.3+cuda12.2");
  EXPECT_EQ(d.nranks, 16);
  EXPECT_EQ(d.nnodes, 2);
  EXPECT_EQ(d.local_ranks, 8);
  EXPECT_EQ(d.num_comms, 1);
  EXPECT_EQ(d.coll_channels, 16);
  EXPECT_EQ(d.collnet_channels, 0);
  EXPECT_EQ(d.nvls_channels, 16);
  EXPECT_EQ(d.p2p_channels, 16);
  EXPECT_EQ(d.p2p_channels_per_peer, 2);
  ASSERT_TRUE(d.nvls_enabled.has_value());
  EXPECT_TRUE(*d.nvls_enabled);
  ASSERT_TRUE(d.collnet_enabled.has_value());
  EXPECT_FALSE(*d.collnet_enabled);
  ASSERT_EQ(d.rings.size(), 16u);
  EXPECT_EQ(d.rings[0], "0 7 6 5 4 3 2 1 9 10 11 12 13 14 15 8");
  EXPECT_EQ(d.rings[15], "0 1 2 3 4 5 6 14 13 12 11 10 9 8 15 7");
  ASSERT_EQ(d.ring_ranks[1].size(), 16u);
  EXPECT_EQ(d.ring_ranks[1][1], 8);
  ASSERT_EQ(d.trees.size(), 16u);  // one Trees line per rank
  EXPECT_EQ(d.trees[0].rfind("[0] 15/-1/-1->14->13 [1] 15/-1/-1->14->13", 0), 0u);
  EXPECT_EQ(d.transport, "AWS Libfabric");
  EXPECT_EQ(d.net_plugin, "aws-ofi-nccl 1.9.2-aws");
  EXPECT_EQ(d.tuner_plugin, "nccl_ofi_tuner");
  ASSERT_EQ(d.gdr_by_nic.size(), 8u);
  EXPECT_TRUE(d.gdr_by_nic.at("AWS Libfabric/0"));
  EXPECT_TRUE(d.gdr_by_nic.at("AWS Libfabric/7"));
  EXPECT_TRUE(d.choices.empty());
  EXPECT_TRUE(d.tuning.empty());
  EXPECT_GT(d.info_lines, 2000);
}

TEST(NcclDebugLog, Rtx5090TuningTableAndChoices) {
  auto d = parse_nccl_debug_file(sample("nccl_debug_5.txt"));
  EXPECT_EQ(d.nccl_version, "2.29.7+cuda12.9");
  EXPECT_EQ(d.nranks, -1);  // TUNING subsystem only
  EXPECT_FALSE(d.nvls_enabled.has_value());
  ASSERT_EQ(d.choices.size(), 72u);  // 73 matches of "Bytes -> Algo" minus the # NOTE: provenance line
  const auto& c0 = d.choices[0];
  EXPECT_EQ(c0.collective, "Broadcast");
  EXPECT_EQ(c0.bytes, 1024u);
  EXPECT_EQ(c0.algorithm, "Ring");
  EXPECT_EQ(c0.protocol, "LL");
  EXPECT_EQ(c0.channels, 1);
  EXPECT_EQ(c0.line, 33);
  EXPECT_EQ(d.choices[4].bytes, 16384u);
  EXPECT_EQ(d.choices[4].channels, 2);
  EXPECT_EQ(d.choices[5].protocol, "Simple");
  EXPECT_EQ(d.choices[7].bytes, 131072u);
  EXPECT_EQ(d.choices[7].channels, 4);
  // 3 blocks: (Tree, Ring, CollNetDirect), (CollNetChain, NVLS, NVLSTree), (PAT) x 5 collectives x 3 protocols.
  ASSERT_EQ(d.tuning.size(), 7u * 5u * 3u);
  auto find = [&](const std::string& coll, const std::string& algo, const std::string& proto) {
    for (const auto& e : d.tuning)
      if (e.collective == coll && e.algorithm == algo && e.protocol == proto) return e;
    ADD_FAILURE() << coll << " " << algo << " " << proto;
    return NcclDebugInfo::TuningEntry{};
  };
  auto b = find("Broadcast", "Ring", "LL");
  EXPECT_DOUBLE_EQ(b.latency_us, 9.3);
  EXPECT_DOUBLE_EQ(b.bandwidth_GBps, 1.2);
  auto a = find("AllReduce", "Tree", "Simple");
  EXPECT_DOUBLE_EQ(a.latency_us, 36.4);
  EXPECT_DOUBLE_EQ(a.bandwidth_GBps, 1.9);
  auto p = find("AllGather", "PAT", "Simple");
  EXPECT_DOUBLE_EQ(p.latency_us, 17.6);
  EXPECT_DOUBLE_EQ(p.bandwidth_GBps, 3.6);
  EXPECT_DOUBLE_EQ(find("AllReduce", "CollNetChain", "Simple").latency_us, 14.0);
}

TEST(NcclDebugLog, OlderFormatsAndIbGdr) {
  const std::string log =
      "host1:100:200 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n"
      "host1:100:200 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB ib0:10.0.0.1<0>\n"
      "host1:100:200 [0] NCCL INFO Using network IB\n"
      "some application output in between\n"
      "host1:100:200 [0] NCCL INFO comm 0x55aa rank 0 nranks 4 cudaDev 0 busId 1000 commId 0xabc - Init START\n"
      "host1:100:200 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'\n"
      "host1:100:200 [0] NCCL INFO GPU Direct RDMA Enabled for GPU 1000 / HCA 0 (distance 4 <= 5), read 0\n"
      "host1:100:200 [0] NCCL INFO Channel 00/02 :    0   1   2   3\n"
      "host1:100:200 [0] NCCL INFO Channel 01/02 :    0   3   2   1\n"
      "host1:100:200 [0] NCCL INFO 2 coll channels, 2 p2p channels, 2 p2p channels per peer\n"
      "host1:100:200 [0] NCCL INFO Channel 00/0 : 3[3] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
      "host1:100:200 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 262144 datatype 7 op 0 root 0 comm 0x55aa [nranks=4] stream 0x3\n"
      "host1:100:200 [0] NCCL INFO 1048576 Bytes -> Algo 1 proto 2 time 28.456001\n"
      "host1:100:200 [0] NCCL INFO AllGather: opCount 1 sendbuff 0x1 recvbuff 0x2 count 1024 datatype 9 op 0 root 0 comm 0x55aa [nranks=4] stream 0x3 algo Ring proto LL nchannels 2\n"
      "host1:100:200 [0] NCCL INFO comm 0x55aa rank 0 nranks 4 cudaDev 0 busId 1000 commId 0xabc - Init COMPLETE\n";
  auto d = parse(log);
  EXPECT_EQ(d.nccl_version, "2.18.5+cuda12.2");
  EXPECT_EQ(d.nranks, 4);
  EXPECT_EQ(d.nnodes, -1);
  EXPECT_EQ(d.num_comms, 1);
  EXPECT_EQ(d.transport, "IB");
  ASSERT_EQ(d.nics.size(), 2u);
  EXPECT_EQ(d.nics[1], "mlx5_1:1/RoCE");
  EXPECT_TRUE(d.gdr_by_nic.at("mlx5_0"));
  EXPECT_FALSE(d.gdr_by_nic.at("mlx5_1"));
  EXPECT_EQ(d.coll_channels, 2);
  EXPECT_EQ(d.nvls_channels, -1);
  EXPECT_EQ(d.p2p_channels, 2);
  ASSERT_EQ(d.rings.size(), 2u);
  EXPECT_EQ(d.rings[1], "0 3 2 1");
  ASSERT_EQ(d.choices.size(), 2u);
  EXPECT_EQ(d.choices[0].collective, "AllReduce");  // from the preceding COLL line of the same thread
  EXPECT_EQ(d.choices[0].bytes, 1048576u);
  EXPECT_EQ(d.choices[0].algorithm, "Ring");
  EXPECT_EQ(d.choices[0].protocol, "Simple");
  EXPECT_DOUBLE_EQ(d.choices[0].time_us, 28.456001);
  EXPECT_EQ(d.choices[0].channels, -1);
  EXPECT_EQ(d.choices[1].collective, "AllGather");
  EXPECT_EQ(d.choices[1].bytes, 2048u);  // 1024 x bfloat16
  EXPECT_EQ(d.choices[1].protocol, "LL");
  EXPECT_EQ(d.choices[1].channels, 2);
}

TEST(NcclDebugLog, BrokenInputs) {
  expect_error("", "no NCCL log lines found");
  expect_error("hello\nworld\n# nThread 1 nGpus 8\n", "no NCCL log lines found");
  // Truncated TUNING row.
  const std::string table =
      "h:1:1 [0] NCCL INFO   Algorithm   |            Tree                  |                            Ring                  |\n"
      "h:1:1 [0] NCCL INFO   Protocol    |   LL |  LL128 |  Simple |  LL |  LL128 |  Simple |\n"
      "h:1:1 [0] NCCL INFO     Broadcast |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |     9.3/   1.2 |    18.0/   0.0 |    22.4/   2.4 |\n"
      "h:1:1 [0] NCCL INFO     AllReduce |    16.8/   0.5 |    31.0/   0.0 |\n";
  expect_error(table, "line 4: TUNING table row 'AllReduce' has 2 cells, expected 6");
  std::string garbled = table.substr(0, table.rfind("h:1:1")) +
                        "h:1:1 [0] NCCL INFO     AllReduce |    16.8/   0.5 |    31.0/   0.0 |    x/ 1 |  1/ 1 |  1/ 1 |  1/ 1 |\n";
  expect_error(garbled, "line 4: TUNING table row 'AllReduce': expected 'latency/ bandwidth', got 'x/ 1'");
  expect_error("h:1:1 [0] NCCL INFO AllReduce: 12ab Bytes -> Algo RING proto LL\n", "line 1: malformed algorithm choice line");
  expect_error("h:1:1 [0] NCCL INFO Broadcast: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={3..1}\n", "line 1: channel range {3..1} is empty");
}
