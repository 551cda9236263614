// NCCL's default tuner (min time over enabled algorithm x protocol), NCCL_ALGO / NCCL_PROTO parsing
// and the explain report, on dgx-h100 with 1, 2 and 32 nodes.
#include <gtest/gtest.h>

#include "algorithms/explain.h"
#include "algorithms/nccl_channels.h"
#include "algorithms/tuner.h"
#include "common/error.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

NcclTopoSummary h100(int nodes) { return summarize_for_nccl(testing::preset("dgx-h100", nodes)); }

std::string pick(const NcclTopoSummary& s, std::uint64_t bytes, const AlgoProtoFilter& f = AlgoProtoFilter()) {
  const TunerChoice c = choose(s, Func::AllReduce, bytes, f);
  return std::string(to_string(c.algo)) + "/" + to_string(c.proto);
}

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

TEST(Tuner, OneNodeH100Choices) {
  const NcclTopoSummary s = h100(1);
  // 8 B: Ring LL 15.0 us (Tree LL 15.2, NVLS 25.0).
  EXPECT_EQ(pick(s, 8), "Ring/LL");
  EXPECT_NEAR(choose(s, Func::AllReduce, 8).time_us, 15.0 + 8 / (1000 * 141.0 * 8 / 14), 1e-9);
  // 64 KiB: Ring LL 15.0 + 65536/80571 = 15.81; NVLS 25 + 0.24 = 25.24.
  EXPECT_EQ(pick(s, 64 * KiB), "Ring/LL");
  // 1 MiB: Ring LL 15.0 + 1048576/(1000 x 80.571) = 28.01 vs NVLS 25 + 1048576/272000 = 28.86.
  EXPECT_EQ(pick(s, 1 * MiB), "Ring/LL");
  // 64 MiB and up: NVLS 25 + S/272000 beats Ring Simple 56 + S/205714 and Ring LL128.
  EXPECT_EQ(pick(s, 64 * MiB), "NVLS/Simple");
  EXPECT_NEAR(choose(s, Func::AllReduce, 64 * MiB).time_us, 25.0 + 67108864.0 / 272000.0, 1e-3);
  EXPECT_EQ(pick(s, 1 * GiB), "NVLS/Simple");
  EXPECT_EQ(pick(s, 16 * GiB), "NVLS/Simple");
  // Without NVLS: Ring Simple at 1 GiB (56 + S/205714 < 40.6 + S/189257).
  EXPECT_EQ(pick(s, 1 * GiB, parse_algo_filter("^NVLS", "", "NCCL_ALGO")), "Ring/Simple");
}

TEST(Tuner, TwoNodeH100Choices) {
  const NcclTopoSummary s = h100(2);
  // 8 B: Tree LL 6.8 + 2 x (7 x .6 + 1 x 5.0) = 25.2 < Ring LL 40.0 < NVLSTree 66.8.
  EXPECT_EQ(pick(s, 8), "Tree/LL");
  // algBw: llMaxBw 39 x .85 (NCCL_TOPO_PATTERN_TREE) x .5.
  EXPECT_NEAR(choose(s, Func::AllReduce, 8).time_us, 25.2 + 8 / (1000 * 39 * .85 * .5), 1e-9);
  EXPECT_EQ(pick(s, 64 * KiB), "Tree/LL");
  EXPECT_EQ(pick(s, 1 * MiB), "Tree/LL128");
  // Large: NVLSTree 66.8 + S/246.19e3 (57.7 x 8 x 16/30).
  EXPECT_EQ(pick(s, 64 * MiB), "NVLSTree/Simple");
  EXPECT_EQ(pick(s, 1 * GiB), "NVLSTree/Simple");
  EXPECT_EQ(pick(s, 16 * GiB), "NVLSTree/Simple");
}

// NVLink SHARP reduces sum of 32/64-bit integers, half, bfloat16, float and double, and min/max of
// the integer and half types, nothing of int8 or fp8 (NCCL's ncclNvlsSupported); for anything else getAlgoInfo leaves NVLS and
// NVLSTree out, so the same 1 GiB all_reduce that runs NVLS in float runs the Ring in int8, prod or
// float max: the time of the "^NVLS" choice above.
TEST(Tuner, NvlsOnlyForTheReductionsNvlinkSharpDoes) {
  EXPECT_EQ(nvls_reduction_unsupported({"float", "sum"}), "");
  EXPECT_EQ(nvls_reduction_unsupported({"bfloat16", "max"}), "");
  EXPECT_EQ(nvls_reduction_unsupported({"int64", "min"}), "");
  EXPECT_NE(nvls_reduction_unsupported({"int8", "sum"}), "");
  EXPECT_NE(nvls_reduction_unsupported({"float", "max"}), "");
  EXPECT_NE(nvls_reduction_unsupported({"half", "prod"}), "");
  EXPECT_NE(nvls_reduction_unsupported({"double", "avg"}), "");
  EXPECT_NE(nvls_reduction_unsupported({"f8e4m3", "sum"}), "");
  EXPECT_NE(nvls_reduction_unsupported({"f8e5m2", "max"}), "");

  const NcclTopoSummary one = h100(1);
  const AlgoProtoFilter all;
  const double ring_time = choose(one, Func::AllReduce, 1 * GiB, parse_algo_filter("^NVLS", "", "NCCL_ALGO")).time_us;
  EXPECT_EQ(choose(one, Func::AllReduce, 1 * GiB, all, {"float", "sum"}).algo, Algo::NVLS);
  for (const ReduceOperand& o : std::vector<ReduceOperand>{{"int8", "sum"}, {"float", "prod"}, {"float", "max"}}) {
    const TunerChoice c = choose(one, Func::AllReduce, 1 * GiB, all, o);
    EXPECT_EQ(c.algo, Algo::Ring) << o.datatype << " " << o.op;
    EXPECT_DOUBLE_EQ(c.time_us, ring_time);
  }
  // On 2 nodes NVLSTree goes too; all_gather does not reduce and keeps its NVLS rows.
  EXPECT_NE(choose(h100(2), Func::AllReduce, 1 * GiB, all, {"uint8", "sum"}).algo, Algo::NVLSTree);
  const TunerChoice ag = choose(one, Func::AllGather, 1 * GiB, all, {"int8", "sum"});
  for (const AlgoProtoCost& r : ag.table) {
    if (r.algo == Algo::NVLS) {
      EXPECT_EQ(r.why_disabled.find("NVLink SHARP"), std::string::npos) << r.why_disabled;
    }
  }
  // explain says why (the communicator's table keeps NVLS: NCCL computes it once for every operation).
  const std::string report = explain_report(one, Func::AllReduce, 1 * GiB, all, {"int8", "sum"});
  EXPECT_NE(report.find("disabled: NVLink SHARP does not reduce sum of int8"), std::string::npos) << report;
  EXPECT_NE(report.find("Choice: Ring/Simple"), std::string::npos) << report;
  // Forcing NVLS on int8 leaves nothing, and says why.
  try {
    choose(one, Func::AllReduce, 1 * GiB, parse_algo_filter("NVLS", "", "NCCL_ALGO"), {"int8", "sum"});
    ADD_FAILURE() << "NVLS on int8 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not reduce sum of int8"), std::string::npos) << e.what();
  }
}

TEST(Tuner, ThirtyTwoNodeH100Choices) {
  const NcclTopoSummary s = h100(32);
  EXPECT_EQ(pick(s, 8), "Tree/LL");
  EXPECT_EQ(pick(s, 64 * KiB), "Tree/LL");
  EXPECT_EQ(pick(s, 1 * MiB), "Tree/LL128");
  EXPECT_EQ(pick(s, 64 * MiB), "NVLSTree/Simple");
  EXPECT_EQ(pick(s, 1 * GiB), "NVLSTree/Simple");
  // 16 GiB: Ring Simple 2399.6 x 1.4 + S/192.75e3 = 92488 us beats NVLSTree 234 + S/182.71e3 = 94263 us:
  // per-channel bwInter 48 x 8 ch x 256/510 (ring) vs 45.5 x 8 x 256/510 (NVLSTree cap).
  EXPECT_EQ(pick(s, 16 * GiB), "Ring/Simple");
}

TEST(Tuner, ForcingRingOn32NodesAtSmallSizes) {
  // The seed document claims forcing Ring on 32 nodes at small sizes is 4-7x slower than Tree.
  // NCCL's model gives: 8 B Ring LL 622.0 us vs Tree LL 65.2 us = 9.5x; at 64 KiB Ring LL
  // 622 + 65536/10240 = 628.4 vs Tree LL 65.2 + 65536/(6.12e3) = 75.9 -> 8.3x.
  const NcclTopoSummary s = h100(32);
  const AlgoProtoFilter ring = parse_algo_filter("Ring", "", "NCCL_ALGO");
  for (std::uint64_t b : {std::uint64_t{8}, 64 * KiB}) {
    const double tr = choose(s, Func::AllReduce, b, ring).time_us;
    const double tt = choose(s, Func::AllReduce, b).time_us;
    EXPECT_EQ(choose(s, Func::AllReduce, b).algo, Algo::Tree);
    EXPECT_GT(tr / tt, 7.0) << b;
    EXPECT_LT(tr / tt, 10.0) << b;
  }
  EXPECT_NEAR(choose(s, Func::AllReduce, 8, ring).time_us / choose(s, Func::AllReduce, 8).time_us, 622.0 / 65.2, 1e-3);
}

// NCCL's search pass 2 for trees (search.cc): bwIntra alone climbs the inter-node speed array, bwInter
// fixed, while the ring's channels fit the node's links and bwIntra < 2 x bwInter.
TEST(Tuner, TreeGraphRaisesBwIntraOnSeveralNodesOnly) {
  const NcclTopoSummary one = h100(1);
  EXPECT_DOUBLE_EQ(one.tree.bwIntra, one.ring.bwIntra);  // one node: the ring's graph
  // A3 Mega: ring 8 ch x 24 GB/s (a 200 Gb/s NIC per GPU); the tree climbs 30, 40, 42, 45, 48 and
  // stops at 2 x 24. NVLink would take more: 8 x 48 = 384 <= 18 x 20.6 x 8/7 = 423.8.
  const NcclTopoSummary mega = summarize_for_nccl(testing::preset("gcp-a3-mega", 2));
  EXPECT_EQ(mega.ring.nChannels, 8);
  EXPECT_DOUBLE_EQ(mega.ring.bwInter, 24.0);
  EXPECT_DOUBLE_EQ(mega.tree.bwInter, 24.0);
  EXPECT_DOUBLE_EQ(mega.tree.bwIntra, 48.0);
  // hgx-a100 on 2 nodes: 8 ch x 24; 30 fits NVLink (8 x 30 = 240 <= 12 x 20 x 8/7 = 274.3), 40 does not.
  const NcclTopoSummary a100 = summarize_for_nccl(testing::preset("hgx-a100", 2));
  EXPECT_EQ(a100.ring.nChannels, 8);
  EXPECT_DOUBLE_EQ(a100.tree.bwIntra, 30.0);
  // Tree/Simple's ceiling there (perChMaxTreeBw, Ampere, 2 nodes: 8 x 23.6 = 188.8 busBw, algBw 94.4)
  // stays below Ring/Simple's 8 x 24 x 16/30 = 102.4: Ring keeps large sizes.
  EXPECT_EQ(pick(a100, 4 * GiB), "Ring/Simple");
}

TEST(Tuner, ParseFilters) {
  AlgoProtoFilter f = parse_algo_filter("^NVLS", "", "NCCL_ALGO");
  EXPECT_FALSE(f.allows(Func::AllReduce, Algo::NVLS, Proto::Simple));
  EXPECT_TRUE(f.allows(Func::AllReduce, Algo::Ring, Proto::Simple));
  f = parse_algo_filter("Ring,Tree", "", "--algo");
  EXPECT_TRUE(f.allows(Func::AllReduce, Algo::Tree, Proto::LL));
  EXPECT_FALSE(f.allows(Func::AllReduce, Algo::NVLS, Proto::Simple));
  f = parse_algo_filter("", "ll128", "--proto");
  EXPECT_TRUE(f.allows(Func::AllReduce, Algo::Ring, Proto::LL128));
  EXPECT_FALSE(f.allows(Func::AllReduce, Algo::Ring, Proto::Simple));
  f = parse_algo_filter("^nvls,TREE", "Simple", "NCCL_ALGO");
  EXPECT_FALSE(f.allows(Func::AllReduce, Algo::Tree, Proto::Simple));
  EXPECT_TRUE(f.allows(Func::AllReduce, Algo::Ring, Proto::Simple));
  EXPECT_FALSE(f.allows(Func::AllReduce, Algo::Ring, Proto::LL));
  // Per-function entries.
  f = parse_algo_filter("Ring;AllReduce:Tree", "", "NCCL_ALGO");
  EXPECT_TRUE(f.allows(Func::AllGather, Algo::Ring, Proto::Simple));
  EXPECT_FALSE(f.allows(Func::AllReduce, Algo::Ring, Proto::Simple));
  EXPECT_TRUE(f.allows(Func::AllReduce, Algo::Tree, Proto::Simple));
  // Invalid names list the valid ones.
  try {
    parse_algo_filter("Rign", "", "NCCL_ALGO");
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("NCCL_ALGO"), std::string::npos);
    EXPECT_NE(m.find("Rign"), std::string::npos);
    EXPECT_NE(m.find("Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT"), std::string::npos);
  }
  try {
    parse_algo_filter("", "LL256", "--proto");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("LL, LL128, Simple"), std::string::npos);
  }
  EXPECT_THROW(parse_algo_filter("Ring;Tree", "", "NCCL_ALGO"), InputError);      // 2nd entry lacks prefix
  EXPECT_THROW(parse_algo_filter("AllToAll:Ring", "", "NCCL_ALGO"), InputError);  // bad prefix
}

TEST(Tuner, UnsupportedCombinationsSayWhy) {
  // NVLS on a node without NVSwitch.
  const NcclTopoSummary pcie = summarize_for_nccl(testing::preset("pcie-gen4-8gpu", 1));
  try {
    choose(pcie, Func::AllReduce, MiB, parse_algo_filter("NVLS", "", "--algo"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("NVSwitch"), std::string::npos) << e.what();
  }
  // LL128 where NCCL disables it (PCIe intra-node path).
  try {
    choose(pcie, Func::AllReduce, MiB, parse_algo_filter("", "LL128", "--proto"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("LL128"), std::string::npos) << e.what();
  }
  // CollNet without a SHARP fabric.
  try {
    choose(h100(2), Func::AllReduce, MiB, parse_algo_filter("CollNetDirect,CollNetChain", "", "--algo"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("CollNet (SHARP)"), std::string::npos) << e.what();
  }
  // PAT with more than one GPU per node.
  try {
    choose(h100(2), Func::AllGather, MiB, parse_algo_filter("PAT", "", "--algo"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("one GPU per node"), std::string::npos) << e.what();
  }
  // Tree does not implement AllGather.
  EXPECT_THROW(choose(h100(1), Func::AllGather, MiB, parse_algo_filter("Tree", "", "--algo")), InputError);
  // NVLSTree on a single node.
  EXPECT_THROW(choose(h100(1), Func::AllReduce, MiB, parse_algo_filter("NVLSTree", "", "--algo")), InputError);
  // LL128 on NVLink H100 is fine.
  EXPECT_EQ(choose(h100(1), Func::AllReduce, MiB, parse_algo_filter("", "LL128", "--proto")).proto, Proto::LL128);
}

TEST(Tuner, CollNetFabricEnablesCollNet) {
  const NcclTopoSummary s = summarize_for_nccl(testing::preset("dgx-h100", 4), true);
  EXPECT_TRUE(s.collnet);
  const TunerChoice c = choose(s, Func::AllReduce, GiB, parse_algo_filter("CollNetDirect", "", "--algo"));
  EXPECT_EQ(c.algo, Algo::CollNetDirect);
  EXPECT_GT(c.time_us, 0);
}

TEST(Tuner, ExplainReport) {
  const std::string r = explain_report(h100(1), Func::AllReduce, 64 * MiB);
  EXPECT_NE(r.find("NCCL 2.30.7 constants"), std::string::npos);
  EXPECT_NE(r.find("Choice: NVLS/Simple"), std::string::npos);
  EXPECT_NE(r.find("   15.0/  80.6 |"), std::string::npos);  // Ring LL AllReduce, NCCL's %8.1f/%6.1f
  EXPECT_NE(r.find("   25.0/ 272.0 |"), std::string::npos);  // NVLS
  EXPECT_NE(r.find("Enabled (AllReduce)"), std::string::npos);
  EXPECT_NE(r.find("12 ch x  30.00"), std::string::npos);
  EXPECT_THROW(explain_report(h100(1), Func::AllReduce, 8, parse_algo_filter("NVLSTree", "", "--algo")), InputError);
}

}  // namespace
}  // namespace ccsim
