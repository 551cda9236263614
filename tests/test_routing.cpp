// Routes, path classes and GPU->NIC affinity.
#include <gtest/gtest.h>

#include <string>

#include "topologies/routing.h"
#include "topologies/spec.h"
#include "topologies/topology.h"

using namespace ccsim;
using nlohmann::json;

namespace {

Topology make(const std::string& preset, const std::vector<std::string>& sets = {}, int nodes = 1) {
  json spec = load_topology_spec(preset);
  for (const auto& s : sets) apply_override(spec, s, "--set");
  set_node_count(spec, nodes);
  return build_topology(spec, preset);
}

std::string path_of(const Topology& t, int a, int b, int rail = -1) {
  return format_route(t, route_between_gpus(t, a, b, rail));
}

int count_kind(const Topology& t, const Route& r, LinkKind k) {
  int n = 0;
  for (const Hop& h : r) n += t.link(h.edge).kind == k;
  return n;
}

constexpr double kGen5x16 = 32e9 * 16 * 128 / 130 / 8;  // 63.015 GB/s
constexpr double kGen4x16 = 16e9 * 16 * 128 / 130 / 8;  // 31.508 GB/s
// Default achievable fractions of the nominal rates (docs/topology.md): NVLink4 20.6 of 25 GB/s per
// link (NCCL's SM90 figure), PCIe 80%, InfiniBand NIC 97%.
constexpr double kNvl4Eff = 20.6 / 25.0, kPcieEff = 0.8, kIbEff = 0.97;

}  // namespace

TEST(Routing, IntraNodeNvlink) {
  const Topology t = make("dgx-h100");
  const Route r = route_between_gpus(t, 0, 5);
  EXPECT_EQ(format_route(t, r), "n0.gpu0 -> n0.nvswitch -> n0.gpu5");
  EXPECT_DOUBLE_EQ(route_bandwidth_Bps(t, r), 450e9 * kNvl4Eff);
  EXPECT_NEAR(route_latency_s(t, r), 0.5e-6, 1e-12);  // nvlink.latency_us is GPU to GPU
  EXPECT_TRUE(route_between_gpus(t, 3, 3).empty());
  // Hops are oriented: the reverse route walks the same edges backwards.
  const Route back = route_between_gpus(t, 5, 0);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_TRUE(back[0].edge == r[1].edge);
  EXPECT_NE(back[0].forward, r[1].forward);
}

TEST(Routing, InterNodeRailAligned) {
  const Topology t = make("dgx-h100", {}, 2);
  const Route r = route_between_gpus(t, 0, 8);
  // Crosses exactly NIC0 of node 0 and NIC0 of node 1.
  EXPECT_EQ(format_route(t, r), "n0.gpu0 -> n0.pcisw0 -> n0.nic0 -> leaf.g0.r0 -> n1.nic0 -> n1.pcisw0 -> n1.gpu0");
  int nics = 0;
  for (VertexId v : route_vertices(t, r))
    if (t.vertex(v).kind == VertexKind::Nic) ++nics;
  EXPECT_EQ(nics, 2);
  // Bottleneck: min(NIC 400 Gb/s = 50 GB/s, PCIe Gen5 x16 = 63 GB/s).
  EXPECT_DOUBLE_EQ(route_bandwidth_Bps(t, r), std::min(50e9 * kIbEff, kGen5x16 * kPcieEff));
  // 4 PCIe hops x 0.15 us + IB NIC to NIC 1.5 us.
  EXPECT_NEAR(route_latency_s(t, r), 4 * 0.15e-6 + 1.5e-6, 1e-12);
  // GPU 13 (local 5) uses rail 5 on both ends.
  EXPECT_EQ(path_of(t, 5, 13), "n0.gpu5 -> n0.pcisw5 -> n0.nic5 -> leaf.g0.r5 -> n1.nic5 -> n1.pcisw5 -> n1.gpu5");
  // Deterministic.
  EXPECT_EQ(path_of(t, 0, 8), path_of(t, 0, 8));
}

TEST(Routing, PxnOnOtherRail) {
  const Topology t = make("dgx-h100", {}, 2);
  // Rail 1 from GPU0: NVLink to GPU1 (owner of NIC1), then its PCIe switch; the receiver's NIC1
  // writes into GPU0 of node 1 across its socket's root complex (NODE).
  EXPECT_EQ(path_of(t, 0, 8, 1),
            "n0.gpu0 -> n0.nvswitch -> n0.gpu1 -> n0.pcisw1 -> n0.nic1 -> leaf.g0.r1 -> n1.nic1 -> n1.pcisw1 -> "
            "n1.cpu0 -> n1.pcisw0 -> n1.gpu0");
  // Without NVLink, no PXN: straight over PCIe to the rail's NIC.
  const Topology p = make("pcie-gen4-8gpu", {}, 2);
  EXPECT_EQ(path_of(p, 0, 8, 1),
            "n0.gpu0 -> n0.pcisw0 -> n0.cpu0 -> n0.cpu1 -> n0.pcisw2 -> n0.nic1 -> leaf.g0.r1 -> n1.nic1 -> "
            "n1.pcisw2 -> n1.cpu1 -> n1.cpu0 -> n1.pcisw0 -> n1.gpu0");
  EXPECT_THROW(route_between_gpus(t, 0, 8, 8), std::out_of_range);
  EXPECT_THROW(route_between_gpus(t, 0, 16), std::out_of_range);
}

TEST(Routing, SpineBetweenLeafGroups) {
  const Topology t = make("dgx-h100", {"fabric.nodes_per_leaf=1", "fabric.oversubscription=4"}, 2);
  const Route r = route_between_gpus(t, 2, 10);
  EXPECT_EQ(format_route(t, r),
            "n0.gpu2 -> n0.pcisw2 -> n0.nic2 -> leaf.g0.r2 -> spine -> leaf.g1.r2 -> n1.nic2 -> n1.pcisw2 -> n1.gpu2");
  // leaf<->spine = 1 node x 50 GB/s / 4.
  EXPECT_DOUBLE_EQ(route_bandwidth_Bps(t, r), 12.5e9 * kIbEff);
  EXPECT_NEAR(route_latency_s(t, r), 4 * 0.15e-6 + 1.5e-6 + 2 * 0.5e-6, 1e-12);
}

TEST(Routing, NoGpuDirectRdmaStagesThroughHostMemory) {
  const Topology t = make("dgx-h100", {"node.nic.gpudirect_rdma=false", "node.cpu.host_memory_GBps=40"}, 2);
  const Route r = route_between_gpus(t, 0, 8);
  EXPECT_EQ(format_route(t, r),
            "n0.gpu0 -> n0.pcisw0 -> n0.cpu0 -> n0.mem0 -> n0.cpu0 -> n0.pcisw0 -> n0.nic0 -> leaf.g0.r0 -> "
            "n1.nic0 -> n1.pcisw0 -> n1.cpu0 -> n1.mem0 -> n1.cpu0 -> n1.pcisw0 -> n1.gpu0");
  EXPECT_EQ(count_kind(t, r, LinkKind::Memory), 4);
  // Host memory link is shared by both directions and used twice per node: 40 / 2 = 20 GB/s.
  EXPECT_DOUBLE_EQ(route_bandwidth_Bps(t, r), 20e9);
}

TEST(Routing, PcieP2pModes) {
  // P2P between every pair (NCCL_P2P_LEVEL=SYS): through the closest common switch, root complex or UPI.
  const Topology sw = make("pcie-gen4-8gpu", {"node.pcie.nccl_p2p_level=SYS"});
  EXPECT_EQ(path_of(sw, 0, 1), "n0.gpu0 -> n0.pcisw0 -> n0.gpu1");
  EXPECT_EQ(path_of(sw, 0, 2), "n0.gpu0 -> n0.pcisw0 -> n0.cpu0 -> n0.pcisw1 -> n0.gpu2");
  EXPECT_EQ(path_of(sw, 1, 6), "n0.gpu1 -> n0.pcisw0 -> n0.cpu0 -> n0.cpu1 -> n0.pcisw3 -> n0.gpu6");
  // NCCL's default on this Intel host is PXB: the PIX pair keeps P2P, the NODE and SYS pairs go
  // through host memory (SHM; the FIFO on the receiver's socket).
  const Topology pxb = make("pcie-gen4-8gpu");
  EXPECT_EQ(pxb.pcie_p2p_level, PathClass::Pxb);
  EXPECT_EQ(path_of(pxb, 0, 1), "n0.gpu0 -> n0.pcisw0 -> n0.gpu1");
  EXPECT_EQ(path_of(pxb, 0, 2), "n0.gpu0 -> n0.pcisw0 -> n0.cpu0 -> n0.mem0 -> n0.cpu0 -> n0.pcisw1 -> n0.gpu2");
  EXPECT_EQ(path_of(pxb, 1, 6), "n0.gpu1 -> n0.pcisw0 -> n0.cpu0 -> n0.cpu1 -> n0.mem1 -> n0.cpu1 -> n0.pcisw3 -> n0.gpu6");
  EXPECT_EQ(make("pcie-gen4-8gpu", {"node.cpu.vendor=amd"}).pcie_p2p_level, PathClass::Sys);
  EXPECT_DOUBLE_EQ(route_bandwidth_Bps(sw, route_between_gpus(sw, 0, 1)), kGen4x16 * kPcieEff);
  // Inter-socket UPI 67.2 GB/s is above PCIe Gen4 x16.
  EXPECT_DOUBLE_EQ(route_bandwidth_Bps(sw, route_between_gpus(sw, 1, 6)), kGen4x16 * kPcieEff);

  const Topology host = make("pcie-gen4-8gpu", {"node.pcie.p2p=host"});
  EXPECT_EQ(path_of(host, 0, 1), "n0.gpu0 -> n0.pcisw0 -> n0.cpu0 -> n0.pcisw0 -> n0.gpu1");
  EXPECT_DOUBLE_EQ(route_bandwidth_Bps(host, route_between_gpus(host, 0, 1)), kGen4x16 * kPcieEff);

  const Topology none = make("pcie-gen4-8gpu", {"node.pcie.p2p=none", "node.cpu.host_memory_GBps=40"});
  const Route r = route_between_gpus(none, 0, 1);
  EXPECT_EQ(format_route(none, r), "n0.gpu0 -> n0.pcisw0 -> n0.cpu0 -> n0.mem0 -> n0.cpu0 -> n0.pcisw0 -> n0.gpu1");
  EXPECT_EQ(count_kind(none, r, LinkKind::Memory), 2);
  EXPECT_DOUBLE_EQ(route_bandwidth_Bps(none, r), 20e9);  // shared-duplex memory used twice
  // NCCL's SHM FIFO is on the receiver's socket (NCCL_SHM_LOCALITY default): written across UPI.
  EXPECT_EQ(path_of(none, 0, 4),
            "n0.gpu0 -> n0.pcisw0 -> n0.cpu0 -> n0.cpu1 -> n0.mem1 -> n0.cpu1 -> n0.pcisw2 -> n0.gpu4");
}

TEST(Routing, PathClassesDgxH100) {
  const Topology t = make("dgx-h100");
  EXPECT_EQ(path_class(t, t.gpu(0), t.gpu(0)), PathClass::Loc);
  EXPECT_EQ(path_class(t, t.gpu(0), t.gpu(1)), PathClass::Nvl);
  EXPECT_EQ(path_class(t, t.gpu(0), t.nic(0, 0)), PathClass::Pix);
  EXPECT_EQ(path_class(t, t.gpu(0), t.nic(0, 1)), PathClass::Node);
  EXPECT_EQ(path_class(t, t.gpu(0), t.nic(0, 3)), PathClass::Node);
  EXPECT_EQ(path_class(t, t.gpu(0), t.nic(0, 4)), PathClass::Sys);
  EXPECT_EQ(path_class(t, t.gpu(7), t.nic(0, 7)), PathClass::Pix);
  EXPECT_EQ(path_class(t, t.nic(0, 0), t.nic(0, 7)), PathClass::Sys);
  const Topology t2 = make("dgx-h100", {}, 2);
  EXPECT_EQ(path_class(t2, t2.gpu(0), t2.gpu(8)), PathClass::Net);
}

TEST(Routing, PathClassesPcieAndA100) {
  const Topology p = make("pcie-gen4-8gpu");
  EXPECT_EQ(path_class(p, p.gpu(0), p.gpu(1)), PathClass::Pix);
  EXPECT_EQ(path_class(p, p.gpu(0), p.gpu(2)), PathClass::Node);
  EXPECT_EQ(path_class(p, p.gpu(0), p.gpu(4)), PathClass::Sys);
  EXPECT_EQ(path_class(p, p.gpu(1), p.nic(0, 0)), PathClass::Pix);
  EXPECT_EQ(path_class(p, p.gpu(3), p.nic(0, 0)), PathClass::Node);
  EXPECT_EQ(path_class(p, p.gpu(0), p.nic(0, 1)), PathClass::Sys);
  const Topology a = make("hgx-a100");
  EXPECT_EQ(path_class(a, a.gpu(0), a.nic(0, 0)), PathClass::Pxb);
  EXPECT_EQ(path_class(a, a.gpu(0), a.nic(0, 1)), PathClass::Pxb);
  EXPECT_EQ(path_class(a, a.gpu(0), a.nic(0, 2)), PathClass::Node);
  EXPECT_EQ(path_class(a, a.gpu(0), a.nic(0, 4)), PathClass::Sys);
  // GPUs directly on the root complex: PHB.
  const Topology d = make("pcie-gen4-8gpu", {"node.pcie.switches_per_socket=0"});
  EXPECT_EQ(path_class(d, d.gpu(0), d.gpu(1)), PathClass::Phb);
  EXPECT_EQ(path_class(d, d.gpu(0), d.nic(0, 0)), PathClass::Phb);
  EXPECT_EQ(path_class(d, d.gpu(0), d.gpu(7)), PathClass::Sys);
}

TEST(Routing, NicAffinity) {
  const Topology t = make("dgx-h100");
  for (int i = 0; i < 8; ++i) EXPECT_EQ(nic_for_gpu(t, i), i);
  const Topology a = make("hgx-a100");  // two PXB NICs per GPU pair: spread
  for (int i = 0; i < 8; ++i) EXPECT_EQ(nic_for_gpu(a, i), i);
  const Topology p = make("pcie-gen4-8gpu");
  const std::vector<int> expect = {0, 0, 0, 0, 1, 1, 1, 1};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(nic_for_gpu(p, i), expect[i]) << i;
  EXPECT_EQ(compute_nic_affinity(p), expect);
  EXPECT_THROW(nic_for_gpu(p, 8), std::out_of_range);
  // Inter-node default rail follows the affinity.
  const Topology p2 = make("pcie-gen4-8gpu", {}, 2);
  EXPECT_EQ(path_of(p2, 5, 13), "n0.gpu5 -> n0.pcisw2 -> n0.nic1 -> leaf.g0.r1 -> n1.nic1 -> n1.pcisw2 -> n1.gpu5");
}

TEST(Routing, GenericRouteBetween) {
  const Topology t = make("dgx-h100");
  EXPECT_TRUE(route_between(t, t.gpu(1), t.gpu(1)).empty());
  EXPECT_EQ(format_route(t, route_between(t, t.gpu(0), t.nic(0, 4))),
            "n0.gpu0 -> n0.pcisw0 -> n0.cpu0 -> n0.cpu1 -> n0.pcisw4 -> n0.nic4");
  const Route r = route_between(t, t.nic(0, 0), t.gpu(0));
  EXPECT_EQ(reverse_route(reverse_route(r)).size(), r.size());
  EXPECT_EQ(format_route(t, reverse_route(r)), "n0.gpu0 -> n0.pcisw0 -> n0.nic0");
}

TEST(Routing, LargeClusterIsFast) {
  const Topology t = make("dgx-h100", {}, 64);
  double bw = 1e30;
  for (int r = 0; r < t.num_gpus(); ++r) bw = std::min(bw, route_bandwidth_Bps(t, route_between_gpus(t, r, (r + 8) % t.num_gpus())));
  EXPECT_DOUBLE_EQ(bw, 50e9 * kIbEff);
}

TEST(Routing, EdgeOrientationIsCanonical) {
  // Edges are stored with source < target; hops carry such descriptors and `forward` = low -> high.
  const Topology t = make("pcie-gen4-8gpu", {"node.pcie.p2p=none"}, 2);
  const Graph& g = t.graph();
  for (auto [it, end] = boost::edges(g); it != end; ++it) EXPECT_LT(boost::source(*it, g), boost::target(*it, g));
  for (const auto& [a, b] : std::vector<std::pair<int, int>>{{0, 5}, {5, 0}, {3, 12}, {12, 3}}) {
    const Route r = route_between_gpus(t, a, b);
    const auto vs = route_vertices(t, r);
    ASSERT_EQ(vs.size(), r.size() + 1);
    EXPECT_EQ(vs.front(), t.gpu(a));
    EXPECT_EQ(vs.back(), t.gpu(b));
    for (std::size_t i = 0; i < r.size(); ++i) {
      EXPECT_LT(boost::source(r[i].edge, g), boost::target(r[i].edge, g));
      EXPECT_EQ(r[i].forward, vs[i] < vs[i + 1]);
    }
  }
}
