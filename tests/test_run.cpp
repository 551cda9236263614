// `ccsim run`: scenario parsing and matrix expansion, bad input (one line, file and JSON path, exit
// 2, no output), a small scenario end to end checked against `ccsim predict`, and Ctrl-C keeping
// the finished variants in complete files.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <nlohmann/json.hpp>

#include "calibrate/calibration.h"
#include "common/error.h"
#include "scenarios/run_results.h"
#include "scenarios/scenario.h"
#include "tests/test_run_helpers.h"

namespace ccsim {
namespace {

using namespace run_testing;

nlohmann::ordered_json doc(const std::string& text) { return nlohmann::ordered_json::parse(text); }

const char* kMatrixScenario = R"({
  "format": "ccsim-scenario/1", "name": "m",
  "cluster": {"topology": "dgx-h100", "nodes": 2, "set": {"fabric.nodes_per_leaf": 1}},
  "workloads": [{"collective": "all_reduce", "sizes": {"min": "1M", "max": "4M"}}],
  "variants": {"named": [{"name": "ndr"}, {"name": "hdr", "set": {"node.nic.Gbps": 200}}],
               "matrix": {"fabric.oversubscription": [1, 2, 4], "node.nic.gpudirect_rdma": [true, false]}}
})";

TEST(RunScenario, NamedTimesMatrixExpandsToEveryCombinationInFileOrder) {
  const Scenario sc = parse_scenario(doc(kMatrixScenario), "m.json", "");
  ASSERT_EQ(sc.variants.size(), 2u * 3u * 2u);
  // The last axis varies fastest, named variants outermost.
  EXPECT_EQ(sc.variants[0].name, "ndr fabric.oversubscription=1 node.nic.gpudirect_rdma=true");
  EXPECT_EQ(sc.variants[1].name, "ndr fabric.oversubscription=1 node.nic.gpudirect_rdma=false");
  EXPECT_EQ(sc.variants[2].name, "ndr fabric.oversubscription=2 node.nic.gpudirect_rdma=true");
  EXPECT_EQ(sc.variants[6].name, "hdr fabric.oversubscription=1 node.nic.gpudirect_rdma=true");
  const std::vector<std::string> hdr = {"node.nic.Gbps=200", "fabric.oversubscription=1", "node.nic.gpudirect_rdma=true"};
  EXPECT_EQ(sc.variants[6].overrides, hdr);
  // The overrides reach the topology: base set, then the variant's.
  const nlohmann::json spec = variant_spec(sc, sc.variants[11]);
  EXPECT_EQ(spec["node"]["nic"]["Gbps"], 200);
  EXPECT_EQ(spec["fabric"]["oversubscription"], 4);
  EXPECT_EQ(spec["node"]["nic"]["gpudirect_rdma"], false);
  EXPECT_EQ(spec["fabric"]["nodes_per_leaf"], 1);
  EXPECT_EQ(sc.workloads[0].step_factor, 2);  // default factor
}

TEST(RunScenario, NoVariantsIsOneBaseVariant) {
  const Scenario sc = parse_scenario(doc(R"({"format": "ccsim-scenario/1", "cluster": {"nodes": 1},
      "workloads": [{"collective": "all_gather", "sizes": {"min": 1024, "max": "1M", "factor": 4}}]})"),
                                     "b.json", "");
  ASSERT_EQ(sc.variants.size(), 1u);
  EXPECT_EQ(sc.variants[0].name, "base");
  EXPECT_EQ(sc.workloads[0].min_bytes, 1024u);
  EXPECT_EQ(sc.workloads[0].max_bytes, 1u << 20);
}

std::string error_of(const std::string& text) {
  try {
    parse_scenario(doc(text), "bad.json", "");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RunScenario, BadInputNamesFileAndJsonPath) {
  EXPECT_EQ(error_of(R"({"format": "ccsim-scenario/1", "cluster": {}, "workloads": [{"collective": "all_reduce",
      "sizes": {"min": "1M", "max": "4M"}, "sizez": 1}]})"),
            "bad.json: /workloads/0/sizez: unknown key 'sizez' (valid keys: name, kind, collective, sizes, size, algo, proto, "
            "model, datatype, late_rank, delay_us, log, nccl_debug, tolerance_pct, ranks, nccl_version)");
  EXPECT_EQ(error_of(R"({"format": "ccsim-scenario/1", "cluster": {}, "workloads": [{"collective": "all_reduce",
      "sizes": {"min": "4M", "max": "1M"}}]})"),
            "bad.json: /workloads/0/sizes/min: is greater than 'max'");
  EXPECT_NE(error_of(R"({"format": "ccsim-scenario/1", "cluster": {}, "workloads": [{"collective": "all_reduce",
      "sizes": {"min": "1M", "max": "4M"}}], "variants": {"matrix": {"node.nic.Gbsp": [1]}}})")
                .find("bad.json: /variants/matrix/node.nic.Gbsp/0"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"format": "ccsim-scenario/1", "cluster": {"nodes": 2}, "workloads": [{"collective": "all_reduce",
      "sizes": {"min": "1M", "max": "4M"}}], "variants": {"matrix": {"node.nic.Gbps": [400, 0]}}})")
                .find("/node/nic/Gbps: must be > 0"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"format": "ccsim-scenario/1", "cluster": {"nodes": 1}, "workloads": [{"kind": "straggler",
      "collective": "all_reduce", "size": "1M", "late_rank": 8, "delay_us": 10}]})")
                .find("bad.json: /workloads/0/late_rank: rank 8 is not a rank of variant 'base' (8 ranks)"),
            std::string::npos);
}

TEST(RunScenario, BadFileIsOneLineExitTwoAndNoOutput) {
  const std::string dir = fresh_dir("bad");
  write_text(dir + "/bad.json", "{\"format\": \"ccsim-scenario/1\",\n \"workloads\": [\n}");
  CommandResult r = ccsim("run " + dir + "/bad.json -o " + dir + "/out", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.find(dir + "/bad.json: line 3, column 1"), std::string("ccsim: error: ").size()) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(::access((dir + "/out").c_str(), F_OK), 0);  // nothing created

  write_text(dir + "/bad2.json", R"({"format": "ccsim-scenario/1", "cluster": {"topology": "dgx-h100"},
      "workloads": [{"collective": "all_reduce", "sizes": {"min": "1M", "max": "4M"}, "model": "exact"}]})");
  r = ccsim("run " + dir + "/bad2.json -o " + dir + "/out", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "ccsim: error: " + dir + "/bad2.json: /workloads/0/model: unknown model 'exact' (expected engine or closed-form)\n");
  EXPECT_NE(::access((dir + "/out").c_str(), F_OK), 0);
}

TEST(RunScenario, SmallScenarioRowsEqualPredictForTheSameSettings) {
  const std::string dir = fresh_dir("e2e");
  write_text(dir + "/s.json", R"({"format": "ccsim-scenario/1", "name": "e2e",
      "cluster": {"topology": "dgx-h100", "nodes": 2},
      "workloads": [{"collective": "all_reduce", "sizes": {"min": "1M", "max": "16M", "factor": 4}},
                    {"name": "ag", "collective": "all_gather", "sizes": {"min": "64K", "max": "1M", "factor": 4}, "model": "closed-form"}],
      "variants": {"matrix": {"node.nic.Gbps": [200, 400]}}})");
  const CommandResult r = ccsim("run " + dir + "/s.json -o " + dir + "/out --jobs 2", dir);
  ASSERT_EQ(r.code, 0) << r.err;
  // One row per variant x workload x size: 2 x (3 + 3), in scenario order.
  const std::string csv = slurp(dir + "/out/results.csv");
  std::vector<std::vector<std::string>> rows;
  std::stringstream ss(csv);
  std::string line;
  std::getline(ss, line);
  EXPECT_EQ(line.substr(0, 60), "variant,workload,collective,size_bytes,time_us,algbw_GBps,bu");
  while (std::getline(ss, line)) rows.push_back(csv_fields(line));
  ASSERT_EQ(rows.size(), 12u);
  const nlohmann::json results = nlohmann::json::parse(slurp(dir + "/out/results.json"));
  EXPECT_EQ(results["complete"], true);
  EXPECT_EQ(results["rows"].size(), 12u);

  // Each variant's rows are what `ccsim predict` prints for the same settings (time_us, busbw).
  std::size_t k = 0;
  for (const std::string gbps : {"200", "400"}) {
    for (const auto& [args, model] : {std::pair<std::string, std::string>{"--collective all_reduce -b 1M -e 16M -f 4", "engine"},
                                      {"--collective all_gather -b 64K -e 1M -f 4", "closed-form"}}) {
      const CommandResult p = ccsim("predict " + args + " --nodes 2 --set node.nic.Gbps=" + gbps + " --model " + model +
                                        " --format csv",
                                    dir);
      ASSERT_EQ(p.code, 0) << p.err;
      std::stringstream ps(p.out);
      std::getline(ps, line);
      while (line[0] == '#') std::getline(ps, line);  // metadata, then the header
      while (std::getline(ps, line)) {
        const auto pf = csv_fields(line);
        ASSERT_LT(k, rows.size());
        EXPECT_EQ(rows[k][0], "node.nic.Gbps=" + gbps);
        EXPECT_EQ(rows[k][3], pf[0]);                               // size_bytes
        EXPECT_DOUBLE_EQ(std::stod(rows[k][4]), std::stod(pf[5]));  // time_us
        EXPECT_DOUBLE_EQ(std::stod(rows[k][6]), std::stod(pf[7]));  // busbw
        EXPECT_EQ(rows[k][10], model);
        ++k;
      }
    }
  }
  EXPECT_EQ(k, 12u);
  // Deterministic: a second run writes the same bytes.
  ASSERT_EQ(ccsim("run " + dir + "/s.json -o " + dir + "/out2 --jobs 1", dir).code, 0);
  EXPECT_EQ(slurp(dir + "/out2/results.csv"), csv);
  EXPECT_EQ(slurp(dir + "/out2/report.html"), slurp(dir + "/out/report.html"));
}

TEST(RunScenario, InterruptKeepsFinishedVariantsInCompleteFiles) {
  const std::string dir = fresh_dir("sigint");
  // 24 engine variants, one at a time: Ctrl-C lands after the first and long before the last.
  write_text(dir + "/s.json", R"({"format": "ccsim-scenario/1", "name": "slow",
      "cluster": {"topology": "dgx-h100", "nodes": 8, "set": {"fabric.nodes_per_leaf": 2}},
      "workloads": [{"collective": "all_reduce", "sizes": {"min": "64M", "max": "256M", "factor": 2}, "algo": "Ring"}],
      "variants": {"matrix": {"fabric.oversubscription": [1, 2, 4], "node.nic.Gbps": [200, 400, 100, 800],
                             "node.nic.gpudirect_rdma": [true, false]}}})");
  int err_pipe[2];
  ASSERT_EQ(::pipe(err_pipe), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(err_pipe[1], 2);
    ::close(err_pipe[0]);
    const int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    const std::string scenario = dir + "/s.json", out = dir + "/out";
    ::execl(CCSIM_BINARY, CCSIM_BINARY, "run", scenario.c_str(), "-o", out.c_str(), "--jobs", "1", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  // Progress lines (stderr is not a terminal): interrupt after the first finished variant.
  std::string err;
  char buf[512];
  while (err.find("1/24 variants done") == std::string::npos) {
    const ssize_t n = ::read(err_pipe[0], buf, sizeof buf);
    if (n <= 0) break;
    err.append(buf, static_cast<std::size_t>(n));
  }
  ASSERT_NE(err.find("1/24 variants done"), std::string::npos) << err;
  ::kill(pid, SIGINT);
  for (ssize_t n; (n = ::read(err_pipe[0], buf, sizeof buf)) > 0;) err.append(buf, static_cast<std::size_t>(n));
  ::close(err_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130) << err;
  EXPECT_NE(err.find("interrupted"), std::string::npos) << err;

  const nlohmann::json results = nlohmann::json::parse(slurp(dir + "/out/results.json"));  // complete JSON
  EXPECT_EQ(results["complete"], false);
  const std::size_t done = results["variants_done"].get<std::size_t>();
  EXPECT_GE(done, 1u);
  EXPECT_LT(done, 24u);
  EXPECT_EQ(results["rows"].size(), done * 3);
  EXPECT_EQ(results["variants"][0]["name"], "fabric.oversubscription=1 node.nic.Gbps=200 node.nic.gpudirect_rdma=true");
  const std::string csv = slurp(dir + "/out/results.csv");
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')), 1 + done * 3);
  EXPECT_NE(slurp(dir + "/out/report.html").find("</html>"), std::string::npos);
  // No temporary file left beside them.
  const CommandResult ls = shell("ls -A " + dir + "/out", dir);
  EXPECT_EQ(ls.out, "report.html\nresults.csv\nresults.json\n");
}

// A ring calibration (nccl-tests fit) limits a scenario to ring all_reduce / all_gather /
// reduce_scatter; perftest's NIC figures only are a topology change and allow every collective.
TEST(RunScenario, OnlyARingCalibrationLimitsTheCollectives) {
  const std::string dir = fresh_dir("calibrated");
  Calibration nic_only;
  nic_only.nic = NicCalibration{};
  nic_only.nic->beta_Bps = 11.5e9;
  nic_only.nic->latency_s = 1.3e-6;
  Calibration ring = nic_only;
  ClassCalibration net;
  net.alpha_s = 5e-6;
  net.beta_Bps = 40e9;
  net.launch_s = 8.4e-6;
  net.collective = "all_reduce";
  net.ranks = 16;
  net.nodes = 2;
  ring.classes["net"] = net;
  write_text(dir + "/nic.json", calibration_to_json(nic_only));
  write_text(dir + "/ring.json", calibration_to_json(ring));
  auto scenario = [](const std::string& cal) {
    return R"({"format": "ccsim-scenario/1", "cluster": {"nodes": 2, "calibration": ")" + cal +
           R"("}, "workloads": [{"collective": "alltoall", "sizes": {"min": "1M", "max": "1M"}}]})";
  };
  EXPECT_EQ(parse_scenario(doc(scenario("nic.json")), "s.json", dir + "/").workloads.at(0).collective, "alltoall");
  try {
    parse_scenario(doc(scenario("ring.json")), "s.json", dir + "/");
    ADD_FAILURE() << "a ring calibration accepted alltoall";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "s.json: /workloads/0/collective: a calibration describes ring all_reduce / all_gather / reduce_scatter, "
              "not alltoall");
  }
}

}  // namespace
}  // namespace ccsim
