// docs/seed-claims.md, kept from drifting: each row ccsim reports there is re-derived here by hand
// from the constants it rests on (NCCL 2.30.7's step latencies, the presets' link rates and their
// achievable fractions) and compared with what ccsim computes.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/closed_form.h"
#include "algorithms/nccl_channels.h"
#include "algorithms/ring.h"
#include "algorithms/tuner.h"
#include "sim/engine.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

// 8 ranks, one per node, one HDR 200 Gb/s IB NIC each (the seed's "8 卡 IB").
Topology ib8() {
  nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
  for (const char* s : {"node.gpu.count=1", "node.cpu.sockets=1", "node.pcie.switches_per_socket=1", "node.nic.count=1",
                        "node.nic.Gbps=200", "node.nic.transport=ib"})
    apply_override(spec, s, "test");
  set_node_count(spec, 8);
  return build_topology(spec, "ib8");
}

double engine_ring_time(const Topology& topo, Proto proto, double size) {
  const RingProtocol p = ring_protocol(proto);
  RingScheduleOptions opts;
  opts.timing = p.timing;
  opts.wire_factor = p.wire_factor;
  EngineOptions eo;
  eo.pipeline_depth = p.pipeline_depth;
  const RingPlan plan = plan_rings(topo, 2);
  return simulate_one(topo, ring_schedule(topo, plan, "all_reduce", size, opts), eo).time_s;
}

TEST(SeedClaims, EightRankIbRing) {
  const Topology topo = ib8();
  // launch 8.4 us + 2(n-1) = 14 steps x NET Simple 14 us; beta = 25 GB/s x 0.97 = 24.25 GB/s.
  const double beta = 25e9 * 0.97;
  const double latency = 8.4e-6 + 14 * 14e-6;
  double engine_s[2];
  int k = 0;
  for (double size : {1073741824.0, 65536.0}) {
    const double expected = latency + 14.0 / 8.0 * size / beta;
    engine_s[k] = engine_ring_time(topo, Proto::Simple, size);
    EXPECT_NEAR(engine_s[k++], expected, 0.01 * expected) << size;
  }
  // The table's shares, of ccsim's engine times: 1 GiB (77.7 ms), latency 0.26%; 64 KiB (209 us),
  // bandwidth 2.3%.
  EXPECT_NEAR(latency / engine_s[0], 0.0026, 0.0002);
  EXPECT_NEAR(1.75 * 65536 / beta / engine_s[1], 0.0226, 0.0005);
  // Knee S* = n alpha beta = 8 x 14 us x 24.25 GB/s = 2.716 MB.
  const AlphaBeta ab = ring_alpha_beta(topo, plan_rings(topo, 2), ring_protocol(Proto::Simple).timing);
  EXPECT_NEAR(knee_bytes(8, ab), 8 * 14e-6 * beta, 1e3);
}

TEST(SeedClaims, KneeInsideAnH100Node) {
  // alpha = NVLink Simple 3.4 us, beta = 18 links x 20.6 GB/s = 370.8 GB/s: S* = 10.09 MB.
  const Topology topo = testing::preset("dgx-h100", 1);
  const AlphaBeta ab = ring_alpha_beta(topo, plan_rings(topo, 2), ring_protocol(Proto::Simple).timing);
  EXPECT_NEAR(knee_bytes(8, ab), 8 * 3.4e-6 * 370.8e9, 1e3);
}

TEST(SeedClaims, H100NodeRingBusbw) {
  // 8 GiB on one dgx-h100 node, Ring/Simple: busbw = 2(n-1)/n S / T tends to 370.8 GB/s.
  const Topology topo = testing::preset("dgx-h100", 1);
  const double size = 8589934592.0;
  const double t = engine_ring_time(topo, Proto::Simple, size);
  const double expected_t = 8.4e-6 + 14 * 3.4e-6 + 1.75 * size / 370.8e9;
  EXPECT_NEAR(t, expected_t, 0.01 * expected_t);
  EXPECT_NEAR(1.75 * size / t / 1e9, 370.8, 0.01 * 370.8);
}

TEST(SeedClaims, Tp8DecodeAllReduceRingLL) {
  // 128 KiB on one node, Ring/LL: baseLat 6.6 + 14 x 0.6 us = 15 us (the seed's "6.6 + 14 x 0.6"),
  // plus 1.75 x 128 KiB x 2 (LL's flags double the bytes) / 370.8 GB/s.
  const Topology topo = testing::preset("dgx-h100", 1);
  const double expected = 15e-6 + 1.75 * 131072 * 2 / 370.8e9;
  EXPECT_NEAR(engine_ring_time(topo, Proto::LL, 131072), expected, 0.01 * expected);
}

TEST(SeedClaims, ThirtyTwoNodesRingVersusTree) {
  // NCCL 2.30 model, AllReduce, 8 B, 32 x dgx-h100 (Intel: netOverhead 1 us for LL):
  //   Ring/LL = 6.6 + (510 - 62) x max(0.6, 1) + 62 x 2.7 = 622.0 us
  //   Tree/LL = 6.8 + 2 x ((8 - 1) x 0.6 + log2(32) x 5.0) = 65.2 us        -> 9.5x
  const NcclTopoSummary s = summarize_for_nccl(testing::preset("dgx-h100", 32));
  const auto ring = choose(s, Func::AllReduce, 8, parse_algo_filter("Ring", "LL", "test"));
  const auto tree = choose(s, Func::AllReduce, 8, parse_algo_filter("Tree", "LL", "test"));
  EXPECT_NEAR(ring.time_us, 622.0, 0.01);
  EXPECT_NEAR(tree.time_us, 65.2, 0.01);
  EXPECT_EQ(choose(s, Func::AllReduce, 8, AlgoProtoFilter()).algo, Algo::Tree);
}

}  // namespace
}  // namespace ccsim
