// GPU-free checks of the hardware probes (calibrate/probes, docs/probes.md): the hand-written example
// document has the documented schema, the schema check catches broken documents, and the shared helpers
// (sizes, sweeps, statistics) behave like nccl-tests' options. No probe is run.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "calibrate/probes/probe_common.h"
#include "calibrate/probes/probe_schema.h"

using nlohmann::json;

namespace {

json load_example() {
  std::ifstream in(std::string(CCSIM_SOURCE_DIR) + "/calibrate/samples/example-probe-cuda.json");
  EXPECT_TRUE(in.good());
  return json::parse(in);
}

bool mentions(const std::vector<std::string>& problems, const std::string& part) {
  for (const auto& p : problems)
    if (p.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(ProbeSchema, ExampleCudaDocumentIsValid) {
  json doc = load_example();
  EXPECT_NE(doc.value("example", "").find("NOT a measurement"), std::string::npos);
  auto problems = ccsim::probe::check_probe_document(doc);
  for (const auto& p : problems) ADD_FAILURE() << p;
  EXPECT_EQ(doc["probe"], "cuda");
  ASSERT_FALSE(doc["samples"].empty());
  // Every copy sample's bandwidth is the bytes over the median time (GB/s = 1e9 B/s).
  for (const auto& s : doc["samples"]) {
    if (!s.contains("bw_GBps")) continue;
    double expect = s["bytes"].get<double>() / (s["time_us_median"].get<double>() * 1e-6) / 1e9;
    EXPECT_NEAR(s["bw_GBps"].get<double>(), expect, 1e-3 * expect + 1e-9) << s.dump();
    EXPECT_LE(s["time_us_min"].get<double>(), s["time_us_median"].get<double>());
  }
}

// host_kernel samples (NCCL's SHM channel rate, node.pcie.shm_channel_GBps) carry the rate per thread
// block: the sample's bandwidth over its block count.
TEST(ProbeSchema, HostKernelSamplesGiveTheRatePerBlock) {
  json doc = load_example();
  int seen = 0;
  for (const auto& s : doc["samples"]) {
    if (s["test"] != "host_kernel") continue;
    ++seen;
    EXPECT_NEAR(s["bw_per_block_GBps"].get<double>(), s["bw_GBps"].get<double>() / s["blocks"].get<double>(),
                1e-5 * s["bw_GBps"].get<double>()) << s.dump();
  }
  EXPECT_GE(seen, 2);
  doc["samples"].back().erase("blocks");
  EXPECT_TRUE(mentions(ccsim::probe::check_probe_document(doc), "missing \"blocks\""));
}

// The measured documents (calibrate/samples/README.md: one H200, 2026-12-04) have the schema, and their
// bandwidths are their bytes over their median times.
TEST(ProbeSchema, MeasuredH200DocumentsAreValid) {
  for (const char* name : {"h200-probe-cuda.json", "h200-probe-cuda-repeat.json", "h200-probe-nccl-1gpu.json"}) {
    std::ifstream in(std::string(CCSIM_SOURCE_DIR) + "/calibrate/samples/" + name);
    ASSERT_TRUE(in.good()) << name;
    const json doc = json::parse(in);
    EXPECT_FALSE(doc.contains("example")) << name;
    for (const auto& p : ccsim::probe::check_probe_document(doc)) ADD_FAILURE() << name << ": " << p;
    EXPECT_TRUE(doc["errors"].empty()) << name;
    EXPECT_EQ(doc["machine"]["gpus"][0]["name"], "NVIDIA H200") << name;
    int fifo = 0;
    for (const auto& s : doc["samples"]) {
      if (s["test"] != "shm_fifo") continue;
      ++fifo;
      const double expect = s["bytes"].get<double>() / (s["time_us_median"].get<double>() * 1e-6) / 1e9;
      EXPECT_NEAR(s["bw_GBps"].get<double>(), expect, 1e-3 * expect) << s.dump();
      EXPECT_NEAR(s["bw_per_channel_GBps"].get<double>(), expect / s["channels"].get<double>(), 1e-3 * expect);
    }
    // 1/2/4/8 channels x (512 KiB, 64 KiB, plain loads, then 512 KiB at each other thread count)
    if (doc["probe"] == "cuda") {
      EXPECT_EQ(fifo, 4 * (3 + doc["parameters"]["shm_threads"].size() - 1)) << name;
    }
  }
}

TEST(ProbeSchema, ReportsMissingAndMistypedKeys) {
  json doc = load_example();
  doc.erase("errors");
  doc["machine"].erase("hostname");
  doc["machine"]["gpus"][0]["sm"] = "90";
  doc["samples"][0].erase("time_us_median");
  doc["samples"].push_back({{"test", "teleport"}, {"bytes", 1}, {"iters", 1}, {"time_us_min", 1},
                            {"time_us_median", 1}, {"time_us_mean", 1}});
  auto problems = ccsim::probe::check_probe_document(doc);
  EXPECT_TRUE(mentions(problems, "missing \"errors\""));
  EXPECT_TRUE(mentions(problems, "machine: missing \"hostname\""));
  EXPECT_TRUE(mentions(problems, "machine.gpus[0]: \"sm\" has the wrong type"));
  EXPECT_TRUE(mentions(problems, "samples[0]: missing \"time_us_median\""));
  EXPECT_TRUE(mentions(problems, "unknown cuda test \"teleport\""));
  EXPECT_FALSE(ccsim::probe::check_probe_document(json::array()).empty());
}

TEST(ProbeSchema, NcclAndVerbsSamples) {
  json base = {{"probe", "nccl"},
               {"ccsim_probe_version", "1"},
               {"machine", {{"hostname", "h"}, {"driver_version", nullptr}, {"cuda_runtime_version", 13000},
                            {"nccl_version", 22809}, {"gpus", json::array()}, {"nics", json::array()}}},
               {"errors", json::array()}};
  json nccl = base;
  nccl["samples"] = {{{"test", "all_reduce"}, {"combination", "Ring/Simple"}, {"nranks", 8}, {"bytes", 1024},
                      {"iters", 20}, {"time_us_min", 10.0}, {"time_us_median", 11.0}, {"time_us_mean", 11.5},
                      {"algbw_GBps", 0.093}, {"busbw_GBps", 0.163}}};
  EXPECT_TRUE(ccsim::probe::check_probe_document(nccl).empty());
  nccl["samples"][0].erase("busbw_GBps");
  EXPECT_TRUE(mentions(ccsim::probe::check_probe_document(nccl), "busbw_GBps"));

  json verbs = base;
  verbs["probe"] = "verbs";
  verbs["samples"] = {{{"test", "write_bw"}, {"perftest_equivalent", "ib_write_bw"}, {"bytes", 65536}, {"iters", 5000},
                       {"bw_avg_Gbps", 390.1}, {"bw_avg_MBps", 46503.2}, {"msg_rate_Mpps", 0.744}},
                      {{"test", "write_lat"}, {"perftest_equivalent", "ib_write_lat"}, {"bytes", 2}, {"iters", 1000},
                       {"t_min_us", 1.7}, {"t_typical_us", 1.8}, {"t_avg_us", 1.82}, {"p99_us", 2.1}}};
  EXPECT_TRUE(ccsim::probe::check_probe_document(verbs).empty());
  verbs["samples"][1].erase("t_typical_us");
  EXPECT_TRUE(mentions(ccsim::probe::check_probe_document(verbs), "t_typical_us"));
}

TEST(ProbeHelpers, SizesLikeNcclTests) {
  using ccsim::probe::parse_size;
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("64K"), 65536u);
  EXPECT_EQ(parse_size("1M"), 1048576u);
  EXPECT_EQ(parse_size("1G"), 1073741824u);
  EXPECT_EQ(parse_size("256mb"), 268435456u);
  EXPECT_THROW(parse_size("12Q"), ccsim::probe::ProbeError);
  EXPECT_THROW(parse_size(""), ccsim::probe::ProbeError);

  auto s = ccsim::probe::size_sweep(8, 1ull << 30, 2);
  ASSERT_EQ(s.size(), 28u);  // 8 B .. 1 GiB
  EXPECT_EQ(s.front(), 8u);
  EXPECT_EQ(s.back(), 1ull << 30);
  auto p = ccsim::probe::size_sweep(8, 256ull << 20, 4);
  EXPECT_EQ(p.back(), 128ull << 20);  // 8 * 4^k <= 256M
  EXPECT_THROW(ccsim::probe::size_sweep(8, 4, 2), ccsim::probe::ProbeError);
  EXPECT_THROW(ccsim::probe::size_sweep(8, 16, 1), ccsim::probe::ProbeError);
}

TEST(ProbeHelpers, Statistics) {
  auto st = ccsim::probe::stats_of({5, 1, 3, 2, 4});
  EXPECT_DOUBLE_EQ(st.min, 1);
  EXPECT_DOUBLE_EQ(st.max, 5);
  EXPECT_DOUBLE_EQ(st.median, 3);
  EXPECT_DOUBLE_EQ(st.mean, 3);
  EXPECT_NEAR(st.stdev, 1.5811388, 1e-6);
  EXPECT_EQ(ccsim::probe::stats_of({}).n, 0u);
}
