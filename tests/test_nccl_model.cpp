// NCCL 2.30.7 cost model: hand-worked numbers (formula -> numbers) checked against nccl_costs and
// summarize_for_nccl on the dgx-h100 preset.
#include <gtest/gtest.h>

#include "algorithms/nccl_channels.h"
#include "algorithms/nccl_model.h"
#include "common/error.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

const AlgoProtoCost& row(const std::vector<AlgoProtoCost>& t, Algo a, Proto p) { return t[cost_index(a, p)]; }

NcclTopoSummary h100(int nodes) { return summarize_for_nccl(testing::preset("dgx-h100", nodes)); }

TEST(NcclChannels, H100SingleNodeGraphs) {
  const NcclTopoSummary s = h100(1);
  // NVLink: 18 links x SM90_NVLINK_BW 20.6 = 370.8 GB/s per GPU. Ring search (sm90 intra speeds):
  // 60 -> floor(370.8/60) = 6 ch (360 < 370.8, not optimal); 50 -> 7 (350); 40 -> 9 (360, not
  // better); 30 -> 12 (360, not better); 24/60 < .49 stop => 6 x 60. Dup (60 >= 50) => 12 x 30.
  // Pass 2: 40 x 12 = 480 > 370.8, no.
  EXPECT_EQ(s.ring.nChannels, 12);
  EXPECT_DOUBLE_EQ(s.ring.bwIntra, 30.0);
  EXPECT_EQ(s.ring.typeIntra, NcclPath::Nvl);
  EXPECT_EQ(s.tree.nChannels, 12);
  // connect.cc: 2 x 12 = 24 coll channels; 16 NVLS channels (sm90).
  EXPECT_EQ(s.coll_channels, 24);
  EXPECT_EQ(s.nvls_channels, 16);
  // NVLS: 8 channels forced (one node), (8+1) x s <= 370.8 -> s = 40; pass 2 raises bwInter 50, 60.
  EXPECT_EQ(s.nvls_graph.nChannels, 8);
  EXPECT_DOUBLE_EQ(s.nvls_graph.bwIntra, 40.0);
  EXPECT_DOUBLE_EQ(s.nvls_graph.bwInter, 60.0);
  EXPECT_TRUE(s.nvls);
  EXPECT_EQ(s.arch, ArchIndex::Hopper);
}

TEST(NcclChannels, H100MultiNodeGraphs) {
  const NcclTopoSummary s = h100(4);
  // GPU->NET: min(NIC 400 Gb/s = 50, PCIe Gen5 x16 = 16*240/80 = 48) = 48. Ring (sm90 inter speeds):
  // 48 -> min(8 NICs x 1, floor(370.8*8/(7*48)) = 8) = 8 ch; 8 x 48 = 384 >= 370.8 optimal.
  // No dup (sm > 80, 48 < 50, 8 > 4). comm: 2 x 8 = 16; the sm90 multi-node doubling (bwIntra 48 >
  // 45) applies only below 16 channels (connect.cc "nChannels < 16"), so 16, as NCCL 2.20's 2-node
  // p5 debug log prints (tests/data/nccl-tests/nccl_debug_2.txt: "16 coll channels").
  EXPECT_EQ(s.ring.nChannels, 8);
  EXPECT_DOUBLE_EQ(s.ring.bwInter, 48.0);
  EXPECT_EQ(s.ring.typeInter, NcclPath::Pix);
  EXPECT_EQ(s.coll_channels, 16);
  // NVLS with NET: 48 -> 6 ch, 45 -> 7, 42 -> 7, 40 -> 8 ((8+1)x40 = 360): 8 x 40; bwInter -> 48.
  EXPECT_EQ(s.nvls_graph.nChannels, 8);
  EXPECT_DOUBLE_EQ(s.nvls_graph.bwIntra, 40.0);
  EXPECT_DOUBLE_EQ(s.nvls_graph.bwInter, 48.0);
}

// GPUDirect-TCPX's plugin reports NCCL_NET_DEVICE_UNPACK, and connect.cc doubles the collective
// channels once more below 16 on several nodes: gcp-a3-high's 4 NICs give a 4-channel ring graph,
// 2 x 4 = 8 coll channels, doubled to 16. TCPXO's plugin (not public) keeps NCCL's host device: 8.
TEST(NcclChannels, UnpackNetDeviceDoublesBelowSixteen) {
  const NcclTopoSummary tcpx = summarize_for_nccl(testing::preset("gcp-a3-high", 2));
  EXPECT_EQ(tcpx.ring.nChannels, 4);
  EXPECT_EQ(tcpx.coll_channels, 16);
  const NcclTopoSummary tcpxo =
      summarize_for_nccl(testing::preset("gcp-a3-high", 2, {"node.nic.transport=tcpxo"}));
  EXPECT_EQ(tcpxo.coll_channels, 8);
  // One node never crosses the network: no doubling (2 x 12 ring channels on NVLink).
  EXPECT_EQ(summarize_for_nccl(testing::preset("gcp-a3-high", 1)).coll_channels, 24);
}

TEST(NcclModel, WorkedExampleOneNodeH100AllReduce) {
  const auto t = nccl_costs(h100(1), Func::AllReduce, 1 << 20);
  // nsteps = 2(8-1) = 14; busBw = 12 x 30 = 360; ring ratio 8/14.
  // Ring LL: lat 6.6 + 14 x 0.6 = 15.0; bw min(llMaxBw[Hopper][N1] 141, 360 x .5) x 8/14 = 80.57.
  EXPECT_NEAR(row(t, Algo::Ring, Proto::LL).latency_us, 15.0, 1e-9);
  EXPECT_NEAR(row(t, Algo::Ring, Proto::LL).bw_GBps, 141.0 * 8 / 14, 1e-9);
  // Ring LL128: lat 14 + 14 x 1.9 = 40.6; bw min(360 x .92 = 331.2, 12 x 36.7) x 8/14 = 189.26.
  EXPECT_NEAR(row(t, Algo::Ring, Proto::LL128).latency_us, 40.6, 1e-9);
  EXPECT_NEAR(row(t, Algo::Ring, Proto::LL128).bw_GBps, 331.2 * 8 / 14, 1e-9);
  // Ring Simple: lat 8.4 + 14 x 3.4 = 56.0; bw 360 x 8/14 = 205.71.
  EXPECT_NEAR(row(t, Algo::Ring, Proto::Simple).latency_us, 56.0, 1e-9);
  EXPECT_NEAR(row(t, Algo::Ring, Proto::Simple).bw_GBps, 205.714, 1e-3);
  // Tree: busBw min(360 x .92 = 331.2, 12 x 38.7 = 464.4) = 331.2; ratio .5.
  // Tree LL: lat 6.8 + 2 x 7 x .6 = 15.2; bw min(331.2/3.8 = 87.16, 141) x .5 = 43.58.
  EXPECT_NEAR(row(t, Algo::Tree, Proto::LL).latency_us, 15.2, 1e-9);
  EXPECT_NEAR(row(t, Algo::Tree, Proto::LL).bw_GBps, 43.58, 0.01);
  // Tree LL128: lat 14 + 2 x 7 x 1.25 = 31.5; bw min(331.2 x 7/9 = 257.6, 12 x 36.7) x .5 = 128.8.
  EXPECT_NEAR(row(t, Algo::Tree, Proto::LL128).latency_us, 31.5, 1e-9);
  EXPECT_NEAR(row(t, Algo::Tree, Proto::LL128).bw_GBps, 128.8, 1e-9);
  // Tree Simple: lat 8.4 + 2 x 7 x 4.0 = 64.4; bw 331.2 x .5 = 165.6.
  EXPECT_NEAR(row(t, Algo::Tree, Proto::Simple).latency_us, 64.4, 1e-9);
  EXPECT_NEAR(row(t, Algo::Tree, Proto::Simple).bw_GBps, 165.6, 1e-9);
  // NVLS: intraBw = 40 x .85 x 7/8 x 2 = 59.5, interBw 60 -> 59.5; busBw 8 x 59.5 = 476;
  // algBw 476 x 8/14 = 272.0; lat = hwLat[NVLINK][NVLS][Simple] = 25 (no baseLat).
  EXPECT_NEAR(row(t, Algo::NVLS, Proto::Simple).latency_us, 25.0, 1e-9);
  EXPECT_NEAR(row(t, Algo::NVLS, Proto::Simple).bw_GBps, 272.0, 1e-9);
  EXPECT_TRUE(row(t, Algo::NVLS, Proto::Simple).enabled);
  // NVLSTree disabled on one node, NVLS has no LL/LL128, CollNet absent, PAT not for AllReduce.
  EXPECT_FALSE(row(t, Algo::NVLSTree, Proto::Simple).enabled);
  EXPECT_FALSE(row(t, Algo::NVLS, Proto::LL).applicable);
  EXPECT_FALSE(row(t, Algo::CollNetDirect, Proto::Simple).enabled);
  EXPECT_FALSE(row(t, Algo::PAT, Proto::Simple).applicable);
  // LL128 enabled on NVLink + PIX, sm90.
  EXPECT_TRUE(row(t, Algo::Ring, Proto::LL128).enabled);
}

TEST(NcclModel, TimeFormulaTreeCorrectionAndPlateau) {
  // One node, 1 MiB: logSize = log2(2^20 >> 6) = 14; treeCorrectionFactor[Simple][14] = .5.
  const auto t1 = nccl_costs(h100(1), Func::AllReduce, 1 << 20);
  const auto& ts = row(t1, Algo::Tree, Proto::Simple);
  EXPECT_NEAR(ts.eff_bw_GBps, 165.6 * .5, 1e-9);
  EXPECT_NEAR(ts.time_us, 64.4 + 1048576 / (1000 * 82.8), 1e-6);
  // Ring Simple on 2 nodes (16 ranks, 32 coll channels): 1 MiB / (32 x 16) = 2048 >= 64 -> lat x1.4.
  // lat = 8.4 + (30-2) x max(3.4, 3 x 1.0) + 2 x 14 = 131.6; x1.4 = 184.24.
  const auto t2 = nccl_costs(h100(2), Func::AllReduce, 1 << 20);
  const auto& rs = row(t2, Algo::Ring, Proto::Simple);
  EXPECT_NEAR(rs.latency_us, 131.6, 1e-9);
  EXPECT_NEAR(rs.eff_latency_us, 131.6 * 1.4, 1e-9);
  // At 8 B: 8 / 512 = 0 < 64 -> no plateau.
  EXPECT_NEAR(row(nccl_costs(h100(2), Func::AllReduce, 8), Algo::Ring, Proto::Simple).eff_latency_us, 131.6, 1e-9);
}

TEST(NcclModel, MultiNodeLatencies) {
  // 32 nodes x 8: Tree LL = 6.8 + 2 x ((8-1) x .6 + log2(32) x 5.0) = 6.8 + 2 x (4.2 + 25) = 65.2.
  const auto t = nccl_costs(h100(32), Func::AllReduce, 8);
  EXPECT_NEAR(row(t, Algo::Tree, Proto::LL).latency_us, 65.2, 1e-9);
  // Ring LL: nsteps 2 x 255 = 510, nInterSteps 2 x 31 = 62, intraLat max(.6, netOverhead 1) = 1,
  // interLat 2.7: 6.6 + 448 x 1 + 62 x 2.7 = 622.0.
  EXPECT_NEAR(row(t, Algo::Ring, Proto::LL).latency_us, 622.0, 1e-9);
  // NVLSTree: 0 + 25 + 2 x 5 x 20.9 = 234.0; bw min(59.5, 48, perChMaxNVLSTreeBw N4 45.5) x 8 x 256/510.
  EXPECT_NEAR(row(t, Algo::NVLSTree, Proto::Simple).latency_us, 234.0, 1e-9);
  EXPECT_NEAR(row(t, Algo::NVLSTree, Proto::Simple).bw_GBps, 45.5 * 8 * 256 / 510, 1e-9);
  // 2 nodes NVLSTree: interBw 48 x 2 = 96, min(59.5, 96, 57.7) = 57.7; lat 25 + 2 x 1 x 20.9 = 66.8.
  const auto t2 = nccl_costs(h100(2), Func::AllReduce, 8);
  EXPECT_NEAR(row(t2, Algo::NVLSTree, Proto::Simple).latency_us, 66.8, 1e-9);
  EXPECT_NEAR(row(t2, Algo::NVLSTree, Proto::Simple).bw_GBps, 57.7 * 8 * 16 / 30, 1e-9);
  // Tree LL on 2 nodes: llMaxBw[Intel row 0][N2] = 39 caps 331.2/3.8, then x .85 for the tree graph's
  // NCCL_TOPO_PATTERN_TREE (one NIC per GPU: no balanced tree), algBw x .5: 16.575.
  EXPECT_NEAR(row(t2, Algo::Tree, Proto::LL).bw_GBps, 39 * .85 * .5, 1e-9);
  // NVLS across nodes needs CollNet.
  EXPECT_FALSE(row(t2, Algo::NVLS, Proto::Simple).enabled);
}

TEST(NcclModel, OtherFunctions) {
  const NcclTopoSummary s = h100(1);
  // AllGather ring: nsteps 7; Simple lat 8.4 + 7 x 3.4 = 32.2; bw 360 x 8/7 = 411.43.
  const auto ag = nccl_costs(s, Func::AllGather, 1 << 20);
  EXPECT_NEAR(row(ag, Algo::Ring, Proto::Simple).latency_us, 32.2, 1e-9);
  EXPECT_NEAR(row(ag, Algo::Ring, Proto::Simple).bw_GBps, 360.0 * 8 / 7, 1e-9);
  // NVLS AllGather: 40 x .85 x 7/8 x 7/8 = 26.03 per channel, x 8 = 208.25 busBw, kept as is.
  EXPECT_NEAR(row(ag, Algo::NVLS, Proto::Simple).bw_GBps, 40 * .85 * 7 / 8 * 7 / 8 * 8, 1e-9);
  EXPECT_FALSE(row(ag, Algo::Tree, Proto::Simple).applicable);
  // Broadcast ring, same channels: lat 8.4 + 3.4 = 11.8; bw 360 x 8/8.
  const auto bc = nccl_costs(s, Func::Broadcast, 1 << 20);
  EXPECT_NEAR(row(bc, Algo::Ring, Proto::Simple).latency_us, 11.8, 1e-9);
  EXPECT_NEAR(row(bc, Algo::Ring, Proto::Simple).bw_GBps, 360.0, 1e-9);
}

TEST(NcclModel, ChannelAndThreadReduction) {
  const NcclTopoSummary s = h100(1);
  int nc = 0, nt = 0;
  // Ring LL, 8 B: threshold 8 x nRanks = 64; nc drops to 1, nt halves 512 -> 256 -> 128 -> 64 (64 % 128 != 0);
  // then nt >= 3 warps -> 96.
  nccl_channels_threads(s, Algo::Ring, Proto::LL, 8, &nc, &nt);
  EXPECT_EQ(nc, 1);
  EXPECT_EQ(nt, 96);
  // Ring Simple, 64 MiB: 24 x 512 x 64 = 786432 < 64 MiB: no reduction; +1 warp = 544.
  nccl_channels_threads(s, Algo::Ring, Proto::Simple, 64u << 20, &nc, &nt);
  EXPECT_EQ(nc, 24);
  EXPECT_EQ(nt, 544);
  // NVLS always nvlsChannels (16) x 640; Tree always 640 threads.
  nccl_channels_threads(s, Algo::NVLS, Proto::Simple, 8, &nc, &nt);
  EXPECT_EQ(nc, 16);
  EXPECT_EQ(nt, 640);
  nccl_channels_threads(s, Algo::Tree, Proto::LL, 8, &nc, &nt);
  EXPECT_EQ(nt, 640);
}

TEST(NcclModel, PcieNodeDisablesLL128AndNvls) {
  const NcclTopoSummary s = summarize_for_nccl(testing::preset("pcie-gen4-8gpu", 1));
  EXPECT_FALSE(s.nvls);
  EXPECT_NE(s.ring.typeIntra, NcclPath::Nvl);
  const auto t = nccl_costs(s, Func::AllReduce, 1 << 20);
  EXPECT_FALSE(row(t, Algo::Ring, Proto::LL128).enabled);
  EXPECT_NE(row(t, Algo::Ring, Proto::LL128).why_disabled.find("LL128"), std::string::npos);
  EXPECT_FALSE(row(t, Algo::NVLS, Proto::Simple).applicable);
  EXPECT_TRUE(row(t, Algo::Ring, Proto::Simple).enabled);
}

TEST(NcclModel, PatOnlyOneGpuPerNode) {
  const NcclTopoSummary s = summarize_for_nccl(build_topology(testing::single_gpu_nodes_spec(8, 8, 1.0), "t"));
  EXPECT_EQ(s.ppn, 1);
  const auto t = nccl_costs(s, Func::AllGather, 1 << 20);
  const auto& pat = row(t, Algo::PAT, Proto::Simple);
  EXPECT_TRUE(pat.applicable);
  // ppn 1 -> interLat uses Tree's NET hwLat (14); lat = 8 + log2(8) x 14/3.5 + 8 x 2.8 = 8 + 12 + 22.4.
  EXPECT_NEAR(pat.latency_us, 42.4, 1e-9);
  const auto t8 = nccl_costs(h100(2), Func::AllGather, 1 << 20);
  EXPECT_FALSE(row(t8, Algo::PAT, Proto::Simple).applicable);
}

TEST(NcclModel, BusBandwidthCeilingsByHand) {
  // NCCL 2.30 tables, Hopper, Intel host (llMaxBws' multi-node row 0): graph channels x per-channel cap.
  const NcclTopoSummary two = h100(2), many = h100(32), one = h100(1);
  ASSERT_EQ(two.tree.nChannels, 8);
  ASSERT_EQ(many.tree.nChannels, 8);
  // Tree: perChMaxTreeBws H {38.7, 41.4, 36}; LL: min with llMaxBws row 0 {39, 39, 20.4};
  // LL128: min with perChMaxTreeLL128Bws H {36.7, 36.7, 29.0}.
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(two, Func::AllReduce, Algo::Tree, Proto::Simple), 8 * 41.4);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(two, Func::AllReduce, Algo::Tree, Proto::LL), 39.0);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(two, Func::AllReduce, Algo::Tree, Proto::LL128), 8 * 36.7);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(many, Func::AllReduce, Algo::Tree, Proto::Simple), 8 * 36.0);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(many, Func::AllReduce, Algo::Tree, Proto::LL), 20.4);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(many, Func::AllReduce, Algo::Tree, Proto::LL128), 8 * 29.0);
  // NVLSTree: perChMaxNVLSTreeBws H {0, 57.7, 45.5} x the NVLS graph's channels; none on one node.
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(two, Func::AllReduce, Algo::NVLSTree, Proto::Simple), 8 * 57.7);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(many, Func::AllReduce, Algo::NVLSTree, Proto::Simple), 8 * 45.5);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(one, Func::AllReduce, Algo::NVLSTree, Proto::Simple), 0.0);
  // Ring: llMaxBws for LL (one node: the arch row, Hopper 141), perChMaxRingLL128Bws for LL128;
  // Simple: one block's rate, Hopper's one-node perChMaxTreeBw 38.7, on each of the 16 coll
  // channels that run (above the 8 x 48 the links carry: it binds only with fewer channels).
  // No ceiling for Tree outside all_reduce.
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(one, Func::AllGather, Algo::Ring, Proto::LL), 141.0);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(two, Func::AllReduce, Algo::Ring, Proto::LL128), two.ring.nChannels * 36.7);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(two, Func::AllReduce, Algo::Ring, Proto::Simple), 16 * 38.7);
  EXPECT_DOUBLE_EQ(nccl_busbw_ceiling_GBps(two, Func::Broadcast, Algo::Tree, Proto::Simple), 0.0);
}

TEST(NcclModel, FuncNames) {
  EXPECT_EQ(func_from_collective("all_reduce"), Func::AllReduce);
  EXPECT_EQ(func_from_collective("AllGather"), Func::AllGather);
  EXPECT_EQ(func_from_collective("reduce_scatter"), Func::ReduceScatter);
  EXPECT_EQ(func_from_collective("broadcast"), Func::Broadcast);
  EXPECT_THROW(func_from_collective("alltoall"), InputError);
  EXPECT_EQ(nccl_log2i(0), -1);
  EXPECT_EQ(nccl_log2i(1), 0);
  EXPECT_EQ(nccl_log2i(1 << 14), 14);
  EXPECT_NEAR(nccl_pci_bw_from_link(63.015e9), 48.0, 0.01);
}

}  // namespace
}  // namespace ccsim
