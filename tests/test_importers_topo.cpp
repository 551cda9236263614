// nvidia-smi topo -m and NCCL topology XML importers: real files (tests/data/samples/) and broken inputs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "calibrate/nccl_topo_xml.h"
#include "calibrate/nvidia_smi_topo.h"
#include "common/error.h"
#include "topologies/routing.h"
#include "topologies/spec.h"

using namespace ccsim;

namespace {

std::string sample(const std::string& name) { return std::string(CCSIM_SOURCE_DIR) + "/tests/data/samples/" + name; }

std::string read_all(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Keeps the first `n` lines of `text`.
std::string head(const std::string& text, int n) {
  std::istringstream in(text);
  std::string out, l;
  for (int i = 0; i < n && std::getline(in, l); ++i) out += l + "\n";
  return out;
}

int line_of(const std::string& text, const std::string& starts) {
  std::istringstream in(text);
  std::string l;
  int n = 0;
  while (std::getline(in, l)) {
    ++n;
    if (l.rfind(starts, 0) == 0) return n;
  }
  return -1;
}

std::string replace_line(const std::string& text, const std::string& starts, const std::string& with) {
  std::istringstream in(text);
  std::string out, l;
  while (std::getline(in, l)) out += (l.rfind(starts, 0) == 0 ? with : l) + "\n";
  return out;
}

template <typename F>
void expect_error(F&& f, const std::string& file, const std::string& part) {
  try {
    f();
    FAIL() << "no error, expected: " << part;
  } catch (const InputError& e) {
    std::string w = e.what();
    EXPECT_EQ(w.rfind(file + ": ", 0), 0u) << w;
    EXPECT_NE(w.find(part), std::string::npos) << w;
  }
}

NvidiaSmiTopo smi(const std::string& text, const std::string& file = "topo.txt") {
  std::istringstream in(text);
  return parse_nvidia_smi_topo(in, file);
}

NcclTopoXml xml(const std::string& text, const std::string& file = "topo.xml") {
  std::istringstream in(text);
  return parse_nccl_topo_xml(in, file);
}

}  // namespace

// ---------------- nvidia-smi topo -m ----------------

TEST(NvidiaSmiTopo, H200WithNicsAndLegend) {
  auto t = parse_nvidia_smi_topo_file(sample("nvsmi_topo_1.txt"));
  ASSERT_EQ(t.devices.size(), 16u);
  EXPECT_EQ(t.num_gpus(), 8);
  EXPECT_EQ(t.num_nics(), 8);
  EXPECT_EQ(t.cell("GPU0", "GPU1"), "NV18");
  EXPECT_EQ(t.cell("GPU0", "GPU0"), "X");
  EXPECT_EQ(t.cell("GPU0", "NIC4"), "PIX");
  EXPECT_EQ(t.cell("GPU7", "NIC2"), "PIX");
  EXPECT_EQ(t.cell("GPU0", "NIC2"), "SYS");
  EXPECT_EQ(t.cell("NIC0", "NIC1"), "NODE");
  EXPECT_TRUE(t.has_legend);
  EXPECT_EQ(t.nic_names.size(), 8u);
  EXPECT_EQ(t.nic_names.at("NIC3"), "mlx5_3");
  EXPECT_EQ(t.affinity_columns.size(), 3u);
  EXPECT_EQ(t.cpu_affinity[t.index_of("GPU4")], "64-127,192-255");
  EXPECT_EQ(t.numa_affinity[t.index_of("GPU0")], "0");
  EXPECT_EQ(t.numa_affinity[t.index_of("GPU7")], "1");
  EXPECT_EQ(t.gpu_numa_id[t.index_of("GPU7")], "N/A");
  EXPECT_EQ(t.cpu_affinity[t.index_of("NIC0")], "");

  auto spec = node_spec_from_nvidia_smi(t, "nvsmi_topo_1.txt");
  EXPECT_EQ(spec["node"]["gpu"]["count"], 8);
  EXPECT_EQ(spec["node"]["nvlink"]["links_per_gpu"], 18);
  EXPECT_EQ(spec["node"]["nvlink"]["nvswitch"], true);
  EXPECT_EQ(spec["node"]["nvlink"]["nvls"], true);
  EXPECT_EQ(spec["node"]["cpu"]["sockets"], 2);
  EXPECT_EQ(spec["node"]["pcie"]["switches_per_socket"], 4);  // 8 GPU+NIC PIX pairs over 2 sockets
  EXPECT_EQ(spec["node"]["pcie"]["switch_levels"], 1);
  EXPECT_EQ(spec["node"]["nic"]["count"], 8);
  Topology topo = build_topology(spec, "nvsmi_topo_1.txt");
  EXPECT_EQ(topo.gpus_per_node(), 8);
  EXPECT_EQ(topo.nics_per_node(), 8);
  EXPECT_EQ(topo.nvlinks_per_gpu, 18);
  EXPECT_TRUE(topo.has_nvswitch);
  // Two nodes build too (the NICs make a fabric).
  spec["nodes"] = 2;
  EXPECT_EQ(build_topology(spec, "nvsmi_topo_1.txt").num_gpus(), 16);
}

TEST(NvidiaSmiTopo, Rtx4090PcieOnlyWithoutLegend) {
  auto t = parse_nvidia_smi_topo_file(sample("nvsmi_topo_8.txt"));
  EXPECT_EQ(t.num_gpus(), 8);
  EXPECT_EQ(t.num_nics(), 2);
  EXPECT_FALSE(t.has_legend);
  EXPECT_TRUE(t.nic_names.empty());
  EXPECT_EQ(t.cell("GPU0", "GPU5"), "SYS");
  EXPECT_EQ(t.cell("GPU6", "NIC0"), "PHB");
  EXPECT_EQ(t.cell("NIC0", "NIC1"), "PIX");
  EXPECT_EQ(t.cpu_affinity[t.index_of("GPU4")], "56-111,168-223");

  auto spec = node_spec_from_nvidia_smi(t, "nvsmi_topo_8.txt");
  EXPECT_TRUE(spec["node"]["nvlink"].is_null());
  EXPECT_EQ(spec["node"]["cpu"]["sockets"], 2);
  EXPECT_EQ(spec["node"]["pcie"]["switches_per_socket"], 0);  // the only PIX pair is the two NIC ports
  EXPECT_EQ(spec["node"]["pcie"]["p2p"], "host");
  EXPECT_EQ(spec["node"]["nic"]["count"], 2);
  Topology topo = build_topology(spec, "nvsmi_topo_8.txt");
  EXPECT_EQ(topo.gpus_per_node(), 8);
  EXPECT_EQ(topo.nvlinks_per_gpu, 0);
}

// 8 V100 in the hybrid cube-mesh (NV1/NV2 to 4 peers each, SYS to the others): the NV# pairs become
// node.nvlink.peers, 6 links per GPU, NVLink2; before, the mesh was dropped and every pair used PCIe.
TEST(NvidiaSmiTopo, HybridCubeMeshBecomesPeers) {
  auto t = parse_nvidia_smi_topo_file(sample("nvsmi_topo_v100_hybrid_cube_mesh.txt"));
  EXPECT_EQ(t.num_gpus(), 8);
  EXPECT_EQ(t.cell("GPU0", "GPU6"), "NV2");
  auto spec = node_spec_from_nvidia_smi(t, "nvsmi_topo_v100_hybrid_cube_mesh.txt");
  const auto& nv = spec["node"]["nvlink"];
  EXPECT_EQ(nv["nvswitch"], false);
  EXPECT_EQ(nv["links_per_gpu"], 6);
  EXPECT_EQ(nv["generation"], 2);
  const nlohmann::json expected = nlohmann::json::parse(
      "[[0,1,1],[0,2,1],[0,3,2],[0,6,2],[1,2,2],[1,3,1],[1,7,2],[2,3,2],[2,4,1],[3,5,1],[4,5,2],[4,6,1],[4,7,2],"
      "[5,6,2],[5,7,1],[6,7,1]]");
  EXPECT_EQ(nv["peers"], expected);
  // No NUMA column and one CPU affinity (0-95) for every GPU: one socket, not a group per GPU.
  EXPECT_EQ(spec["node"]["cpu"]["sockets"], 1);
  const Topology topo = build_topology(spec, "nvsmi_topo_v100_hybrid_cube_mesh.txt");
  EXPECT_EQ(topo.nvlink_peer_links[0 * 8 + 6], 2);
  EXPECT_EQ(topo.nvlink_peer_links[0 * 8 + 5], 0);
}

// Without a NUMA column, GPUs of one CPU affinity share a socket: 4 GPUs joined pair by pair, two
// per CPU affinity, their unjoined pairs SYS.
TEST(NvidiaSmiTopo, CpuAffinityGroupsSocketsWithoutNumaColumn) {
  auto t = smi(
      "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\n"
      "GPU0\t X \tNV2\tSYS\tNV1\t0-19\n"
      "GPU1\tNV2\t X \tNV1\tSYS\t0-19\n"
      "GPU2\tSYS\tNV1\t X \tNV2\t20-39\n"
      "GPU3\tNV1\tSYS\tNV2\t X \t20-39\n");
  auto spec = node_spec_from_nvidia_smi(t, "topo.txt");
  EXPECT_EQ(spec["node"]["cpu"]["sockets"], 2);
  EXPECT_EQ(spec["node"]["nvlink"]["links_per_gpu"], 3);
  EXPECT_EQ(spec["node"]["nvlink"]["peers"], nlohmann::json::parse("[[0,1,2],[0,3,1],[1,2,1],[2,3,2]]"));
  EXPECT_EQ(build_topology(spec, "topo.txt").gpus_per_node(), 4);
}

TEST(NvidiaSmiTopo, SpacesInsteadOfTabsAndTwoGpuBridge) {
  auto t = smi(
      "        GPU0    GPU1    CPU Affinity    NUMA Affinity\n"
      "GPU0     X      NV4     0-15            0\n"
      "GPU1    NV4      X      0-15            0\n");
  EXPECT_EQ(t.cell("GPU1", "GPU0"), "NV4");
  auto spec = node_spec_from_nvidia_smi(t, "topo.txt");
  EXPECT_EQ(spec["node"]["nvlink"]["nvswitch"], false);
  EXPECT_EQ(spec["node"]["nvlink"]["links_per_gpu"], 4);
  EXPECT_TRUE(spec["node"]["nic"].is_null());
  EXPECT_EQ(build_topology(spec, "topo.txt").gpus_per_node(), 2);
}

TEST(NvidiaSmiTopo, BrokenInputs) {
  const std::string good = read_all(sample("nvsmi_topo_1.txt"));
  int row = line_of(good, "GPU3\t");
  // Truncated row.
  std::string cut = replace_line(good, "GPU3\t", "GPU3\tNV18\tNV18\tNV18\t X \tNV18");
  expect_error([&] { smi(cut); }, "topo.txt", "line " + std::to_string(row) + ": row GPU3 has 5 cells, the header has 16 devices");
  // Garbage cell.
  std::string bad = replace_line(good, "GPU3\t",
                                 "GPU3\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNODE\tNODE\tSYS\tPIX\tNODE\tSYS\tSYS\tFOO\t0-63\t0\t\tN/A");
  expect_error([&] { smi(bad); }, "topo.txt", "line " + std::to_string(row) + ": row GPU3, column NIC7: unknown connection 'FOO'");
  // Matrix cut after GPU5 (file truncated).
  int gpu5 = line_of(good, "GPU5\t");
  expect_error([&] { smi(head(good, gpu5)); }, "topo.txt", "line " + std::to_string(gpu5) + ": the matrix ends before the rows of GPU6, GPU7, NIC0");
  // Garbled affinity.
  std::string aff = replace_line(good, "GPU3\t",
                                 "GPU3\tNV18\tNV18\tNV18\t X \tNV18\tNV18\tNV18\tNV18\tNODE\tNODE\tSYS\tPIX\tNODE\tSYS\tSYS\tSYS\tzero\t0\t\tN/A");
  expect_error([&] { smi(aff); }, "topo.txt", "line " + std::to_string(row) + ": row GPU3: invalid CPU Affinity 'zero'");
  // Empty file.
  expect_error([&] { smi(""); }, "topo.txt", "no nvidia-smi topo -m matrix found");
}

// ---------------- NCCL topology XML ----------------

TEST(NcclTopoXml, AzureNdv4InputFile) {
  auto x = parse_nccl_topo_xml_file(sample("nccl_topo_1.xml"));
  EXPECT_EQ(x.system.name, "system");
  EXPECT_EQ(x.system.attr("version"), "1");
  EXPECT_EQ(x.system.line, 7);  // after the provenance comment
  auto cpus = x.system.descendants("cpu");
  ASSERT_EQ(cpus.size(), 4u);
  EXPECT_EQ(cpus[2]->attr("numaid"), "2");
  EXPECT_EQ(cpus[0]->attr("vendor"), "AuthenticAMD");
  EXPECT_EQ(x.system.descendants("pci").size(), 20u);

  auto spec = node_spec_from_nccl_xml(x, "nccl_topo_1.xml");
  EXPECT_EQ(spec["node"]["gpu"]["count"], 8);
  EXPECT_EQ(spec["node"]["cpu"]["sockets"], 4);  // 4 NUMA nodes as the VM exposes them
  EXPECT_EQ(spec["node"]["cpu"]["vendor"], "amd");
  EXPECT_EQ(spec["node"]["pcie"]["generation"], 4);  // "16 GT/s"
  EXPECT_EQ(spec["node"]["pcie"]["lanes"], 16);
  EXPECT_EQ(spec["node"]["pcie"]["switches_per_socket"], 1);
  EXPECT_EQ(spec["node"]["nic"]["count"], 8);
  EXPECT_EQ(spec["node"]["nic"]["transport"], "ib");  // class 0x020700
  EXPECT_TRUE(spec["node"]["nvlink"].is_null());      // the input file has no <nvlink>
  Topology topo = build_topology(spec, "nccl_topo_1.xml");
  EXPECT_EQ(topo.gpus_per_node(), 8);
  EXPECT_EQ(topo.nics_per_node(), 8);
}

TEST(NcclTopoXml, DumpWithGpuNvlinkAndNet) {
  const std::string dump = R"(<?xml version="1.0"?>
<system version="1">
  <cpu host_hash="0x1" numaid="0" affinity="ff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:15:00.0" class="0x060400" vendor="0x1000" device="0xc030" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:18:00.0" class="0x030200" vendor="0x10de" device="0x2330" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="90" rank="0" gdr="1">
          <nvlink target="0000:05:00.0" count="18" tclass="0x068000"/>
        </gpu>
      </pci>
      <pci busid="0000:19:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" link_width="16">
        <nic>
          <net name="mlx5_0" dev="0" speed="400000" port="1" latency="0.000000" guid="0x1" maxconn="131072" gdr="1"/>
        </nic>
      </pci>
    </pci>
  </cpu>
  <!-- second socket -->
  <cpu host_hash="0x1" numaid="1" affinity="ff00" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:95:00.0" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:98:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="1" sm="90" rank="1" gdr="1"><nvlink target="0000:05:00.0" count="18" tclass="0x068000"/></gpu>
      </pci>
      <pci busid="0000:99:00.0" class="0x020700" link_speed="32.0 GT/s PCIe" link_width="16">
        <nic><net name="mlx5_1" dev="1" speed="400000" port="1" gdr="1"/></nic>
      </pci>
    </pci>
  </cpu>
</system>
)";
  auto x = xml(dump);
  auto spec = node_spec_from_nccl_xml(x, "dump.xml");
  EXPECT_EQ(spec["node"]["gpu"]["count"], 2);
  EXPECT_EQ(spec["node"]["gpu"]["arch"], "sm90");
  EXPECT_EQ(spec["node"]["nvlink"]["links_per_gpu"], 18);
  EXPECT_EQ(spec["node"]["nvlink"]["nvswitch"], true);
  EXPECT_EQ(spec["node"]["nvlink"]["nvls"], true);
  EXPECT_EQ(spec["node"]["cpu"]["sockets"], 2);
  EXPECT_EQ(spec["node"]["cpu"]["vendor"], "intel");
  EXPECT_EQ(spec["node"]["cpu"]["model_id"], 143);  // familyid 6, modelid 143: Sapphire Rapids
  EXPECT_EQ(spec["node"]["pcie"]["generation"], 5);
  EXPECT_EQ(spec["node"]["nic"]["count"], 2);
  EXPECT_DOUBLE_EQ(spec["node"]["nic"]["Gbps"].get<double>(), 400.0);
  EXPECT_EQ(spec["node"]["nic"]["gpudirect_rdma"], true);
  Topology topo = build_topology(spec, "dump.xml");
  EXPECT_EQ(topo.cpu_model_id, 143);
  EXPECT_EQ(topo.nvlinks_per_gpu, 18);
  EXPECT_TRUE(topo.nvls_capable);
}

// NCCL wrote AMD's CPUID family as 15 + (extended family << 4) before 2.30.5 and as 15 + extended family
// since (NVIDIA/nccl#2441's good and bad dumps of one EPYC 9534: 175 and 25); both are Zen 3/4, family 25.
TEST(NcclTopoXml, AmdFamilyInBothOfNcclsEncodings) {
  for (const char* family : {"175", "25"}) {
    const std::string dump = std::string(R"(<system version="1">
  <cpu host_hash="0x1" numaid="0" affinity="ff" arch="x86_64" vendor="AuthenticAMD" familyid=")") + family + R"(" modelid="17">
    <pci busid="0000:61:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="90" rank="0" gdr="1"/>
    </pci>
  </cpu>
</system>
)";
    auto x = xml(dump);
    const auto spec = node_spec_from_nccl_xml(x, "dump.xml");
    EXPECT_EQ(spec["node"]["cpu"]["vendor"], "amd") << family;
    EXPECT_EQ(spec["node"]["cpu"]["family_id"], 25) << family;
  }
}

TEST(NcclTopoXml, MalformedXmlNamesFileAndLine) {
  expect_error([] { xml("<system>\n  <cpu numaid=\"0\">\n    <pci class=\"0x0302\">\n  </cpu>\n</system>\n"); }, "topo.xml",
               "line 4: closing tag </cpu> does not match <pci> opened on line 3");
  expect_error([] { xml("<system>\n  <cpu numaid=\"0\">\n"); }, "topo.xml",
               "line 3: end of file: <cpu> opened on line 2 is not closed");
  expect_error([] { xml("<system>\n<cpu numaid=0/>\n</system>"); }, "topo.xml", "line 2: value of attribute 'numaid' of <cpu> must be quoted");
  expect_error([] { xml("<system>\n<cpu a=\"1\" a=\"2\"/>\n</system>"); }, "topo.xml", "line 2: duplicate attribute 'a'");
  expect_error([] { xml("<system>\n hello\n</system>"); }, "topo.xml", "line 2: unexpected text 'hello'");
  expect_error([] { xml("<!-- c -->\n<topology/>"); }, "topo.xml", "line 2: root element is <topology>");
  expect_error([] { xml("<system/>\n<system/>"); }, "topo.xml", "line 2: a second top-level element");
  expect_error([] { xml(""); }, "topo.xml", "no XML element found");
  // Truncated real file.
  const std::string real = read_all(sample("nccl_topo_1.xml"));
  expect_error([&] { xml(head(real, 20)); }, "topo.xml", "is not closed (truncated file?)");
  // Well-formed, but no GPU.
  expect_error([] { node_spec_from_nccl_xml(xml("<system version=\"1\"><cpu numaid=\"0\"/></system>"), "empty.xml"); }, "empty.xml",
               "no GPU in the NCCL topology");
  // Bad attribute values are reported with the element's line.
  expect_error([] { node_spec_from_nccl_xml(xml("<system>\n<cpu>\n<pci class=\"0x030200\">\n<gpu sm=\"nine\"/>\n</pci></cpu></system>"), "bad.xml"); },
               "bad.xml", "line 4: <gpu sm=\"nine\">");
}
