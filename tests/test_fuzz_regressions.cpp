// Every input a fuzz target once failed on (tests/data/fuzz-regressions/<target>/, docs/fuzzing.md)
// fed again to the parser that target calls, as the target calls it: each must now be refused with
// InputError or parsed, never crash or escape with another exception, and within seconds (two
// findings were 4 KB lines that std::regex took 21 s and 45 s over). The parse calls mirror
// fuzz/<target>_fuzz.cpp (the fuzz targets need clang's libFuzzer; this runs in the g++ build).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "calibrate/nccl_debug_log.h"
#include "calibrate/nccl_tests_log.h"
#include "calibrate/nccl_topo_xml.h"
#include "calibrate/nvidia_smi_topo.h"
#include "calibrate/perftest_log.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/json_input.h"
#include "scenarios/moe/trace.h"
#include "scenarios/run_results_file.h"
#include "scenarios/scenario.h"
#include "topologies/spec.h"
#include "topologies/topology.h"

namespace ccsim {
namespace {

namespace fs = std::filesystem;
using Parse = std::function<void(const std::string& text)>;

const std::map<std::string, Parse>& parsers() {
  static const std::map<std::string, Parse> table = {
      {"nccl_tests_log", [](const std::string& t) { std::istringstream in(t); parse_nccl_tests_log(in, "fuzz.log"); }},
      {"perftest_log",
       [](const std::string& t) {
         std::istringstream in(t);
         std::vector<std::string> notes;
         select_perftest_runs(parse_perftest_log(in, "fuzz.txt"), &notes);
       }},
      {"nvidia_smi_topo",
       [](const std::string& t) {
         std::istringstream in(t);
         node_spec_from_nvidia_smi(parse_nvidia_smi_topo(in, "fuzz.txt"), "fuzz.txt");
       }},
      {"nccl_topo_xml",
       [](const std::string& t) {
         std::istringstream in(t);
         node_spec_from_nccl_xml(parse_nccl_topo_xml(in, "fuzz.xml"), "fuzz.xml");
       }},
      {"nccl_debug_log", [](const std::string& t) { std::istringstream in(t); parse_nccl_debug_log(in, "fuzz.log"); }},
      {"topology_json",
       [](const std::string& t) { build_topology(parse_user_json(t, "fuzz.json", /*allow_comments=*/true), "fuzz.json"); }},
      {"calibration_json",
       [](const std::string& t) {
         calibration_from_json(parse_user_json(t, "fuzz.json", /*allow_comments=*/false), "fuzz.json");
       }},
      {"scenario_json",
       [](const std::string& t) {
         const auto doc = parse_user_json<nlohmann::ordered_json>(t, "fuzz.json", /*allow_comments=*/true);
         const Scenario s = parse_scenario(doc, "fuzz.json", std::string(CCSIM_SOURCE_DIR) + "/scenarios/");
         for (const auto& v : s.variants) variant_spec(s, v);
       }},
      {"moe_trace",
       [](const std::string& t) {
         moe::MoeConfig c;  // fuzz/moe_trace_fuzz.cpp's: the sample trace's EP 4, 16 experts, top-4
         c.ep = 4;
         c.gpus_per_node = 4;
         c.experts = 16;
         c.top_k = 4;
         moe::read_trace_text("fuzz.csv", t, c);
       }},
      {"run_results", [](const std::string& t) { parse_run_results_json(t, "shard/results.json"); }},
  };
  return table;
}

const fs::path kRegressions = fs::path(CCSIM_SOURCE_DIR) / "tests/data/fuzz-regressions";

TEST(FuzzRegressions, EveryDirectoryIsATarget) {
  if (!fs::exists(kRegressions)) GTEST_SKIP() << "no regression inputs yet";
  for (const auto& dir : fs::directory_iterator(kRegressions))
    EXPECT_TRUE(parsers().count(dir.path().filename().string()))
        << dir.path() << " names no fuzz target (fuzz/<target>_fuzz.cpp)";
}

TEST(FuzzRegressions, EveryInputIsRefusedOrParsed) {
  int inputs = 0;
  for (const auto& [target, parse] : parsers()) {
    const fs::path dir = kRegressions / target;
    if (!fs::exists(dir)) continue;
    for (const auto& file : fs::directory_iterator(dir)) {
      ++inputs;
      const std::string text = read_input_file(file.path().string(), "fuzz regression input");
      const auto start = std::chrono::steady_clock::now();
      try {
        parse(text);
      } catch (const InputError&) {
        // refused with one line: the contract
      } catch (const std::exception& e) {
        ADD_FAILURE() << file.path() << ": exception other than InputError: " << e.what();
      }
      // The fuzzers' limit is 1 s; 10 leaves room for a sanitizer build on a loaded machine.
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      EXPECT_LT(took.count(), 10.0) << file.path() << ": parsing took " << took.count() << " s";
    }
  }
  if (inputs == 0) GTEST_SKIP() << "no regression inputs yet";
}

}  // namespace
}  // namespace ccsim
