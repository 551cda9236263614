// --nccl-version: the tuner constants of older NCCL releases (algorithms/nccl_versions.h). Every
// expected number is computed here by hand from the constants of the release's src/graph/tuning.cc
// (docs/nccl-model.md "NCCL versions"), on dgx-h100's graphs as docs/nccl-model.md derives them:
// one node Ring/Tree 12 ch x 30 GB/s, NVLS 8 ch x 40/60; two nodes Ring/Tree 8 ch x 48, NVLS 8 ch x 40/48.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "algorithms/nccl_channels.h"
#include "algorithms/tuner.h"
#include "cli_runner.h"
#include "common/error.h"
#include "scenarios/run_results.h"
#include "scenarios/scenario.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

NcclTopoSummary h100(int nodes, const std::string& version = "") {
  NcclTopoSummary s = summarize_for_nccl(testing::preset("dgx-h100", nodes));
  if (!version.empty()) s.nccl_version = parse_nccl_version(version, "test");
  return s;
}

std::string pick(const NcclTopoSummary& s, std::uint64_t bytes, Func f = Func::AllReduce) {
  const TunerChoice c = choose(s, f, bytes);
  return std::string(to_string(c.algo)) + "/" + to_string(c.proto);
}

const AlgoProtoCost& row(const std::vector<AlgoProtoCost>& rows, Algo a, Proto p) { return rows[cost_index(a, p)]; }

TEST(NcclVersions, ParsesVersionsAndNamesTheirRange) {
  const NcclVersion a = parse_nccl_version("2.19", "--nccl-version");
  EXPECT_EQ(a.label(), "NCCL 2.19");
  EXPECT_EQ(a.range(), "2.19-2.21");
  EXPECT_EQ(parse_nccl_version("2.22.3", "x").range(), "2.22");
  const NcclVersion b = parse_nccl_version("2.19.4+cuda12.2", "log");  // as NCCL prints it
  EXPECT_EQ(b.label(), "NCCL 2.19.4");
  EXPECT_EQ(b.tuner, a.tuner);
  EXPECT_EQ(parse_nccl_version("2.26.2", "x").range(), "2.23-2.26");
  EXPECT_EQ(parse_nccl_version("2.29.2", "x").tuner, default_nccl_version().tuner);
  EXPECT_EQ(default_nccl_version().label(), kNcclModelVersion);
  EXPECT_EQ(supported_nccl_versions(), "2.19-2.30");
  for (const char* bad : {"2.8.3", "2.18", "2.31", "3.0", "1.19"}) {
    try {
      parse_nccl_version(bad, "--nccl-version");
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(e.where(), "--nccl-version");
      EXPECT_NE(std::string(e.what()).find("outside the tuner versions ccsim models (2.19-2.30"), std::string::npos) << e.what();
    }
  }
  for (const char* bad : {"", "2", "2.", "x.19", "2.19.", "2.19.4a", "2.19-2.22", "v2.19"})
    EXPECT_THROW(parse_nccl_version(bad, "--nccl-version"), InputError) << bad;
}

TEST(NcclVersions, DefaultIs230AndExplicit230ChangesNothing) {
  const NcclTopoSummary d = h100(2), v = h100(2, "2.30.7"), w = h100(2, "2.27");
  for (std::uint64_t b : {std::uint64_t{8}, 1 * MiB, 64 * MiB}) {
    const auto rd = nccl_costs(d, Func::AllReduce, b), rv = nccl_costs(v, Func::AllReduce, b), rw = nccl_costs(w, Func::AllReduce, b);
    for (std::size_t i = 0; i < rd.size(); ++i) {
      EXPECT_EQ(rd[i].time_us, rv[i].time_us) << i;
      EXPECT_EQ(rd[i].time_us, rw[i].time_us) << i;
    }
  }
}

// Two dgx-h100 nodes, AllReduce 1 MiB: NCCL 2.30 picks Tree/LL128, NCCL 2.19-2.26 NVLSTree/Simple.
TEST(NcclVersions, TwoNodeH100PickMovesToNvlsTreeAt1MiBBefore227) {
  const double S = 1 * MiB;
  // Tree/LL128 (same in every range): busBw min(8 x 48 x .92, 8 x 41.4) = 331.2, LL128 min(x 120/128,
  // 8 x 36.7) = 293.6, x .85 (dgx-h100's tree graph is NCCL_TOPO_PATTERN_TREE: one NIC per GPU leaves
  // no balanced tree), algBw x .5 = 124.78, tree correction [LL128][log2(1 MiB / 64) = 14] = .6;
  // latency 14.0 + 2 x (7 x 1.25 + 1 x 8.5) = 48.5.
  const double tree_ll128 = 48.5 + S / (1000 * 293.6 * .85 * .5 * .6);
  // NVLSTree 2.30: bw min(40 x .85 x 7/8 x 2, 48 x 2, 57.7) = 57.7, x 8 ch x 16/30; latency 25 + 2 x 20.9.
  const double nvlstree_230 = 66.8 + S / (1000 * 57.7 * 8 * 16 / 30);
  // NVLSTree 2.19-2.26: bw min(bwIntra 40, bwInter 48) x 8 ch x 5/6; latency 2.19: 23 + 2 x 14, 2.23: 25 + 2 x 14.
  const double nvlstree_219 = 51.0 + S / (1000 * 40 * 8 * 5.0 / 6.0);
  const double nvlstree_223 = 53.0 + S / (1000 * 40 * 8 * 5.0 / 6.0);
  ASSERT_LT(tree_ll128, nvlstree_230);
  ASSERT_LT(nvlstree_219, tree_ll128);

  const NcclTopoSummary s230 = h100(2), s219 = h100(2, "2.19"), s223 = h100(2, "2.23");
  EXPECT_EQ(pick(s230, 1 * MiB), "Tree/LL128");
  EXPECT_NEAR(choose(s230, Func::AllReduce, 1 * MiB).time_us, tree_ll128, 1e-6);
  EXPECT_NEAR(row(nccl_costs(s230, Func::AllReduce, 1 * MiB), Algo::NVLSTree, Proto::Simple).time_us, nvlstree_230, 1e-6);
  EXPECT_EQ(pick(s219, 1 * MiB), "NVLSTree/Simple");
  EXPECT_NEAR(choose(s219, Func::AllReduce, 1 * MiB).time_us, nvlstree_219, 1e-6);
  EXPECT_EQ(pick(s223, 1 * MiB), "NVLSTree/Simple");
  EXPECT_NEAR(choose(s223, Func::AllReduce, 1 * MiB).time_us, nvlstree_223, 1e-6);
  // The engine's ceilings are the kernels' rates: 2.30's perChMaxNVLSTreeBws whatever the tuner's release.
  EXPECT_NEAR(nccl_busbw_ceiling_GBps(s230, Func::AllReduce, Algo::NVLSTree, Proto::Simple), 8 * 57.7, 1e-9);
  EXPECT_NEAR(nccl_busbw_ceiling_GBps(s219, Func::AllReduce, Algo::NVLSTree, Proto::Simple), 8 * 57.7, 1e-9);
}

// One dgx-h100 node, AllReduce 1 MiB: NCCL 2.30 picks Ring/LL, NCCL 2.19 NVLS/Simple: its Hopper
// llMaxBw is Ampere's 87.7 (2.30: 141) and its NVLS model min(bwIntra, bwInter) x 5/6.
TEST(NcclVersions, OneNodeH100PickMovesToNvlsAt1MiBIn219) {
  const double S = 1 * MiB;
  // Ring LL latency 6.6 + 14 steps x 0.6 = 15.0 in both; busBw 2.30 min(141, 360 x .5), 2.19 min(87.7, 360 / 4).
  const double ring_ll_230 = 15.0 + S / (1000 * 141.0 * 8 / 14);
  const double ring_ll_219 = 15.0 + S / (1000 * 87.7 * 8 / 14);
  // NVLS 2.19: latency hwLat[NVLink][NVLS][Simple] = 23 (no baseLat), bw min(40, 60) x 8 x 5/6.
  const double nvls_219 = 23.0 + S / (1000 * 40 * 8 * 5.0 / 6.0);
  const NcclTopoSummary s230 = h100(1), s219 = h100(1, "2.21.5");
  EXPECT_EQ(pick(s230, 1 * MiB), "Ring/LL");
  EXPECT_NEAR(choose(s230, Func::AllReduce, 1 * MiB).time_us, ring_ll_230, 1e-6);
  EXPECT_NEAR(row(nccl_costs(s219, Func::AllReduce, 1 * MiB), Algo::Ring, Proto::LL).time_us, ring_ll_219, 1e-6);
  EXPECT_EQ(pick(s219, 1 * MiB), "NVLS/Simple");
  EXPECT_NEAR(choose(s219, Func::AllReduce, 1 * MiB).time_us, nvls_219, 1e-6);
  // AllGather's Ring LL on one node: x 1/3 in 2.19 (x 1/4 only for several nodes, AllReduce, Reduce).
  EXPECT_NEAR(row(nccl_costs(s219, Func::AllGather, 1 * MiB), Algo::Ring, Proto::LL).busbw_GBps, std::min(87.7, 360.0 / 3), 1e-9);
}

TEST(NcclVersions, RingAllReduceNetworkStepsAndTreeSimpleLatency) {
  const auto r230 = nccl_costs(h100(2), Func::AllReduce, 8), r219 = nccl_costs(h100(2, "2.19"), Func::AllReduce, 8);
  // Ring Simple, 16 ranks on 2 nodes: 30 steps, max(3.4, 3 x net overhead 1) inside, 14 across;
  // 2.30: 2 (nNodes - 1) = 2 network steps, 2.19: 2 nNodes = 4.
  EXPECT_NEAR(row(r230, Algo::Ring, Proto::Simple).latency_us, 8.4 + 28 * 3.4 + 2 * 14.0, 1e-9);
  EXPECT_NEAR(row(r219, Algo::Ring, Proto::Simple).latency_us, 8.4 + 26 * 3.4 + 4 * 14.0, 1e-9);
  // Tree Simple: 2.30 8.4 + 2 (7 x 4.0 + 14); 2.19 0 + 2 (7 x 28 + 28).
  EXPECT_NEAR(row(r230, Algo::Tree, Proto::Simple).latency_us, 8.4 + 2 * (7 * 4.0 + 14.0), 1e-9);
  EXPECT_NEAR(row(r219, Algo::Tree, Proto::Simple).latency_us, 2 * (7 * 28.0 + 28.0), 1e-9);
}

TEST(NcclVersions, PatAndLl128RulesFollowTheRelease) {
  const NcclTopoSummary one_gpu = summarize_for_nccl(build_topology(testing::single_gpu_nodes_spec(8, 512, 1.0), "test"));
  NcclTopoSummary old = one_gpu;
  old.nccl_version = parse_nccl_version("2.22", "test");
  NcclTopoSummary pat = one_gpu;
  pat.nccl_version = parse_nccl_version("2.23", "test");
  EXPECT_TRUE(row(nccl_costs(pat, Func::AllGather, 1 * MiB), Algo::PAT, Proto::Simple).applicable);
  const AlgoProtoCost none = row(nccl_costs(old, Func::AllGather, 1 * MiB), Algo::PAT, Proto::Simple);
  EXPECT_FALSE(none.applicable);
  EXPECT_NE(none.why_disabled.find("NCCL 2.23 added it"), std::string::npos) << none.why_disabled;

  // LL128 by default on exactly sm70/80/90 before 2.23; 2.30 on sm70 and newer.
  NcclTopoSummary sm100 = h100(1);
  sm100.compCap = 100;
  EXPECT_EQ(ll128_disabled_reason(sm100, sm100.ring), "");
  sm100.nccl_version = parse_nccl_version("2.20.3", "test");
  EXPECT_NE(ll128_disabled_reason(sm100, sm100.ring).find("sm70, sm80 and sm90 only"), std::string::npos);
}

TEST(NcclVersions, ValidateNamesTheLogsVersion) {
  const std::string log = std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/h100x16-2node-ndr-allreduce.txt";
  const auto plain = testing::run_ccsim("validate " + log + " --topology dgx-h100 --model closed-form");
  EXPECT_NE(plain.out.find("the log ran NCCL 2.26.2+cuda12.8; predicted with NCCL 2.30.7's tuner: rerun with "
                           "--nccl-version 2.26 for its tuner constants (2.23-2.26)"),
            std::string::npos) << plain.out;
  const auto same = testing::run_ccsim("validate " + log + " --topology dgx-h100 --model closed-form --nccl-version 2.26");
  EXPECT_EQ(same.out.find("the log ran NCCL"), std::string::npos) << same.out;
  EXPECT_NE(same.out.find("closed form: NCCL 2.26 cost model"), std::string::npos) << same.out;
  const auto other = testing::run_ccsim("validate " + log + " --topology dgx-h100 --model closed-form --nccl-version 2.19");
  EXPECT_NE(other.out.find("the log ran NCCL 2.26.2+cuda12.8 (tuner constants of 2.23-2.26); predicted with NCCL "
                           "2.19's tuner (--nccl-version) as asked"),
            std::string::npos) << other.out;
}

// NCCL 2.22.3's own tuner print on 3 nodes of 8 H100 with 8 x 200 Gb/s NICs per node (NVIDIA/nccl#1453):
// "<bytes> Bytes -> Algo <a> proto <p> time <us>", NCCL's choice and its model's time for the choice.
// ccsim's tuner with --nccl-version 2.22.3 on that description must print the same, to NCCL's float
// precision. What the lines check: the tree graph's TREE pattern (x 0.85: without it Tree/LL takes 35.91
// us at 64 KiB, and 128 KiB stays Tree/LL, 50.90), the running channels' thread counts, NVLSTree's
// 2.22 latency (25 us inside the node: 2.20.3's 23 gives 2 us less at 512 KiB-2 MiB) and Ring/Simple's
// graph (8 channels x 24 GB/s; 86069.97 us at 8 GiB).
TEST(NcclVersions, ThreeNodeH100ChoicesAndTimesAreNcclsOwn) {
  std::ifstream in(std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/h100x24-3node-tuner-debug-nccl2.22.3.txt");
  ASSERT_TRUE(in.good());
  NcclTopoSummary s =
      summarize_for_nccl(testing::preset("dgx-h100", 3, {"node.nic.Gbps=200"}));
  s.nccl_version = parse_nccl_version("2.22.3", "test");
  const char* algos[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
  const char* protos[] = {"LL", "LL128", "Simple"};
  const std::regex line(R"(NCCL INFO (\d+) Bytes -> Algo (\d) proto (\d) time ([0-9.]+))");
  int checked = 0;
  for (std::string text; std::getline(in, text);) {
    std::smatch m;
    if (!std::regex_search(text, m, line)) continue;
    const std::uint64_t bytes = std::stoull(m[1]);
    const TunerChoice c = choose(s, Func::AllReduce, bytes);
    EXPECT_EQ(std::string(to_string(c.algo)) + "/" + to_string(c.proto),
              std::string(algos[std::stoi(m[2])]) + "/" + protos[std::stoi(m[3])])
        << bytes;
    const double nccl_us = std::stod(m[4]);
    EXPECT_NEAR(c.time_us, nccl_us, 1e-6 * nccl_us + 0.01) << bytes;
    ++checked;
  }
  EXPECT_EQ(checked, 14);
}

TEST(NcclVersions, ScenarioWorkloadKey) {
  auto scenario = [](const std::string& version) {
    return parse_scenario(nlohmann::ordered_json::parse(
                              R"({"format": "ccsim-scenario/1", "cluster": {"topology": "dgx-h100", "nodes": 2},
                                  "workloads": [{"collective": "all_reduce", "model": "closed-form",
                                                 "sizes": {"min": "1M", "max": "1M"}, "nccl_version": ")" +
                              version + R"("}]})"),
                          "s.json", "");
  };
  const VariantResult old = run_variant(scenario("2.19"), 0, VariantRunOptions{});
  ASSERT_EQ(old.workloads.at(0).rows.size(), 1u);
  EXPECT_EQ(old.workloads[0].rows[0].algorithm, "NVLSTree");  // as TwoNodeH100PickMovesToNvlsTreeAt1MiBBefore227
  EXPECT_EQ(run_variant(scenario("2.30"), 0, VariantRunOptions{}).workloads.at(0).rows.at(0).algorithm, "Tree");
  try {
    scenario("2.8");
    ADD_FAILURE() << "2.8 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("s.json: /workloads/0/nccl_version: NCCL 2.8 is outside", 0), 0u) << e.what();
  }
}

TEST(NcclVersions, CommandLineFlagAndRefusal) {
  const auto old = testing::run_ccsim("all_reduce_perf -b 1M -e 1M --nodes 2 --model closed-form --nccl-version 2.19.4");
  ASSERT_EQ(old.code, 0) << old.err;
  EXPECT_NE(old.out.find("# NCCL tuner (NCCL 2.19.4) picks: NVLSTree/Simple 1 MiB"), std::string::npos) << old.out;
  const auto now = testing::run_ccsim("all_reduce_perf -b 1M -e 1M --nodes 2 --model closed-form");
  EXPECT_NE(now.out.find("# NCCL tuner (NCCL 2.30.7) picks: Tree/LL128 1 MiB"), std::string::npos) << now.out;
  const auto explain = testing::run_ccsim("explain -b 2M --nodes 2 --nccl-version 2.19");
  ASSERT_EQ(explain.code, 0) << explain.err;
  EXPECT_NE(explain.out.find("tuner constants of NCCL 2.19-2.21: NVIDIA/nccl src/graph/tuning.cc at b6475625"),
            std::string::npos) << explain.out;
  for (const char* cmd : {"predict --nccl-version 2.8.3", "explain --nccl-version 2.31", "validate x.log --nccl-version abc"}) {
    const auto r = testing::run_ccsim(cmd);
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_EQ(r.err.rfind("ccsim: error: --nccl-version: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace ccsim
