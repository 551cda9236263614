// nccl-tests' JSON result file (-J FILE, nccl-tests 2.17+): read as its text output is. The files here are
// written in nccl-tests' schema (src/util.cu, JSON_FILE_VERSION 2: root as the text column's "%6i"
// string, booleans as the strings "true"/"false", NaN as "nan") from real text logs' rows, so the same
// run read both ways must give the same facts and the same validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/nccl_tests_json.h"
#include "calibrate/nccl_tests_log.h"
#include "cli_runner.h"
#include "common/error.h"

using namespace ccsim;
using nlohmann::ordered_json;

namespace {

const std::string kLogs = std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/";

// One device line of the text output (" Rank  0 Group  0 Pid 2161860 on cnode3-003 device  0
// [0000:1b:00] NVIDIA H100 80GB HBM3") as util.cu's jsonRankInfo writes it.
ordered_json device_of(const std::string& line) {
  int rank = 0, group = 0, pid = 0, device = 0, end = 0;
  char host[256] = {0}, bus[64] = {0};
  EXPECT_EQ(std::sscanf(line.c_str(), " Rank %d Group %d Pid %d on %255s device %d [%63[^]]] %n", &rank, &group, &pid, host,
                        &device, bus, &end),
            6)
      << line;
  return ordered_json{{"rank", rank}, {"group", group}, {"pid", pid}, {"hostname", host}, {"device", device},
                      {"device_hex", bus}, {"device_info", line.substr(static_cast<std::size_t>(end))}};
}

ordered_json half_of(double time_us, double algbw, double busbw, long wrong) {
  return ordered_json{{"time", time_us}, {"alg_bw", algbw}, {"bus_bw", busbw}, {"nwrong", wrong < 0 ? ordered_json() : ordered_json(wrong)}};
}

// The JSON file nccl-tests -J writes for `run` (read from its text output), with `env` as its environment.
ordered_json json_of(const NcclTestsRun& run, const std::string& binary, const std::vector<std::string>& env, long nccl_code) {
  ordered_json config{{"nthreads", run.nthread},       {"ngpus", run.ngpus},
                      {"minimum_bytes", run.min_bytes}, {"maximum_bytes", run.max_bytes},
                      {"step_factor", 2},               {"warmup_iters", run.warmup_iters},
                      {"iterations", run.iters},        {"aggregated_iterations", run.agg_iters},
                      {"validation", run.validation},   {"graph", run.graph},
                      {"blocking_collectives", "false"}, {"per_iter_timing", "false"},
                      {"parallel_init", "false"}};
  ordered_json devices = ordered_json::array();
  for (const auto& d : run.devices) devices.push_back(device_of(d));
  config["devices"] = devices;
  ordered_json results = ordered_json::array();
  for (const auto& r : run.rows) {
    char root[16];
    std::snprintf(root, sizeof root, "%6i", r.root);
    results.push_back(ordered_json{{"size", r.size_bytes}, {"count", r.count}, {"type", r.type}, {"redop", r.redop}, {"root", root},
                                   {"out_of_place", half_of(r.oop_time_us, r.oop_algbw_GBps, r.oop_busbw_GBps, r.oop_wrong)},
                                   {"in_place", half_of(r.ip_time_us, r.ip_algbw_GBps, r.ip_busbw_GBps, r.ip_wrong)},
                                   {"actual_iterations", run.iters}, {"experiment_name", ""}});
  }
  return ordered_json{{"version", 2},
                      {"start_time", "2026-01-28 14:50:17"},
                      {"args", {binary, "-b", "32M", "-e", "64G", "-f", "2", "-J", "out.json"}},
                      {"env", env},
                      {"nccl_version", nccl_code},
                      {"config", config},
                      {"results", results},
                      {"out_of_bounds", {{"count", 0}, {"okay", "true"}}},
                      {"average_bus_bandwidth", {{"bandwidth", run.avg_busbw_GBps}, {"okay", "unchecked"}}},
                      {"errors", ordered_json::array()},
                      {"end_time", "2026-01-28 14:51:02"}};
}

std::string error_of(const std::string& text) {
  try {
    parse_nccl_tests_json(text, "out.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(NcclTestsJson, ARunReadsAsItsTextOutput) {
  const NcclTestsRun text = parse_nccl_tests_file(kLogs + "h100x8-1node-allgather-nccl2.29.2.txt").at(0);
  const std::string doc = json_of(text, "./build/all_gather_perf", {"PATH=/usr/bin", "NCCL_IB_HCA=mlx5"}, 22902).dump(2);
  ASSERT_TRUE(looks_like_nccl_tests_json(doc));
  const auto runs = parse_nccl_tests_json(doc, "out.json");
  ASSERT_EQ(runs.size(), 1u);
  const NcclTestsRun& j = runs[0];
  EXPECT_EQ(j.collective, "all_gather");
  EXPECT_EQ(j.nccl_version, "2.29.2");  // 22902, as the text's "nccl-library=22902"
  EXPECT_EQ(j.nthread, 1);
  EXPECT_EQ(j.ngpus, 1);
  EXPECT_EQ(j.iters, 20);
  EXPECT_EQ(j.warmup_iters, 5);
  EXPECT_EQ(j.step, "2(factor)");
  EXPECT_EQ(j.blocking, 0);
  EXPECT_EQ(j.devices, text.devices);  // the text's device lines, character for character
  EXPECT_EQ(j.ranks, 8);
  EXPECT_EQ(j.nccl_env, std::vector<std::string>{"NCCL_IB_HCA=mlx5"});  // NCCL's settings only
  ASSERT_EQ(j.rows.size(), 10u);
  for (std::size_t i = 0; i < j.rows.size(); ++i) {
    EXPECT_EQ(j.rows[i].size_bytes, text.rows[i].size_bytes);
    EXPECT_EQ(j.rows[i].count, text.rows[i].count);
    EXPECT_EQ(j.rows[i].type, "double");
    EXPECT_EQ(j.rows[i].redop, "none");
    EXPECT_EQ(j.rows[i].root, -1);
    EXPECT_DOUBLE_EQ(j.rows[i].oop_time_us, text.rows[i].oop_time_us);
    EXPECT_DOUBLE_EQ(j.rows[i].ip_busbw_GBps, text.rows[i].ip_busbw_GBps);
    EXPECT_EQ(j.rows[i].oop_wrong, 0);
  }
  EXPECT_DOUBLE_EQ(j.rows[0].oop_time_us, 123.44);  // the log's 32 MiB row
  EXPECT_TRUE(j.has_avg_busbw);
  EXPECT_DOUBLE_EQ(j.avg_busbw_GBps, 327.443);
}

TEST(NcclTestsJson, ValidateGivesTheTextLogsVerdict) {
  // The 2-node InfiniBand all_reduce (NCCL 2.26.2, 16 ranks): the same run as JSON predicts the same
  // sizes the same way; only the file's name differs in the report.
  const std::string log = kLogs + "h100x16-2node-ndr-allreduce.txt";
  const NcclTestsRun text = parse_nccl_tests_file(log).at(0);
  const std::string json_file =
      ccsim::testing::write_temp_file("nccl_tests_json_h100x16.json", json_of(text, "/opt/nccl-tests/build/all_reduce_perf", {}, 22602).dump());
  const auto a = ccsim::testing::run_ccsim("validate " + log + " --topology dgx-h100 --format csv");
  const auto b = ccsim::testing::run_ccsim("validate " + json_file + " --topology dgx-h100 --format csv");
  ASSERT_NE(a.code, 2) << a.err;
  ASSERT_EQ(b.code, a.code) << b.err;
  std::string expected = a.out;
  for (std::size_t at; (at = expected.find(log)) != std::string::npos;) expected.replace(at, log.size(), json_file);
  EXPECT_EQ(b.out, expected);
  std::remove(json_file.c_str());
}

TEST(NcclTestsJson, TheRecordedEnvironmentNamesAForcedAlgorithm) {
  // A one-node H100 all_reduce made with NCCL_ALGO=Ring (its JSON records it): ccsim's own Ring
  // prediction stands in for the measurement. Against NCCL's default (NVLS from the mid sizes) the
  // large sizes are slow, and validate names the setting from the file; with --algo Ring they match.
  const auto ring = ccsim::testing::run_ccsim("all_reduce_perf -b 1M -e 1G -f 4 --topology dgx-h100 --algo Ring --model closed-form");
  ASSERT_EQ(ring.code, 0) << ring.err;
  std::istringstream in(ring.out);
  NcclTestsRun run = parse_nccl_tests_log(in, "ring.txt").at(0);
  for (int r = 0; r < 8; ++r)  // the device list nccl-tests records (ccsim's table prints none)
    run.devices.push_back(" Rank  " + std::to_string(r) + " Group  0 Pid  " + std::to_string(1000 + r) + " on   node0001 device  " +
                          std::to_string(r) + " [0000:1b:00] NVIDIA H100 80GB HBM3");
  const std::string file = ccsim::testing::write_temp_file(
      "nccl_tests_json_ring.json", json_of(run, "all_reduce_perf", {"NCCL_ALGO=Ring", "NCCL_DEBUG=WARN", "HOME=/root"}, 23007).dump());
  const auto v = ccsim::testing::run_ccsim("validate " + file + " --topology dgx-h100 --model closed-form");
  EXPECT_EQ(v.code, 1) << v.err << v.out;
  EXPECT_NE(v.out.find(", recorded NCCL settings NCCL_ALGO=Ring NCCL_DEBUG=WARN\n"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("[forced-algorithm-or-protocol]"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("NCCL_ALGO=Ring recorded in the environment of " + file), std::string::npos) << v.out;
  const auto told = ccsim::testing::run_ccsim("validate " + file + " --topology dgx-h100 --model closed-form --algo Ring --tolerance 1");
  EXPECT_EQ(told.code, 0) << told.err << told.out;
  std::remove(file.c_str());
}

TEST(NcclTestsJson, TheFilesVariants) {
  const NcclTestsRun text = parse_nccl_tests_file(kLogs + "h100x8-1node-allgather-nccl2.29.2.txt").at(0);
  ordered_json doc = json_of(text, "all_gather_perf", {}, 22902);
  // -C 1: the CPU's time per iteration, under "cpu_time".
  ordered_json cpu = doc;
  for (auto& r : cpu["results"])
    for (const char* half : {"out_of_place", "in_place"}) {
      r[half]["cpu_time"] = r[half]["time"];
      r[half].erase("time");
    }
  EXPECT_DOUBLE_EQ(parse_nccl_tests_json(cpu.dump(), "cpu.json").at(0).rows[0].oop_time_us, 123.44);
  // A trace replay writes "out_of_place": null; -c 0 writes "nwrong": null (the text's "N/A").
  ordered_json replay = doc;
  replay["results"][0]["out_of_place"] = nullptr;
  replay["results"][0]["in_place"]["nwrong"] = nullptr;
  const NcclTestsRow r0 = parse_nccl_tests_json(replay.dump(), "replay.json").at(0).rows[0];
  EXPECT_EQ(r0.oop_time_us, 0);
  EXPECT_DOUBLE_EQ(r0.ip_time_us, 120.24);
  EXPECT_EQ(r0.ip_wrong, -1);
  // -d all: one run per datatype, as the text's table is split.
  ordered_json two = doc;
  ordered_json extra = two["results"][0];
  extra["type"] = "float";
  extra["count"] = 2 * extra["count"].get<long>();
  two["results"].push_back(extra);
  const auto runs = parse_nccl_tests_json(two.dump(), "two.json");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].rows.size(), 10u);
  EXPECT_EQ(runs[1].rows.size(), 1u);
  EXPECT_EQ(runs[1].rows[0].type, "float");
  // The text parser hands JSON to this reader, and calibrate takes the file as an nccl-tests log (not as
  // a probe document, the other JSON it reads): the same fit as from the text.
  std::istringstream in(doc.dump());
  EXPECT_EQ(parse_nccl_tests_log(in, "in.json").at(0).rows.size(), 10u);
  const std::string file = ccsim::testing::write_temp_file("nccl_tests_json_cal.json", doc.dump());
  const auto from_json = ccsim::testing::run_ccsim("calibrate " + file + " -o " + file + ".cal");
  const auto from_text = ccsim::testing::run_ccsim("calibrate " + kLogs + "h100x8-1node-allgather-nccl2.29.2.txt -o " + file + ".cal2");
  ASSERT_EQ(from_json.code, 0) << from_json.err;
  ASSERT_EQ(from_text.code, 0) << from_text.err;
  // The fit the text log gives, line for line ("(run 0, all_gather, 8 ranks, 1 node(s)): intercept ... us,
  // beta ... GB/s"), from the JSON too; only the source's file name differs.
  const std::size_t at = from_text.out.find(" (run 0, all_gather, 8 ranks, 1 node(s)): intercept ");
  ASSERT_NE(at, std::string::npos) << from_text.out;
  const std::string fit = from_text.out.substr(at, from_text.out.find('\n', at) - at);
  EXPECT_NE(from_json.out.find("source: " + file + fit + "\n"), std::string::npos) << fit << "\n" << from_json.out;
  for (const std::string& f : {file, file + ".cal", file + ".cal2"}) std::remove(f.c_str());
}

TEST(NcclTestsJson, BadFilesAreOneErrorWithThePlace) {
  const NcclTestsRun text = parse_nccl_tests_file(kLogs + "h100x8-1node-allgather-nccl2.29.2.txt").at(0);
  const ordered_json doc = json_of(text, "all_gather_perf", {}, 22902);
  const std::string whole = doc.dump(1);
  // A run killed mid-sweep: nccl-tests never closed the file.
  const std::string cut = whole.substr(0, whole.find("\"in_place\"", whole.find("268435456")));
  const std::string e = error_of(cut);
  EXPECT_NE(e.find("out.json: line "), std::string::npos) << e;
  EXPECT_NE(e.find("the run was cut short"), std::string::npos) << e;

  ordered_json nan_time = doc;
  nan_time["results"][3]["out_of_place"]["time"] = "nan";
  EXPECT_EQ(error_of(nan_time.dump()), "out.json: /results/3/out_of_place/time: is not a measurement: \"nan\" (negative, nan or inf)");
  ordered_json text_size = doc;
  text_size["results"][0]["size"] = "32M";
  EXPECT_EQ(error_of(text_size.dump()), "out.json: /results/0/size: is missing or not a whole number of bytes: \"32M\"");
  ordered_json no_results = doc;
  no_results.erase("results");
  EXPECT_NE(error_of(no_results.dump()).find("no \"results\" list"), std::string::npos);
  ordered_json empty = doc;
  empty["results"] = ordered_json::array();
  EXPECT_EQ(error_of(empty.dump()), "out.json: /results: is empty: the run measured no size");
  ordered_json no_rank = doc;
  no_rank["config"]["devices"][2].erase("rank");
  EXPECT_EQ(error_of(no_rank.dump()), "out.json: /config/devices/2/rank: is missing");
  ordered_json no_time = doc;
  no_time["results"][1]["in_place"].erase("time");
  EXPECT_EQ(error_of(no_time.dump()), "out.json: /results/1/in_place: has no \"time\" (or \"cpu_time\", -C 1)");
  EXPECT_NE(error_of("[1, 2]").find("is one object"), std::string::npos);
  EXPECT_NE(error_of("{\"version\": 2}").find("no \"config\" object"), std::string::npos);

  // Through the CLI: one line, exit 2.
  const std::string file = ccsim::testing::write_temp_file("nccl_tests_json_cut.json", cut);
  const auto r = ccsim::testing::run_ccsim("validate " + file + " --topology dgx-h100");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  std::remove(file.c_str());
}
