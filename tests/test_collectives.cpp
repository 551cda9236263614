// Broadcast, reduce (ring chains, algorithms/chain.h), sendrecv and alltoall (NCCL's P2P path,
// algorithms/p2p.h) against hand-derived numbers: chain orders, hop and record counts, bytes per
// rank, NCCL's P2P channel / protocol / chunk decisions, nccl-tests' size conventions, and the
// engine against hand-written closed forms on uniform clusters of single-GPU nodes.
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/chain.h"
#include "algorithms/collectives.h"
#include "algorithms/nccl_channels.h"
#include "algorithms/p2p.h"
#include "algorithms/ring.h"
#include "common/error.h"
#include "scenarios/collective_schedule.h"
#include "sim/engine.h"
#include "topologies/routing.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

using testing::preset;
using testing::single_gpu_nodes_spec;

// single_gpu_nodes_spec: every hop is GPU -> PCIe -> NIC -> leaf -> NIC -> PCIe -> GPU; the 400 Gb/s
// NIC (50 GB/s per direction) is the narrowest link; the route's physical latency is below NCCL's
// NET per-step latency, so a hop costs exactly hwLat[NET][Ring][proto].
constexpr double kNicBps = 400e9 / 8;
Topology uniform(int n) { return build_topology(single_gpu_nodes_spec(n, 512, 1.0), "test"); }

// NCCL 2.30 Ring constants per protocol (baseLat, hwLat NET), and the wire factor.
struct ProtoConst {
  Proto p;
  double launch_s, net_step_s, wire;
};
const ProtoConst kProtos[] = {{Proto::LL, 6.6e-6, 2.7e-6, 2.0},
                              {Proto::LL128, 14.0e-6, 4.0e-6, 128.0 / 120.0},
                              {Proto::Simple, 8.4e-6, 14.0e-6, 1.0}};

ChainScheduleOptions chain_options(Proto p) {
  ChainScheduleOptions o;
  const RingProtocol r = ring_protocol(p);
  o.timing = r.timing;
  o.wire_factor = r.wire_factor;
  o.chunk_wire_bytes = static_cast<double>(nccl230::buff_bytes(p)) / nccl230::kSteps;  // NCCL's default buffer
  return o;
}

TEST(Chain, OrdersStartAtTheRootForBroadcastAndEndAtTheRootForReduce) {
  const Topology topo = uniform(8);
  const RingPlan plan = plan_rings(topo, 2);
  EXPECT_EQ(chain_order(plan, 0, "broadcast", 3), (std::vector<int>{3, 4, 5, 6, 7, 0, 1, 2}));
  EXPECT_EQ(chain_order(plan, 0, "reduce", 3), (std::vector<int>{4, 5, 6, 7, 0, 1, 2, 3}));
}

TEST(Chain, ScheduleHasHeadBodyAndTailPerHopAndMovesTheBufferOverEveryHop) {
  const Topology topo = uniform(8);
  const RingPlan plan = plan_rings(topo, 2);  // one NIC: one family of 2 channels
  const double size = 64.0 * 1024 * 1024;
  const ChainScheduleOptions opt = chain_options(Proto::Simple);
  // 64 MiB / 2 channels = 32 MiB per channel in 512 KiB chunks: 64 chunks of 1 MiB (both channels).
  ASSERT_EQ(chain_chunks(plan, size, opt), 64);
  const Schedule s = chain_schedule(topo, plan, "broadcast", size, 3, opt);
  ASSERT_EQ(s.transfers.size(), 7u * 3u);
  const auto sent = s.bytes_sent_per_rank();
  for (int r = 0; r < 8; ++r) EXPECT_DOUBLE_EQ(sent[r], r == 2 ? 0.0 : size) << r;  // the last rank only receives
  int with_delay = 0;
  for (const auto& t : s.transfers) {
    EXPECT_DOUBLE_EQ(t.bytes, (t.step == 1 ? 62 : 1) * size / 64) << t.step;  // head, body, tail
    if (t.step > 0) {
      EXPECT_EQ(t.delay_s, 0.0);  // only heads pay a latency
    }
    if (t.delay_s > 0) ++with_delay;
    if (t.step == 0 && t.src == 3) {
      EXPECT_GT(t.delay_s, 8.4e-6);  // the root's head pays the launch
    }
  }
  EXPECT_EQ(with_delay, 7);
  const Schedule r = chain_schedule(topo, plan, "reduce", size, 3, opt);
  const auto rsent = r.bytes_sent_per_rank();
  for (int k = 0; k < 8; ++k) EXPECT_DOUBLE_EQ(rsent[k], k == 3 ? 0.0 : size) << k;  // the root only receives
  // Longest dependency chain: 7 heads, then the last hop's body and tail... or 7 tails: 7 + 2.
  std::vector<int> len(r.transfers.size(), 1);
  int longest = 0;
  for (std::size_t i = 0; i < r.transfers.size(); ++i) {
    for (std::uint32_t k = 0; k < r.transfers[i].dep_count; ++k)
      len[i] = std::max(len[i], len[r.deps_of(r.transfers[i])[k]] + 1);
    longest = std::max(longest, len[i]);
  }
  EXPECT_EQ(longest, 9);  // head0 -> body0 -> tail0 -> tail1 -> ... -> tail6
  // LL doubles the bytes on the wire and uses 64 KiB (wire) chunks: 64 MiB x 2 / 2 channels / 64 KiB.
  EXPECT_EQ(chain_chunks(plan, size, chain_options(Proto::LL)), 1024);
  EXPECT_EQ(chain_chunks(plan, 8, chain_options(Proto::LL)), 1);
  EXPECT_EQ(chain_schedule(topo, plan, "broadcast", 8, 0, chain_options(Proto::LL)).transfers.size(), 7u);
}

TEST(Chain, BadRootIsAnInputError) {
  const Topology topo = uniform(4);
  EXPECT_THROW(chain_schedule(topo, plan_rings(topo, 2), "broadcast", 1024, 4, chain_options(Proto::Simple)), InputError);
  EXPECT_THROW(chain_schedule(topo, plan_rings(topo, 2), "broadcast", 1024, -1, chain_options(Proto::Simple)), InputError);
}

// Hand closed form of a pipelined chain on n uniform single-GPU nodes: C chunks of c = S x wire / C
// bytes (one family, its two channels merged), n-1 hops:
//   T = launch + (n-1) (alpha + c / beta) + (C - 1) c / beta + r l,
// r = 2 restarts (body and tail, C >= 3; 1 for C = 2) of the hop's physical route latency l.
TEST(Chain, EngineMatchesTheClosedFormForEveryProtocol) {
  for (int n : {2, 4, 8}) {
    const Topology topo = uniform(n);
    const RingPlan plan = plan_rings(topo, 2);
    const double hop_latency = route_latency_s(topo, route_between_gpus(topo, 0, 1, 0));
    for (const ProtoConst& pc : kProtos) {
      const ChainScheduleOptions opt = chain_options(pc.p);
      for (const std::string coll : {"broadcast", "reduce"}) {
        for (double size : {8.0, 1024.0 * 1024, 2.0 * 1024 * 1024, 256.0 * 1024 * 1024}) {
          const double chunk_wire = pc.p == Proto::LL ? 65536.0 : pc.p == Proto::LL128 ? 614400.0 : 524288.0;
          const int C = std::max(1, static_cast<int>(std::ceil(size * pc.wire / 2 / chunk_wire)));
          ASSERT_EQ(chain_chunks(plan, size, opt), C);
          const double c = size * pc.wire / C;
          const int restarts = C >= 3 ? 2 : C - 1;
          const double expected = pc.launch_s + (n - 1) * (pc.net_step_s + c / kNicBps) + (C - 1) * c / kNicBps +
                                  restarts * hop_latency;
          const double cf = chain_closed_form_time_s(pc.launch_s, (n - 1) * pc.net_step_s, (n - 1) * c / kNicBps, C, c,
                                                     kNicBps, hop_latency);
          EXPECT_NEAR(cf, expected, 1e-12);
          EngineOptions eo;
          eo.pipeline_depth = kChainPipelineDepth;
          const SimResult r = simulate_one(topo, chain_schedule(topo, plan, coll, size, n / 2, opt), eo);
          EXPECT_NEAR(r.time_s, expected, 0.02 * expected)
              << coll << " " << to_string(pc.p) << " n=" << n << " size=" << size;
        }
      }
    }
  }
}

// LL and LL128 receivers pass lines on as they arrive, so a chain's unit is one round of the block's
// loop, not the buffer's slot: LL 512 threads x 16 B lines = 8 KiB, LL128 20 warps x 2 KiB = 40 KiB;
// Simple waits for a slice, and a network proxy sends whole steps.
TEST(Chain, LLAndLL128ForwardOneRoundOfLinesPerHop) {
  EXPECT_DOUBLE_EQ(chain_forward_unit_wire_bytes(Proto::LL, 512, false), 8192);
  EXPECT_DOUBLE_EQ(chain_forward_unit_wire_bytes(Proto::LL, 64, false), 1024);
  EXPECT_DOUBLE_EQ(chain_forward_unit_wire_bytes(Proto::LL128, 640, false), 40960);
  EXPECT_DOUBLE_EQ(chain_forward_unit_wire_bytes(Proto::Simple, 544, false), 0);
  EXPECT_DOUBLE_EQ(chain_forward_unit_wire_bytes(Proto::LL, 512, true), 0);

  // 32 KiB of LL on one channel, each of the family's 2 channels capped at 5 GB/s of data (a connection
  // carries the family's channels: beta = 2 channels x 5 GB/s x LL's wire factor 2 = 20 GB/s on the
  // wire, below the links): 64 KiB on the wire, one slot; in rounds of 8 KiB,
  // 8 units. By hand (n = 8, 7 hops of latency alpha): the slot crosses every hop whole,
  // T_slot = launch + 7 (alpha + 64 KiB / beta); the rounds
  //   T = launch + 7 (alpha + 8 KiB / beta) + 7 x 8 KiB / beta + 2 l (body and tail restarts).
  const int n = 8;
  const Topology topo = uniform(n);
  const RingPlan plan = plan_rings(topo, 2);
  const double l = route_latency_s(topo, route_between_gpus(topo, 0, 1, 0));
  ChainScheduleOptions opt = chain_options(Proto::LL);
  opt.nccl_channels = 1;
  opt.channel_rate_cap_Bps = 5e9;
  const double beta = 20e9;
  const double size = 32 * 1024, wire = 2 * size, unit = 8192;
  ASSERT_EQ(chain_chunks(plan, size, opt), 1);
  opt.forward_unit_wire_bytes = unit;
  ASSERT_EQ(chain_chunks(plan, size, opt), 8);
  const double launch = 6.6e-6, alpha = 2.7e-6;  // baseLat Ring/LL; hwLat NET Ring/LL (single-GPU nodes)
  const double expected = launch + (n - 1) * (alpha + unit / beta) + 7 * unit / beta + 2 * l;
  const double slot_whole = launch + (n - 1) * (alpha + wire / beta);
  EngineOptions eo;
  eo.pipeline_depth = kChainPipelineDepth;
  const SimResult r = simulate_one(topo, chain_schedule(topo, plan, "broadcast", size, 0, opt), eo);
  EXPECT_NEAR(r.time_s, expected, 0.02 * expected);
  opt.forward_unit_wire_bytes = 0;
  const SimResult whole = simulate_one(topo, chain_schedule(topo, plan, "broadcast", size, 0, opt), eo);
  EXPECT_NEAR(whole.time_s, slot_whole, 0.02 * slot_whole);
  // A forward unit larger than the slot does not coarsen the chain.
  opt.forward_unit_wire_bytes = 1 << 20;
  EXPECT_EQ(chain_chunks(plan, size, opt), 1);
}

TEST(P2p, NcclChannelAndChunkDecisionsOnDgxH100) {
  // One node: 18 NVLinks per GPU -> 2 x 18 = 36 channels per NVLink peer; comm->nChannels is
  // NCCL's estimate (24 on an H100 node) -> p2pnChannels = pow2Up(24) = 32, per peer
  // pow2Up(min(24, 36)) = 32; all-NVLink node: 512 KiB chunks.
  {
    const Topology topo = preset("dgx-h100", 1);
    const NcclTopoSummary sum = summarize_for_nccl(topo);
    ASSERT_EQ(sum.coll_channels, 24);
    const P2pConfig c = nccl_p2p_config(topo, sum);
    EXPECT_EQ(c.p2p_channels, 32);
    EXPECT_EQ(c.channels_per_peer, 32);
    EXPECT_DOUBLE_EQ(c.chunk_bytes, 512.0 * 1024);
    EXPECT_FALSE(c.pxn);
    // nChannelsMin = 32 halved while x 8 ranks > 32: 4. 1 MiB: min(4, ceil(1 MiB / 64 KiB) = 16) = 4
    // channels of 256 KiB (<= 16 MiB max part): Simple; 16 KiB: min(4, 1) = 1 channel, LL (<= 16384).
    const P2pOp big = nccl_p2p_op(c, 1 << 20, false);
    EXPECT_EQ(big.channels, 4);
    EXPECT_EQ(big.proto, Proto::Simple);
    EXPECT_EQ(big.chunks, 4);  // 256 KiB per channel in 512 KiB chunks: one each
    // In one node round r's base channel is reverseBits(r) and a CTA runs one batch (8 consecutive
    // rounds) at a time: at most p2pnChannels = 32 rounds in flight, not 32 / 4 x 8 = 64 as across nodes.
    EXPECT_EQ(big.max_concurrent_peers, 32);
    // 256 MiB: 64 MiB parts over 16 MiB halve twice more: 16 channels, and rounds of two groups of 8
    // share each CTA: 8 x 32 / 16 = 16 in flight.
    const P2pOp huge = nccl_p2p_op(c, 256.0 * (1 << 20), false);
    EXPECT_EQ(huge.channels, 16);
    EXPECT_EQ(huge.max_concurrent_peers, 16);
    const P2pOp small = nccl_p2p_op(c, 16384, false);
    EXPECT_EQ(small.channels, 1);
    EXPECT_EQ(small.proto, Proto::LL);
    EXPECT_EQ(nccl_p2p_op(c, 16385, false).proto, Proto::Simple);
  }
  // Two nodes (16 ranks): NCCL 2.29+ gives a network peer one channel per 14 GB/s of the GPU's NIC
  // (NCCL_P2P_PER_CHANNEL_NET_BW): one 400 Gb/s NIC, 48 GB/s in NCCL's units behind PCIe Gen5, takes
  // ceil(48 / 14) = 4; 128 KiB chunks.
  {
    const Topology topo = preset("dgx-h100", 2);
    NcclTopoSummary sum = summarize_for_nccl(topo);
    EXPECT_EQ(sum.net_count_by_bw, 1);
    EXPECT_DOUBLE_EQ(sum.net_bw_by_count, 48.0);
    const P2pConfig c = nccl_p2p_config(topo, sum);
    EXPECT_EQ(c.channels_per_peer, 4);
    EXPECT_DOUBLE_EQ(c.chunk_bytes, 128.0 * 1024);
    EXPECT_TRUE(c.pxn);
    // 1 MiB: nChannelsMin 4 halved while x 16 ranks > 16 p2p channels: 1; min(1, 1 MiB / 64 KiB) = 1;
    // doubled while the part exceeds the 128 KiB max part, up to 4 per peer: 4 parts of 256 KiB.
    // Over the network 1 MiB is not below 8 chunks (1 MiB): full 128 KiB chunks, 2 per channel.
    const P2pOp op = nccl_p2p_op(c, 1 << 20, true);
    EXPECT_EQ(op.channels, 4);
    EXPECT_EQ(op.proto, Proto::Simple);
    EXPECT_DOUBLE_EQ(op.chunk_data_bytes, 128.0 * 1024);
    EXPECT_EQ(op.chunks, 8);
    // 100 KiB (< one chunk, Simple): 128 KiB / 4 = 32 KiB chunks; 2 channels of 50 KiB: 2 chunks each.
    const P2pOp mid = nccl_p2p_op(c, 100 * 1024, true);
    EXPECT_EQ(mid.proto, Proto::Simple);
    EXPECT_DOUBLE_EQ(mid.chunk_data_bytes, 32.0 * 1024);
    EXPECT_EQ(mid.chunks, 4);
    // Up to NCCL 2.28: 2, halved only while 2 x ranks > 4 x p2p channels (2 x 16 <= 4 x 16: 2).
    sum.nccl_version = parse_nccl_version("2.28", "test");
    EXPECT_EQ(nccl_p2p_config(topo, sum).channels_per_peer, 2);
  }
}

TEST(P2p, RoundOrderIsNodeMajor) {
  // 2 nodes x 4 GPUs, rank 5 (node 1, local 1): rounds 0..3 stay on node 1 (locals 1, 2, 3, 0), then node 0.
  EXPECT_EQ(p2p_round_peers(8, 4, 5), (std::vector<int>{5, 6, 7, 4, 1, 2, 3, 0}));
}

TEST(P2p, AlltoallSendsToEveryPeerThroughTheRailOfTheDestination) {
  const Topology topo = preset("dgx-h100", 2);
  const NcclTopoSummary sum = summarize_for_nccl(topo);
  const P2pConfig c = nccl_p2p_config(topo, sum);
  const double size = 16.0 * 1024 * 1024;
  P2pScheduleOptions one_record_per_message;
  one_record_per_message.aggregate_pxn = false;
  const Schedule s = alltoall_schedule(topo, c, size, one_record_per_message);
  ASSERT_EQ(s.transfers.size(), 16u * 15u);
  for (const auto& t : s.transfers) {
    EXPECT_DOUBLE_EQ(t.bytes, size / 16);
    EXPECT_EQ(t.step, 0);  // 15 peers <= 8 x 32 / 2: one wave
    if (t.src / 8 != t.dst / 8)
      EXPECT_EQ(t.rail, nic_for_gpu(topo, t.dst % 8));  // PXN: the destination's rail
    else
      EXPECT_EQ(t.rail, -1);
  }
  const auto sent = s.bytes_sent_per_rank();
  for (double b : sent) EXPECT_DOUBLE_EQ(b, 15 * size / 16);
  // Proxy load with PXN: the proxy of the GPU on rail r posts the sends of all 8 local GPUs to the
  // remote GPU on rail r (8) and completes the 8 receives from the other node: 16 x 1 us (Intel).
  // 1 MiB per message: Simple, so a network message costs launch 8.4 + NET 14 + 16 us of fixed time.
  ASSERT_DOUBLE_EQ(sum.net_overhead_us, 1.0);
  for (const auto& t : s.transfers) {
    const double fixed = t.delay_s + route_latency_s(topo, route_between_gpus(topo, t.src, t.dst, t.rail));
    if (t.src / 8 != t.dst / 8) {
      EXPECT_NEAR(fixed, (8.4 + 14 + 16) * 1e-6, 1e-12);
    }
  }
}

// Hand closed forms on n uniform single-GPU nodes (Intel CPU: proxy cost 1 us per message):
//   sendrecv: T = launch + alpha + 2 x 1 us (the proxy drives one send and one receive) + S w / beta
//   alltoall: T = launch + alpha + 2(n-1) x 1 us + (n-1) (S/n) w / beta (n-1 flows share the NIC)
// LL below 16 KiB per message, Simple above; w = 2 for LL.
TEST(P2p, EngineMatchesTheClosedFormsForLLAndSimple) {
  for (int n : {2, 4, 8}) {
    const Topology topo = uniform(n);
    const NcclTopoSummary sum = summarize_for_nccl(topo);
    ASSERT_DOUBLE_EQ(sum.net_overhead_us, 1.0);
    const P2pConfig cfg = nccl_p2p_config(topo, sum);
    for (double size : {1024.0, 8.0 * 1024, 4.0 * 1024 * 1024, 256.0 * 1024 * 1024}) {
      for (const std::string coll : {"sendrecv", "alltoall"}) {
        const double message = coll == "sendrecv" ? size : size / n;
        const ProtoConst& pc = message <= 16384 ? kProtos[0] : kProtos[2];
        const double peers = coll == "sendrecv" ? 1 : n - 1;
        const double expected = pc.launch_s + pc.net_step_s + 2 * peers * 1e-6 + peers * message * pc.wire / kNicBps;
        const Schedule s = coll == "sendrecv" ? sendrecv_schedule(topo, cfg, size) : alltoall_schedule(topo, cfg, size);
        EXPECT_NEAR(p2p_closed_form_time_s(topo, s), expected, 1e-9 * expected) << coll << " n=" << n << " " << size;
        const SimResult r = simulate_one(topo, s, {});
        EXPECT_NEAR(r.time_s, expected, 0.02 * expected) << coll << " n=" << n << " size=" << size;
      }
    }
  }
}

TEST(P2p, PeersBeyondTheConcurrencyLimitWaitForASlot) {
  // 12 single-GPU nodes with comm->nChannels = 1: p2pnChannels = 1, 1 channel per peer, so one
  // channel runs 8 operations at once: rounds 0..7 (round 0 is the copy to itself) form the first
  // wave, rounds 8..11 the second; round r waits for round r-8 of the same rank.
  const Topology topo = uniform(12);
  const P2pConfig cfg = nccl_p2p_config(topo, testing::summary_with_channels(topo, 1));
  ASSERT_EQ(cfg.p2p_channels, 1);
  ASSERT_EQ(cfg.channels_per_peer, 1);
  ASSERT_EQ(nccl_p2p_op(cfg, 1 << 20, true).max_concurrent_peers, 8);
  const Schedule s = alltoall_schedule(topo, cfg, 12.0 * (1 << 20), {});
  int second_wave = 0, waiting = 0;
  for (const auto& t : s.transfers)
    if (t.step == 1) {
      ++second_wave;
      waiting += t.dep_count == 1 ? 1 : 0;  // round 8 follows the self copy, which is not simulated
    } else {
      EXPECT_EQ(t.dep_count, 0u);
    }
  EXPECT_EQ(second_wave, 12 * 4);
  EXPECT_EQ(waiting, 12 * 3);
}

TEST(NcclTestsConventions, AlltoallSizeAndCountMatchARealLog) {
  // nccl-tests 2.17.8 alltoall_perf on 80 ranks, double, -b 32M: "33553920  52428  double  none  -1".
  std::uint64_t size = 0, count = 0;
  const CollectiveInfo& alltoall = collective_info("alltoall");
  collective_size_and_count(alltoall, 33554432, 8, 80, &size, &count);
  EXPECT_EQ(size, 33553920u);
  EXPECT_EQ(count, 52428u);
  // float: 33554432 / 4 / 80 = 104857, rounded down to a multiple of 16/4 = 4: 104856.
  collective_size_and_count(alltoall, 33554432, 4, 80, &size, &count);
  EXPECT_EQ(count, 104856u);
  EXPECT_EQ(size, 104856u * 80 * 4);
  collective_size_and_count(collective_info("broadcast"), 1001, 4, 8, &size, &count);
  EXPECT_EQ(count, 250u);
  EXPECT_EQ(size, 1000u);
  EXPECT_EQ(collective_redop_column(collective_info("broadcast"), "sum"), "none");
  EXPECT_EQ(collective_redop_column(collective_info("alltoall"), "sum"), "none");
  EXPECT_EQ(collective_redop_column(collective_info("reduce"), "max"), "max");
  EXPECT_EQ(collective_redop_column(collective_info("sendrecv"), "sum"), "sum");
  EXPECT_EQ(collective_root_column(collective_info("reduce"), 3), 3);
  EXPECT_EQ(collective_root_column(collective_info("sendrecv"), 3), -1);
}

}  // namespace
}  // namespace ccsim
