// ccsim's probe documents as calibration inputs (calibrate/probe_import.h): the nccl probe's default
// runs are fitted as the same measurement in an nccl-tests log is, the verbs probe's tables as
// perftest's, and the cuda probe's SHM channel rate (shm_fifo, else the 1-block host read rate) becomes
// node.pcie.shm_channel_GBps. The nccl and verbs probe documents are built here from real logs in
// tests/data; the cuda ones are calibrate/samples' (no probe runs in CI: no GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "calibrate/calibration.h"
#include "calibrate/nccl_tests_log.h"
#include "calibrate/perftest_log.h"
#include "calibrate/probe_import.h"
#include "common/error.h"
#include "topologies/spec.h"
#include "tests/cli_runner.h"
#include "tests/input_error_of.h"

namespace ccsim {
namespace {

using nlohmann::json;

const std::string kSource = CCSIM_SOURCE_DIR;

json probe_base(const std::string& probe) {
  return {{"probe", probe},
          {"ccsim_probe_version", "1"},
          {"machine", {{"hostname", "h"}, {"driver_version", nullptr}, {"cuda_runtime_version", 13000},
                       {"nccl_version", 22809}, {"gpus", json::array()}, {"nics", json::array()}}},
          {"errors", json::array()},
          {"samples", json::array()}};
}

ProbeDocument as_probe(const json& doc) { return parse_probe_document("probe.json", doc.dump()); }

// calibrate/samples/NAME as text.
std::string sample_text(const std::string& name) {
  std::ifstream in(kSource + "/calibrate/samples/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `doc` without the samples `drop` matches.
json without_samples(json doc, const std::function<bool(const json&)>& drop) {
  json kept = json::array();
  for (const auto& s : doc["samples"])
    if (!drop(s)) kept.push_back(s);
  doc["samples"] = kept;
  return doc;
}

std::string error_of(const std::function<void()>& f) { return testing::input_error_of(f); }

// The A100 all_reduce log as the nccl probe would have recorded it: one sample per size, the faster
// of its out-of-place and in-place times as the host average (the log's 512 MiB out-of-place time is
// a 9% spike that the nccl-tests fit drops by the same rule), and a forced combination that must not
// enter the fit.
json nccl_probe_from_log(int processes) {
  const NcclTestsRun run = parse_nccl_tests_file(kSource + "/tests/data/nccl-tests/a100x8-1node-allreduce.txt").at(0);
  json doc = probe_base("nccl");
  doc["parameters"] = {{"nranks", 8}, {"processes", processes}};
  for (const auto& row : run.rows) {
    const double t = std::min(row.oop_time_us, row.ip_time_us);
    for (const char* combination : {"default", "Ring/LL"})
      doc["samples"].push_back({{"test", "all_reduce"}, {"combination", combination}, {"nranks", 8},
                                {"bytes", row.size_bytes}, {"iters", 20},
                                {"time_us_min", t}, {"time_us_median", t}, {"time_us_mean", t},
                                // Ring/LL ten times slower: if it entered the fit, beta would show it.
                                {"time_us_host_avg", t * (combination[0] == 'd' ? 1 : 10)},
                                {"algbw_GBps", row.oop_algbw_GBps}, {"busbw_GBps", row.oop_busbw_GBps}});
  }
  return doc;
}

TEST(ProbeImport, NcclProbeDefaultRunsAreRingCurves) {
  const NcclTestsRun log = parse_nccl_tests_file(kSource + "/tests/data/nccl-tests/a100x8-1node-allreduce.txt").at(0);
  const std::vector<RingCurve> curves = ring_curves_from_nccl_probe(as_probe(nccl_probe_from_log(1)), {});
  ASSERT_EQ(curves.size(), 1u);
  const RingCurve& c = curves[0];
  EXPECT_EQ(c.collective, "all_reduce");
  EXPECT_EQ(c.ranks, 8);
  EXPECT_EQ(c.nodes, 1);
  EXPECT_EQ(c.path_class, "nvlink");  // busbw above any PCIe link
  EXPECT_EQ(c.gpus_per_thread, 8);    // one process (ncclCommInitAll) launched all 8
  EXPECT_EQ(c.sizes.size(), log.rows.size());
  const Calibration cal = calibrate_ring_curves(curves);
  // beta is the ring's step bandwidth: the log's busbw at its largest size, within the fit's noise.
  const double plateau = log.rows.back().oop_busbw_GBps * 1e9;
  EXPECT_NEAR(cal.classes.at("nvlink").beta_Bps, plateau, 0.05 * plateau);
  EXPECT_EQ(ring_curves_from_nccl_probe(as_probe(nccl_probe_from_log(8)), {}).at(0).gpus_per_thread, 1);  // mpirun -np 8
}

TEST(ProbeImport, NcclProbeFlagsAndMissingDefault) {
  const ProbeDocument p = as_probe(nccl_probe_from_log(8));
  NcclTestsOptions opt;
  opt.ranks = 16;
  EXPECT_EQ(error_of([&] { ring_curves_from_nccl_probe(p, opt); }),
            "--ranks: 16 contradicts probe.json, which ran 8 ranks");
  opt = {};
  opt.path_class = "pcie";
  EXPECT_EQ(ring_curves_from_nccl_probe(p, opt).at(0).path_class, "pcie");
  const json forced = without_samples(nccl_probe_from_log(8), [](const json& s) { return s["combination"] == "default"; });
  EXPECT_EQ(error_of([&] { ring_curves_from_nccl_probe(as_probe(forced), {}); }),
            "probe.json: no all_reduce, all_gather or reduce_scatter samples of NCCL's default choice (only forced "
            "combinations: Ring/LL; rerun without --no-default)");
}

TEST(ProbeImport, VerbsProbeIsPerftest) {
  // The same ib_write_bw -a sweep (RoCE, 25 Gb/s) as perftest printed it and as verbs probe samples.
  const std::string log = kSource + "/tests/data/samples/perftest_5.txt";
  Calibration from_log;
  add_perftest_file(from_log, log);
  json doc = probe_base("verbs");
  const std::vector<PerftestRun> tables = select_perftest_runs(parse_perftest_file(log), nullptr);
  for (const PerftestSample& s : tables.at(0).samples)
    doc["samples"].push_back({{"test", "write_bw"}, {"perftest_equivalent", "ib_write_bw"}, {"bytes", s.bytes},
                              {"iters", s.iterations}, {"bw_avg_Gbps", s.bw_avg_Gbps},
                              {"bw_avg_MBps", s.bw_avg_Gbps * 1e9 / 8 / 1048576}, {"msg_rate_Mpps", s.msg_rate_Mpps}});
  // ib_read_lat prints the whole round trip: 5.49 us is 2.745 us one way.
  doc["samples"].push_back({{"test", "read_lat"}, {"perftest_equivalent", "ib_read_lat"}, {"bytes", 2}, {"iters", 1000},
                            {"t_min_us", 5.3}, {"t_typical_us", 5.49}, {"t_avg_us", 5.52}, {"p99_us", 6.0}});
  doc["local"] = {{"memory", "cuda:0"}, {"registration", "dmabuf"}};
  Calibration from_probe;
  add_verbs_probe(from_probe, as_probe(doc));
  ASSERT_TRUE(from_probe.nic.has_value());
  EXPECT_NEAR(from_probe.nic->beta_Bps, from_log.nic->beta_Bps, 1e-9 * from_log.nic->beta_Bps);
  EXPECT_NEAR(from_probe.nic->beta_Bps * 8 / 1e9, 23.0, 0.3);  // the sweep's plateau
  EXPECT_NEAR(from_probe.nic->latency_s, 5.49e-6 / 2, 1e-15);
  ASSERT_EQ(from_probe.nic->sources.size(), 2u);
  EXPECT_EQ(from_probe.nic->sources[0].method, from_log.nic->sources[0].method);
  EXPECT_EQ(from_probe.nic->notes.front(), "probe.json: buffers in cuda:0 memory (dmabuf registration)");
}

TEST(ProbeImport, CudaProbeHostReadIsTheShmChannelRate) {
  const std::string text = sample_text("example-probe-cuda.json");
  Calibration cal;
  add_cuda_probe(cal, parse_probe_document("example-probe-cuda.json", text));
  ASSERT_TRUE(cal.shm.has_value());
  // The example's one sample: 64 MiB read by 1 block in a median 52000 us.
  EXPECT_NEAR(cal.shm->channel_Bps, 67108864 / 52000e-6, 1e3);
  // A calibration file keeps it, and a PCIe topology receives it as the key.
  const Calibration again = calibration_from_json(json::parse(calibration_to_json(cal)), "cal.json");
  EXPECT_EQ(again.shm->channel_Bps, cal.shm->channel_Bps);
  EXPECT_FALSE(calibrates_ring(again));
  const json spec = load_topology_spec("pcie-gen4-8gpu");
  const CalibrationEffect effect = calibration_effect(again, spec, StepTiming{});
  ASSERT_EQ(effect.spec_overrides.size(), 1u);
  EXPECT_EQ(effect.spec_overrides[0].rfind("node.pcie.shm_channel_GBps=1.2905", 0), 0u) << effect.spec_overrides[0];

  const json no_host_kernel = without_samples(json::parse(text), [](const json& s) { return s["test"] == "host_kernel"; });
  Calibration none;
  EXPECT_EQ(error_of([&] { add_cuda_probe(none, as_probe(no_host_kernel)); }).rfind("probe.json: no shm_fifo sample of 1 channel and no host_kernel read sample", 0), 0u);
}

// The measured H200 document (calibrate/samples/README.md): its shm_fifo sample of one channel at the
// 512 KiB Simple step and 512 threads, 64 MiB in a median 3879.49 us, is the channel rate (not the
// 256-thread sample, 7145.87 us); without shm_fifo samples the one block reading pinned host memory
// (64 MiB in 3665.15 us) stands in for it.
TEST(ProbeImport, MeasuredShmFifoIsTheShmChannelRate) {
  const std::string text = sample_text("h200-probe-cuda.json");
  Calibration cal;
  add_cuda_probe(cal, parse_probe_document("h200-probe-cuda.json", text));
  ASSERT_TRUE(cal.shm.has_value());
  EXPECT_NEAR(cal.shm->channel_Bps, 67108864 / 3879.49e-6, 1e-4 * cal.shm->channel_Bps);  // 17.30 GB/s
  EXPECT_EQ(cal.shm->sources.at(0).kind, "ccsim-probe-cuda shm_fifo");
  // Its 256-thread sample (64 MiB in 7145.87 us) is named for PCIe-only hosts.
  ASSERT_EQ(cal.shm->notes.size(), 3u);
  EXPECT_EQ(cal.shm->notes[1], "with 256 threads per block, as NCCL runs Ring/Simple on PCIe-only hosts, the channel "
                               "moves 9.39128 GB/s: --set node.pcie.shm_channel_GBps=9.39128 for such a host");
  EXPECT_NEAR(9.39128e9, 67108864 / 7145.87e-6, 1e-5 * 9.39128e9);
  // Its host_flag handoff between two blocks through pinned host memory, a median 1.56707 us one way,
  // is the SHM step (the repeat run measured 1.38293); it survives the file and becomes the key.
  EXPECT_DOUBLE_EQ(cal.shm->step_s, 1.56707e-6);
  const Calibration again = calibration_from_json(json::parse(calibration_to_json(cal)), "cal.json");
  EXPECT_DOUBLE_EQ(again.shm->step_s, cal.shm->step_s);
  const CalibrationEffect effect = calibration_effect(again, load_topology_spec("pcie-gen4-8gpu"), StepTiming{});
  ASSERT_EQ(effect.spec_overrides.size(), 2u);
  EXPECT_EQ(effect.spec_overrides[1], "node.pcie.shm_step_us=1.56707");
  Calibration repeat;
  add_cuda_probe(repeat, parse_probe_document("h200-probe-cuda-repeat.json", sample_text("h200-probe-cuda-repeat.json")));
  EXPECT_DOUBLE_EQ(repeat.shm->step_s, 1.38293e-6);
  // A calibration file's step must be a number from 0 to 1 ms.
  json bad = json::parse(calibration_to_json(cal));
  bad["shm"]["step_s"] = -1;
  EXPECT_NE(error_of([&] { calibration_from_json(bad, "cal.json"); }).find("/shm/step_s"), std::string::npos);

  const json without_fifo = without_samples(json::parse(text), [](const json& s) { return s["test"] == "shm_fifo"; });
  Calibration fallback;
  add_cuda_probe(fallback, as_probe(without_fifo));
  EXPECT_NEAR(fallback.shm->channel_Bps, 67108864 / 3665.15e-6, 1e-4 * fallback.shm->channel_Bps);  // 18.31 GB/s
  EXPECT_EQ(fallback.shm->sources.at(0).kind, "ccsim-probe-cuda host_kernel");
}

TEST(ProbeImport, BrokenDocumentsAreOneError) {
  EXPECT_EQ(error_of([] { parse_probe_document("p.json", "{\"probe\": \"cuda\",\n"); }).rfind("p.json: line 2", 0), 0u);
  json doc = probe_base("cuda");
  doc.erase("machine");
  EXPECT_EQ(error_of([&] { as_probe(doc); }),
            "probe.json: not a ccsim probe document (docs/probes.md, \"JSON schema\"): : missing \"machine\"");
  doc = probe_base("cuda");
  doc["errors"].push_back({{"test", "fatal"}, {"message", "no CUDA device"}});
  EXPECT_EQ(error_of([&] { as_probe(doc); }), "probe.json: the cuda probe measured nothing: fatal: no CUDA device");
}

// End to end: `ccsim calibrate` reads the probe document (by its JSON, whatever the name), and the
// prediction with the file equals the one with the key set by hand.
TEST(ProbeImport, CalibrateCommandAndPredict) {
  const std::string copy = testing::temp_file("cuda_probe.txt");  // not named .json: sniffed by content
  {
    std::ifstream in(kSource + "/calibrate/samples/example-probe-cuda.json");
    std::ofstream(copy) << in.rdbuf();
  }
  const std::string cal = testing::temp_file("shm_cal.json");
  testing::CliResult r = testing::run_ccsim("calibrate " + copy + " -o " + cal);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("shm: 1.291 GB/s per channel (node.pcie.shm_channel_GBps)"), std::string::npos) << r.out;
  const std::string host = "all_reduce_perf -b 1M -e 64M -f 8 --topology pcie-gen4-8gpu --set node.gpu.count=2 "
                           "--set node.cpu.sockets=1 --set node.pcie.switches_per_socket=1 --set node.nic.count=0 "
                           "--set node.pcie.p2p=none";
  const testing::CliResult calibrated = testing::run_ccsim(host + " --calibration " + cal);
  const testing::CliResult by_hand = testing::run_ccsim(host + " --set node.pcie.shm_channel_GBps=1.290555");
  ASSERT_EQ(calibrated.code, 0) << calibrated.err;
  ASSERT_EQ(by_hand.code, 0) << by_hand.err;
  std::istringstream a(calibrated.out), b(by_hand.out);
  const auto rows = parse_nccl_tests_log(a, "calibrated").at(0).rows, hand = parse_nccl_tests_log(b, "by hand").at(0).rows;
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(hand.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_NEAR(rows[i].oop_time_us, hand[i].oop_time_us, 1e-5 * hand[i].oop_time_us) << rows[i].size_bytes;
  // At 64 MiB the SHM channels bind: 2 ranks, NCCL's 2 ring channels at 1.29 GB/s each carry a
  // busbw of at most 2 x 1.29 GB/s.
  EXPECT_LT(rows.back().oop_busbw_GBps, 2 * 1.2906);
  std::remove(copy.c_str());
  std::remove(cal.c_str());
}

}  // namespace
}  // namespace ccsim
