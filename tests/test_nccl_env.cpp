// --env NCCL_NAME=VALUE (topologies/nccl_env.h): NCCL's settings as the description changes they
// stand for. Each modelled setting must predict exactly what the documented spec keys predict (the
// keys' own physics is tested where they are: test_shm, test_nvls, test_gpudirect_tcp); bad
// settings are one error line and exit code 2; not-modelled ones change nothing and say so.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "common/error.h"
#include "topologies/nccl_env.h"
#include "topologies/routing.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

// The nccl-tests rows of a prediction (the lines after the column header), without the preamble.
std::string rows_of(const std::string& out) {
  const std::size_t at = out.find("#        (B)");
  return at == std::string::npos ? std::string() : out.substr(at);
}

testing::CliResult predict(const std::string& args) { return testing::run_ccsim("predict " + args); }

void expect_same_rows(const std::string& with_env, const std::string& with_set) {
  const auto a = predict(with_env), b = predict(with_set);
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_FALSE(rows_of(a.out).empty()) << a.out;
  EXPECT_EQ(rows_of(a.out), rows_of(b.out)) << with_env << "\nagainst\n" << with_set;
}

TEST(NcclEnv, P2pDisableIsNcclsShmTransportAsTheSpecKeysSayIt) {
  // The DGX A100 run of tests/data/nccl-tests/dgx-a100-4gpu-p2p-disabled-shm-allreduce.txt was made with
  // NCCL_P2P_DISABLE=1: the NVLink stays in the description, NCCL's P2P transport does not.
  const std::string node = "--topology hgx-a100 --set node.gpu.count=4 --set node.nic.count=0 -b 1M -e 64M -f 8";
  expect_same_rows(node + " --env NCCL_P2P_DISABLE=1", node + " --set node.pcie.p2p=none --set node.nvlink.nccl_p2p=false");
  const auto r = predict(node + " --env NCCL_P2P_DISABLE=1");
  EXPECT_NE(r.out.find("# NCCL environment: NCCL_P2P_DISABLE=1: node.pcie.p2p=none, node.nvlink.nccl_p2p=false"),
            std::string::npos)
      << r.out;
  // And it is not the NVLink prediction: SHM through host memory is several times slower at 64 MiB.
  const auto nvlink = predict(node);
  ASSERT_EQ(nvlink.code, 0);
  EXPECT_NE(rows_of(nvlink.out), rows_of(r.out));
  // NVLS needs NCCL's P2P transport in ccsim: on an H100 node the setting turns both off.
  nlohmann::json spec = load_topology_spec("dgx-h100");
  const NcclEnvNote n = apply_nccl_env(spec, "NCCL_P2P_DISABLE=1", "--env", "test");
  EXPECT_EQ(spec["node"]["nvlink"]["nvls"], false);
  EXPECT_EQ(spec["node"]["nvlink"]["nccl_p2p"], false);
  EXPECT_EQ(spec["node"]["pcie"]["p2p"], "none");
  EXPECT_TRUE(n.modelled);
  EXPECT_NO_THROW(build_topology(spec, "dgx-h100"));
  nlohmann::json zero = load_topology_spec("dgx-h100");
  const nlohmann::json before = zero;
  apply_nccl_env(zero, "NCCL_P2P_DISABLE=0", "--env", "test");
  EXPECT_EQ(zero, before);
}

TEST(NcclEnv, P2pLevelFollowsThePathTypesOfTheNodesGpuPairs) {
  // pcie-gen4-8gpu: pairs are PIX (GPUs 0, 1: same switch), NODE (0, 2: one socket) and SYS (1, 6:
  // across sockets). Which pairs use NCCL's SHM transport instead of P2P, per NCCL_P2P_LEVEL.
  const auto shm_pairs = [](const std::string& env, const std::vector<std::string>& sets = {}) {
    nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
    for (const auto& o : sets) apply_override(spec, o, "test");
    if (!env.empty()) apply_nccl_env(spec, env, "--env", "test");
    const Topology t = build_topology(spec, "pcie-gen4-8gpu");
    return std::vector<bool>{nccl_shm_pair(t, 0, 1), nccl_shm_pair(t, 0, 2), nccl_shm_pair(t, 1, 6)};
  };
  using V = std::vector<bool>;
  // No setting: NCCL's default level, PXB on this Intel host (paths.cc ncclTopoCheckP2p).
  EXPECT_EQ(shm_pairs(""), (V{false, true, true}));
  EXPECT_EQ(shm_pairs("NCCL_P2P_LEVEL=PXB"), (V{false, true, true}));
  EXPECT_EQ(shm_pairs("NCCL_P2P_LEVEL=2"), (V{false, true, true}));  // legacy 2 = PXB
  EXPECT_EQ(shm_pairs("NCCL_P2P_LEVEL=PIX"), (V{false, true, true}));
  EXPECT_EQ(shm_pairs("NCCL_P2P_LEVEL=PHB"), (V{false, false, true}));  // NCCL's PHB takes NODE too
  EXPECT_EQ(shm_pairs("NCCL_P2P_LEVEL=SYS"), (V{false, false, false}));
  EXPECT_EQ(shm_pairs("NCCL_P2P_LEVEL=4"), (V{false, false, false}));  // legacy 4 = SYS
  EXPECT_EQ(shm_pairs("NCCL_P2P_LEVEL=NVL"), (V{true, true, true}));   // no NVLink: no pair
  EXPECT_EQ(shm_pairs("NCCL_P2P_LEVEL=LOC"), (V{true, true, true}));
  EXPECT_EQ(shm_pairs("NCCL_P2P_LEVEL=0"), (V{true, true, true}));  // legacy 0 = LOC
  // On an AMD host NCCL's default is SYS: every pair P2P, as with the setting on this one.
  EXPECT_EQ(shm_pairs("", {"node.cpu.vendor=amd"}), (V{false, false, false}));
  EXPECT_EQ(shm_pairs("", {"node.pcie.nccl_p2p_level=SYS"}), (V{false, false, false}));
  const std::string node = "--topology pcie-gen4-8gpu -b 64M -e 64M";
  expect_same_rows(node + " --env NCCL_P2P_LEVEL=NVL", node + " --set node.pcie.p2p=none");
  expect_same_rows(node + " --env NCCL_P2P_LEVEL=PHB", node + " --set node.pcie.nccl_p2p_level=PHB");
  // On an NVSwitch node every pair is NVL: PIX or NVL change nothing.
  expect_same_rows("--env NCCL_P2P_LEVEL=PIX -b 1G -e 1G", "-b 1G -e 1G");
  expect_same_rows("--env NCCL_P2P_LEVEL=NVL -b 1G -e 1G", "-b 1G -e 1G");
}

TEST(NcclEnv, NvlsEnableZeroIsNvlsOff) {
  const std::string two = "--nodes 2 -b 64K -e 4G -f 16";
  expect_same_rows(two + " --env NCCL_NVLS_ENABLE=0", two + " --set node.nvlink.nvls=false");
  const auto r = predict(two + " --env NCCL_NVLS_ENABLE=0");
  EXPECT_EQ(r.out.find("NVLS"), r.out.find("NVLS_ENABLE"));  // no NVLS or NVLSTree pick anywhere
  expect_same_rows(two + " --env NCCL_NVLS_ENABLE=2", two);  // 2: NCCL's default (on where supported)
  // explain shows NCCL's own view: no NVLS support, the setting first.
  const auto e = testing::run_ccsim("explain --nodes 2 -b 1G --env NCCL_NVLS_ENABLE=0");
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_EQ(e.out.rfind("NCCL environment: NCCL_NVLS_ENABLE=0: node.nvlink.nvls=false", 0), 0u) << e.out.substr(0, 200);
  EXPECT_NE(e.out.find("NVLS no, CollNet no"), std::string::npos);
  EXPECT_NE(testing::run_ccsim("explain --nodes 2 -b 1G").out.find("NVLS yes"), std::string::npos);
}

TEST(NcclEnv, NvlsChunkSizesAreNvlsTreesChunkKeys) {
  // 4 x dgx-h100, NVLSTree at 256 MiB: NCCL's default chunk is 64 KiB there (NVLSTREE_MAX_CHUNKSIZE's
  // -2); aws-ofi-nccl's p5 settings make it 512 KiB, which fills the pipeline more slowly.
  const std::string four = "--nodes 4 -b 256M -e 256M --algo NVLSTree";
  expect_same_rows(four + " --env NCCL_NVLS_CHUNKSIZE=524288 --env NCCL_NVLSTREE_MAX_CHUNKSIZE=524288",
                   four + " --set node.nvlink.nvls_chunk_bytes=524288 --set node.nvlink.nvls_tree_max_chunk_bytes=524288");
  expect_same_rows(four + " --env NCCL_NVLSTREE_MAX_CHUNKSIZE=-2", four);  // NCCL's default
  // -2 also takes a preset's value back to NCCL's rule: aws-p5's 512 KiB (its plugin's) gives way.
  expect_same_rows("--topology aws-p5 " + four + " --env NCCL_NVLSTREE_MAX_CHUNKSIZE=-2",
                   "--topology aws-p5 " + four + " --set node.nvlink.nvls_tree_max_chunk_bytes=0");
  const auto def = predict(four + " --format json"), big = predict(four + " --env NCCL_NVLS_CHUNKSIZE=524288 --env "
                                                                          "NCCL_NVLSTREE_MAX_CHUNKSIZE=524288 --format json");
  ASSERT_EQ(def.code, 0) << def.err;
  ASSERT_EQ(big.code, 0) << big.err;
  const double t_def = nlohmann::json::parse(def.out)["rows"][0]["oop_time_us"];
  const double t_big = nlohmann::json::parse(big.out)["rows"][0]["oop_time_us"];
  EXPECT_GT(t_big, t_def * 1.02) << t_def << " vs " << t_big;
  // Alone, NCCL_NVLSTREE_MAX_CHUNKSIZE cannot raise the chunk above NCCL_NVLS_CHUNKSIZE (128 KiB).
  expect_same_rows(four + " --env NCCL_NVLSTREE_MAX_CHUNKSIZE=524288", four + " --env NCCL_NVLSTREE_MAX_CHUNKSIZE=131072");
  // On a node without NVLS the settings change nothing and say so.
  const auto a100 = predict("--topology hgx-a100 -b 1M -e 1M --env NCCL_NVLS_CHUNKSIZE=524288");
  ASSERT_EQ(a100.code, 0) << a100.err;
  EXPECT_NE(a100.out.find("NCCL_NVLS_CHUNKSIZE=524288: no effect: the node has no NVLS"), std::string::npos) << a100.out;
}

TEST(NcclEnv, GdrLevelAndIbDisableStageThroughTheHost) {
  const std::string two = "--nodes 2 -b 1M -e 1G -f 32";
  expect_same_rows(two + " --env NCCL_NET_GDR_LEVEL=LOC", two + " --set node.nic.gpudirect_rdma=false");
  // dgx-h100: every GPU's NIC is behind its PCIe switch (PIX), so any level from PIX up keeps GDR.
  expect_same_rows(two + " --env NCCL_NET_GDR_LEVEL=PIX", two);
  expect_same_rows(two + " --env NCCL_NET_GDR_LEVEL=2", two);
  // NCCL_IB_DISABLE=1: NCCL's socket transport over the same NICs.
  expect_same_rows(two + " --env NCCL_IB_DISABLE=1",
                   two + " --set node.nic.transport=tcp --set node.nic.gpudirect_rdma=false");
  // A net plugin is not IB verbs: EFA stays EFA.
  expect_same_rows("--topology aws-p5 " + two + " --env NCCL_IB_DISABLE=1", "--topology aws-p5 " + two);
  // pcie-gen4-8gpu: GPUs reach their NIC at PIX or through the socket (PHB, NODE in nvidia-smi's words).
  const auto split = predict("--topology pcie-gen4-8gpu " + two + " --env NCCL_NET_GDR_LEVEL=PIX");
  EXPECT_EQ(split.code, 2);
  EXPECT_NE(split.err.find("one setting per node (node.nic.gpudirect_rdma)"), std::string::npos) << split.err;
  expect_same_rows("--topology pcie-gen4-8gpu " + two + " --env NCCL_NET_GDR_LEVEL=PHB", "--topology pcie-gen4-8gpu " + two);
  // Explicit IB figures in a spec are the verbs path's: the socket transport's defaults replace them.
  nlohmann::json spec = load_topology_spec("dgx-h100");
  spec["nodes"] = 2;
  spec["node"]["nic"]["latency_us"] = 1.2;
  apply_nccl_env(spec, "NCCL_IB_DISABLE=1", "--env", "test");
  EXPECT_FALSE(spec["node"]["nic"].contains("latency_us"));
  EXPECT_EQ(spec["node"]["nic"]["transport"], "tcp");
}

TEST(NcclEnv, MnnvlAndCollnetSwitchOffTheirFabrics) {
  nlohmann::json rack = load_topology_spec("gb200-nvl72");
  apply_nccl_env(rack, "NCCL_MNNVL_ENABLE=0", "--env", "test");
  EXPECT_EQ(rack["node"]["nvlink"]["domain_size"], 1);
  EXPECT_NO_THROW(build_topology(rack, "gb200-nvl72"));
  nlohmann::json sharp = load_topology_spec("dgx-h100");
  sharp["fabric"]["sharp"] = true;
  apply_nccl_env(sharp, "NCCL_COLLNET_ENABLE=0", "--env", "test");
  EXPECT_EQ(sharp["fabric"]["sharp"], false);
  nlohmann::json plain = load_topology_spec("dgx-h100");
  const nlohmann::json before = plain;
  const NcclEnvNote n = apply_nccl_env(plain, "NCCL_COLLNET_ENABLE=1", "--env", "test");
  EXPECT_EQ(plain, before);
  EXPECT_NE(n.effect.find("no SHARP"), std::string::npos) << n.effect;
}

// NCCL_IB_MERGE_NICS=0 and NCCL_NET_MERGE_LEVEL=LOC keep a card's ports apart (node.nic.fuse_ports);
// PORT is NCCL's default; a level that merges NICs of several cards is not modelled and says so.
TEST(NcclEnv, MergeNicsIsTheFusionOfACardsPorts) {
  expect_same_rows("--topology oci-h100 --nodes 2 -b 64M -e 64M --env NCCL_IB_MERGE_NICS=0",
                   "--topology oci-h100 --nodes 2 -b 64M -e 64M --set node.nic.fuse_ports=false");
  expect_same_rows("--topology oci-h100 --nodes 2 -b 64M -e 64M --env NCCL_NET_MERGE_LEVEL=LOC",
                   "--topology oci-h100 --nodes 2 -b 64M -e 64M --set node.nic.fuse_ports=false");
  nlohmann::json spec = load_topology_spec("oci-h100");
  apply_nccl_env(spec, "NCCL_NET_MERGE_LEVEL=PORT", "--env", "test");
  EXPECT_EQ(spec["node"]["nic"]["fuse_ports"], true);
  const NcclEnvNote pix = apply_nccl_env(spec, "NCCL_NET_MERGE_LEVEL=PIX", "--env", "test");
  EXPECT_FALSE(pix.modelled);
  nlohmann::json single = load_topology_spec("dgx-h100");
  const NcclEnvNote none = apply_nccl_env(single, "NCCL_IB_MERGE_NICS=0", "--env", "test");
  EXPECT_NE(none.effect.find("no effect"), std::string::npos) << none.effect;
}

TEST(NcclEnv, AlgoAndProtoAreTheTunersFilterWithTheFlagFirst) {
  const std::string two = "--nodes 2 -b 1G -e 1G";
  expect_same_rows(two + " --env NCCL_ALGO=Ring --env NCCL_PROTO=LL128", two + " --algo Ring --proto LL128");
  expect_same_rows(two + " --env NCCL_ALGO=Ring --algo Tree", two + " --algo Tree");
  // The last of two settings of one name wins, as in a shell.
  expect_same_rows(two + " --env NCCL_ALGO=Tree --env NCCL_ALGO=Ring", two + " --algo Ring");
  EXPECT_EQ(nccl_env_value({"NCCL_ALGO=Tree", "NCCL_ALGOX=Ring", "NCCL_ALGO=Ring"}, "NCCL_ALGO"), "Ring");
  EXPECT_EQ(nccl_env_value({"NCCL_ALGOX=Ring"}, "NCCL_ALGO"), "");
  const auto bad = predict(two + " --env NCCL_ALGO=Rings");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--env NCCL_ALGO"), std::string::npos) << bad.err;
}

TEST(NcclEnv, SettingsCcsimDoesNotModelChangeNothingAndSaySo) {
  const std::string two = "--nodes 2 -b 1M -e 1G -f 32";
  for (const char* s : {"NCCL_NTHREADS=256", "NCCL_SHM_DISABLE=1", "NCCL_DEBUG=INFO", "NCCL_SOCKET_IFNAME=eth0",
                        "NCCL_IB_HCA=mlx5_0"}) {
    expect_same_rows(two + " --env " + s, two);
    const auto r = predict(two + " --env " + s + " --format json");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    ASSERT_TRUE(doc["metadata"].contains("nccl_env")) << r.out.substr(0, 400);
    const std::string note = doc["metadata"]["nccl_env"][0];
    const std::string name(s, std::string(s).find('='));
    EXPECT_TRUE(note.find("not modelled") != std::string::npos || note.find("no effect on the model") != std::string::npos)
        << note;
    EXPECT_EQ(note.rfind(std::string(s) + ": ", 0), 0u) << note;
  }
}

TEST(NcclEnv, BadSettingsAreOneErrorLineAndExitTwo) {
  for (const auto& c :
       {std::pair{"FOO=1", "expected NCCL_NAME=VALUE"}, std::pair{"NCCL_P2P_DISABLE", "expected NCCL_NAME=VALUE"},
        std::pair{"NCCL_P2P_DISABLE=yes", "expected an integer"}, std::pair{"NCCL_NET_GDR_LEVEL=NVL", "expected a path type"},
        std::pair{"NCCL_P2P_LEVEL=near", "expected a path type"},
        std::pair{"NCCL_NVLS_CHUNKSIZE=100", "expected a chunk size in bytes from 512"},
        std::pair{"NCCL_NVLSTREE_MAX_CHUNKSIZE=-1", "or -2 for NCCL's default"}}) {
    const std::string out = testing::temp_file("env_out.txt");
    const auto r = testing::run_ccsim(std::string("predict --nodes 2 --env ") + c.first + " -o " + out);
    EXPECT_EQ(r.code, 2) << c.first;
    EXPECT_EQ(r.err.rfind(std::string("ccsim: error: --env ") + c.first + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.second), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_TRUE(testing::read_text_file(out).empty()) << "no output file on bad input";
  }
  nlohmann::json spec = load_topology_spec("dgx-h100");
  EXPECT_THROW(apply_nccl_env(spec, "NCCL_lower=1", "s.json: /env/0", "test"), InputError);
}

TEST(NcclEnv, ValidatePredictsTheRunWithItsSettings) {
  // The 4-GPU DGX A100 log was measured with NCCL_P2P_DISABLE=1; --env says so, as --set did.
  const std::string log = std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/dgx-a100-4gpu-p2p-disabled-shm-allreduce.txt";
  const std::string hw = "--topology hgx-a100 --set node.gpu.count=4 --set node.nic.count=0";
  const auto a = testing::run_ccsim("validate " + log + " " + hw + " --env NCCL_P2P_DISABLE=1 --format json");
  const auto b = testing::run_ccsim("validate " + log + " " + hw + " --set node.nvlink.nccl_p2p=false --format json");
  ASSERT_NE(a.code, 2) << a.err;
  ASSERT_NE(b.code, 2) << b.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  ASSERT_EQ(ja["runs"].size(), jb["runs"].size());
  ASSERT_FALSE(ja["runs"].empty());
  EXPECT_EQ(ja["runs"][0]["sizes"], jb["runs"][0]["sizes"]);
  EXPECT_EQ(ja["nccl_env"][0].get<std::string>().rfind("NCCL_P2P_DISABLE=1: ", 0), 0u) << ja["nccl_env"];
  EXPECT_NE(ja["hardware"].get<std::string>().find("--env NCCL_P2P_DISABLE=1"), std::string::npos);
}

}  // namespace
}  // namespace ccsim

namespace ccsim {
namespace {

TEST(NcclEnv, ValidateNamesTheDebugLogsPathSettingsAndTheirFlag) {
  // nccl_debug_5.txt echoes NCCL_P2P_DISABLE=1; the 2080 Ti pair's log was measured without P2P. Described
  // with P2P through its PCIe switch, the prediction is too fast and validate says which --env to add;
  // with it the bandwidth side is closer to the measurement.
  const std::string base = "validate " + std::string(CCSIM_SOURCE_DIR) +
                           "/tests/data/nccl-tests/rtx2080ti-x2-pcie-noP2P-allreduce.txt --topology pcie-gen4-8gpu "
                           "--set node.gpu.count=2 --set node.pcie.generation=3 --set node.cpu.sockets=1 "
                           "--set node.pcie.switches_per_socket=1 --set node.nic.count=0";
  const std::string debug = " --nccl-debug " + std::string(CCSIM_SOURCE_DIR) + "/tests/data/samples/nccl_debug_5.txt";
  const auto text = testing::run_ccsim(base + debug);
  ASSERT_NE(text.code, 2) << text.err;
  EXPECT_NE(text.out.find("[nccl-settings]"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("next: predict the run as it was made: --env NCCL_P2P_DISABLE=1"), std::string::npos) << text.out;
  const auto without = testing::run_ccsim(base + " --format json");
  const auto with = testing::run_ccsim(base + " --env NCCL_P2P_DISABLE=1 --format json");
  ASSERT_NE(without.code, 2) << without.err;
  ASSERT_NE(with.code, 2) << with.err;
  const double e0 = nlohmann::json::parse(without.out)["runs"][0]["bandwidth"]["median_error"];
  const double e1 = nlohmann::json::parse(with.out)["runs"][0]["bandwidth"]["median_error"];
  EXPECT_LT(std::fabs(e1), std::fabs(e0)) << "P2P through the switch " << e0 << ", SHM " << e1;
}

}  // namespace
}  // namespace ccsim

namespace ccsim {
namespace {

TEST(NcclEnv, ScenarioVariantsTakeNcclSettingsAfterTheirKeys) {
  // Two variants of one cluster that must predict the same: NVLS off through NCCL's setting and
  // through the spec key; the results record the variant's settings.
  const std::string scenario = testing::write_temp_file("env_scenario.json", R"({
    "format": "ccsim-scenario/1", "name": "env",
    "cluster": {"topology": "dgx-h100", "nodes": 2},
    "workloads": [{"collective": "all_reduce", "sizes": {"min": "1M", "max": "1G", "factor": 32}, "model": "closed-form"}],
    "variants": {"named": [{"name": "by-env", "env": ["NCCL_NVLS_ENABLE=0"]},
                           {"name": "by-key", "set": {"node.nvlink.nvls": false}},
                           {"name": "default"}]}
  })");
  const std::string dir = testing::temp_file("env_run");
  const auto r = testing::run_ccsim("run " + scenario + " -o " + dir + " -q");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(testing::read_text_file(dir + "/results.json"));
  std::map<std::string, std::vector<double>> times;
  for (const auto& row : doc["rows"]) times[row["variant"].get<std::string>()].push_back(row["time_us"].get<double>());
  ASSERT_EQ(times.size(), 3u) << doc.dump().substr(0, 600);
  EXPECT_EQ(times["by-env"], times["by-key"]);
  EXPECT_NE(times["by-env"], times["default"]);  // NVLSTree at 1 GiB on 2 H100 nodes is not Ring's time
  EXPECT_EQ(doc["variants"][0]["env"], nlohmann::json::array({"NCCL_NVLS_ENABLE=0"}));
  EXPECT_FALSE(doc["variants"][1].contains("env"));
  // A bad setting names its place in the file.
  const std::string bad = testing::write_temp_file("env_bad.json", R"({
    "format": "ccsim-scenario/1", "cluster": {"env": ["NCCL_P2P_DISABLE=maybe"]},
    "workloads": [{"collective": "all_reduce"}]})");
  const auto b = testing::run_ccsim("run " + bad + " -o " + dir + "_bad -q");
  EXPECT_EQ(b.code, 2);
  EXPECT_NE(b.err.find("env_bad.json: /cluster/env/0: expected an integer"), std::string::npos) << b.err;
}

}  // namespace
}  // namespace ccsim

namespace ccsim {
namespace {

TEST(NcclEnv, ValidateTakesAlgoAndProtoFromEnvButNotFromItsShell) {
  const std::string log = std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/h100x16-2node-ndr-allreduce.txt";
  auto largest = [&](const std::string& extra, const std::string& shell) {
    const auto r = testing::run_ccsim("validate " + log + " --format json" + extra, "", shell);
    EXPECT_NE(r.code, 2) << r.err;
    return nlohmann::json::parse(r.out)["runs"][0]["sizes"].back()["nccl_algorithm"].get<std::string>();
  };
  EXPECT_EQ(largest("", ""), "NVLSTree");  // 2 dgx-h100 nodes at 16 GiB: NCCL 2.30's pick
  EXPECT_EQ(largest(" --env NCCL_ALGO=Ring", ""), "Ring");
  EXPECT_EQ(largest("", "NCCL_ALGO=Ring"), "NVLSTree");  // the shell validate runs in is not the run's
  const auto bad = testing::run_ccsim("validate " + log + " --algo Ring --env NCCL_PROTO=Bogus");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err.rfind("ccsim: error: --algo/--env NCCL_PROTO: unknown protocol", 0), 0u) << bad.err;
}

}  // namespace
}  // namespace ccsim
