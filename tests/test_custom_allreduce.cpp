// vLLM's custom all-reduce (algorithms/custom_allreduce.h): vLLM's one-shot / two-shot rule, the
// refusals, the schedule's transfers and bytes counted by hand, and the engine against the closed
// form on one dgx-h100 node.
#include <gtest/gtest.h>

#include "algorithms/custom_allreduce.h"
#include "algorithms/ring.h"
#include "common/error.h"
#include "sim/engine.h"
#include "test_helpers.h"
#include "topologies/routing.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

using testing::preset;

Topology pcie_node(int gpus, const std::string& p2p) {
  nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
  spec["node"]["gpu"]["count"] = gpus;
  spec["node"]["pcie"]["p2p"] = p2p;
  return build_topology(spec, "pcie");
}

TEST(CustomAllreduce, VllmOneShotTwoShotRule) {
  EXPECT_EQ(vllm_custom_ar_variant(2, 4 << 20), CustomArVariant::OneShot);  // 2 GPUs: always one-shot
  EXPECT_EQ(vllm_custom_ar_variant(4, 512 * 1024 - 1), CustomArVariant::OneShot);
  EXPECT_EQ(vllm_custom_ar_variant(4, 512 * 1024), CustomArVariant::TwoShot);
  EXPECT_EQ(vllm_custom_ar_variant(6, 300 * 1024), CustomArVariant::TwoShot);
  EXPECT_EQ(vllm_custom_ar_variant(8, 256 * 1024 - 1), CustomArVariant::OneShot);
  EXPECT_EQ(vllm_custom_ar_variant(8, 256 * 1024), CustomArVariant::TwoShot);
}

TEST(CustomAllreduce, RefusesWhereVllmDoes) {
  const CustomAllreduceOptions o;
  EXPECT_THROW(check_custom_allreduce(preset("dgx-h100", 2), 1024, o), InputError);        // two nodes
  EXPECT_THROW(check_custom_allreduce(pcie_node(8, "switch"), 1024, o), InputError);       // > 2 PCIe-only GPUs
  EXPECT_THROW(check_custom_allreduce(pcie_node(2, "none"), 1024, o), InputError);         // no P2P
  EXPECT_THROW(check_custom_allreduce(pcie_node(3, "switch"), 1024, o), InputError);       // 3 GPUs
  EXPECT_THROW(check_custom_allreduce(preset("dgx-h100", 1), 8 << 20, o), InputError);     // >= 8 MiB: NCCL
  EXPECT_NO_THROW(check_custom_allreduce(pcie_node(2, "switch"), 1024, o));
  EXPECT_NO_THROW(check_custom_allreduce(preset("dgx-h100", 1), (8 << 20) - 16, o));
  try {
    check_custom_allreduce(pcie_node(8, "switch"), 1024, o);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("NVLink"), std::string::npos) << e.what();
  }
}

TEST(CustomAllreduce, SchedulesByHand) {
  const Topology dgx = preset("dgx-h100", 1);
  const CustomAllreduceOptions o;
  // One-shot, TP8, 128 KiB: every GPU reads the whole buffer from each of its 7 peers, one step:
  // 56 transfers of S, 7 S into every GPU; 1 step against the ring's 2 (n - 1) = 14.
  const double S = 128 * 1024;
  const Schedule one = custom_allreduce_schedule(dgx, S, o);
  ASSERT_EQ(one.transfers.size(), 56u);
  for (const auto& t : one.transfers) {
    EXPECT_DOUBLE_EQ(t.bytes, S);
    EXPECT_EQ(t.step, 0);
    EXPECT_EQ(t.dep_count, 0u);
  }
  for (double b : one.bytes_sent_per_rank()) EXPECT_DOUBLE_EQ(b, 7 * S);
  EXPECT_EQ(ring_steps("all_reduce", 8), 14);
  // Two-shot, TP8, 1 MiB: 56 reads of S/8 (reduce-scatter), then 56 reads of S/8 (all-gather), each
  // waiting for all the first step's reads (the barrier): 2 x 7/8 S into every GPU.
  const double L = 1 << 20;
  const Schedule two = custom_allreduce_schedule(dgx, L, o);
  ASSERT_EQ(two.transfers.size(), 112u);
  for (const auto& t : two.transfers) {
    EXPECT_DOUBLE_EQ(t.bytes, L / 8);
    EXPECT_EQ(t.dep_count, t.step == 0 ? 0u : 56u);
  }
  for (double b : two.bytes_sent_per_rank()) EXPECT_DOUBLE_EQ(b, 2 * 7 * L / 8);
}

TEST(CustomAllreduce, EngineMatchesClosedForm) {
  const Topology dgx = preset("dgx-h100", 1);
  const double route = route_latency_s(dgx, route_between_gpus(dgx, 0, 1));
  // Per-direction NVLink port of a GPU (the busiest link: 7 peers read through it).
  const Route r = route_between_gpus(dgx, 0, 1);
  const double port_Bps = dgx.link(r.front().edge).bandwidth_Bps;
  for (double cap : {0.0, 63e9}) {
    CustomAllreduceOptions o;
    o.timing.read_Bps = cap;
    for (double S : {16.0 * 1024, 128.0 * 1024, 1024.0 * 1024, 4.0 * 1024 * 1024}) {
      const bool one = S < 256 * 1024;
      const double per_peer = one ? S : S / 8;
      const double rate = cap > 0 ? std::min(cap, port_Bps) : port_Bps;
      const double hand = o.timing.launch_s + (one ? 0.0 : o.timing.stage_barrier_s) +
                          (one ? 1 : 2) * (route + 7 * per_peer / rate);
      EXPECT_NEAR(custom_allreduce_time_s(dgx, S, o), hand, 1e-12) << S;
      const double got = simulate_one(dgx, custom_allreduce_schedule(dgx, S, o), {}).time_s;
      EXPECT_NEAR(got, hand, 0.01 * hand) << "size " << S << " cap " << cap;
    }
  }
}

TEST(CustomAllreduce, SeedClaimTp8Decode128KiB) {
  // The seed: TP8 decode's 128 KB all_reduce ~ 10 us with the custom all-reduce (vs ~ 30 us with
  // NCCL): one-shot, 1 step. ccsim: 7.9 us fixed + 1 us route + 7 x 128 KiB over the NVLink port.
  const Topology dgx = preset("dgx-h100", 1);
  const double t = custom_allreduce_time_s(dgx, 128 * 1024, {});
  EXPECT_GT(t, 9e-6);
  EXPECT_LT(t, 14e-6);
}

}  // namespace
}  // namespace ccsim
