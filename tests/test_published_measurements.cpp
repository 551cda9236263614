// ccsim's predictions against measurements published in prose or small tables rather than as whole
// nccl-tests logs (tests/data/published/, provenance on top of each file). The expected values are the
// publications'; the tolerances are the issue-11 targets or tighter where the mechanism is closed-form.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/tuner.h"
#include "published_rows.h"
#include "scenarios/predict.h"
#include "scenarios/validate.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

Topology one_node(const std::string& preset, int gpus) {
  nlohmann::json spec = load_topology_spec(preset);
  apply_override(spec, "node.gpu.count=" + std::to_string(gpus), "--set");
  apply_override(spec, "node.nic.count=0", "--set");
  return build_topology(spec, preset);
}

// One size of an all_reduce as nccl-tests would run it with `-g gpus` in one process, `-n iters`.
NcclTestsRow predict_row(const Topology& topo, std::uint64_t bytes, const std::string& algo, int gpus_per_thread,
                         int channels = 0, int iters = 20) {
  PredictRequest req;
  req.launch.iters = iters;
  req.sweep.min_bytes = req.sweep.max_bytes = bytes;
  req.filter = parse_algo_filter(algo, "", "test");
  req.channels = channels;
  req.launch.gpus_per_thread = gpus_per_thread;
  const Prediction p = predict(topo, req);
  EXPECT_EQ(p.rows.size(), 1u);
  return p.rows.front();
}

// NVIDIA/nccl#1455: H100 all_reduce busbw at 2-4 GiB for 2..8 GPUs of one NVSwitch node, Ring and NVLS
// forced. The ring is NVLink-bound at the same busbw for every count; NVLS's busbw grows with the count
// because its per-GPU traffic, S (1 + 1/n), shrinks toward S while busbw's factor 2(n-1)/n grows.
TEST(PublishedMeasurements, H100NvlsAndRingBusBandwidthByGpuCount) {
  const auto rows = testing::read_published_rows("nccl-issue-1455-h100-allreduce-busbw-by-gpu-count.txt");
  ASSERT_EQ(rows.size(), 12u);
  for (const auto& r : rows) {
    ASSERT_EQ(r.size(), 5u);
    const std::string algo = r[0];
    const int gpus = std::stoi(r[1]);
    const double lo = std::stod(r[2]), hi = std::stod(r[3]);
    const NcclTestsRow row = predict_row(one_node("dgx-h100", gpus), 4ull << 30, algo, gpus);
    // Within 5% of the stated figure or range: the source says "about".
    const double below = (lo - row.oop_busbw_GBps) / lo, above = (row.oop_busbw_GBps - hi) / hi;
    EXPECT_LE(std::max(below, above), 0.05)
        << algo << " on " << gpus << " GPUs: predicted busbw " << row.oop_busbw_GBps << " GB/s, stated " << lo << "-" << hi;
    if (r[4] != "-") {
      const double algbw = std::stod(r[4]);
      EXPECT_NEAR(row.oop_algbw_GBps, algbw, 0.05 * algbw) << algo << " on " << gpus << " GPUs: algbw";
    }
  }
}

// NVIDIA/nccl-tests#123: 8-128 B Ring all_reduce on one channel of a DGX-A100, one process driving N
// GPUs (-g N). NCCL's model puts the device time at 6.6 + 2(N-1) x 0.6 us (Ring/LL), so from 3 GPUs
// on the iteration is bound by the host's N serial launches: the time grows by one launch per GPU.
// This series is where node.cpu.launch_us's default comes from (its slope, 4.23 us per GPU, rounded
// to 4.2: docs/topology.md), so the points from 4 GPUs on check the mechanism and the provenance,
// not the value; the Voltage Park -g 8 log (tests/test_preset_logs.cpp) is the independent check.
TEST(PublishedMeasurements, DgxA100SingleProcessRingLatencyByGpuCount) {
  const auto rows = testing::read_published_rows("nccl-tests-issue-123-dgx-a100-ring-latency-by-gpu-count.txt");
  ASSERT_EQ(rows.size(), 7u);
  std::vector<double> gpus, measured, predicted, errors;
  for (const auto& r : rows) {
    ASSERT_EQ(r.size(), 2u);
    const int n = std::stoi(r[0]);
    const NcclTestsRow row = predict_row(one_node("hgx-a100", n), 8, "Ring", n, /*channels=*/1, /*iters=*/100);
    gpus.push_back(n);
    measured.push_back(std::stod(r[1]));
    predicted.push_back(row.oop_time_us);
    errors.push_back(measured.back() / predicted.back() - 1);
  }
  // Least-squares slope of time over GPU count, 4..8 GPUs.
  const auto slope = [&](const std::vector<double>& y) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0, k = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i] < 4) continue;
      sx += gpus[i], sy += y[i], sxx += gpus[i] * gpus[i], sxy += gpus[i] * y[i], ++k;
    }
    return (k * sxy - sx * sy) / (k * sxx - sx * sx);
  };
  // Host-bound from 2 GPUs on: N launches of 4.2 us per iteration, and the last of the command's 100
  // iterations' collectives, NCCL's 6.6 + 2(N-1) x 0.6 us, after them (scenarios/launch_mode.h), so
  // the slope is 4.2 + 2 x 0.6 / 100 us per GPU. Less that last collective's share, the measured slope
  // is 4.222 us per GPU: still 4.2 to the default's one decimal.
  // (The 8 bytes themselves, at one channel's share of Ring/LL's ceiling, add under 1e-4 us.)
  const auto device_us = [](double n) { return 6.6 + 2 * (n - 1) * 0.6; };
  EXPECT_NEAR(slope(measured), 4.234, 1e-3);
  EXPECT_NEAR(slope(predicted), 4.2 + 2 * 0.6 / 100, 1e-5);  // node.cpu.launch_us per GPU
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_NEAR(predicted[i], 4.2 * gpus[i] + device_us(gpus[i]) / 100, 1e-4) << gpus[i] << " GPUs";
    if (gpus[i] >= 4) {
      EXPECT_LT(std::fabs(errors[i]), 0.02) << gpus[i] << " GPUs";
    }
  }
  // 3 GPUs: 12.6 us of launches against NCCL's 6.6 + 4 x 0.6 = 9.0 us device time; 2 GPUs: 8.4 us
  // against 7.8. Both host-bound; measured 13.76 and 10 us (+8%, +18%).
  EXPECT_NEAR(errors[0], 10 / (8.4 + 7.8 / 100) - 1, 1e-5);
}

// Azure's AI benchmarking guide (tests/data/published/azure-ai-benchmarking-guide-*.txt): one VM's
// all_reduce from 1 KiB to 8 GiB, in-place busbw only, one process driving every GPU of the VM (-g).
struct PublishedSweep {
  std::vector<std::uint64_t> sizes;
  std::vector<double> busbw_GBps;
};

PublishedSweep read_sweep(const std::string& name) {
  PublishedSweep sweep;
  for (const auto& r : testing::read_published_rows(name)) {
    EXPECT_EQ(r.size(), 3u) << name;
    sweep.sizes.push_back(std::stoull(r[0]));
    sweep.busbw_GBps.push_back(std::stod(r[2]));
  }
  EXPECT_EQ(sweep.sizes.size(), 24u) << name;  // 1 KiB .. 8 GiB, factor 2
  for (std::size_t i = 0; i < sweep.sizes.size(); ++i) EXPECT_EQ(sweep.sizes[i], 1024ull << i) << name;
  return sweep;
}

// The sweep predicted as nccl-tests ran it; errors as docs/accuracy.md has them: measured time over
// predicted time - 1 (= predicted busbw over measured busbw - 1), median on each side of the knee as
// validate takes it (side_verdict).
struct SweepComparison {
  Prediction prediction;
  std::vector<double> errors;
  double latency_median = 0, bandwidth_median = 0;
};

// Azure's script runs `all_reduce_perf -b 8 -e 8G -f 2 -g N -n 40` (each file's COMMAND line).
SweepComparison compare_sweep(const Topology& topo, const PublishedSweep& sweep, const std::string& algo, int gpus) {
  PredictRequest req;
  req.launch.iters = 40;
  req.sweep.min_bytes = sweep.sizes.front();
  req.sweep.max_bytes = sweep.sizes.back();
  req.sweep.step_factor = 2;
  req.filter = parse_algo_filter(algo, "", "test");
  req.launch.gpus_per_thread = gpus;
  SweepComparison c;
  c.prediction = predict(topo, req);
  EXPECT_EQ(c.prediction.rows.size(), sweep.sizes.size());
  std::vector<ValidatedSize> sizes;
  for (std::size_t i = 0; i < c.prediction.rows.size() && i < sweep.sizes.size(); ++i) {
    const NcclTestsRow& row = c.prediction.rows[i];
    EXPECT_EQ(row.size_bytes, sweep.sizes[i]);
    c.errors.push_back(row.ip_busbw_GBps / sweep.busbw_GBps[i] - 1);
    ValidatedSize v;
    v.size_bytes = row.size_bytes;
    v.error = c.errors.back();
    v.latency_side = static_cast<double>(row.size_bytes) < c.prediction.knee_bytes;
    sizes.push_back(v);
  }
  std::vector<const ValidatedSize*> latency, bandwidth;
  for (const ValidatedSize& v : sizes) (v.latency_side ? latency : bandwidth).push_back(&v);
  EXPECT_FALSE(latency.empty());
  EXPECT_FALSE(bandwidth.empty());
  c.latency_median = side_verdict("latency", latency, 0.20).median_error;
  c.bandwidth_median = side_verdict("bandwidth", bandwidth, 0.10).median_error;
  return c;
}

Topology preset_topology(const std::string& preset, const std::vector<std::string>& sets = {}, int nodes = 0) {
  nlohmann::json spec = load_topology_spec(preset);
  if (nodes > 0) set_node_count(spec, nodes);
  for (const std::string& s : sets) apply_override(spec, s, "--set");
  return build_topology(spec, preset);
}

// Measured time of a size from its published busbw: all_reduce's busbw = algbw x 2(n-1)/n.
double measured_time_us(const PublishedSweep& sweep, std::size_t i, int ranks) {
  const double algbw_GBps = sweep.busbw_GBps[i] * ranks / (2.0 * (ranks - 1));
  return static_cast<double>(sweep.sizes[i]) / (algbw_GBps * 1e9) * 1e6;
}

// ND H100 v5 and ND H200 v5 (NCCL 2.18.5 and 2.20.5), NVLS forced, -g 8. The plateau is the single-node
// NVLS bound (18 NVLinks x 20.6 GB/s x nvlsEfficiency 0.85, S (1 + 1/8) per GPU: 280 GB/s algbw, 490
// busbw): measured 478.9 and 480.0 at 8 GiB. The mid sizes follow the fill of NCCL's three-stage NVLS
// kernel as the two dgx-h100 logs do (tests/test_preset_logs.cpp): 2-128 MiB within 15% (16-55% slower
// than the cut-through replay without it, when both bandwidth sides sat at the 10% target's edge).
// The latency sides differ by NCCL version: 2.18.5's NVLS takes 42 us from 64 KiB to 1 MiB where
// 2.30's model (and ccsim) has 25 us plus the launches.
TEST(PublishedMeasurements, AzureNdH100AndH200NvlsSingleVm) {
  const PublishedSweep h100_sweep = read_sweep("azure-ai-benchmarking-guide-nd-h100-v5-allreduce-nvls-g8.txt");
  const SweepComparison h100 = compare_sweep(preset_topology("azure-nd-h100-v5"), h100_sweep, "NVLS", 8);
  const PublishedSweep h200_sweep = read_sweep("azure-ai-benchmarking-guide-nd-h200-v5-allreduce-nvls-g8.txt");
  const SweepComparison h200 = compare_sweep(preset_topology("dgx-h200"), h200_sweep, "NVLS", 8);
  for (const SweepComparison* c : {&h100, &h200}) {
    const NcclTestsRow& last = c->prediction.rows.back();
    // NVLS's 25 us, S (1 + 1/8) / B and two 16 MiB loops of fill (128 KiB chunks).
    const double B = 18 * 20.6e9 * 0.85, S = static_cast<double>(last.size_bytes), loop = 16 * 8 * 128 * 1024;
    const double hand_us = 25 + (S + 2 * loop) * 9 / 8 / B * 1e6;
    EXPECT_NEAR(last.ip_time_us, hand_us, 1e-3 * hand_us);
    EXPECT_GT(c->errors.back(), 0.0);
    EXPECT_LT(c->errors.back(), 0.03);  // +1.9%, +1.7%
    for (std::size_t i = 0; i < c->errors.size(); ++i) {
      const std::uint64_t size = 1024ull << i;
      if (size >= (2u << 20) && size <= (128u << 20)) {
        EXPECT_LT(std::fabs(c->errors[i]), 0.15) << size;
      }
    }
    EXPECT_GT(c->bandwidth_median, 0.0);  // +3%, +2% today (docs/accuracy.md)
    EXPECT_LT(c->bandwidth_median, 0.05);
  }
  // H200 (NCCL 2.20.5): the floor is 8 serial launches, 30 us measured (3.7 us per GPU) against 8 x 4.2
  // and NVLS's 25 us after the last of 40 iterations' launches.
  EXPECT_NEAR(measured_time_us(h200_sweep, 0, 8), 29.9, 0.1);
  EXPECT_NEAR(h200.prediction.rows.front().ip_time_us, 8 * 4.2 + 25.0 / 40, 0.01);
  EXPECT_LT(std::fabs(h200.latency_median), 0.20) << h200.latency_median;
  // H100 (NCCL 2.18.5): 64 KiB-1 MiB take 42 us, NVLS's own time in that NCCL; ccsim's 2.30 NVLS is
  // 25 us there and the 33.6 us launch floor binds (64-512 KiB: +23..+25%), a version's miss. The
  // side's median is within 20% only as the median of two misses: 1-4 KiB at -25% (this host
  // launches in 3.2 us, not 4.2; rising to -2% at 32 KiB) and 64 KiB-1 MiB above, with 2-8 MiB near 0.
  for (std::size_t i = 6; i <= 10; ++i) EXPECT_NEAR(measured_time_us(h100_sweep, i, 8), 42.3, 1.0) << h100_sweep.sizes[i];
  for (std::size_t i = 6; i <= 9; ++i) {
    EXPECT_GT(h100.errors[i], 0.20) << h100_sweep.sizes[i];
    EXPECT_LT(h100.errors[i], 0.27) << h100_sweep.sizes[i];
  }
  for (std::size_t i = 0; i <= 2; ++i) EXPECT_NEAR(h100.errors[i], -0.25, 0.03) << h100_sweep.sizes[i];
  EXPECT_LT(std::fabs(h100.latency_median), 0.20) << h100.latency_median;
}

// ND GB200 v6: one NVL72 tray as a VM of 4 B200 (NCCL 2.25.1), Ring forced, -g 4. The ring is bound by
// the GPU's NVLink5, 18 links x NCCL's sm100 NVLink rate 40.1 GB/s = 721.8 GB/s per direction, which
// a ring all_reduce's busbw approaches: within 0.5% of it at 8 GiB, 679.6 measured (+6%). The
// latency side meets the target (+3%: 4 serial launches of 4.2 us against 15.4 us measured at 1 KiB,
// 3.8 us per GPU on Grace); the bandwidth side misses (+12%) at 1-32 MiB, where Ring/LL and LL128 reach
// less than the engine's llMaxBw and LL128 ceilings.
TEST(PublishedMeasurements, AzureNdGb200TrayRing) {
  const PublishedSweep sweep = read_sweep("azure-ai-benchmarking-guide-nd-gb200-v6-allreduce-ring-g4.txt");
  const Topology tray = preset_topology("gb200-nvl72", {"node.nvlink.domain_size=1"}, /*nodes=*/1);
  const SweepComparison c = compare_sweep(tray, sweep, "Ring", 4);
  const NcclTestsRow& last = c.prediction.rows.back();
  const double nvlink_GBps = 18 * 40.1;
  EXPECT_GT(last.ip_busbw_GBps, 0.995 * nvlink_GBps);
  EXPECT_LT(last.ip_busbw_GBps, nvlink_GBps);
  EXPECT_NEAR(c.errors.back(), nvlink_GBps / 679.61 - 1, 0.005);
  EXPECT_NEAR(c.prediction.rows.front().ip_time_us, 4 * 4.2, 0.05 * 4 * 4.2);
  EXPECT_NEAR(measured_time_us(sweep, 0, 4), 15.4, 0.1);
  EXPECT_LT(std::fabs(c.latency_median), 0.20) << c.latency_median;
  EXPECT_GT(c.bandwidth_median, 0.10);  // +12% today
  EXPECT_LT(c.bandwidth_median, 0.15);
}

// ND A100 v4 (NCCL 2.18.5, AMD EPYC 7V12), -g 8, algorithm list not known (NVLS cannot run on A100):
// NCCL's tuner free, Ring at every size. The plateau is the ring's NVLink3 bound, 12 NVLinks x 20 GB/s
// (NCCL's A100 NVLink rate): 240 GB/s busbw, 239.8 at 8 GiB against 231.6 measured (+4%). The floor
// is 8 serial launches at 5.3 us each on this AMD host (43 us measured at 16-64 KiB) against the
// default's 4.2: the latency side misses by +33%, as the a100x8 log's (4.9 us per GPU) does by +18%.
TEST(PublishedMeasurements, AzureNdA100V4RingSingleVm) {
  const PublishedSweep sweep = read_sweep("azure-ai-benchmarking-guide-nd-a100-v4-allreduce-g8.txt");
  const SweepComparison c = compare_sweep(preset_topology("hgx-a100"), sweep, "", 8);
  for (const SizeChoice& ch : c.prediction.choices) EXPECT_EQ(ch.nccl_algo, Algo::Ring);
  EXPECT_LT(c.prediction.rows.back().ip_busbw_GBps, 240.0);
  EXPECT_GT(c.prediction.rows.back().ip_busbw_GBps, 0.99 * 240.0);
  EXPECT_NEAR(c.errors.back(), 240.0 / 231.58 - 1, 0.01);
  for (std::size_t i = 4; i <= 6; ++i) EXPECT_NEAR(measured_time_us(sweep, i, 8) / 8, 5.3, 0.1) << sweep.sizes[i];
  // 8 launches and, after the last of 40 iterations' launches, Ring/LL's 6.6 + 14 x 0.6 = 15.0 us
  // and 1 KiB's 2 x 7/8 of a KiB on the one channel NCCL runs at this size, at its share of Ampere's
  // one-node llMaxBw (87.7 GB/s busBw over 24 channels).
  EXPECT_NEAR(c.prediction.rows.front().ip_time_us, 8 * 4.2 + (15.0 + 1024 * 1.75 / (87.7e9 / 24) * 1e6) / 40, 0.002);
  EXPECT_LT(std::fabs(c.bandwidth_median), 0.10) << c.bandwidth_median;  // +9%
  EXPECT_GT(c.latency_median, 0.25);  // +33%: the host's launches
  EXPECT_LT(c.latency_median, 0.40);
}

}  // namespace
}  // namespace ccsim
