// `ccsim run` with validate workloads: the shipped scenarios/validate-*.json run end to end; every
// row carries the log's own measurement (read here independently from the log's table) beside the
// prediction, which equals `ccsim validate` on the same log and hardware; the causes name the
// host-staged path for the 2080 Ti pair; bad validate workloads are one line and exit 2.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/test_run_helpers.h"

namespace ccsim {
namespace {

using namespace run_testing;

// size -> out-of-place time (us) from an nccl-tests table: rows are lines whose first field is a
// number (header and comment lines start with '#' or text).
std::map<std::uint64_t, double> oop_times(const std::string& path) {
  std::map<std::uint64_t, double> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::uint64_t size = 0, count = 0;
    std::string type, redop, root;
    double time = 0;
    if (!(ss >> size >> count >> type >> redop >> root >> time)) continue;
    out.emplace(size, time);
  }
  return out;
}

const std::string kLog = std::string(CCSIM_SOURCE_DIR) + "/tests/data/nccl-tests/rtx2080ti-x2-pcie-noP2P-allreduce.txt";

TEST(RunValidate, ShippedScenarioCarriesTheLogsMeasurementAndValidatesPrediction) {
  const std::string dir = fresh_dir("validate");
  const CommandResult r =
      ccsim("run " + std::string(CCSIM_SOURCE_DIR) + "/scenarios/validate-rtx2080ti-x2.json -o " + dir + "/out -q", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::map<std::uint64_t, double> measured = oop_times(kLog);
  ASSERT_EQ(measured.size(), 28u);  // 8 B .. 1 GiB, factor 2

  std::ifstream csv(dir + "/out/results.csv");
  std::string line;
  std::getline(csv, line);
  const std::vector<std::string> header = csv_fields(line);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* c : {"measured_time_us", "measured_busbw_GBps", "error_pct", "within_tolerance", "side"})
    ASSERT_TRUE(col.count(c)) << c;
  std::map<std::string, std::map<std::uint64_t, double>> predicted;  // variant -> size -> us
  std::size_t rows = 0;
  while (std::getline(csv, line)) {
    const auto f = csv_fields(line);
    const std::uint64_t size = std::stoull(f[col["size_bytes"]]);
    ASSERT_TRUE(measured.count(size)) << size;
    EXPECT_DOUBLE_EQ(std::stod(f[col["measured_time_us"]]), measured.at(size));
    const double t = std::stod(f[col["time_us"]]);
    EXPECT_NEAR(std::stod(f[col["error_pct"]]), 100 * (measured.at(size) / t - 1), 1e-9);
    predicted[f[col["variant"]]][size] = t;
    ++rows;
  }
  EXPECT_EQ(rows, 2 * measured.size());  // 2 variants x every size of the log

  // The prediction is `ccsim validate`'s for the same log and hardware.
  const CommandResult v = ccsim("validate " + kLog +
                                    " --topology pcie-gen4-8gpu --set node.gpu.count=2 --set node.pcie.generation=3 "
                                    "--set node.cpu.sockets=1 --set node.pcie.switches_per_socket=1 --set node.nic.count=0 "
                                    "--format csv",
                                dir);
  ASSERT_EQ(v.code, 1) << v.err;  // sizes outside the tolerance
  std::istringstream vs(v.out);
  std::size_t checked = 0;
  while (std::getline(vs, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("file,", 0) == 0) continue;
    const auto f = csv_fields(line);
    EXPECT_DOUBLE_EQ(predicted["P2P through the switch"].at(std::stoull(f[4])), std::stod(f[6]));
    ++checked;
  }
  EXPECT_EQ(checked, measured.size());

  // Host staging moves every byte over the switch's uplink twice (GPU -> host, host -> GPU) where
  // P2P crosses the switch once, and each GPU of the ring both writes into and reads from host memory
  // (node.pcie.shm_two_way_efficiency 0.65): the 1 GiB plateau takes 2 / 0.65 as long.
  const std::uint64_t gib = 1ull << 30;
  EXPECT_NEAR(predicted["P2P off (host-staged)"].at(gib) / predicted["P2P through the switch"].at(gib), 2.0 / 0.65,
              0.06);

  const nlohmann::json results = nlohmann::json::parse(slurp(dir + "/out/results.json"));
  for (const auto& variant : results["variants"]) {
    const auto& w = variant["workloads"][0];
    EXPECT_EQ(w["kind"], "validate");
    EXPECT_EQ(w["collective"], "all_reduce");  // from the log's echoed command
    EXPECT_EQ(w["pass"], false);
    bool host_staged = false;
    for (const auto& c : w["causes"]) host_staged = host_staged || c["id"] == "p2p-host-staged";
    // The P2P hypothesis is 3x too fast on the plateau and validate names host staging; the
    // host-staged one meets it (+2%) and fails on its latency side (the -g 2 launches) only.
    EXPECT_EQ(host_staged, variant["name"] == "P2P through the switch") << variant["name"];
  }
  // The report holds one measured-against-predicted comparison per variant, with its causes.
  const std::string html = slurp(dir + "/out/report.html");
  EXPECT_NE(html.find("2080ti x2 all_reduce on P2P off (host-staged): FAIL"), std::string::npos);
  EXPECT_NE(html.find("[p2p-host-staged]"), std::string::npos);
}

TEST(RunValidate, BadValidateWorkloadIsOneLineExitTwo) {
  const std::string dir = fresh_dir("validate-bad");
  const auto run = [&](const std::string& workload) {
    write_text(dir + "/s.json", R"({"format": "ccsim-scenario/1", "cluster": {"topology": "dgx-h100"}, "workloads": [)" +
                                    workload + "]}");
    return ccsim("run " + dir + "/s.json -o " + dir + "/out -q", dir);
  };
  CommandResult r = run(R"({"kind": "validate"})");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "ccsim: error: " + dir + "/s.json: /workloads/0: missing 'log' (the measured nccl-tests log, relative to "
                   "the scenario file)\n");
  r = run(R"({"kind": "validate", "log": "missing.txt"})");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("ccsim: error: " + dir + "/s.json: /workloads/0/log: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  r = run(R"({"kind": "validate", "log": ")" + kLog + R"(", "sizes": {"min": 8, "max": 16}})");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "ccsim: error: " + dir + "/s.json: /workloads/0/sizes: a validate workload takes 'sizes' from its log\n");
  r = run(R"({"collective": "all_reduce", "sizes": {"min": 8, "max": 16}, "log": "x.txt"})");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "ccsim: error: " + dir + "/s.json: /workloads/0/log: 'log' belongs to a validate workload\n");
  EXPECT_NE(::access((dir + "/out").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace ccsim
