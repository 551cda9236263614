// Real nccl-tests logs for presets that had none (aws-p5, dgx-h200 on RoCE, hgx-h800) and single
// dgx-h100 nodes, each predicted
// from the preset and the --set flags its source states, nothing fitted (docs/accuracy.md). Provenance
// heads every file under tests/data/nccl-tests; INDEX.md lists them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/tuner.h"
#include "real_log_helpers.h"
#include "test_helpers.h"
#include "scenarios/log_gpu_preset.h"
#include "topologies/gpu_copy_rate.h"
#include "topologies/nccl_env.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

// `collective`: validate's --collective, for a table that fits several (a 2-rank all_gather is an alltoall's).
ValidatedRun validate_log(const std::string& name, const std::string& preset, const std::vector<std::string>& sets = {},
                          const std::string& collective = "") {
  nlohmann::json spec = load_topology_spec(preset);
  for (const std::string& s : sets) apply_override(spec, s, "--set");
  ValidateOptions opts;
  opts.overrides.collective = collective;
  return testing::validate_real_log(name, spec, preset, opts);
}

// One node of 8 H800 (8 NVLinks per GPU, not H100's 18), broadcast, one process driving 8 GPUs (-g 8).
// The ring broadcast moves every byte once through each GPU's NVLink: busbw = algbw = 8 links x 25
// GB/s x NCCL's 20.6/25 = 164.8 GB/s; measured 165.0 at 2 GiB. The bandwidth side meets issue 11's
// target (-3%), though the log's NCCL 2.18.3 is older than the modelled tuners. The latency side is
// -21%: its floor, 25.5 us for 8 serial launches, is 3.2 us per GPU against the default's 4.2 (a
// DGX-A100's, docs/topology.md node.cpu.launch_us): this host and NCCL launch faster.
TEST(PresetLogs, H800BroadcastIsItsEightNvlinks) {
  const ValidatedRun run = validate_log("h800-1node-broadcast-g8-nccl2.18.3.txt", "hgx-h800");
  EXPECT_EQ(run.prediction.facts.nodes, 1);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "Ring");
  EXPECT_NEAR(last.predicted_busbw_GBps, 8 * 25.0 * 20.6 / 25.0, 0.01 * 164.8);
  EXPECT_NEAR(last.measured_busbw_GBps, 164.97, 0.01);
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
  // The floor (the smallest sizes) is the launches; the mid sizes' chain fill is shorter than the
  // replay's (docs/accuracy.md "Broadcast and reduce chains"): median -21%. From 32 KiB the one or two
  // channels NCCL runs there pay their share of LL's ceiling on the chain's head chunk at every hop
  // (32 KiB: -32%).
  double floor_error = 0;
  for (const ValidatedSize& v : run.sizes)
    if (v.size_bytes <= 16384) floor_error = std::min(floor_error, v.error);
  EXPECT_NEAR(floor_error, 25.5 / (8 * 4.2) - 1, 0.02) << floor_error;
  EXPECT_LT(run.latency.median_error, -0.15) << run.latency.median_error;
  EXPECT_GT(run.latency.median_error, -0.25) << run.latency.median_error;
}

// 2 x HGX H200 with 8 BlueField-3 400G RoCE NICs each (Spectrum-X), NCCL 2.30.4, 2 processes x 8 GPUs.
// NVLSTree on 2 nodes, as on DGX H100: the bandwidth side is +1% (plateau 461 predicted, 486 measured:
// -5%). The latency side (+48%) is RoCE's per-step cost and the -g 8 launches (docs/accuracy.md).
TEST(PresetLogs, H200SpectrumXAllReduceBandwidthSideWithinTenPercent) {
  const ValidatedRun run =
      validate_log("hgx-h200-2node-spectrumx-roce-allreduce-nccl2.30.4.txt", "dgx-h200", {"node.nic.transport=roce"});
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  EXPECT_EQ(run.sizes.back().nccl_algorithm, "NVLSTree");
  EXPECT_LT(std::fabs(run.sizes.back().error), 0.10) << run.sizes.back().error;
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
  EXPECT_LT(run.latency.median_error, 0.60) << run.latency.median_error;  // +48% today: a known miss
}

// 2 x GCP a3-ultragpu-8g (H200, 8 RoCE NICs through Google's gIB plugin), all_gather. The ring's links
// allow 370.8 GB/s busbw (NVLink; the 8 NICs x 400 Gb/s x RoCE's 0.95 = 380), its 16 channels one
// thread block's copy each, 16 x 19.375 = 310: the prediction holds 309 at 8 GiB, the log 325.5 from
// 1 GiB on (-5%; +14% while the links set the prediction, docs/accuracy.md "A ring channel across nodes").
TEST(PresetLogs, A3UltraAllGatherPlateauIsItsRingsChannels) {
  const ValidatedRun run =
      validate_log("gcp-a3ultra-h200-2node-roce-allgather-nccl2.26.6.txt", "dgx-h200", {"node.nic.transport=roce"});
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "Ring");
  EXPECT_NEAR(last.measured_busbw_GBps, 325.52, 0.01);
  EXPECT_NEAR(last.predicted_busbw_GBps, testing::kHopperNetRingGBps, 0.01 * testing::kHopperNetRingGBps);
  EXPECT_NEAR(last.error, testing::kHopperNetRingGBps / 325.52 - 1, 0.01);
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
}

// 2 x p5.48xlarge. aws-ofi-nccl shows NCCL one 400 Gb/s device per GPU (its 4 EFA cards striped as
// rails), so the preset has 8 x 400 Gb/s and NVLSTree runs on 2 nodes as on DGX H100: plateau 461 GB/s
// predicted, 487 measured (-5%), bandwidth side +8%. Described as the 32 cards NCCL would see
// without the grouping, the ring keeps the large sizes at 370.7 GB/s, below the log's 437-487 (no
// ring can pass the 32 NICs' 400 GB/s per direction) and the bandwidth side is -11%.
TEST(PresetLogs, P5AsAwsOfiNcclGroupsItsEfaCards) {
  const ValidatedRun run = validate_log("aws-p5-2node-efa-allreduce.txt", "aws-p5");
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  EXPECT_EQ(run.sizes.back().nccl_algorithm, "NVLSTree");
  EXPECT_LT(std::fabs(run.sizes.back().error), 0.10) << run.sizes.back().error;
  // -1% today with aws-ofi-nccl's 512 KiB NVLSTree chunk (the preset's node.nvlink.nvls_chunk_bytes);
  // +2% with NCCL's own 128 KiB.
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.05) << run.bandwidth.median_error;
  // EFA's 20 us per network step (tests/test_efa.cpp): +42% today, +179% with RoCE's 3 us.
  EXPECT_LT(run.latency.median_error, 0.60) << run.latency.median_error;

  const ValidatedRun cards = validate_log("aws-p5-2node-efa-allreduce.txt", "aws-p5", {"node.nic.count=32", "node.nic.Gbps=100"});
  const ValidatedSize& last = cards.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "Ring");
  EXPECT_LT(last.predicted_busbw_GBps, 400.0);
  EXPECT_GT(last.measured_busbw_GBps, 400.0);  // 487: not a ring over the cards
}

// Eight RTX 5090 on two AMD EPYC 9575F without PCIe switches, every GPU on its own Gen5 x16 root
// port, P2P over PCIe (a patched driver; NCCL_P2P_LEVEL=SYS in the command), -g 8, NCCL 2.29.7. Each
// ring hop goes up one GPU's link, through the root complex (and xGMI across the sockets) and down
// the next: 32 GT/s x 16 x 128/130 / 8 x 0.8 = 50.4 GB/s per direction, busbw 49.5 at 128 MB with
// the ring's steps; measured 43.9-45.7 from 8 MB up. Bandwidth side -1% (1-4 MB, -25..-41%, run
// faster than Ring/Simple's 8 x 4 steps predict). Latency side -36%: 8 serial launches of 4.2 us
// (node.cpu.launch_us) against 24.5-25.5 us measured at 8-128 B, about 3.1 us per GPU on this host.
TEST(PresetLogs, EightRtx5090OverPcieP2p) {
  const ValidatedRun run = validate_log("rtx5090-x8-epyc-p2p-allreduce-g8-nccl2.29.7.txt", "pcie-gen4-8gpu",
                                        {"node.nic.count=0", "node.pcie.generation=5", "node.pcie.switches_per_socket=0",
                                         "node.cpu.vendor=amd", "node.gpu.arch=sm120", "node.pcie.nccl_p2p_level=SYS"});
  EXPECT_EQ(run.log.ranks, 8);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.size_bytes, 134217728u);
  const double gen5 = 32.0 * 16 * 128 / 130 / 8 * 0.8;
  EXPECT_LT(last.predicted_busbw_GBps, gen5);
  EXPECT_GT(last.predicted_busbw_GBps, 0.97 * gen5);
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
  EXPECT_NEAR(run.sizes.front().predicted_time_us, 8 * 4.2, 1.5);
  EXPECT_LT(run.latency.median_error, -0.30) << run.latency.median_error;
}

// One 8 x H100 node, all_reduce, from two sources: NVIDIA's DGX sample (one process per GPU) and a
// Voltage Park node (-g 8, NCCL 2.24.3). From 2 MB up the two measurements agree within 3%, and NCCL
// runs NVLS there (ccsim's tuner too). The plateau: 18 NVLinks x 20.6 GB/s x nvlsEfficiency 0.85 =
// 315 GB/s of multimem data per GPU and direction, S (1 + 1/8) of it per all_reduce: 280 GB/s algbw,
// 490 busbw; measured 480. The mid sizes follow NCCL's NVLS kernel, a pipeline of three warp groups
// (scatter into the NVLS buffers, ld_reduce + multimem.st, gather out of them) whose fill is two loops
// of 16 channels x 8 heads x NCCL's chunk (16 KiB below 8 MiB, 32 KiB below 64 MiB, 64 KiB below
// 1 GiB): 2-512 MB within -12..+14% (they ran 11-51% slower than the cut-through replay without it).
// Left: +6..+8% at 256-512 MB, where 64 KiB chunks move slower than 128 KiB ones (docs/nvls.md).
TEST(PresetLogs, SingleNodeH100NvlsFromTwoSources) {
  const ValidatedRun dgx = validate_log("dgx-h100-1node-allreduce-mpi-dgxc-benchmarking.txt", "dgx-h100");
  const ValidatedRun vp = validate_log("h100-1node-voltagepark-allreduce-g8-nccl2.24.3.txt", "dgx-h100");
  for (const ValidatedRun* run : {&dgx, &vp}) {
    EXPECT_EQ(run->prediction.facts.nodes, 1);
    for (const ValidatedSize& s : run->sizes) {
      if (s.size_bytes < (2u << 20)) continue;
      EXPECT_EQ(s.nccl_algorithm, "NVLS") << s.size_bytes;
      if (s.size_bytes >= (2u << 30)) {
        EXPECT_LT(std::fabs(s.error), 0.04) << s.size_bytes;
      } else {
        EXPECT_LT(std::fabs(s.error), 0.15) << s.size_bytes;
      }
    }
    // The largest size by hand: NVLS's 25 us, S (1 + 1/8) / B, and the fill of two 16 MiB loops
    // (128 KiB chunks) at the same rate.
    const ValidatedSize& last = run->sizes.back();
    const double B = 18 * 20.6e9 * 0.85, S = static_cast<double>(last.size_bytes), loop = 16 * 8 * 128 * 1024;
    const double hand_us = 25 + (S + 2 * loop) * 9 / 8 / B * 1e6;
    EXPECT_NEAR(last.predicted_time_us, hand_us, 1e-3 * hand_us);
    EXPECT_LT(std::fabs(run->latency.median_error), 0.20) << run->latency.median_error;
    EXPECT_LT(std::fabs(run->bandwidth.median_error), 0.05) << run->bandwidth.median_error;  // +2%, +3% today
  }
  // The -g 8 run's floor is its 8 serial launches: 8 x 4.2 us (node.cpu.launch_us, measured on a
  // DGX-A100 by another run, NVIDIA/nccl-tests#123) = 33.6 us, and the last of its 20 iterations'
  // Ring/LL collectives (6.6 + 14 x 0.6 = 15.0 us) after them: 33.6 + 15.0 / 20 = 34.35 us against
  // 33.18 measured at 8 B (this host launches in 4.1 us).
  EXPECT_NEAR(vp.sizes.front().predicted_time_us, 8 * 4.2 + 15.0 / 20, 0.01);
  EXPECT_NEAR(vp.sizes.front().measured_time_us / vp.sizes.front().predicted_time_us, 1.0, 0.04);
  // The sources agree from 2 MB on (the -g 8 run's floor below it is its serial launches).
  for (const ValidatedSize& a : dgx.sizes) {
    for (const ValidatedSize& b : vp.sizes) {
      if (a.size_bytes == b.size_bytes && a.size_bytes >= (2u << 20)) {
        EXPECT_NEAR(a.measured_time_us / b.measured_time_us, 1.0, 0.03) << a.size_bytes;
      }
    }
  }
}

// Four dgx-h100 nodes whose largest size runs the Ring across the network: its 16 channels (2 x 8 NIC
// rails) at one thread block's copy each, 16 x 19.375 = 310 GB/s busbw, under the GPU's NVLink (18 x
// 20.6 = 370.8) and the NICs' 8 x 50 x 0.97 = 388 (docs/accuracy.md "A ring channel across nodes").
ValidatedRun four_node_ring_at_its_channels(const std::string& log, double measured_last_busbw_GBps) {
  ValidatedRun run = validate_log(log, "dgx-h100");
  EXPECT_EQ(run.prediction.facts.nodes, 4);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "Ring");
  EXPECT_NEAR(last.predicted_busbw_GBps, testing::kHopperNetRingGBps, 0.01 * testing::kHopperNetRingGBps);
  EXPECT_NEAR(last.measured_busbw_GBps, measured_last_busbw_GBps, 0.01);
  return run;
}

// 4 hosts of 8 H100 with 8 CX-7 400G IB each (NVIDIA/nccl-tests#309, NCCL 2.26.2), one process per
// GPU, run with the poster's own NCCL_TOPO_FILE for its VMs. From 1 GB on the tuner runs Ring; it
// reaches 365.8 GB/s at 16 GB, the NVLink bound, which 16 channels of one block each do not: the
// bandwidth side is 15% faster than predicted (within 2% while the links set the prediction). The
// same thread's 8-node cluster gets there only with NCCL_MIN_CTAS=24 (below); whether this topology
// file gave NCCL more channels its log does not say. The latency side meets the target.
TEST(PresetLogs, FourNodeH100OnItsOwnTopologyFileOutrunsSixteenChannels) {
  const ValidatedRun run = four_node_ring_at_its_channels("h100x32-4node-ndr-allreduce-nccl2.26.2.txt", 365.84);
  EXPECT_LT(run.bandwidth.median_error, -0.10) << run.bandwidth.median_error;
  EXPECT_LT(std::fabs(run.latency.median_error), 0.20) << run.latency.median_error;
}

// 4 Voltage Park hosts of 8 H100 (NCCL 2.24.3), the cluster's defaults: the ring plateaus at 331 GB/s
// busbw, 16 channels at 20.7 each (-6.5% on the bandwidth side; +12% while NVLink's 370.8 set the
// prediction), and the latency side meets the target (Tree/LL's 35.2 us floor on 4 nodes, measured
// 37-39 us). Its source's NIC count is ambiguous ("3.2 Tbps InfiniBand", "3 active ports per node"):
// the preset's 8 are taken.
TEST(PresetLogs, FourNodeVoltageParkRingsRunAtTheirChannels) {
  const ValidatedRun run = four_node_ring_at_its_channels("h100x32-4node-voltagepark-ib-allreduce-nccl2.24.3.txt", 330.93);
  // NCCL's Tree/LL on 4 x 8: 6.8 + 2 x (7 x 0.6 + log2(4) x 5.0) = 35.2 us.
  EXPECT_NEAR(run.sizes.front().predicted_time_us, 35.2, 0.01 * 35.2);
  EXPECT_LT(std::fabs(run.latency.median_error), 0.20) << run.latency.median_error;
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
  // The same job's all_gather: 323.5 at 8 GiB (-4.7%) and the bandwidth side within the target (+20%
  // before); 4-64 MiB still take 1.3-2 times the prediction (latency side +21%).
  const ValidatedRun gather = validate_log("h100x32-4node-voltagepark-ib-allgather-nccl2.24.3.txt", "dgx-h100");
  EXPECT_EQ(gather.sizes.back().nccl_algorithm, "Ring");
  EXPECT_NEAR(gather.sizes.back().predicted_busbw_GBps, testing::kHopperNetRingGBps, 0.01 * testing::kHopperNetRingGBps);
  EXPECT_NEAR(gather.sizes.back().measured_busbw_GBps, 323.53, 0.01);
  EXPECT_NEAR(gather.sizes.back().error, testing::kHopperNetRingGBps / 323.53 - 1, 0.01);
  EXPECT_LT(std::fabs(gather.bandwidth.median_error), 0.10) << gather.bandwidth.median_error;
}

// Two SURF Snellius gpu_h100 nodes: 4 H100 each without an NVSwitch (NCCL prints no NVLS multicast),
// joined pair by pair by NVLink (6 links per pair, the HGX 4-GPU board's: inferred), and 4 x 200 Gb/s
// InfiniBand per node (the run's ibstat), NCCL 2.22.3, one process per GPU. The ring all_gather and
// reduce_scatter cross the network from every node on its 4 NICs: busbw bound 4 x 25 GB/s x 0.97 = 97.0,
// measured 97.65 and 97.68 at 8 GiB. Both collectives meet issue 11's targets on both sides.
TEST(PresetLogs, SnelliusFourH100NodesAtTheirFourNics) {
  const std::vector<std::string> sets = {"node.gpu.count=4", "node.nvlink.nvswitch=false", "node.nvlink.nvls=false",
                                         "node.nvlink.peers=[[0,1,6],[0,2,6],[0,3,6],[1,2,6],[1,3,6],[2,3,6]]",
                                         "node.nic.count=4", "node.nic.Gbps=200"};
  for (const char* log : {"snellius-h100x8-2node-4gpu-4xndr200-ib-allgather-nccl2.22.3.txt",
                          "snellius-h100x8-2node-4gpu-4xndr200-ib-reducescatter-nccl2.22.3.txt"}) {
    const ValidatedRun run = validate_log(log, "dgx-h100", sets);
    EXPECT_EQ(run.log.ranks, 8) << log;
    EXPECT_EQ(run.prediction.facts.nodes, 2) << log;
    const ValidatedSize& last = run.sizes.back();
    EXPECT_EQ(last.nccl_algorithm, "Ring") << log;
    EXPECT_NEAR(last.predicted_busbw_GBps, 4 * 25.0 * 0.97, 0.01 * 97.0) << log;
    EXPECT_NEAR(last.measured_busbw_GBps, 97.66, 0.03) << log;
    EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << log << " " << run.bandwidth.median_error;
    EXPECT_LT(std::fabs(run.latency.median_error), 0.20) << log << " " << run.latency.median_error;
  }
  // The same nodes' all_reduce. On 2 nodes NCCL's Tree sends each byte across the network once per
  // direction, above the ring's bound: 156.1 GB/s busbw measured at 8 GiB, 144.6 predicted (Tree/Simple).
  // NCCL 2.22.3's tuner, the log's own, keeps Tree/LL128 up to 256 MiB and moves to Tree/Simple at 512
  // MiB, where the measured busbw jumps from 118.7 to 150.7: with it both sides meet the targets; 2.30's
  // tuner takes Tree/Simple from 128 MiB and misses the bandwidth side there (+15%).
  nlohmann::json spec = load_topology_spec("dgx-h100");
  for (const std::string& s : sets) apply_override(spec, s, "--set");
  ValidateOptions v222;
  v222.nccl_version = parse_nccl_version("2.22", "test");
  v222.nccl_version_given = true;
  const std::string reduce = "snellius-h100x8-2node-4gpu-4xndr200-ib-allreduce-nccl2.22.3.txt";
  const ValidatedRun own = testing::validate_real_log(reduce, spec, "dgx-h100", v222);
  EXPECT_EQ(testing::size_at(own, 268435456).nccl_protocol, "LL128");
  EXPECT_EQ(testing::size_at(own, 536870912).nccl_protocol, "Simple");
  EXPECT_EQ(own.sizes.back().nccl_algorithm, "Tree");
  EXPECT_NEAR(own.sizes.back().measured_busbw_GBps, 156.14, 0.01);
  EXPECT_LT(std::fabs(own.bandwidth.median_error), 0.10) << own.bandwidth.median_error;
  EXPECT_LT(std::fabs(own.latency.median_error), 0.20) << own.latency.median_error;
  const ValidatedRun latest = testing::validate_real_log(reduce, spec, "dgx-h100");
  EXPECT_EQ(testing::size_at(latest, 134217728).nccl_protocol, "Simple");
  EXPECT_GT(latest.bandwidth.median_error, 0.10) << latest.bandwidth.median_error;
}

// 8 hosts of 8 H100 on 400G InfiniBand (another poster's cluster in NVIDIA/nccl-tests#309), one process
// per GPU, 1 MiB to 8 GiB. With NCCL_MIN_CTAS=24 (and NCCL_IB_QPS_PER_CONNECTION=2, not modelled) both
// sides meet the target from dgx-h100 and the run's --env: Ring from 4 GiB at the GPU's NVLink bound
// (370.8 GB/s busbw, under 24 channels x 19.375 = 465; measured 386-391, the ring reaching 21.7 GB/s
// per link, above NCCL's 20.6). The same cluster with its defaults plateaus at 320.7: its 16 channels of
// one block each, 310 predicted (-3.3%; +15.6% while NVLink's bound set the prediction).
TEST(PresetLogs, EightNodeH100InfinibandWithTheRunsSettings) {
  const auto with_settings = [] {
    nlohmann::json spec = load_topology_spec("dgx-h100");
    for (const char* e : {"NCCL_MIN_CTAS=24", "NCCL_IB_QPS_PER_CONNECTION=2"}) apply_nccl_env(spec, e, "--env", "test");
    return spec;
  };
  const ValidatedRun tuned = testing::validate_real_log("h100x64-8node-ib-allreduce-minctas24.txt", with_settings(), "dgx-h100");
  EXPECT_EQ(tuned.prediction.facts.nodes, 8);
  EXPECT_EQ(tuned.sizes.back().nccl_algorithm, "Ring");
  EXPECT_NEAR(tuned.sizes.back().predicted_busbw_GBps, 18 * 20.6, 0.01 * 370.8);
  EXPECT_NEAR(tuned.sizes.back().measured_busbw_GBps, 391.37, 0.01);
  EXPECT_LT(std::fabs(tuned.bandwidth.median_error), 0.10) << tuned.bandwidth.median_error;
  EXPECT_LT(std::fabs(tuned.latency.median_error), 0.20) << tuned.latency.median_error;
  const ValidatedRun defaults = validate_log("h100x64-8node-ib-allreduce.txt", "dgx-h100");
  // At 8 GiB the 16 channels' bound (the replay within 1.5% of it on 8 nodes) against the log's 320.70 GB/s.
  EXPECT_NEAR(defaults.sizes.back().error, testing::kHopperNetRingGBps / 320.70 - 1, 0.015);
  EXPECT_LT(std::fabs(defaults.bandwidth.median_error), 0.10) << defaults.bandwidth.median_error;
  // 2 of its hosts with NCCL_ALGO=Ring and the same settings: the ring at the same NVLink bound
  // (bandwidth -5%; 392.7 measured). Its 1-16 MiB run 157-199 us, flat, against Ring/LL128's 86-105
  // (latency side +67%: a known miss, docs/accuracy.md).
  ValidateOptions opts;
  opts.filter = parse_algo_filter("Ring", "", "test");
  const ValidatedRun ring =
      testing::validate_real_log("h100x16-2node-ib-allreduce-ring-minctas24.txt", with_settings(), "dgx-h100", opts);
  EXPECT_EQ(ring.sizes.back().nccl_algorithm, "Ring");
  EXPECT_NEAR(ring.sizes.back().predicted_busbw_GBps, 18 * 20.6, 0.005 * 370.8);
  EXPECT_LT(std::fabs(ring.bandwidth.median_error), 0.10) << ring.bandwidth.median_error;
  EXPECT_GT(ring.latency.median_error, 0.20) << ring.latency.median_error;  // misses the target
}

// 2 GCP A4 nodes (8 B200, 8 RDMA NICs each through Google's gIB plugin, NCCL 2.26.6), all_gather.
// The ring all_gather is NIC-bound on 2 nodes: busbw = 8 NICs x 400 Gb/s / 8 x RoCE's 0.95 = 380
// GB/s. Measured 260 at 8 GiB (0.68 of it) and far slower at the small sizes (280 us at 1 KiB): the
// gIB plugin's rate and per-step cost, which ccsim does not describe (docs/accuracy.md).
TEST(PresetLogs, A4B200AllGatherIsBelowItsNicBound) {
  const ValidatedRun run = validate_log("gcp-a4-b200-2node-roce-allgather-nccl2.26.6.txt", "dgx-b200", {"node.nic.transport=roce"});
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "Ring");
  EXPECT_LE(last.predicted_busbw_GBps, 8 * 50.0 * 0.95 + 1e-9);
  EXPECT_GT(last.predicted_busbw_GBps, 0.99 * 8 * 50.0 * 0.95);
  EXPECT_NEAR(last.measured_busbw_GBps, 260.03, 0.01);
  EXPECT_NEAR(last.measured_busbw_GBps / (8 * 50.0 * 0.95), 0.68, 0.01);
  EXPECT_GT(run.latency.median_error, 5.0);  // +1315%
}

// One A100 node, sendrecv with one process driving 8 GPUs (a notes page, NCCL version not printed):
// every GPU sends S to the next and receives S from the previous. At 128 MiB NCCL runs the message on
// 8 channels per peer, each a thread block copying at 9.79 bytes per SM cycle (topologies/gpu_copy_rate.h,
// from another A100 log): 8 x 13.8 = 110.4 GB/s against 110.81 measured. From 512 MiB ccsim's P2P path
// runs at the GPU's NVLink, 12 links x NCCL's 20 GB/s = 240 GB/s (239.4 at 1 GiB); the log reaches
// 195.1, 0.81 of it, where the same node's rings reach 0.97 (a100x8's all_reduce, 232.4 of 240 busbw). A
// known miss (docs/accuracy.md). The log has no header or device list, so its collective and ranks
// are passed, as --collective and --ranks would.
TEST(PresetLogs, A100SendRecvChannelsThenBelowItsNvlinkRate) {
  ValidateOptions o;
  o.overrides.collective = "sendrecv";
  o.overrides.ranks = 8;
  o.overrides.gpus_per_node = 8;
  const ValidatedRun run =
      testing::validate_real_log("a100x8-1node-sendrecv-g8.txt", load_topology_spec("hgx-a100"), "hgx-a100", o);
  EXPECT_EQ(run.prediction.facts.nodes, 1);
  ASSERT_EQ(run.sizes.size(), 4u);
  const ValidatedSize& first = run.sizes.front();  // 128 MiB
  EXPECT_NEAR(first.measured_busbw_GBps, 110.81, 0.01);
  EXPECT_NEAR(first.predicted_busbw_GBps, 8 * kP2pChannelBytesPerCycle * 1.41, 0.02 * 110.4);
  EXPECT_LT(std::fabs(first.error), 0.03) << first.error;
  const ValidatedSize& last = run.sizes.back();
  EXPECT_LT(last.predicted_busbw_GBps, 12 * 20.0);
  EXPECT_GT(last.predicted_busbw_GBps, 0.99 * 12 * 20.0);
  EXPECT_NEAR(last.measured_busbw_GBps, 195.10, 0.01);
  EXPECT_NEAR(last.measured_busbw_GBps / (12 * 20.0), 0.81, 0.01);
  EXPECT_GT(run.bandwidth.median_error, 0.15);  // +19% today: the plateau
  EXPECT_LT(run.bandwidth.median_error, 0.25);
}

// Sendrecv on one H100 node (the xxrjun cluster, NCCL 2.29.2, one process per GPU): NCCL's channels
// per peer, 4 at 32-64 MiB and doubling from 128 MiB, each at 9.79 bytes per SM cycle x H100's 1.98
// GHz = 19.4 GB/s (a constant taken from an A100 log: this one checks it), then NVLink's 370 from 512
// MiB. Measured 79.6, 82.0, 162.9, 299.3 GB/s at 32-256 MiB: every size within 7%. Without the rate
// (node.gpu.p2p_channel_GBps=0) 32-128 MiB are predicted at NVLink's rate, 2-4x too fast.
TEST(PresetLogs, H100SendRecvRunsOnItsChannelsThenOnNvlink) {
  const std::string name = "h100x8-1node-sendrecv-nccl2.29.2.txt";
  EXPECT_EQ(testing::hardware_of_real_log(name).preset, "dgx-h100");
  const ValidatedRun run = validate_log(name, "dgx-h100");
  ASSERT_EQ(run.sizes.size(), 10u);
  const double per_channel = kP2pChannelBytesPerCycle * 1.98;
  EXPECT_NEAR(run.sizes[0].predicted_busbw_GBps, 4 * per_channel, 0.05 * 4 * per_channel);  // 32 MiB
  EXPECT_NEAR(run.sizes[2].predicted_busbw_GBps, 8 * per_channel, 0.05 * 8 * per_channel);  // 128 MiB
  for (const ValidatedSize& v : run.sizes) EXPECT_LT(std::fabs(v.error), 0.07) << v.size_bytes;
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.03) << run.bandwidth.median_error;
  const ValidatedRun uncapped = validate_log(name, "dgx-h100", {"node.gpu.p2p_channel_GBps=0"});
  EXPECT_GT(uncapped.sizes[1].error, 2.0);  // 64 MiB: +324%

  // Two nodes of the same site, an older log (no version line). NCCL 2.29+ gives each network peer 4
  // channels, one per 14 GB/s of the 400 Gb/s NIC (48 GB/s in NCCL's units): the prediction is the
  // NIC's rate, +68% against the log's 28.8. The log's 2 channels at 14.4 GB/s each are NCCL 2.28's
  // rule: with --nccl-version 2.28 every message runs on 2 channels per peer (the network peers' count
  // is the minimum), so the pairs inside a node bind at 2 x 19.4 GB/s, +34%; the network pairs' 14.4
  // per channel is not modelled (docs/accuracy.md).
  const ValidatedRun two = validate_log("h100x16-2node-sendrecv.txt", "dgx-h100");
  EXPECT_EQ(two.prediction.facts.nodes, 2);
  EXPECT_NEAR(two.sizes.back().measured_busbw_GBps, 28.84, 0.01);
  EXPECT_GT(two.sizes.back().predicted_busbw_GBps, 4 * 0.95 * 14.0 * 0.9);  // the NIC's rate, not 4 x 14
  EXPECT_GT(two.bandwidth.median_error, 0.55);
  const auto cause = [](const ValidatedRun& run) {
    const auto c = std::find_if(run.causes.begin(), run.causes.end(), [](const LikelyCause& x) { return x.id == "p2p-net-channels"; });
    return c == run.causes.end() ? std::string() : c->evidence;
  };
  EXPECT_NE(cause(two).find("4 channel(s) per peer"), std::string::npos) << cause(two);
  nlohmann::json h100 = load_topology_spec("dgx-h100");
  ValidateOptions v228;
  v228.nccl_version = parse_nccl_version("2.28", "test");
  v228.nccl_version_given = true;
  const ValidatedRun old = testing::validate_real_log("h100x16-2node-sendrecv.txt", h100, "dgx-h100", v228);
  EXPECT_NEAR(old.sizes.back().predicted_busbw_GBps, 2 * per_channel, 0.02 * 2 * per_channel);
  EXPECT_GT(old.bandwidth.median_error, 0.25);
  EXPECT_LT(old.bandwidth.median_error, 0.45);
  EXPECT_NE(cause(old).find("2 channel(s) per peer"), std::string::npos) << cause(old);
  EXPECT_NE(cause(old).find("14.42 GB/s per channel"), std::string::npos) << cause(old);  // 28.84 / 2
}

// The source of the per-channel constant: two A100-SXM-64GB joined by NV4 (NVIDIA/nccl-tests#331, NCCL
// 2.22.3, NCCL_BUFFSIZE 4 MiB). NCCL prints 8 coll channels and 8 p2p channels per peer: ccsim's search
// over the 4 links to the other GPU of the run (not the GPU's 12) finds the same. 16-64 MiB run on 4
// channels at 13.8 GB/s each (55.19 GB/s at 64 MiB), 128 MiB on 8 at the NV4 link (80; 73.2 measured).
TEST(PresetLogs, A100PairOfAFourGpuBoardSeesItsFourLinks) {
  const std::string name = "a100x2-leonardo-nv4-sendrecv-nccl2.22.3.txt";
  nlohmann::json spec = load_topology_spec("hgx-a100");
  for (const char* o : {"node.gpu.count=2", "node.nic.count=0", "node.nvlink.nvswitch=false", "node.nvlink.peers=[[0,1,4]]"})
    apply_override(spec, o, "--set");
  apply_nccl_env(spec, "NCCL_P2P_LEVEL=NVL", "--env", "test");
  apply_nccl_env(spec, "NCCL_BUFFSIZE=4194304", "--env", "test");
  const ValidatedRun run = testing::validate_real_log(name, spec, "hgx-a100");
  EXPECT_EQ(run.log.collective, "sendrecv");
  EXPECT_EQ(run.prediction.facts.nccl_coll_channels, 8);
  EXPECT_NEAR(testing::size_at(run, 64u << 20).measured_busbw_GBps, 4 * kP2pChannelBytesPerCycle * 1.41, 1e-9);  // the constant's source
  EXPECT_NEAR(testing::size_at(run, 64u << 20).predicted_busbw_GBps, 4 * kP2pChannelBytesPerCycle * 1.41, 0.02 * 55.19);
  EXPECT_LT(std::fabs(testing::size_at(run, 16u << 20).error), 0.06);
  EXPECT_NEAR(testing::size_at(run, 128u << 20).predicted_busbw_GBps, 80.0, 1.0);  // NV4 at NCCL's 20 GB/s per link
}

// A DGX-2 with 12 of its 16 V100 SXM3 (the others busy), one process driving 12 GPUs (~2019 NCCL): the
// ring through the NVSwitch plane runs at a GPU's 6 NVLink2 links x NCCL's 20 GB/s = 120 GB/s busbw for
// all_reduce, broadcast and reduce alike; measured 123.6, 122.2 and 122.7 at 8 GiB. Bandwidth sides -3%,
// -4%, -4%; latency sides +22%, +17%, +16% (12 serial launches of ~5 us on this host against 4.2).
TEST(PresetLogs, Dgx2TwelveV100RingsAtSixNvlinks) {
  const std::vector<std::string> twelve = {"node.gpu.count=12", "node.nic.count=0"};
  for (const std::string name : {"allreduce", "broadcast", "reduce"}) {
    const ValidatedRun run = validate_log("dgx2-v100x12-" + name + "-g12.txt", "dgx2-v100", twelve);
    const ValidatedSize& last = run.sizes.back();
    EXPECT_EQ(last.nccl_algorithm, "Ring") << name;
    EXPECT_NEAR(last.predicted_busbw_GBps, 6 * 20.0, 0.01 * 120.0) << name;
    EXPECT_GT(last.measured_busbw_GBps, 122.0) << name;
    EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << name << " " << run.bandwidth.median_error;
    EXPECT_LT(std::fabs(run.latency.median_error), 0.25) << name << " " << run.latency.median_error;
  }
}

// Two OCI BM.GPU.H100.8 nodes (16 x 200 Gb/s RoCE ports on eight dual-port cards), NCCL 2.21.5, 1-16
// GiB (oracle-japan/ocitutorials). NCCL fuses each card's ports into one 400 Gb/s device, so its tuner
// runs NVLSTree as on DGX H100: busbw 460.5 predicted at 16 GiB, 464.57 measured. The ports taken
// apart (NCCL_IB_MERGE_NICS=0) leave it Ring at the ring's bound, 370.7, below the measurement.
TEST(PresetLogs, OciH100PortsOfACardAreOneNic) {
  const ValidatedRun run = validate_log("oci-h100x16-2node-roce-allreduce-nccl2.21.5.txt", "oci-h100");
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "NVLSTree");
  EXPECT_NEAR(last.measured_busbw_GBps, 464.57, 0.01);
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
  const ValidatedRun apart =
      validate_log("oci-h100x16-2node-roce-allreduce-nccl2.21.5.txt", "oci-h100", {"node.nic.fuse_ports=false"});
  EXPECT_EQ(apart.sizes.back().nccl_algorithm, "Ring");
  EXPECT_LT(apart.bandwidth.median_error, -0.15) << apart.bandwidth.median_error;  // faster than Ring can be
}

// Two OCI H200 nodes on RoCE (an oci-hpc Slurm cluster's page, NCCL 2.27.5, 1-16 GiB; NICs not stated):
// dgx-h200 on RoCE, NVLSTree, within 6% at every size.
TEST(PresetLogs, OciH200RoceAllReduceBandwidthSide) {
  const ValidatedRun run =
      validate_log("oci-h200x16-2node-roce-allreduce-nccl2.27.5.txt", "dgx-h200", {"node.nic.transport=roce"});
  EXPECT_EQ(run.sizes.back().nccl_algorithm, "NVLSTree");
  for (const ValidatedSize& v : run.sizes) EXPECT_LT(std::fabs(v.error), 0.06) << v.size_bytes;
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
}

// Two Crusoe A100 VMs on InfiniBand (8 HCAs each) and two Nebius H100 VMs on InfiniBand (dstack's
// READMEs; tables only: 16 ranks from busbw/algbw, 2 nodes of the preset's 8 GPUs). Bandwidth sides
// within issue 11's 10% (A100: Ring/Simple at 8 x 200 Gb/s HDR, 191 GB/s predicted, 194 measured;
// H100: NVLSTree). Latency sides: the A100's meets the 20% (+19%); the H100's floor is 30 us against
// Tree/LL's 25.4 and its mid sizes are slower still, median +23% (docs/accuracy.md).
TEST(PresetLogs, CrusoeA100AndNebiusH100OnInfiniBand) {
  const ValidatedRun a100 = validate_log("crusoe-a100x16-2node-ib-allreduce-dstack.txt", "hgx-a100");
  EXPECT_EQ(a100.prediction.facts.nodes, 2);
  // The table alone: nccl-tests' default timing loop, and the report says so.
  EXPECT_EQ(a100.log.iters, 20);
  EXPECT_TRUE(std::any_of(a100.log.notes.begin(), a100.log.notes.end(),
                          [](const std::string& n) { return n.find("no run header") != std::string::npos; }));
  EXPECT_EQ(a100.sizes.back().nccl_algorithm, "Ring");
  EXPECT_NEAR(a100.sizes.back().predicted_busbw_GBps, 8 * 25.0 * 0.97, 0.03 * 194.0);  // 8 NICs x 200 Gb/s x IB 0.97
  EXPECT_LT(std::fabs(a100.bandwidth.median_error), 0.10) << a100.bandwidth.median_error;
  EXPECT_LT(std::fabs(a100.latency.median_error), 0.20) << a100.latency.median_error;
  const ValidatedRun h100 = validate_log("nebius-h100x16-2node-ib-allreduce-dstack.txt", "dgx-h100");
  EXPECT_EQ(h100.sizes.back().nccl_algorithm, "NVLSTree");
  EXPECT_LT(std::fabs(h100.bandwidth.median_error), 0.10) << h100.bandwidth.median_error;
  EXPECT_LT(h100.latency.median_error, 0.30) << h100.latency.median_error;  // +23% today: a known miss
}

}  // namespace
}  // namespace ccsim

namespace ccsim {
namespace {

// One HGX H20 host, 8 GPUs driven by one process (nccl-tests built without MPI, so -g 8), NCCL not
// printed (NVIDIA/nccl-tests#306). H20 is Hopper with H100's 18 NVLink4 links through NVSwitch, and
// validate takes dgx-h100 from the log's device names. The plateau, 362.3 GB/s busbw at 2 GiB, is a
// ring's at NVLink4's bound (18 x 20.6 GB/s, as on the H100 rings of test_h100_collective_logs), not
// NVLS's ~480: NVLS did not run on this host. Predicted with NVLS, the bandwidth side is +28% (validate
// names nvls-unavailable); with NCCL_NVLS_ENABLE=0 within 2%.
TEST(PresetLogs, H20NodeIsH100NvlinkRingWithoutNvls) {
  const std::string name = "h20x8-1node-allreduce-g8.txt";
  const LogHardware guess = testing::hardware_of_real_log(name);
  EXPECT_EQ(guess.preset, "dgx-h100");
  EXPECT_EQ(guess.why.find("per host"), std::string::npos) << guess.why;  // one host of 8

  const ValidatedRun nvls = validate_log(name, "dgx-h100");
  EXPECT_EQ(nvls.sizes.back().nccl_algorithm, "NVLS");
  EXPECT_GT(nvls.bandwidth.median_error, 0.20) << nvls.bandwidth.median_error;

  nlohmann::json spec = load_topology_spec("dgx-h100");
  apply_nccl_env(spec, "NCCL_NVLS_ENABLE=0", "--env", "test");
  const ValidatedRun ring = testing::validate_real_log(name, spec, "dgx-h100");
  const ValidatedSize& last = ring.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "Ring");
  EXPECT_NEAR(last.measured_busbw_GBps, 362.29, 0.01);
  EXPECT_LT(last.predicted_busbw_GBps, 18 * 20.6);
  EXPECT_GT(last.predicted_busbw_GBps, 0.98 * 18 * 20.6);
  EXPECT_LT(std::fabs(ring.bandwidth.median_error), 0.05) << ring.bandwidth.median_error;
  EXPECT_LT(std::fabs(ring.latency.median_error), 0.20) << ring.latency.median_error;
}

// Two a4-highgpu-8g (8 B200, one RoCE NIC per GPU through Google's gIB plugin), all_gather, Google's own
// example outputs: Compute Engine VMs (NCCL 2.25.1) and GKE pods. On 2 nodes the ring all_gather is
// bound by the NICs: 8 x 400 Gb/s x RoCE's 0.95 = 380 GB/s busbw (dgx-b200's NICs; the pages do not
// state their speed). The VMs' plateau is that bound (377.4 GB/s measured at 16 GiB, bandwidth side
// +3%), the pods' 344.5 (+11%). Both latency sides miss by +68..+105%: a floor of 47-60 us against
// Ring/LL's 28, the gIB plugin's per-step cost, as on the A3 Ultra (H200) and the dranet A4 rows
// (docs/accuracy.md).
TEST(PresetLogs, GoogleA4B200AllGatherAtTheNicRingBound) {
  nlohmann::json spec = load_topology_spec("dgx-b200");
  apply_override(spec, "node.nic.transport=roce", "--set");
  ValidateOptions opts;
  opts.overrides.collective = "all_gather";
  const ValidatedRun vm = testing::validate_real_log("gcp-a4-b200-2node-vm-allgather-nccl2.25.1.txt", spec, "dgx-b200", opts);
  const ValidatedRun gke = testing::validate_real_log("gcp-a4-b200-2node-gke-allgather.txt", spec, "dgx-b200", opts);
  const double nic_ring_bound = 8 * 50.0 * 0.95;
  for (const ValidatedRun* run : {&vm, &gke}) {
    EXPECT_EQ(run->log.ranks, 16);
    EXPECT_EQ(run->prediction.facts.nodes, 2);
    const ValidatedSize& last = run->sizes.back();
    EXPECT_EQ(last.nccl_algorithm, "Ring");
    EXPECT_LT(last.predicted_busbw_GBps, nic_ring_bound);
    EXPECT_GT(last.predicted_busbw_GBps, 0.98 * nic_ring_bound);
    EXPECT_GT(run->latency.median_error, 0.50) << run->latency.median_error;  // gIB's floor: a known miss
  }
  EXPECT_NEAR(vm.sizes.back().measured_busbw_GBps, 377.38, 0.01);
  EXPECT_LT(std::fabs(vm.bandwidth.median_error), 0.05) << vm.bandwidth.median_error;
  EXPECT_LT(std::fabs(gke.bandwidth.median_error), 0.15) << gke.bandwidth.median_error;
}

// Google's A4 (8 B200) on GKE through the gIB plugin image, all_reduce, an edited excerpt of a DeepEP
// guide (out-of-place columns only), run with NCCL_NVLS_CHUNKSIZE=524288 and Google's tuner plugin
// config. One node, -g 8: NVLS at NVLink5's rate, 840-845 GB/s busbw at 8-16 GiB against dgx-b200's
// 811-821 with the 512 KiB chunks (within 4%); two nodes: NVLSTree, 676-684 at 8-16 GiB against 696-704.
// Both miss at 8-256 MiB (up to +61%: predicted faster), where the tuner plugin's table (not public)
// picks instead of NCCL's model; the bandwidth medians are +11% and +10% (docs/accuracy.md).
TEST(PresetLogs, GoogleA4B200AllReduceOneAndTwoNodes) {
  nlohmann::json one = load_topology_spec("dgx-b200");
  apply_nccl_env(one, "NCCL_NVLS_CHUNKSIZE=524288", "--env", "test");
  const ValidatedRun node = testing::validate_real_log("gcp-a4-b200-1node-allreduce-g8-gib-tuner.txt", one, "dgx-b200");
  EXPECT_EQ(node.log.gpus_per_process, 8);
  ASSERT_EQ(node.sizes.size(), 12u);
  for (std::size_t i = 10; i < 12; ++i) {  // 8 and 16 GiB
    EXPECT_EQ(node.sizes[i].nccl_algorithm, "NVLS");
    EXPECT_LT(std::fabs(node.sizes[i].error), 0.04) << node.sizes[i].size_bytes;
  }
  EXPECT_NEAR(node.sizes[11].measured_busbw_GBps, 845.44, 0.01);
  EXPECT_GT(node.sizes[3].error, 0.30);  // 64 MiB: a known miss

  nlohmann::json two = one;
  apply_override(two, "node.nic.transport=roce", "--set");
  ValidateOptions opts;
  opts.overrides.ranks = 16;  // the excerpt's device list stands 5 lines for 16 ranks
  const ValidatedRun pair = testing::validate_real_log("gcp-a4-b200-2node-gib-allreduce-gib-tuner.txt", two, "dgx-b200", opts);
  EXPECT_EQ(pair.log.collective, "all_reduce");  // busbw/algbw 1.875 with the 16 ranks given
  EXPECT_EQ(pair.prediction.facts.nodes, 2);
  for (std::size_t i = 9; i < 12; ++i) {  // 4-16 GiB
    EXPECT_EQ(pair.sizes[i].nccl_algorithm, "NVLSTree");
    EXPECT_LT(std::fabs(pair.sizes[i].error), 0.05) << pair.sizes[i].size_bytes;
  }
  EXPECT_GT(pair.sizes[3].error, 0.30);  // 64 MiB

  // Without the provenance's command the log names no collective: the table tells all_reduce with the
  // ranks --ranks gives, not the abbreviated device list's 5.
  NcclTestsRun unnamed = testing::parse_real_log("gcp-a4-b200-2node-gib-allreduce-gib-tuner.txt").at(0);
  unnamed.collective.clear();
  unnamed.named_collectives.clear();
  ASSERT_EQ(unnamed.devices.size(), 5u);
  const ValidatedRun from_table = validate_run(unnamed, "table.txt", 0, two, "dgx-b200", opts, DebugFacts{});
  EXPECT_EQ(from_table.log.collective, "all_reduce");
  EXPECT_NE(from_table.log.collective_source.find("busbw/algbw 1.8750"), std::string::npos) << from_table.log.collective_source;
}

// Two 8 x B200 nodes of a Lambda cluster (400 Gb/s NDR InfiniBand, 8 NICs per node assumed), NCCL
// 2.26.2, all_reduce from dstack's docs: no device list, so 16 ranks from busbw/algbw 1.875 and 2 nodes
// from dgx-b200's 8 GPUs. NVLSTree at 1-2 GiB, 677 and 696 GB/s busbw against 682 and 704 (within 2%);
// the bandwidth side's median is +7%, the latency side's +47%: a 35.5-37.4 us floor below 256 B
// against Tree/LL's 25.4, and 1-4 MiB flat at 114-118 us (docs/accuracy.md "B200 over InfiniBand").
TEST(PresetLogs, LambdaB200TwoNodesOverInfiniBand) {
  const ValidatedRun run = testing::validate_real_log("lambda-b200x16-2node-ib-allreduce-dstack-nccl2.26.2.txt",
                                                      load_topology_spec("dgx-b200"), "dgx-b200");
  EXPECT_EQ(run.log.ranks, 16);
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  ASSERT_EQ(run.sizes.size(), 29u);
  for (std::size_t i = 27; i < 29; ++i) {  // 1 and 2 GiB
    EXPECT_EQ(run.sizes[i].nccl_algorithm, "NVLSTree");
    EXPECT_LT(std::fabs(run.sizes[i].error), 0.02) << run.sizes[i].size_bytes;
  }
  EXPECT_NEAR(run.sizes[28].measured_busbw_GBps, 696.06, 0.01);
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
  EXPECT_GT(run.sizes[0].error, 0.30);  // 8 B: the floor, a known miss
  EXPECT_GT(run.latency.median_error, 0.30);
}

// Four H100 SXM of an NVSwitch board in a Lambda cloud VM (NV18 between every pair, NCCL 2.26.2, one
// process driving the four GPUs). The bandwidth side is the ring's NVLink bound, as on a DGX node
// with 4 GPUs described (355.9 GB/s busbw at 1 GB against 368.3). The floor is not: 23.5-26.1 us from
// 8 B to 128 KiB, 5.9-6.5 us per GPU launch, against ccsim's 4 x 4.2 us (NVIDIA/nccl-tests#123's
// DGX A100 figure, node.cpu.launch_us): the VM's host launches, a known miss. The header quotes the
// INFO line `"NCCL version 2.26.2+cuda12.8")`; the version is read without the quote and bracket.
TEST(PresetLogs, LambdaH100VmOfFourGpusRunsAtItsNvlinkRingBound) {
  nlohmann::json spec = load_topology_spec("dgx-h100");
  apply_override(spec, "node.gpu.count=4", "--set");
  apply_override(spec, "node.nic.count=0", "--set");
  const ValidatedRun run =
      testing::validate_real_log("lambda-h100x4-vm-nv18-allreduce-g4-nccl2.26.2.txt", spec, "dgx-h100");
  EXPECT_EQ(run.log.ranks, 4);
  EXPECT_EQ(run.log.gpus_per_process, 4);
  EXPECT_EQ(run.log.nccl_version, "2.26.2+cuda12.8");
  ASSERT_EQ(run.sizes.size(), 28u);
  EXPECT_NEAR(run.sizes.back().measured_busbw_GBps, 355.89, 0.01);
  EXPECT_EQ(run.sizes.back().nccl_algorithm, "Ring");
  EXPECT_LT(std::fabs(run.sizes.back().error), 0.05) << run.sizes.back().error;
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
  EXPECT_GT(run.latency.median_error, 0.30);  // the VM's launches (above)
  EXPECT_GT(run.sizes.front().measured_time_us, 4 * 5.9);
}

// The same 2 x 8 H200 Spectrum-X cluster with nccl-tests' -d all: 12 datatypes at 10-40 GiB. NVLink
// SHARP reduces sums of 32/64-bit integers, half, bfloat16, float and double, not of int8, uint8 or
// fp8 (NCCL's ncclNvlsSupported), and the log shows it: 390 GB/s busbw for int8 and 362 for fp8
// against 436-487 for the others. Predicted with NVLSTree for every type, int8 would be +18% and fp8
// +27%; with NCCL's rule every datatype is within 6% (Ring for the three it cannot reduce). The run's
// NCCL_MIN_NCHANNELS=32 (its mpirun line) gives the ring 32 channels, whose blocks' copies (32 x
// 19.375 GB/s) stay above NVLink's bound; with the default 16 they would hold it at 310 (int8 -21%).
TEST(PresetLogs, H200SpectrumXEveryDatatypeRunsWhereNvlinkSharpReducesIt) {
  const std::string name = "hgx-h200-2node-spectrumx-roce-allreduce-dall-nccl2.30.4.txt";
  const auto runs = testing::parse_real_log(name);
  ASSERT_EQ(runs.size(), 12u);
  nlohmann::json spec = load_topology_spec("dgx-h200");
  apply_override(spec, "node.nic.transport=roce", "--set");
  apply_nccl_env(spec, "NCCL_MIN_NCHANNELS=32", "--env", "test");
  double float_busbw = 0, int8_busbw = 0;
  const ValidateOptions defaults;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const ValidatedRun run = validate_run(runs[i], name, static_cast<int>(i), spec, "dgx-h200", defaults, DebugFacts{});
    const std::string type = runs[i].rows.front().type;
    const bool sharp = type != "int8" && type != "uint8" && type != "f8e4m3" && type != "f8e5m2";
    EXPECT_EQ(run.sizes.back().nccl_algorithm, sharp ? "NVLSTree" : "Ring") << type;
    EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.06) << type << " " << run.bandwidth.median_error;
    if (type == "float") float_busbw = run.sizes.back().measured_busbw_GBps;
    if (type == "int8") int8_busbw = run.sizes.back().measured_busbw_GBps;
  }
  EXPECT_NEAR(float_busbw, 487.06, 0.01);
  EXPECT_NEAR(int8_busbw, 390.12, 0.01);
}

// Google's A3 Ultra on GKE, two pods of one H200 and one 400 Gb/s RoCE NIC each (kubernetes-sigs/dranet's
// demo), NCCL 2.25.1 through the gIB plugin. Two ranks' ring all_gather runs at one NIC's rate:
// 50 GB/s x RoCE's 0.95 = 47.5 GB/s busbw predicted, 32.2 measured at 8 GiB (+48%), and the floor is
// 21-22 us against Ring/LL's 10.3. The A3 Ultra VMs with 8 NICs reach 0.86 of their ring bound through
// the same plugin; a single connection reaches 0.68. Neither figure is published (docs/accuracy.md).
TEST(PresetLogs, GoogleA3UltraOneGpuAndOneNicRunsBelowItsNic) {
  const ValidatedRun run = validate_log("gcp-a3ultra-h200-2node-1gpu-1nic-allgather-nccl2.25.1.txt", "dgx-h200",
                                        {"node.gpu.count=1", "node.nic.count=1", "node.nic.transport=roce"}, "all_gather");
  EXPECT_EQ(run.log.ranks, 2);
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "Ring");
  EXPECT_NEAR(last.measured_busbw_GBps, 32.20, 0.01);
  EXPECT_LT(last.predicted_busbw_GBps, 50.0 * 0.95);
  EXPECT_GT(last.predicted_busbw_GBps, 0.99 * 50.0 * 0.95);
  EXPECT_GT(run.bandwidth.median_error, 0.40);  // gIB's single-connection rate: a known miss
  EXPECT_GT(run.latency.median_error, 1.0);     // its 21 us floor
}

// The same machine type on another GKE cluster (kubernetes-sigs/dranet's MPI-operator page): two pods
// of one H200 and one dedicated ConnectX-7 each, all_reduce through Google's gIB NCCL. Two ranks'
// ring moves S each way over the one NIC, predicted at 50 GB/s x RoCE's 0.95 = 47.5 GB/s busbw; the
// run holds 31.88 at 2-8 GiB, the 32.2 of Google's all_gather above within 1%: one gIB connection's
// rate, on a second deployment and collective (docs/accuracy.md). The floor is 35 us at 1 KiB.
TEST(PresetLogs, GkeH200OneGpuOneNicAllReduceHasTheGibConnectionsRate) {
  const ValidatedRun run = validate_log("gke-h200-2node-1gpu-1nic-dranet-mpijob-allreduce.txt", "dgx-h200",
                                        {"node.gpu.count=1", "node.nic.count=1", "node.nic.transport=roce"});
  EXPECT_EQ(run.log.ranks, 2);
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_NEAR(last.measured_busbw_GBps, 31.89, 0.01);
  EXPECT_NEAR(last.predicted_busbw_GBps, 50.0 * 0.95, 0.01 * 50.0 * 0.95);
  const ValidatedRun gather = validate_log("gcp-a3ultra-h200-2node-1gpu-1nic-allgather-nccl2.25.1.txt", "dgx-h200",
                                           {"node.gpu.count=1", "node.nic.count=1", "node.nic.transport=roce"}, "all_gather");
  EXPECT_NEAR(last.measured_busbw_GBps / gather.sizes.back().measured_busbw_GBps, 1.0, 0.02);
  EXPECT_GT(run.bandwidth.median_error, 0.40);  // gIB's single-connection rate: a known miss
  EXPECT_GT(run.latency.median_error, 1.0);     // its 35 us floor
}

// The A3 Ultra VMs' machine type on GKE (Google's test-gke-custom page, no device list: 16 ranks from
// the count column). Its plateau is the VMs' (330.2 GB/s busbw at 8 GiB against 325.5), above the 16
// ring channels' 310: bandwidth side -6% (+13% at the links' bound). Its floor is 56 us, twice the
// VMs' 28.7.
TEST(PresetLogs, GoogleA3UltraOnGkeHasTheVmsPlateauNotTheirFloor) {
  const ValidatedRun run =
      validate_log("gcp-a3ultra-h200-2node-gke-allgather.txt", "dgx-h200", {"node.nic.transport=roce"}, "all_gather");
  EXPECT_EQ(run.log.ranks, 16);
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "Ring");
  EXPECT_NEAR(last.measured_busbw_GBps, 330.16, 0.01);
  EXPECT_NEAR(last.predicted_busbw_GBps, testing::kHopperNetRingGBps, 0.01 * testing::kHopperNetRingGBps);
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
  EXPECT_NEAR(run.sizes.front().measured_time_us, 56.00, 0.01);  // 1 KiB; the VMs: 28.05-28.70 us
  EXPECT_GT(run.latency.median_error, 0.50);  // gIB's per-step cost on this cluster: a known miss
}

// Google's A4X Max: two trays of 4 GB300 in different NVLink domains, joined by RDMA only (8 x 400
// Gb/s RoCE per tray from 4 ConnectX-8, Google's "Networking and GPU machines" page), NCCL 2.28.9. The
// ring all_gather crosses the network twice per tray: its bound is a tray's 8 NICs x 50 GB/s x 0.95 =
// 380 GB/s busbw; measured 357.1 at 16 GiB (+6%). The bandwidth side's median is +12% (the approach
// from 32 to 256 MiB), the latency side +54% (gIB's floor, 28 us at 4 KiB).
TEST(PresetLogs, GoogleA4XMaxTraysAcrossNvlinkDomainsRunAtTheirNics) {
  const ValidatedRun run =
      validate_log("gcp-a4xmax-gb300-2node-crossdomain-allgather-nccl2.28.9.txt", "gb200-nvl72",
                   {"node.nvlink.domain_size=1", "node.nic.count=8", "node.nic.Gbps=400", "node.nic.transport=roce"});
  EXPECT_EQ(run.log.ranks, 8);
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_EQ(last.nccl_algorithm, "Ring");
  EXPECT_NEAR(last.measured_busbw_GBps, 357.13, 0.01);
  EXPECT_LT(last.predicted_busbw_GBps, 8 * 50.0 * 0.95);
  EXPECT_GT(last.predicted_busbw_GBps, 0.99 * 8 * 50.0 * 0.95);
  EXPECT_LT(std::fabs(last.error), 0.07) << last.error;
  EXPECT_LT(run.bandwidth.median_error, 0.15) << run.bandwidth.median_error;
  EXPECT_GT(run.latency.median_error, 0.30);
}

// Together AI's B200 cluster, 2 nodes x 8 B200 with 8 x 400 Gb/s InfiniBand each, sendrecv_perf (every
// rank sends to the next: 14 pairs over NVLink, 2 across the nodes), NCCL 2.29.7. A network pair runs
// on 4 channels (NCCL 2.29's rule: 400 Gb/s over its 14 GB/s per channel) and is bound by the NIC:
// 50 GB/s x InfiniBand's 0.97 = 48.5 GB/s predicted, 43.14 measured at 128-256 MiB (0.86 of the line):
// bandwidth side +11%, just past issue 11's target (+8% on 4 nodes). Its floor (23-35 us from 1 to 16 KiB, against
// 12 us predicted) misses the latency side's: P2P's per-message costs across nodes (docs/accuracy.md).
TEST(PresetLogs, TogetherB200SendRecvAcrossNodesRunsAtTheNic) {
  nlohmann::json spec = load_topology_spec("dgx-b200");
  apply_nccl_env(spec, "NCCL_NVLS_ENABLE=0", "--env", "test");
  const ValidatedRun run = testing::validate_real_log("together-b200x16-2node-ib-sendrecv-nccl2.29.7.txt", spec, "dgx-b200");
  EXPECT_EQ(run.log.ranks, 16);
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  const ValidatedSize& last = run.sizes.back();
  EXPECT_NEAR(last.measured_busbw_GBps, 43.14, 0.01);
  EXPECT_NEAR(last.predicted_busbw_GBps, 50.0 * 0.97, 0.01 * 50.0 * 0.97);
  EXPECT_GT(run.bandwidth.median_error, 0.10);
  EXPECT_LT(run.bandwidth.median_error, 50.0 * 0.97 / 43.14 - 1 + 0.01) << run.bandwidth.median_error;
  EXPECT_GT(run.latency.median_error, 0.20);
  // Four nodes of the same cluster: the same NIC bound, 44.33 measured at 256 MiB, within the target.
  const ValidatedRun four = testing::validate_real_log("together-b200x32-4node-ib-sendrecv-nccl2.29.7.txt", spec, "dgx-b200");
  EXPECT_EQ(four.prediction.facts.nodes, 4);
  EXPECT_NEAR(four.sizes.back().measured_busbw_GBps, 44.33, 0.01);
  EXPECT_NEAR(four.sizes.back().predicted_busbw_GBps, 50.0 * 0.97, 0.01 * 50.0 * 0.97);
  EXPECT_LT(std::fabs(four.bandwidth.median_error), 0.10) << four.bandwidth.median_error;
}

// The same cluster's send/recv on 8 and 16 nodes (run 3 of its scaling study): every node's last GPU
// sends to the next node's first (8 and 16 pairs across nodes), each predicted at its NIC's 48.5 GB/s
// as on 2 and 4 nodes. The logs hold 26.2 and 14.7 GB/s from 16 MiB on, 0.54 and 0.30 of that, which
// the cluster's report calls a "contention cliff": pairs of different rails share the fabric's spine,
// which ccsim's non-blocking fat tree (fabric.nodes_per_leaf 32, max-min sharing, no ECMP hashing) does
// not model. Known misses (+84%, +227% on the bandwidth side, docs/accuracy.md).
TEST(PresetLogs, TogetherB200SendRecvOnEightAndSixteenNodesShareTheFabric) {
  nlohmann::json spec = load_topology_spec("dgx-b200");
  apply_nccl_env(spec, "NCCL_NVLS_ENABLE=0", "--env", "test");
  for (const auto& [log, nodes, measured] : {std::tuple{"together-b200x64-8node-ib-sendrecv-nccl2.29.7.txt", 8, 26.13},
                                             std::tuple{"together-b200x128-16node-ib-sendrecv-nccl2.29.7.txt", 16, 14.75}}) {
    const ValidatedRun run = testing::validate_real_log(log, spec, "dgx-b200");
    EXPECT_EQ(run.prediction.facts.nodes, nodes);
    EXPECT_NEAR(run.sizes.back().measured_busbw_GBps, measured, 0.01);
    EXPECT_NEAR(run.sizes.back().predicted_busbw_GBps, 50.0 * 0.97, 0.01 * 50.0 * 0.97) << log;
    EXPECT_NEAR(run.sizes.back().error, 50.0 * 0.97 / measured - 1, 0.02) << log;
  }
}

// Four A100 PCIe cards of one server ("sm02": every pair SYS in its nvidia-smi topo -m, two NUMA nodes,
// no switch), one process with -g 4. NCCL's default P2P level (PXB) joins no pair, so the ring runs
// through NCCL's SHM transport and holds 5.20 GB/s busbw from 64 MiB on, 0.32 of the links' rate the
// description gives (16.3): +208% on the bandwidth side from the log alone. A DGX A100 with
// NCCL_P2P_DISABLE=1 (dgx-a100-4gpu-p2p-disabled-shm-allreduce.txt, another site) holds the same 5.20:
// its fit through the model (PCIe at 0.254 of the links) predicts this host's bandwidth side within 2%
// (docs/accuracy.md, "The description fitted through the model").
TEST(PresetLogs, A100PcieServerThroughShmRunsAsADgxA100WithP2pDisabled) {
  const std::string name = "sm02-a100pcie40gbx4-1node-allreduce-g4.txt";
  nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
  for (const char* s : {"node.gpu.count=4", "node.gpu.arch=sm80", "node.nic.count=0", "node.pcie.switches_per_socket=0"})
    apply_override(spec, s, "--set");
  const ValidatedRun run = testing::validate_real_log(name, spec, "pcie-gen4-8gpu");
  EXPECT_EQ(run.log.gpus_per_process, 4);
  EXPECT_NEAR(run.sizes.back().measured_busbw_GBps, 5.20, 0.01);
  EXPECT_GT(run.bandwidth.median_error, 1.0);  // the SHM class: a known miss
  apply_override(spec, "node.pcie.efficiency=0.2538", "--set");  // the DGX A100's fit (calibrate --topology)
  const ValidatedRun fitted = testing::validate_real_log(name, spec, "pcie-gen4-8gpu");
  EXPECT_LT(std::fabs(fitted.bandwidth.median_error), 0.05) << fitted.bandwidth.median_error;
}

// An Azure NC12s_v3 VM: two V100 PCIe (Gen3 x16) at NODE distance, beyond NCCL's default P2P level
// (PXB), so NCCL's SHM transport joins them; once with -g 2, once with MPI and NCCL_P2P_LEVEL=NVL.
// Both ways through host memory at the links' rate and the SHM two-way share: 15.75 GB/s x 0.8 x 0.65
// = 8.19 GB/s busbw predicted, 6.88 and 6.74 measured at 2 GiB: +19% and +22%, this host's SHM being
// slower than its links (the SHM rows of docs/accuracy.md). The latency sides meet the target.
TEST(PresetLogs, AzureV100PciePairThroughShmBothLaunchModes) {
  nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
  for (const char* s : {"node.gpu.count=2", "node.pcie.generation=3", "node.cpu.sockets=1", "node.pcie.switches_per_socket=0",
                        "node.nic.count=0"})
    apply_override(spec, s, "--set");
  const ValidatedRun g2 = testing::validate_real_log("azure-nc12sv3-v100x2-pcie-allreduce-g2.txt", spec, "pcie-gen4-8gpu");
  EXPECT_EQ(g2.log.gpus_per_process, 2);
  EXPECT_NEAR(g2.sizes.back().measured_busbw_GBps, 6.88, 0.01);
  apply_nccl_env(spec, "NCCL_P2P_LEVEL=NVL", "--env NCCL_P2P_LEVEL=NVL", "pcie-gen4-8gpu");
  const ValidatedRun mpi = testing::validate_real_log("azure-nc12sv3-v100x2-pcie-allreduce-mpi.txt", spec, "pcie-gen4-8gpu");
  EXPECT_EQ(mpi.log.gpus_per_process, 1);
  EXPECT_NEAR(mpi.sizes.back().measured_busbw_GBps, 6.74, 0.01);
  const double shm_busbw = 8 * 16 * 128.0 / 130 / 8 * 0.8 * 0.65;
  for (const ValidatedRun* run : {&g2, &mpi}) {
    EXPECT_NEAR(run->sizes.back().predicted_busbw_GBps, shm_busbw, 0.01 * shm_busbw);
    // The bandwidth side is the plateau's miss: 8.19 / 6.88 - 1 = 19%, 8.19 / 6.74 - 1 = 21.5%.
    const double plateau_miss = shm_busbw / run->sizes.back().measured_busbw_GBps - 1;
    EXPECT_NEAR(run->bandwidth.median_error, plateau_miss, 0.05) << run->bandwidth.median_error;
    EXPECT_LT(std::fabs(run->latency.median_error), 0.20) << run->latency.median_error;
  }
}

// Four V100 PCIe (Gen3) of one Sheffield node, taken as one PCIe switch (their bus ids 0x3d-0x40 are
// consecutive), -g 4. With NCCL 2.4.2 both sides meet issue 11's target: the ring over P2P at the
// switch's links (12.6 GB/s, 12.57 predicted at 128 MB busbw, 11.18 measured). With NCCL 2.8.3 the
// same node holds 9.40 at 128 MB (+26%, validate suspects host staging) and launches faster (13.4 us
// at 8 B against 16.4: -20% on the latency side).
TEST(PresetLogs, SheffieldFourV100PcieUnderOneSwitchAcrossNcclVersions) {
  nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
  for (const char* s : {"node.gpu.count=4", "node.pcie.generation=3", "node.cpu.sockets=1", "node.pcie.switches_per_socket=1",
                        "node.nic.count=0"})
    apply_override(spec, s, "--set");
  const ValidatedRun v242 =
      testing::validate_real_log("sheffield-v100pcie-x4-allreduce-g4-nccl2.4.2.txt", spec, "pcie-gen4-8gpu");
  const ValidatedRun v283 =
      testing::validate_real_log("sheffield-v100pcie-x4-allreduce-g4-nccl2.8.3.txt", spec, "pcie-gen4-8gpu");
  const double link = 8 * 16 * 128.0 / 130 / 8 * 0.8;
  for (const ValidatedRun* run : {&v242, &v283}) {
    EXPECT_EQ(run->log.gpus_per_process, 4);
    EXPECT_EQ(run->sizes.back().nccl_algorithm, "Ring");
    EXPECT_LT(run->sizes.back().predicted_busbw_GBps, link);
    EXPECT_GT(run->sizes.back().predicted_busbw_GBps, 0.99 * link);
  }
  EXPECT_NEAR(v242.sizes.back().measured_busbw_GBps, 11.18, 0.01);
  EXPECT_LT(std::fabs(v242.bandwidth.median_error), 0.10) << v242.bandwidth.median_error;
  EXPECT_LT(std::fabs(v242.latency.median_error), 0.20) << v242.latency.median_error;
  EXPECT_NEAR(v283.sizes.back().measured_busbw_GBps, 9.40, 0.01);
  EXPECT_GT(v283.bandwidth.median_error, 0.20);
  EXPECT_LT(v283.latency.median_error, -0.15);
}

// Two CoreWeave HGX H200 nodes, 8 x 400 Gb/s InfiniBand each, NCCL 2.30.4: the tuner ccsim restates,
// on a 2-node run. With NVLS off, Tree/LL's floor is NCCL's own model (6.8 + 2 x (7 x 0.6 + 5.0) = 25.2
// us on 2 nodes: base, 7 NVLink hops and one network hop each way): measured 24.0-25.2 us at 128 B-1 KiB;
// Tree/LL128 carries 256 KiB-8 MiB within 27%, and the ring approaches its 16 channels' bound (16 x
// 19.375 = 310 GB/s busbw, one thread block's copy per channel across nodes; 302.9 predicted at 1 GiB,
// 339.5 measured: this run's 21.2 GB/s per channel is the most of the Hopper clusters here). Both of
// issue 11's targets are met. The run registers its buffers (-R 2) and
// replays CUDA graphs (-G 10), which ccsim does not model (validate notes it); NVLS on, the registered
// NVLSTree runs faster than the copies ccsim predicts (-10% at 8 MiB-1 GiB, the bandwidth side's edge).
TEST(PresetLogs, CoreWeaveH200PairOnNccl230) {
  nlohmann::json off = load_topology_spec("dgx-h200");
  apply_nccl_env(off, "NCCL_NVLS_ENABLE=0", "--env", "test");
  const ValidatedRun ring = testing::validate_real_log("coreweave-h200x16-2node-ib-allreduce-nvlsoff-graph-symreg-nccl2.30.4.txt",
                                                       off, "dgx-h200");
  EXPECT_EQ(ring.log.ranks, 16);
  const ValidatedSize& first = ring.sizes.front();
  EXPECT_EQ(first.size_bytes, 128u);
  EXPECT_EQ(first.nccl_algorithm + "/" + first.nccl_protocol, "Tree/LL");
  EXPECT_NEAR(first.predicted_time_us, 25.2, 0.3);
  EXPECT_NEAR(first.measured_time_us, 23.97, 1e-9);
  EXPECT_EQ(testing::size_at(ring, 1048576).nccl_protocol, "LL128");
  EXPECT_NEAR(ring.sizes.back().predicted_busbw_GBps, testing::kHopperNetRingGBps, 0.03 * testing::kHopperNetRingGBps);
  EXPECT_LT(std::fabs(ring.latency.median_error), 0.20) << ring.latency.median_error;
  EXPECT_LT(std::fabs(ring.bandwidth.median_error), 0.10) << ring.bandwidth.median_error;
  const ValidatedRun nvls = validate_log("coreweave-h200x16-2node-ib-allreduce-graph-symreg-nccl2.30.4.txt", "dgx-h200");
  EXPECT_EQ(nvls.sizes.back().nccl_algorithm, "NVLSTree");
  EXPECT_LT(nvls.bandwidth.median_error, 0.0);  // faster than the copies: registered buffers
  EXPECT_LT(std::fabs(nvls.bandwidth.median_error), 0.10) << nvls.bandwidth.median_error;
  EXPECT_LT(std::fabs(nvls.latency.median_error), 0.20) << nvls.latency.median_error;
}

// The same nodes' all-to-all: half of each rank's buffer goes to the other node through its 400 Gb/s
// NIC at InfiniBand's 0.97: algbw = 48.5 x 2 = 97 GB/s, busbw x 15/16 = 90.9 (bandwidth side +5%).
// Below 16 MiB the P2P path's per-message costs across nodes are slower than modelled (+22%).
TEST(PresetLogs, CoreWeaveH200PairAllToAll) {
  const ValidatedRun run = validate_log("coreweave-h200x16-2node-ib-alltoall-graph-symreg-nccl2.30.4.txt", "dgx-h200");
  EXPECT_EQ(run.log.collective, "alltoall");
  EXPECT_NEAR(run.sizes.back().predicted_busbw_GBps, 50.0 * 0.97 * 2 * 15.0 / 16.0, 0.02 * 90.9);
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
  EXPECT_GT(run.latency.median_error, 0.20) << run.latency.median_error;
}

// Two Azure ND H100 v5 VMs (NCCL 2.29.7 through HPC-X, 8 MiB-16 GiB), a log the azure-nd-h100-v5
// preset was not built from: NVLSTree on 2 nodes, both sides within target (+1%, +12% on two sizes);
// 16 GiB predicted within 5% of the measured busbw.
TEST(PresetLogs, AzureNdH100V5PairAllReduce) {
  const ValidatedRun run = validate_log("azure-ndv5-h100x16-2node-ib-allreduce-nccl2.29.7.txt", "azure-nd-h100-v5");
  EXPECT_EQ(run.prediction.facts.nodes, 2);
  EXPECT_EQ(run.sizes.back().nccl_algorithm, "NVLSTree");
  EXPECT_NEAR(run.sizes.back().predicted_busbw_GBps, run.sizes.back().measured_busbw_GBps,
              0.05 * run.sizes.back().measured_busbw_GBps);
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.10) << run.bandwidth.median_error;
  EXPECT_LT(std::fabs(run.latency.median_error), 0.20) << run.latency.median_error;
}

}  // namespace
}  // namespace ccsim
