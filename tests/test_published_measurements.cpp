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
  // The latency-side target of issue 11: the median error within 20%.
  std::vector<double> sorted = errors;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_LT(std::fabs(sorted[sorted.size() / 2]), 0.20);
  // The host-bound part (4..8 GPUs): least-squares slope of time over GPU count. Predicted: one
  // node.cpu.launch_us per GPU, 3.8 us (a bare CUDA launch). Measured: 4.23 us per GPU, 11% more: the
  // NCCL host work per communicator of a group (docs/accuracy.md), which ccsim does not model. Each
  // of those points is 9.5-11% slower than predicted.
  const auto slope = [&](const std::vector<double>& y) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0, k = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i] < 4) continue;
      sx += gpus[i], sy += y[i], sxx += gpus[i] * gpus[i], sxy += gpus[i] * y[i], ++k;
    }
    return (k * sxy - sx * sy) / (k * sxx - sx * sx);
  };
  EXPECT_NEAR(slope(predicted), 3.8, 1e-9);
  EXPECT_NEAR(slope(measured), 4.234, 1e-3);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i] >= 4) {
      EXPECT_NEAR(errors[i], 0.10, 0.015) << gpus[i] << " GPUs";
    }
  }
  // 2 GPUs is device-bound (7.8 us: NCCL's model, above the 7.6 us of two launches) and the
  // measurement is 10 us: NCCL's own model is 22% fast there, the one point outside the target.
  EXPECT_NEAR(predicted[0], 6.6 + 2 * 0.6, 0.01);  // 8 B at NVLink rates adds < 0.01 us
  EXPECT_GT(errors[0], 0.20);
}

}  // namespace
}  // namespace ccsim
