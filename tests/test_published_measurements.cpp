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
#include "scenarios/predict.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

const std::string kPublished = std::string(CCSIM_SOURCE_DIR) + "/tests/data/published/";

// The whitespace-separated rows of a published-data file, without its '#' lines.
std::vector<std::vector<std::string>> read_rows(const std::string& name) {
  std::ifstream in(kPublished + name);
  EXPECT_TRUE(in.good()) << name;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::vector<std::string> row;
    for (std::string f; fields >> f;) row.push_back(f);
    rows.push_back(row);
  }
  return rows;
}

Topology one_node(const std::string& preset, int gpus) {
  nlohmann::json spec = load_topology_spec(preset);
  apply_override(spec, "node.gpu.count=" + std::to_string(gpus), "--set");
  apply_override(spec, "node.nic.count=0", "--set");
  return build_topology(spec, preset);
}

// One size of an all_reduce as nccl-tests would run it with `-g gpus` in one process.
NcclTestsRow predict_row(const Topology& topo, std::uint64_t bytes, const std::string& algo, int gpus_per_thread,
                         int channels = 0) {
  PredictRequest req;
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
  const auto rows = read_rows("nccl-issue-1455-h100-allreduce-busbw-by-gpu-count.txt");
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
  const auto rows = read_rows("nccl-tests-issue-123-dgx-a100-ring-latency-by-gpu-count.txt");
  ASSERT_EQ(rows.size(), 7u);
  std::vector<double> gpus, measured, predicted, errors;
  for (const auto& r : rows) {
    ASSERT_EQ(r.size(), 2u);
    const int n = std::stoi(r[0]);
    const NcclTestsRow row = predict_row(one_node("hgx-a100", n), 8, "Ring", n, /*channels=*/1);
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
  EXPECT_NEAR(slope(measured), 4.234, 1e-3);
  EXPECT_NEAR(slope(predicted), 4.2, 1e-9);  // node.cpu.launch_us per GPU
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i] >= 4) {
      EXPECT_NEAR(predicted[i], 4.2 * gpus[i], 1e-9) << gpus[i] << " GPUs";
      EXPECT_LT(std::fabs(errors[i]), 0.02) << gpus[i] << " GPUs";
    }
  }
  // 3 GPUs: 12.6 us of launches against NCCL's 6.6 + 4 x 0.6 = 9.0 us device time; 2 GPUs: 8.4 us
  // against 7.8. Both host-bound; measured 13.76 and 10 us (+9%, +19%).
  EXPECT_NEAR(predicted[1], 3 * 4.2, 1e-9);
  EXPECT_NEAR(predicted[0], 2 * 4.2, 1e-9);
  EXPECT_NEAR(errors[0], 10 / 8.4 - 1, 1e-9);
}

}  // namespace
}  // namespace ccsim
