// A ring across nodes pays NCCL's network overhead on every step inside a node (tuning.cc: Ring's
// intraLat = max(intraLat, getNetOverhead), x3 on Simple; 1 us on Intel, 2 us on AMD). Expected times
// are summed by hand from NCCL 2.30's constants (baseLat Ring/LL 6.6 us, hwLat NVLink Ring/LL 0.6 us)
// and the route of a network hop on dgx-h200 with RoCE, GPU -> NVSwitch -> GPU (PXN, 2 x 0.25 us) ->
// PCIe switch -> NIC (2 x 0.15) -> leaf -> NIC (RoCE's 3 us, half on each link) -> PCIe switch -> GPU
// (2 x 0.15) = 4.1 us, above NCCL's 2.7 us network step, so the hop costs its route.
#include <gtest/gtest.h>

#include <string>

#include "algorithms/step_timing.h"
#include "algorithms/tuner.h"
#include "scenarios/predict.h"
#include "test_helpers.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

double time_us(const std::string& collective, const std::vector<std::string>& sets, std::uint64_t bytes,
               const std::string& algo = "Ring", const std::string& proto = "LL") {
  nlohmann::json spec = load_topology_spec("dgx-h200");
  spec["nodes"] = 2;
  for (const auto& s : sets) apply_override(spec, s, "--set");
  const Topology topo = build_topology(spec, "dgx-h200");
  PredictRequest req;
  req.collective = collective;
  req.sweep.min_bytes = req.sweep.max_bytes = bytes;
  req.filter = parse_algo_filter(algo, proto, "test");
  const Prediction p = predict(topo, req);
  return p.rows.front().oop_time_us;
}

TEST(RingNetOverhead, StepTimingFloor) {
  const StepTiming ll = multi_node_ring_timing(ring_protocol(Proto::LL).timing, Proto::LL, 2.0);
  EXPECT_DOUBLE_EQ(ll.nvlink_step_s, 2.0e-6);  // 0.6 -> AMD's 2
  EXPECT_DOUBLE_EQ(ll.pcie_step_s, 2.0e-6);    // PCIe Ring/LL 1.0 -> 2
  EXPECT_DOUBLE_EQ(ll.net_step_s, ring_protocol(Proto::LL).timing.net_step_s);  // the network step is NCCL's own
  const StepTiming simple = multi_node_ring_timing(ring_protocol(Proto::Simple).timing, Proto::Simple, 1.0);
  EXPECT_DOUBLE_EQ(simple.nvlink_step_s, 3.4e-6);  // max(3.4, 3 x 1)
  EXPECT_DOUBLE_EQ(simple.pcie_step_s, 5.7e-6);
}

// all_gather of 1 KiB per rank on 2 x 8 H200 (Intel: 1 us), Ring/LL: one launch, then the chunk that
// starts at a node's second GPU takes 15 hops, 13 inside nodes and 2 across: 6.6 + 13 x 1.0 + 2 x 4.1
// = 27.8 us (it was 6.6 + 13 x 0.6 + 2 x 4.1 = 22.6 before the floor). GCP's A3 Ultra log of this
// run measures 28.05-28.70 us at 1-4 KiB (tests/data/nccl-tests, gcp-a3ultra).
TEST(RingNetOverhead, AllGatherOnTwoIntelNodes) {
  EXPECT_NEAR(time_us("all_gather", {"node.nic.transport=roce"}, 1024), 6.6 + 13 * 1.0 + 2 * 4.1, 0.05);
  // AMD's 2 us: 6.6 + 13 x 2 + 2 x 4.1 = 40.8.
  EXPECT_NEAR(time_us("all_gather", {"node.nic.transport=roce", "node.cpu.vendor=amd"}, 1024), 6.6 + 13 * 2.0 + 2 * 4.1,
              0.05);
}

// On one node there is no proxy in the ring's path: 7 NVLink hops of 0.6 us after the launch.
TEST(RingNetOverhead, NotOnOneNode) {
  nlohmann::json spec = load_topology_spec("dgx-h200");
  const Topology topo = build_topology(spec, "dgx-h200");
  PredictRequest req;
  req.collective = "all_gather";
  req.sweep.min_bytes = req.sweep.max_bytes = 1024;
  req.filter = parse_algo_filter("Ring", "LL", "test");
  EXPECT_NEAR(predict(topo, req).rows.front().oop_time_us, 6.6 + 7 * 0.6, 0.05);
}

}  // namespace
}  // namespace ccsim
