// nccl-tests' -g / -t launch mode and timing loop (scenarios/launch_mode.h): one thread driving N GPUs
// launches N kernels per iteration (H = N x t_launch); nccl-tests overlaps them with the previous
// iteration's device work D, and the first of its K timed iterations waits for them, so it reports
// max(H, D) + min(H, D) / K. The closed forms below are derived from nccl-tests' loop (common.cu
// BenchTime), NCCL 2.30's cost model constants and the 4.2 us launch default (node.cpu.launch_us),
// not from ccsim's output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "calibrate/calibration.h"
#include "cli_runner.h"
#include "scenarios/launch_mode.h"
#include "scenarios/predict.h"
#include "scenarios/validate.h"
#include "scenarios/validate_debug.h"
#include "scenarios/validate_log.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

const std::string kData = std::string(CCSIM_SOURCE_DIR) + "/tests/data/";

Topology make(const std::string& preset, const std::vector<std::string>& sets = {}) {
  nlohmann::json spec = load_topology_spec(preset);
  for (const auto& s : sets) apply_override(spec, s, "--set");
  return build_topology(spec, preset);
}

double predicted_us(const Topology& topo, std::uint64_t bytes, int gpus_per_thread, PredictModel model) {
  PredictRequest req;
  req.sweep.min_bytes = req.sweep.max_bytes = bytes;
  req.model = model;
  req.launch.gpus_per_thread = gpus_per_thread;
  const Prediction p = predict(topo, req);
  EXPECT_EQ(p.rows.size(), 1u);
  return p.rows.front().oop_time_us;
}

TEST(LaunchMode, IterationIsTheLargerOfDeviceAndSerialHostLaunchesPlusTheFirstLaunches) {
  const LaunchMode g8{1, 8};
  const double L = 3.8e-6;  // H = 8 x 3.8 = 30.4 us
  EXPECT_DOUBLE_EQ(host_launch_time_s(g8, L), 8 * L);
  // Host-bound, 20 iterations: 20 x 30.4 us of launches, the last collective's 10 us after them.
  EXPECT_NEAR(timed_iteration_s(10e-6, g8, L), (20 * 30.4e-6 + 10e-6) / 20, 1e-15);  // 30.9 us
  EXPECT_TRUE(host_bound(10e-6, g8, L));
  // Device-bound: 30.4 us before the first collective, then 20 x 50 us back to back.
  EXPECT_NEAR(timed_iteration_s(50e-6, g8, L), (30.4e-6 + 20 * 50e-6) / 20, 1e-15);  // 51.52 us
  EXPECT_FALSE(host_bound(50e-6, g8, L));
  // -t 4 -g 2: threads launch concurrently, only one thread's 2 GPUs serialise (H = 7.6 us).
  EXPECT_NEAR(timed_iteration_s(5e-6, LaunchMode{4, 2}, L), 7.6e-6 + 5e-6 / 20, 1e-15);
  // -g 1 (nccl-tests' default): the one launch shows only in the first iteration.
  EXPECT_NEAR(timed_iteration_s(8.4e-6, LaunchMode{}, L), 8.4e-6 + 3.8e-6 / 20, 1e-15);
  EXPECT_FALSE(host_bound(8.4e-6, LaunchMode{}, L));
}

TEST(LaunchMode, TimingLoopFlags) {
  const double L = 3.8e-6, D = 10e-6;  // -g 8: H = 30.4 us
  LaunchMode m = {1, 8};
  m.iters = 100;  // -n 100: the first iteration's wait spread over 100
  EXPECT_NEAR(timed_iteration_s(D, m, L), 30.4e-6 + 10e-6 / 100, 1e-15);
  m = {1, 8};
  m.agg_iters = 4;  // -m 4: one group of 4 collectives, 40 us of device time per 30.4 us of launches
  EXPECT_NEAR(timed_iteration_s(D, m, L), (30.4e-6 + 20 * 40e-6) / (20 * 4), 1e-15);  // 10.38 us
  EXPECT_FALSE(host_bound(D, m, L));
  m = {1, 8};
  m.graph_launches = 5;  // -G 5: 5 x 20 iterations replayed from a graph, only the first launches wait
  EXPECT_NEAR(timed_iteration_s(D, m, L), (30.4e-6 + 100 * 10e-6) / 100, 1e-15);  // 10.304 us
  EXPECT_FALSE(host_bound(D, m, L));
  m = {1, 8};
  m.blocking = true;  // -z 1: every iteration synchronises, so launches and device work add
  EXPECT_NEAR(timed_iteration_s(D, m, L), 30.4e-6 + 10e-6, 1e-15);
  EXPECT_TRUE(host_bound(D, m, L));
}

TEST(LaunchMode, EightGpusPerThreadOnHgxA100AtEightBytes) {
  const Topology topo = make("hgx-a100");
  // -g 1: NCCL 2.30's cost model of its pick at 8 B on 8 NVLink GPUs: Ring/LL, baseLat 6.6 us +
  // 2(n-1) = 14 steps x hwLat[NVLINK][Ring][LL] 0.6 us = 15.0 us (Tree/LL: 6.8 + 2 x 7 x 0.6 = 15.2);
  // 8 B at any bandwidth adds < 0.01 us.
  const double g1 = predicted_us(topo, 8, 1, PredictModel::ClosedForm);
  // nccl-tests' 20 iterations: the first waits for its one 4.2 us launch.
  EXPECT_NEAR(g1, 15.0 + 4.2 / 20, 0.01);
  // -g 8: 8 serial launches of 4.2 us = 33.6 us > 15.0 us, so the iterations are the host's and the
  // last collective ends 15 us after the last launches: 33.6 + 15.0 / 20 = 34.35 us.
  const double g8 = predicted_us(topo, 8, 8, PredictModel::ClosedForm);
  EXPECT_NEAR(g8, 8 * 4.2 + 15.0 / 20, 0.01);
  // A launch of 1 us (8 us per iteration) hides behind the 15 us collective but in the first
  // iteration: 15.0 + 8 / 20 us.
  const Topology fast_host = make("hgx-a100", {"node.cpu.launch_us=1"});
  EXPECT_NEAR(predicted_us(fast_host, 8, 8, PredictModel::ClosedForm), 15.0 + 8.0 / 20, 0.01);
  // 1 GiB is device-bound (hundreds of microseconds): -g 8 adds its extra first launches only,
  // (33.6 - 4.2) / 20 us.
  EXPECT_NEAR(predicted_us(topo, 1ull << 30, 8, PredictModel::ClosedForm) -
                  predicted_us(topo, 1ull << 30, 1, PredictModel::ClosedForm),
              (33.6 - 4.2) / 20, 1e-6);
}

TEST(LaunchMode, EngineTwoGpusWithASlowHost) {
  // The engine's device time D of an 8 B all_reduce on 2 PCIe GPUs is tens of microseconds at most;
  // with a 40 us launch -g 1 reports 40 + D / 20 (below 42 us when D < 40 us) and -g 2 80 + D / 20.
  const Topology topo = make("pcie-gen4-8gpu", {"node.gpu.count=2", "node.nic.count=0", "node.cpu.launch_us=40"});
  const double g1 = predicted_us(topo, 8, 1, PredictModel::Engine);
  ASSERT_LT(g1, 42.0);
  EXPECT_NEAR(predicted_us(topo, 8, 2, PredictModel::Engine) - 80.0, g1 - 40.0, 1e-9);
}

std::string provenance_removed(const std::string& name) {
  std::istringstream in(testing::read_text_file(kData + name));
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("# SOURCE:", 0) != 0 && line.rfind("# HARDWARE:", 0) != 0 && line.rfind("# NCCL VERSION:", 0) != 0 &&
        line.rfind("# COMMAND:", 0) != 0 && line.rfind("# NOTE:", 0) != 0)
      out += line + "\n";
  return out;
}

TEST(LaunchMode, ReadFromARealHeader) {
  // "# nThread 1 nGpus 4 minBytes 8 ..." and four device lines of one Pid (kalavai's RTX 4090 run).
  const std::string text = provenance_removed("nccl-tests/rtx4090-x4-pcie-allreduce-g4.txt");
  std::istringstream in(text);
  const auto runs = parse_nccl_tests_log(in, "log.txt");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].nthread, 1);
  EXPECT_EQ(runs[0].ngpus, 4);
  const LogFacts f = infer_log_facts(runs[0], "log.txt", 0, LogOverrides{});
  EXPECT_EQ(f.threads_per_process, 1);
  EXPECT_EQ(f.gpus_per_process, 4);
  EXPECT_EQ(f.iters, 20);  // "warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
  EXPECT_EQ(f.agg_iters, 1);
  EXPECT_EQ(f.graph_launches, 0);

  // validate predicts the log's mode: 4 serial launches, so no size below 4 x 4.2 us.
  nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
  for (const char* o : {"node.gpu.count=4", "node.nic.count=0", "node.pcie.p2p=none"}) apply_override(spec, o, "test");
  ValidateOptions opts;
  opts.model = PredictModel::ClosedForm;
  const ValidatedRun run = validate_run(runs[0], "log.txt", 0, spec, "pcie-gen4-8gpu", opts, DebugFacts{});
  EXPECT_EQ(run.prediction.facts.launch.gpus_per_thread, 4);
  EXPECT_EQ(run.prediction.facts.table_header.ngpus, 4);
  ASSERT_FALSE(run.sizes.empty());
  EXPECT_GE(run.sizes.front().predicted_time_us, 4 * 4.2 - 1e-9);

  // calibrate records the mode and says what it means for the fit.
  const auto curves = ring_curves_from_nccl_tests_text("log.txt", text, NcclTestsOptions{});
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves[0].gpus_per_thread, 4);
  ASSERT_FALSE(curves[0].warnings.empty());
  EXPECT_NE(curves[0].warnings.back().find("predict with -g 4"), std::string::npos) << curves[0].warnings.back();
  const Calibration cal = calibrate_ring_curves(curves);
  EXPECT_EQ(cal.classes.at("pcie").gpus_per_thread, 4);
  const Calibration back = calibration_from_json(nlohmann::json::parse(calibration_to_json(cal)), "cal.json");
  EXPECT_EQ(back.classes.at("pcie").gpus_per_thread, 4);
}

TEST(LaunchMode, CliFlagsAndErrors) {
  // -g 8 on hgx-a100 at 8 B: the 8 x 4.2 = 33.6 us host bound and the 15.0 us collective after the
  // last launches over 20 iterations, printed as nccl-tests prints it.
  const auto ok = testing::run_ccsim("all_reduce_perf -b 8 -e 8 -g 8 --topology hgx-a100 --model closed-form");
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("# nThread 1 nGpus 8 "), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("# launch mode: 1 thread(s) x 8 GPUs"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("  34.35 "), std::string::npos) << ok.out;
  // The timing loop's flags (nccl-tests' names and letters): -n 100: 33.6 + 15.0 / 100; -z 1: 33.6 +
  // 15.0; -G 1: the 20 collectives back to back after the first launches, (33.6 + 20 x 15.0) / 20;
  // -m 4: groups of 4 collectives (60 us of device time per 33.6 us of launches), (33.6 + 20 x 60) / 80.
  for (const auto& [flags, us] : std::vector<std::pair<std::string, std::string>>{
           {"-n 100", "  33.75 "}, {"--iters 100", "  33.75 "}, {"-z 1", "  48.60 "},
           {"-G 1", "  16.68 "}, {"-m 4", "  15.42 "}}) {
    const auto r = testing::run_ccsim("all_reduce_perf -b 8 -e 8 -g 8 " + flags + " --topology hgx-a100 --model closed-form");
    ASSERT_EQ(r.code, 0) << flags << r.err;
    EXPECT_NE(r.out.find(us), std::string::npos) << flags << "\n" << r.out;
  }
  const auto no_iters = testing::run_ccsim("all_reduce_perf -b 8 -e 8 -n 0 --topology hgx-a100 --model closed-form");
  EXPECT_EQ(no_iters.code, 2);
  EXPECT_NE(no_iters.err.find("-n"), std::string::npos) << no_iters.err;
  // 3 GPUs per process do not divide the node's 8.
  const auto bad = testing::run_ccsim("all_reduce_perf -b 8 -e 8 -g 3 --topology hgx-a100 --model closed-form");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("-g"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  const auto zero = testing::run_ccsim("all_reduce_perf -b 8 -e 8 -t 0 --topology hgx-a100 --model closed-form");
  EXPECT_EQ(zero.code, 2);
  EXPECT_NE(zero.err.find("-t"), std::string::npos) << zero.err;
  const auto key = testing::run_ccsim("all_reduce_perf -b 8 -e 8 --topology hgx-a100 --set node.cpu.launch_us=0");
  EXPECT_EQ(key.code, 2);
  EXPECT_NE(key.err.find("launch_us"), std::string::npos) << key.err;
}

// node.cpu.launch_us_per_channel: each launch costs that much more per channel NCCL runs the
// collective on. hgx-a100, all_reduce of 512 KiB with -g 8: NCCL runs Ring/LL on 512 KiB / (512
// threads x 8 B x 8 ranks) = 16 channels (enqueue.cc's thread threshold), so 0.2 us per channel adds
// 8 x 16 x 0.2 = 25.6 us to an iteration bound by its launches either way (8 x 4.2 = 33.6 us above
// the device time), the first iteration's share unchanged. At 8 B (one channel) it adds 8 x 0.2.
TEST(LaunchMode, HostCostPerChannelOfEveryLaunch) {
  const Topology plain = make("hgx-a100");
  const Topology per_channel = make("hgx-a100", {"node.cpu.launch_us_per_channel=0.2"});
  EXPECT_NEAR(predicted_us(per_channel, 512 * 1024, 8, PredictModel::ClosedForm) -
                  predicted_us(plain, 512 * 1024, 8, PredictModel::ClosedForm),
              8 * 16 * 0.2, 1e-6);
  EXPECT_NEAR(predicted_us(per_channel, 8, 8, PredictModel::ClosedForm) - predicted_us(plain, 8, 8, PredictModel::ClosedForm),
              8 * 0.2, 1e-6);
  // One GPU per process: the launch hides under the device time but for the first iteration's share.
  EXPECT_NEAR(predicted_us(per_channel, 512 * 1024, 1, PredictModel::ClosedForm) -
                  predicted_us(plain, 512 * 1024, 1, PredictModel::ClosedForm),
              16 * 0.2 / 20, 1e-6);
  const auto bad = testing::run_ccsim("all_reduce_perf -b 8 -e 8 --topology hgx-a100 --set node.cpu.launch_us_per_channel=-1");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("launch_us_per_channel"), std::string::npos) << bad.err;
}

TEST(LaunchMode, ValidateReadsTheLogsIterations) {
  // The Spectrum-X H200 log ran 100 iterations with 2 processes of -g 8 ("iters: 100" in its header):
  // its 1 KiB row is host-bound (Tree/LL's device time is below 33.6 us), so it is predicted as
  // 33.6 us + D / 100, with D the same 1 KiB collective predicted one process per GPU (-g 1, where a
  // 4.2 us launch shows as 4.2 / 100 in the first of 100 iterations).
  const std::string name = "nccl-tests/hgx-h200-2node-spectrumx-roce-allreduce-nccl2.30.4.txt";
  std::istringstream in(testing::read_text_file(kData + name));
  const auto runs = parse_nccl_tests_log(in, name);
  ASSERT_EQ(runs.size(), 1u);
  const LogFacts f = infer_log_facts(runs[0], name, 0, LogOverrides{});
  EXPECT_EQ(f.iters, 100);
  nlohmann::json spec = load_topology_spec("dgx-h200");
  apply_override(spec, "node.nic.transport=roce", "test");
  ValidateOptions opts;
  opts.model = PredictModel::ClosedForm;
  const ValidatedRun run = validate_run(runs[0], name, 0, spec, "dgx-h200", opts, DebugFacts{});
  ASSERT_FALSE(run.sizes.empty());
  ASSERT_EQ(run.sizes.front().size_bytes, 1024u);
  const auto one = testing::run_ccsim("all_reduce_perf -b 1K -e 1K -n 100 --topology dgx-h200 --nodes 2 "
                                      "--set node.nic.transport=roce --model closed-form --format json");
  ASSERT_EQ(one.code, 0) << one.err;
  const double g1_us = nlohmann::json::parse(one.out)["rows"][0]["oop_time_us"].get<double>();
  const double device_us = g1_us - 4.2 / 100;
  ASSERT_LT(device_us, 33.6);
  EXPECT_NEAR(run.sizes.front().predicted_time_us, 33.6 + device_us / 100, 1e-6);
  // The report says which loop it reproduced.
  const auto text = testing::run_ccsim("validate " + kData + name + " --topology dgx-h200 --set node.nic.transport=roce "
                                       "--model closed-form");
  EXPECT_NE(text.out.find("2 process(es) x 8 GPU(s), 100 iterations,"), std::string::npos) << text.out << text.err;
}

TEST(LaunchMode, BlockingIsReadFromAnEchoedCommand) {
  // nccl-tests' header does not print -z; a log that echoes its command does. ccsim's own -z 1 -g 8
  // table (33.6 us of launches + 15.0 us of Ring/LL per iteration at 8 B) validates only when the
  // echoed "-z 1" is read: without it the prediction would be 33.6 + 15.0 / 20 = 34.35 us.
  const auto predicted =
      testing::run_ccsim("all_reduce_perf -b 8 -e 1G -f 8 -g 8 -z 1 --topology hgx-a100 --model closed-form");
  ASSERT_EQ(predicted.code, 0) << predicted.err;
  EXPECT_NE(predicted.out.find("  48.60 "), std::string::npos) << predicted.out;
  for (const std::string echoed : {"$ ./build/all_reduce_perf -b 8 -e 1G -f 8 -g 8 -z 1",
                                   "+ all_reduce_perf -b 8 -e 1G -f 8 -g 8 -z1",
                                   "mpirun -np 1 all_reduce_perf --blocking=1 -b 8 -e 1G -f 8 -g 8"}) {
    const std::string log = testing::write_temp_file("launch_blocking.txt", echoed + "\n" + predicted.out);
    const auto v = testing::run_ccsim("validate " + log + " --topology hgx-a100 --model closed-form --tolerance 1");
    EXPECT_EQ(v.code, 0) << echoed << "\n" << v.err << v.out;
    EXPECT_NE(v.out.find("(blocking, -z 1)"), std::string::npos) << v.out;
    std::remove(log.c_str());
  }
  const std::string plain = testing::write_temp_file("launch_blocking.txt", predicted.out);
  const auto v = testing::run_ccsim("validate " + plain + " --topology hgx-a100 --model closed-form --tolerance 1");
  EXPECT_EQ(v.code, 1) << v.err << v.out;  // 48.6 us measured against 34.35 predicted at 8 B
  std::remove(plain.c_str());
  // The Spectrum-X log's command says --blocking 0 (its provenance header); nothing else sets it.
  const std::string name = "nccl-tests/hgx-h200-2node-spectrumx-roce-allreduce-nccl2.30.4.txt";
  std::istringstream with_command(testing::read_text_file(kData + name));
  EXPECT_EQ(parse_nccl_tests_log(with_command, name).at(0).blocking, 0);
  std::istringstream without(provenance_removed(name));
  EXPECT_EQ(parse_nccl_tests_log(without, name).at(0).blocking, -1);
}

TEST(LaunchMode, OwnPredictionValidatesInTheSameMode) {
  // ccsim's -g 8 table says "nThread 1 nGpus 8": validate reads the mode back and must find every
  // size within the printed digits' rounding (a -g 1 prediction would miss the launch-bound sizes).
  const auto predicted =
      testing::run_ccsim("all_reduce_perf -b 8 -e 1G -f 8 -g 8 --topology hgx-a100 --model closed-form");
  ASSERT_EQ(predicted.code, 0) << predicted.err;
  const std::string log = testing::write_temp_file("launch_self.txt", predicted.out);
  const auto v = testing::run_ccsim("validate " + log + " --topology hgx-a100 --model closed-form --tolerance 1 --format json");
  EXPECT_EQ(v.code, 0) << v.err << v.out;
  if (v.code == 0) {
    const auto doc = nlohmann::json::parse(v.out);
    for (const auto& z : doc["runs"][0]["sizes"]) EXPECT_LT(std::fabs(z["error"].get<double>()), 0.01) << z;
  }
  std::remove(log.c_str());
}

}  // namespace
}  // namespace ccsim
