// Topology specs, presets, builder validation and the topo report.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "common/error.h"
#include "topologies/presets.h"
#include "topologies/routing.h"
#include "topologies/spec.h"
#include "topologies/topo_report.h"
#include "topologies/topology.h"

using namespace ccsim;
using nlohmann::json;

namespace {

Topology make(const std::string& preset, const std::vector<std::string>& sets = {}, int nodes = 1) {
  json spec = load_topology_spec(preset);
  for (const auto& s : sets) apply_override(spec, s, "--set");
  set_node_count(spec, nodes);
  return build_topology(spec, preset + ".json");
}

// Message of the InputError thrown by f (fails the test if none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError thrown";
  return "";
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

double link_bw(const Topology& t, VertexId a, VertexId b) { return t.link(t.edge_between(a, b)).bandwidth_Bps; }

json minimal_spec() {
  return json::parse(R"({
    "node": {"gpu": {"model": "test-gpu", "count": 2},
             "cpu": {"sockets": 1},
             "pcie": {"generation": 4, "switches_per_socket": 1},
             "nic": {"count": 1, "Gbps": 100}}})");
}

}  // namespace

TEST(Presets, AllPresetsEmbeddedAndBuild) {
  const auto names = known_presets();
  EXPECT_EQ(names, (std::vector<std::string>{"aws-p5", "azure-nd-h100-v5", "dgx-b200", "dgx-h100", "dgx-h200", "dgx1-v100",
                                              "dgx2-v100", "gb200-nvl72", "gcp-a3-high", "gcp-a3-mega", "gh200-quad", "hgx-a100", "hgx-h800", "oci-a100", "oci-h100",
                                              "pcie-gen4-8gpu"}));
  for (const auto& n : names) {
    if (n == "gb200-nvl72") continue;  // racks of 18 trays x 4 GPUs: tests/test_nvlink_domain.cpp
    for (int nodes : {1, 3}) {
      const Topology t = make(n, {}, nodes);
      EXPECT_EQ(t.num_nodes(), nodes);
      // DGX-2: 16 V100 on one NVSwitch plane; gh200-quad: four superchips.
      const int gpus = n == "dgx2-v100" ? 16 : n == "gh200-quad" ? 4 : 8;
      EXPECT_EQ(t.gpus_per_node(), gpus);
      EXPECT_EQ(t.num_gpus(), gpus * nodes);
      EXPECT_EQ(t.name, n);
      EXPECT_FALSE(t.spec.at("description").get<std::string>().empty());
    }
  }
}

// The presets derived from DGX H100 differ from it only where their sources say so.
TEST(Presets, CurrentClusterFacts) {
  VertexId nvsw;
  // H800: 8 NVLink4 links, 8 x 25 = 200 GB/s per direction nominal (NVIDIA: 400 GB/s bidirectional),
  // at NCCL's SM90 achievable 20.6 per link: 164.8 GB/s (DeepSeek and DeepEP measure about 160).
  const Topology h800 = make("hgx-h800", {}, 1);
  ASSERT_TRUE(h800.find_vertex(VertexKind::NvSwitch, 0, 0, -1, &nvsw));
  EXPECT_DOUBLE_EQ(link_bw(h800, h800.gpu(0), nvsw), 8 * 20.6e9);
  EXPECT_DOUBLE_EQ(h800.network.nic_bandwidth_Bps, 50e9);
  // B200: NVLink5, 18 links x 50 GB/s = 900 GB/s per direction (NVIDIA: 1.8 TB/s bidirectional); Blackwell.
  const Topology b200 = make("dgx-b200", {}, 1);
  EXPECT_EQ(b200.gpu_arch, "sm100");
  EXPECT_TRUE(b200.nvls_capable);
  EXPECT_EQ(b200.nics_per_node(), 8);
  // H200 and Azure ND H100 v5 move data exactly as DGX H100 does: the same prediction.
  for (const char* p : {"dgx-h200", "azure-nd-h100-v5"}) {
    const Topology t = make(p, {}, 1), h100 = make("dgx-h100", {}, 1);
    ASSERT_TRUE(t.find_vertex(VertexKind::NvSwitch, 0, 0, -1, &nvsw));
    EXPECT_DOUBLE_EQ(link_bw(t, t.gpu(0), nvsw), 450e9 * (20.6 / 25.0)) << p;
    EXPECT_EQ(t.nics_per_node(), 8) << p;
    EXPECT_DOUBLE_EQ(t.network.nic_bandwidth_Bps, 50e9) << p;
  }
}

// A card's ports: OCI's BM.GPU.H100.8 lists 16 x 200 Gb/s RDMA ports on eight dual-port cards, which
// NCCL fuses into eight 400 Gb/s network devices (node.nic.fuse_ports); NCCL_IB_MERGE_NICS=0 keeps 16.
TEST(Presets, NicPortsOfOneCardAreOneNetworkDevice) {
  const Topology fused = make("oci-h100", {}, 2);
  EXPECT_EQ(fused.nics_per_node(), 8);
  EXPECT_DOUBLE_EQ(fused.network.nic_bandwidth_Bps, 50e9);  // 2 x 200 Gb/s
  EXPECT_EQ(fused.network.transport, Transport::RoCE);
  EXPECT_NE(format_topology_report(fused).find("8 per node x 400 Gb/s (50.0 GB/s), transport roce, GPUDirect RDMA yes; "
                                               "each fuses a card's 2 ports"),
            std::string::npos)
      << format_topology_report(fused);
  const Topology ports = make("oci-h100", {"node.nic.fuse_ports=false"}, 2);
  EXPECT_EQ(ports.nics_per_node(), 16);
  EXPECT_DOUBLE_EQ(ports.network.nic_bandwidth_Bps, 25e9);
  try {
    make("oci-h100", {"node.nic.ports_per_card=3"}, 2);
    FAIL() << "3 ports per card do not divide 16 ports";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ports_per_card"), std::string::npos) << e.what();
  }
}

TEST(Presets, DgxH100Facts) {
  const Topology t = make("dgx-h100", {}, 2);
  EXPECT_EQ(t.gpu_model, "H100-SXM5-80GB");
  EXPECT_EQ(t.gpu_arch, "sm90");
  EXPECT_EQ(t.cpu_vendor, "intel");
  EXPECT_TRUE(t.has_nvswitch);
  EXPECT_TRUE(t.nvls_capable);
  EXPECT_EQ(t.nics_per_node(), 8);
  EXPECT_EQ(t.network.transport, Transport::InfiniBand);
  EXPECT_TRUE(t.network.gpudirect_rdma);
  // 400 Gb/s = 50 GB/s per direction.
  EXPECT_DOUBLE_EQ(t.network.nic_bandwidth_Bps, 50e9);
  // NVLink4: 18 links x 25 GB/s = 450 GB/s per direction per GPU nominal; links carry the default
  // achievable fraction 20.6/25 (NCCL's SM90 per-link figure): 18 x 20.6 = 370.8 GB/s.
  VertexId nvsw;
  ASSERT_TRUE(t.find_vertex(VertexKind::NvSwitch, 0, 0, -1, &nvsw));
  EXPECT_DOUBLE_EQ(link_bw(t, t.gpu(0), nvsw), 450e9 * (20.6 / 25.0));
  // PCIe Gen5 x16: 32 GT/s x 16 lanes x 128/130 / 8 = 63.015 GB/s per direction nominal, x 0.8.
  VertexId sw0;
  ASSERT_TRUE(t.find_vertex(VertexKind::PcieSwitch, 0, 0, -1, &sw0));
  EXPECT_NEAR(link_bw(t, t.gpu(0), sw0), 0.8 * 63.0153846e9, 1e5);
  EXPECT_NEAR(link_bw(t, t.nic(0, 0), sw0), 0.8 * 63.0153846e9, 1e5);
  // Resolved spec records defaults: IB one-way latency 1.5 us.
  EXPECT_DOUBLE_EQ(t.spec.at("node").at("nic").at("latency_us").get<double>(), 1.5);
  EXPECT_EQ(t.spec.at("node").at("nic").at("gpudirect_rdma"), true);
  EXPECT_EQ(t.spec.at("nodes"), 2);
  // Network link: half the NIC-to-NIC latency.
  VertexId leaf;
  ASSERT_TRUE(t.find_vertex(VertexKind::LeafSwitch, -1, 3, 0, &leaf));
  EXPECT_DOUBLE_EQ(link_bw(t, t.nic(1, 3), leaf), 50e9 * 0.97);  // IB payload fraction 97%
  EXPECT_NEAR(t.link(t.edge_between(t.nic(1, 3), leaf)).latency_s, 0.75e-6, 1e-12);
}

TEST(Presets, HgxA100AndPcieFacts) {
  const Topology a = make("hgx-a100");
  VertexId nvsw;
  ASSERT_TRUE(a.find_vertex(VertexKind::NvSwitch, 0, 0, -1, &nvsw));
  EXPECT_DOUBLE_EQ(link_bw(a, a.gpu(5), nvsw), 300e9 * 0.8);  // 12 x 25 GB/s x NVLink3's 20/25
  EXPECT_FALSE(a.nvls_capable);
  EXPECT_EQ(a.cpu_vendor, "amd");
  EXPECT_DOUBLE_EQ(a.network.nic_bandwidth_Bps, 25e9);  // HDR 200 Gb/s

  const Topology p = make("pcie-gen4-8gpu");
  EXPECT_FALSE(p.has_nvswitch);
  EXPECT_EQ(p.nvlinks_per_gpu, 0);
  EXPECT_EQ(p.nics_per_node(), 2);
  EXPECT_EQ(p.network.transport, Transport::RoCE);
  EXPECT_DOUBLE_EQ(p.network.nic_bandwidth_Bps, 12.5e9);
  EXPECT_DOUBLE_EQ(p.spec.at("node").at("nic").at("latency_us").get<double>(), 3.0);  // RoCE default
  VertexId sw0;
  ASSERT_TRUE(p.find_vertex(VertexKind::PcieSwitch, 0, 0, -1, &sw0));
  // PCIe Gen4 x16: 16 GT/s x 16 x 128/130 / 8 = 31.508 GB/s, x 0.8 achievable.
  EXPECT_NEAR(link_bw(p, p.gpu(1), sw0), 0.8 * 31.5076923e9, 1e5);
}

TEST(Topology, RankIndexingAndLookup) {
  const Topology t = make("dgx-h100", {}, 3);
  for (int r : {0, 7, 9, 23}) {
    const Vertex& v = t.vertex(t.gpu(r));
    EXPECT_EQ(v.kind, VertexKind::Gpu);
    EXPECT_EQ(v.node, r / 8);
    EXPECT_EQ(v.index, r % 8);
    char expected[32];
    std::snprintf(expected, sizeof expected, "n%d.gpu%d", r / 8, r % 8);
    EXPECT_EQ(v.name, expected);
  }
  EXPECT_EQ(t.vertex(t.nic(2, 5)).name, "n2.nic5");
  VertexId v;
  EXPECT_FALSE(t.find_vertex(VertexKind::Gpu, 3, 0, -1, &v));
  EXPECT_TRUE(t.find_vertex(VertexKind::SpineSwitch, -1, 0, -1, &v));
  EXPECT_THROW(t.edge_between(t.gpu(0), t.gpu(1)), std::logic_error);
  EXPECT_THROW(t.gpu(24), std::out_of_range);
}

TEST(Topology, ToStrings) {
  EXPECT_STREQ(to_string(PathClass::Pix), "PIX");
  EXPECT_STREQ(to_string(PathClass::Sys), "SYS");
  EXPECT_STREQ(to_string(Transport::RoCE), "roce");
  EXPECT_STREQ(to_string(LinkKind::NvLink), "NVLink");
  EXPECT_STREQ(to_string(VertexKind::Nic), "NIC");
}

TEST(Topology, Oversubscription) {
  // Two groups of 2 nodes; leaf<->spine = nodes in group x NIC bw / oversubscription.
  const Topology t1 = make("dgx-h100", {"fabric.nodes_per_leaf=2"}, 4);
  const Topology t2 = make("dgx-h100", {"fabric.nodes_per_leaf=2", "fabric.oversubscription=2"}, 4);
  VertexId leaf1, spine1, leaf2, spine2;
  ASSERT_TRUE(t1.find_vertex(VertexKind::LeafSwitch, -1, 0, 1, &leaf1));
  ASSERT_TRUE(t1.find_vertex(VertexKind::SpineSwitch, -1, 0, -1, &spine1));
  ASSERT_TRUE(t2.find_vertex(VertexKind::LeafSwitch, -1, 0, 1, &leaf2));
  ASSERT_TRUE(t2.find_vertex(VertexKind::SpineSwitch, -1, 0, -1, &spine2));
  EXPECT_DOUBLE_EQ(link_bw(t1, leaf1, spine1), 2 * 50e9 * 0.97);  // NIC payload rate 97% of 400 Gb/s
  EXPECT_DOUBLE_EQ(link_bw(t2, leaf2, spine2), 2 * 50e9 * 0.97 / 2);
  EXPECT_NEAR(t2.link(t2.edge_between(leaf2, spine2)).latency_s, 0.5e-6, 1e-12);
}

TEST(Spec, OverridesAndValueParsing) {
  json spec = load_topology_spec("dgx-h100");
  apply_override(spec, "node.nic.Gbps=200", "--set");
  apply_override(spec, "node.nic.transport=roce", "--set");
  apply_override(spec, "node.nic.gpudirect_rdma=false", "--set");
  apply_override(spec, "node.nvlink.GBps_per_link=20", "--set");
  apply_override(spec, "fabric.oversubscription=2", "--set");
  EXPECT_EQ(spec["node"]["nic"]["Gbps"], 200);
  EXPECT_EQ(spec["node"]["nic"]["transport"], "roce");
  EXPECT_EQ(spec["node"]["nic"]["gpudirect_rdma"], false);
  const Topology t = build_topology(spec, "dgx-h100.json");
  EXPECT_DOUBLE_EQ(t.network.nic_bandwidth_Bps, 25e9);
  EXPECT_EQ(t.network.transport, Transport::RoCE);
  EXPECT_FALSE(t.network.gpudirect_rdma);
  VertexId nvsw;
  ASSERT_TRUE(t.find_vertex(VertexKind::NvSwitch, 0, 0, -1, &nvsw));
  EXPECT_DOUBLE_EQ(link_bw(t, t.gpu(0), nvsw), 18 * 20e9 * (20.6 / 25.0));  // x NVLink4's achievable fraction
  EXPECT_DOUBLE_EQ(t.spec["node"]["nic"]["latency_us"].get<double>(), 3.0);  // RoCE default

  // tcp: GPUDirect RDMA off by default, 25 us NIC to NIC.
  const Topology tcp = make("pcie-gen4-8gpu", {"node.nic.transport=tcp"}, 2);
  EXPECT_FALSE(tcp.network.gpudirect_rdma);
  EXPECT_DOUBLE_EQ(tcp.spec["node"]["nic"]["latency_us"].get<double>(), 25.0);
}

TEST(SpecErrors, UnknownOverrideKey) {
  json spec = load_topology_spec("dgx-h100");
  const std::string m = error_of([&] { apply_override(spec, "node.nic.Gbbps=200", "--set"); });
  EXPECT_NE(m.find("--set"), std::string::npos) << m;
  EXPECT_NE(m.find("node.nic.Gbbps"), std::string::npos) << m;
  EXPECT_NE(m.find("Gbps"), std::string::npos) << m;
  EXPECT_NE(m.find("transport"), std::string::npos) << m;  // lists valid keys at that level
  const std::string m2 = error_of([&] { apply_override(spec, "nod.nic.Gbps=1", "--set"); });
  EXPECT_NE(m2.find("'nod'"), std::string::npos) << m2;
  EXPECT_NE(m2.find("fabric"), std::string::npos) << m2;
  const std::string m3 = error_of([&] { apply_override(spec, "node.nic.Gbps.x=1", "--set"); });
  EXPECT_NE(m3.find("not an object"), std::string::npos) << m3;
  const std::string m4 = error_of([&] { apply_override(spec, "novalue", "--set"); });
  EXPECT_NE(m4.find("KEY=VALUE"), std::string::npos) << m4;
}

TEST(SpecErrors, NodeCount) {
  json spec = load_topology_spec("dgx-h100");
  const std::string m = error_of([&] { set_node_count(spec, 0); });
  EXPECT_NE(m.find("--nodes"), std::string::npos) << m;
  EXPECT_NE(m.find(">= 1"), std::string::npos) << m;
}

TEST(SpecErrors, UnknownPresetAndMissingFile) {
  const std::string m = error_of([] { load_topology_spec("dgx-h300"); });
  EXPECT_NE(m.find("dgx-h300"), std::string::npos) << m;
  EXPECT_NE(m.find("dgx-h100, dgx-h200, dgx1-v100, dgx2-v100, gb200-nvl72, gcp-a3-high, gcp-a3-mega, gh200-quad, hgx-a100, hgx-h800, oci-a100, oci-h100, pcie-gen4-8gpu"), std::string::npos) << m;
  const std::string m2 = error_of([] { load_topology_spec("/nonexistent/dir/my-cluster.json"); });
  EXPECT_NE(m2.find("/nonexistent/dir/my-cluster.json"), std::string::npos) << m2;
  EXPECT_NE(m2.find("cannot open"), std::string::npos) << m2;
  EXPECT_NE(m2.find("dgx-h100"), std::string::npos) << m2;
}

TEST(SpecErrors, MalformedJsonLineAndColumn) {
  // Line 3 is `  "nodes": ,` : the unexpected ',' is the 12th character.
  const std::string path = write_temp("bad.json", "{\n  \"name\": \"x\",\n  \"nodes\": ,\n}\n");
  const std::string m = error_of([&] { load_topology_spec(path); });
  EXPECT_EQ(m.rfind(path + ": line 3, column 12: ", 0), 0u) << m;
  EXPECT_NE(m.find("syntax error"), std::string::npos) << m;
  EXPECT_EQ(m.find("json.exception"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  // Truncated document: error at the end of line 2.
  const std::string path2 = write_temp("trunc.json", "{\n  \"nodes\": 2");
  const std::string m2 = error_of([&] { load_topology_spec(path2); });
  EXPECT_NE(m2.find(": line 2, column "), std::string::npos) << m2;
  // A valid file loads (comments allowed).
  const std::string ok = write_temp("ok.json", "// my cluster\n" + minimal_spec().dump(2));
  EXPECT_NO_THROW(build_topology(load_topology_spec(ok), ok));
}

TEST(SpecErrors, UnknownKeyWithPath) {
  json spec = load_topology_spec("dgx-h100");
  spec["node"]["nic"]["Gbsp"] = 400;
  const std::string m = error_of([&] { build_topology(spec, "dgx-h100.json"); });
  EXPECT_EQ(m.rfind("dgx-h100.json: /node/nic/Gbsp: unknown key 'Gbsp'", 0), 0u) << m;
  EXPECT_NE(m.find("did you mean 'Gbps'"), std::string::npos) << m;
  json spec2 = load_topology_spec("dgx-h100");
  spec2["fabrik"] = json::object();
  const std::string m2 = error_of([&] { build_topology(spec2, "x.json"); });
  EXPECT_EQ(m2.rfind("x.json: /fabrik: unknown key", 0), 0u) << m2;
}

TEST(SpecErrors, ZeroAndNegativeBandwidth) {
  json spec = load_topology_spec("dgx-h100");
  apply_override(spec, "node.nic.Gbps=0", "--set");
  EXPECT_EQ(error_of([&] { build_topology(spec, "dgx-h100.json"); }),
            "dgx-h100.json: /node/nic/Gbps: must be > 0 (got 0)");
  json spec2 = load_topology_spec("dgx-h100");
  apply_override(spec2, "node.nvlink.GBps_per_link=-25", "--set");
  EXPECT_EQ(error_of([&] { build_topology(spec2, "dgx-h100.json"); }),
            "dgx-h100.json: /node/nvlink/GBps_per_link: must be > 0 (got -25)");
  json spec3 = load_topology_spec("hgx-a100");
  apply_override(spec3, "node.cpu.host_memory_GBps=0", "--set");
  EXPECT_EQ(error_of([&] { build_topology(spec3, "hgx-a100"); }),
            "hgx-a100: /node/cpu/host_memory_GBps: must be > 0 (got 0)");
  json spec4 = load_topology_spec("hgx-a100");
  apply_override(spec4, "fabric.oversubscription=0.5", "--set");
  EXPECT_NE(error_of([&] { build_topology(spec4, "hgx-a100"); }).find("/fabric/oversubscription: must be >= 1"),
            std::string::npos);
}

TEST(SpecErrors, TypesAndCounts) {
  json spec = load_topology_spec("dgx-h100");
  spec["node"]["gpu"]["count"] = 0;
  EXPECT_EQ(error_of([&] { build_topology(spec, "f.json"); }),
            "f.json: /node/gpu/count: must be between 1 and 64 (got 0)");
  spec["node"]["gpu"]["count"] = 2.5;
  EXPECT_NE(error_of([&] { build_topology(spec, "f.json"); }).find("/node/gpu/count: must be an integer"),
            std::string::npos);
  spec["node"]["gpu"]["count"] = "8";
  EXPECT_NE(error_of([&] { build_topology(spec, "f.json"); }).find("/node/gpu/count: must be an integer"),
            std::string::npos);
  json s2 = load_topology_spec("dgx-h100");
  s2["node"]["pcie"]["generation"] = 7;
  EXPECT_NE(error_of([&] { build_topology(s2, "f.json"); }).find("/node/pcie/generation: must be a PCIe generation"),
            std::string::npos);
  json s3 = load_topology_spec("dgx-h100");
  s3["node"]["pcie"]["p2p"] = "maybe";
  EXPECT_NE(error_of([&] { build_topology(s3, "f.json"); }).find("/node/pcie/p2p: must be one of switch, host, none"),
            std::string::npos);
  json s4 = load_topology_spec("dgx-h100");
  s4["node"]["nic"]["transport"] = "tcp";
  s4["node"]["nic"]["gpudirect_rdma"] = true;
  EXPECT_NE(error_of([&] { build_topology(s4, "f.json"); }).find("/node/nic/gpudirect_rdma"), std::string::npos);
  json s5 = load_topology_spec("dgx-h100");
  s5["node"].erase("gpu");
  EXPECT_EQ(error_of([&] { build_topology(s5, "f.json"); }), "f.json: /node/gpu: missing required key");
  json s6 = load_topology_spec("dgx-h100");
  s6["format"] = "ccsim-topology/9";
  EXPECT_NE(error_of([&] { build_topology(s6, "f.json"); }).find("f.json: /format: must be one of"), std::string::npos);
  json s7 = load_topology_spec("dgx-h100");
  s7["node"]["nvlink"]["nvswitch"] = false;
  EXPECT_NE(error_of([&] { build_topology(s7, "f.json"); }).find("/node/nvlink/nvswitch"), std::string::npos);
  EXPECT_NE(error_of([] { build_topology(json::array(), "f.json"); }).find("f.json: /: must be an object"),
            std::string::npos);
}

TEST(SpecErrors, DisconnectedGpu) {
  // No NVLink and no PCIe: the GPUs cannot reach each other.
  const json spec = json::parse(R"({"node": {"gpu": {"model": "g", "count": 2}, "cpu": {"sockets": 1}}})");
  const std::string m = error_of([&] { build_topology(spec, "island.json"); });
  EXPECT_EQ(m.rfind("island.json: ", 0), 0u) << m;
  EXPECT_NE(m.find("GPU n0.gpu1 is disconnected"), std::string::npos) << m;
  EXPECT_NE(m.find("no NVLink or PCIe path"), std::string::npos) << m;
  // NVLink alone connects them (single node without NICs is fine).
  json nv = spec;
  nv["node"]["nvlink"] = {{"links_per_gpu", 4}, {"GBps_per_link", 25}, {"nvswitch", false}};
  const Topology t = build_topology(nv, "bridge.json");
  // 4 links x 25 GB/s at the default achievable fraction (0.8 when no generation is given).
  EXPECT_DOUBLE_EQ(route_bandwidth_Bps(t, route_between_gpus(t, 0, 1)), 100e9 * 0.8);
}

TEST(SpecErrors, MultiNodeWithoutNic) {
  json spec = load_topology_spec("pcie-gen4-8gpu");
  apply_override(spec, "node.nic=null", "--set");
  set_node_count(spec, 2);
  const std::string m = error_of([&] { build_topology(spec, "pcie-gen4-8gpu.json"); });
  EXPECT_EQ(m.rfind("pcie-gen4-8gpu.json: /node/nic: ", 0), 0u) << m;
  EXPECT_NE(m.find("no NIC"), std::string::npos) << m;
  json spec2 = load_topology_spec("dgx-h100");
  apply_override(spec2, "node.nic.count=0", "--set");
  set_node_count(spec2, 4);
  EXPECT_NE(error_of([&] { build_topology(spec2, "d"); }).find("4 nodes needs NICs"), std::string::npos);
  // One node without NICs is fine.
  spec2["nodes"] = 1;
  EXPECT_NO_THROW(build_topology(spec2, "d"));
}

TEST(Report, DgxH100) {
  const Topology t = make("dgx-h100", {}, 2);
  const std::string r = format_topology_report(t);
  for (const char* s : {"dgx-h100", "H100-SXM5-80GB", "2 x 8 GPUs", "NVLS", "transport ib", "GPUDirect RDMA yes",
                        "GPU0   X      NV18", "NIC7", "Legend", "GPU3 -> NIC3 (PIX)", "370.8", "50.4", "48.5",
                        "leaf <-> spine", "NIC <-> leaf", "0.750"})
    EXPECT_NE(r.find(s), std::string::npos) << "missing '" << s << "' in\n" << r;
  EXPECT_EQ(topo_matrix_cell(t, t.gpu(0), t.nic(0, 4)), "SYS");
  EXPECT_EQ(topo_matrix_cell(t, t.gpu(0), t.gpu(0)), "X");
  EXPECT_THROW(format_topology_report(t, 2), std::out_of_range);
  const Topology p = make("pcie-gen4-8gpu");
  const std::string rp = format_topology_report(p);
  EXPECT_NE(rp.find("NVLink:      none"), std::string::npos) << rp;
  EXPECT_NE(rp.find("GPU0   X      PIX    NODE   NODE   SYS"), std::string::npos) << rp;
}
