// Hostile JSON (issue 13): nesting that overflowed the stack, duplicate keys the last of which won
// silently, numbers beyond a double that ended in exit 1, names that forged table rows, and error
// messages that echoed whole values. Each is one InputError naming the place.
#include <gtest/gtest.h>

#include "calibrate/calibration.h"
#include "calibrate/nccl_topo_xml.h"
#include "common/error.h"
#include "common/json_input.h"
#include "hardening_helpers.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

using hardening::ccsim;
using hardening::expect_input_error;
using hardening::write_temp;

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// The InputError's text, or "" when none is thrown.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(HardeningJson, NestingIsLimitedWithThePlace) {
  EXPECT_NO_THROW(parse_user_json(nested(kMaxJsonDepth), "f.json", false));
  EXPECT_EQ(error_of([] { parse_user_json("\n" + nested(kMaxJsonDepth + 1), "f.json", false); }),
            "f.json: line 2, column 257: JSON nested deeper than 256 levels");
  // Brackets inside strings and comments do not count.
  EXPECT_NO_THROW(parse_user_json("[\"" + std::string(1000, '[') + "\"] // " + std::string(1000, '{'), "f", true));
}

TEST(HardeningJson, DeepNestingThroughEveryPathIsOneLine) {
  const std::string deep = nested(70000);
  expect_input_error(ccsim("topo " + write_temp("deep.json", deep)), {"deep.json: line 1, column 257", "nested deeper"});
  expect_input_error(ccsim("topo --set nodes=" + std::string(300, '[')), {"--set", "nested deeper than 256"});
  expect_input_error(ccsim("all_reduce_perf --calibration " + write_temp("deepcal.json", deep)),
                     {"deepcal.json: line 1, column 257"});
}

TEST(HardeningJson, DuplicateKeysAreRefusedWithTheirPath) {
  EXPECT_EQ(error_of([] { parse_user_json(R"({"node": {"gpu": {"count": 8, "count": 4}}})", "t.json", true); }),
            "t.json: /node/gpu/count: duplicate key 'count'");
  EXPECT_EQ(error_of([] { parse_user_json(R"([{"a": 1}, {"b": 1, "b": 2}])", "t.json", false); }),
            "t.json: /1/b: duplicate key 'b'");
  // The same key in two different objects is fine.
  EXPECT_NO_THROW(parse_user_json(R"({"a": {"x": 1}, "b": {"x": 1}})", "t.json", false));
  const std::string path = write_temp("dup.json", R"({"format": "ccsim-topology/1", "nodes": 1, "nodes": 2})");
  expect_input_error(ccsim("topo " + path), {"dup.json: /nodes: duplicate key 'nodes'"});
}

TEST(HardeningJson, NumbersBeyondADoubleAreInputErrors) {
  EXPECT_EQ(error_of([] { parse_user_json("{\n  \"nodes\": 1e999}", "t.json", false); }),
            "t.json: line 2, column 12: number 1e999 is out of range (beyond a double's 1.8e308)");
  expect_input_error(ccsim("topo " + write_temp("big.json", R"({"nodes": 1e999})")), {"big.json: line 1", "1e999"});
  expect_input_error(ccsim("topo --set node.nic.Gbps=1e999"), {"--set node.nic.Gbps=1e999", "out of range"});
}

TEST(HardeningJson, NamesWithControlCharactersAreRefused) {
  // A newline in a name would print a forged data row into the nccl-tests table.
  expect_input_error(ccsim("all_reduce_perf --set \"$(printf 'name=x\\n 8 2 float sum -1 1.0 0.01 0.01 0')\""),
                     {"/name", "control characters", "x\\x0a 8 2"});
  nlohmann::json spec = load_topology_spec("dgx-h100");
  spec["node"]["gpu"]["model"] = std::string("H100\0evil", 9);
  EXPECT_NE(error_of([&] { build_topology(spec, "t"); }).find("t: /node/gpu/model: must not contain control characters"),
            std::string::npos);
}

// C1 controls (U+009B is a terminal's CSI), U+2028 / U+2029 and invalid UTF-8 got through; scenario
// and MoE scenario names and descriptions were not checked at all.
TEST(HardeningJson, NamesWithC1ControlsSeparatorsOrInvalidUtf8AreRefused) {
  expect_input_error(ccsim("all_reduce_perf --set 'name=\"x\\u009by\"'"),
                     {"/name: must not contain control characters, line separators or invalid UTF-8 (got \"x\\xc2\\x9by\")"});
  expect_input_error(ccsim("all_reduce_perf --set 'name=\"a\\u2028b\"'"), {"/name", "(got \"a\\xe2\\x80\\xa8b\")"});
  expect_input_error(ccsim("all_reduce_perf --set 'description=\"a\\u2029b\"'"), {"/description", "line separators"});
  expect_input_error(ccsim("all_reduce_perf --set \"$(printf 'name=x\\377\\376y')\""), {"/name", "(got \"x\\xff\\xfey\")"});
  expect_input_error(ccsim("all_reduce_perf --set \"$(printf 'node.gpu.model=H\\300\\257x')\""), {"/node/gpu/model", "invalid UTF-8"});
  // Valid UTF-8 is a name like any other.
  EXPECT_EQ(ccsim("all_reduce_perf -b 1M -e 1M --model closed-form --set 'name=\"Grüße-日本-H100\"'").code, 0);
  // Scenarios.
  const std::string sc = R"({"format": "ccsim-scenario/1", "cluster": {"topology": "dgx-h100"}, )"
                         R"("workloads": [{"collective": "all_reduce", "size": "1M"}], )";
  expect_input_error(ccsim("run " + write_temp("scn.json", sc + R"("name": "a\nb"})") + " -o " + hardening::temp_path("run_out")),
                     {"scn.json: /name: must not contain control characters", "(got \"a\\x0ab\")"});
  expect_input_error(ccsim("run " + write_temp("scd.json", sc + R"("description": "a\u0000b"})") + " -o " + hardening::temp_path("run_out")),
                     {"scd.json: /description: must not contain control characters"});
  expect_input_error(ccsim("run " + write_temp("scw.json", R"({"format": "ccsim-scenario/1", "cluster": {}, )"
                                                           R"("workloads": [{"name": "w\u001b[2J", "collective": "all_reduce", "size": "1M"}]})") +
                           " -o " + hardening::temp_path("run_out")),
                     {"scw.json: /workloads/0/name: must not contain control characters"});
  // MoE scenarios.
  expect_input_error(ccsim("moe " + write_temp("moen.json", R"({"format": "ccsim-moe-scenario/1", "runs": [{"name": "a\u2029b"}]})")),
                     {"moen.json: /runs/0/name: must not contain control characters"});
  expect_input_error(ccsim("moe " + write_temp("moed.json", R"({"format": "ccsim-moe-scenario/1", "description": "\u009b31m", )"
                                                            R"("runs": [{"name": "a"}]})")),
                     {"moed.json: /description: must not contain control characters"});
}

TEST(HardeningJson, ErrorsQuoteValuesCut) {
  nlohmann::json spec = load_topology_spec("dgx-h100");
  spec["node"]["gpu"]["count"] = std::string(60000, 'x');
  const std::string e = error_of([&] { build_topology(spec, "t"); });
  EXPECT_NE(e.find("... (60002 bytes)"), std::string::npos) << e.substr(0, 300);
  EXPECT_LT(e.size(), 300u);
}

TEST(HardeningJson, CalibrationNullAndWrongTypesNameThePlace) {
  const std::string base = R"({"format": "ccsim-calibration/1", "classes": {"nvlink": {"alpha_s": 1e-6, "launch_s": 5e-6, )"
                           R"("collective": "all_reduce", "ranks": 8, "nodes": 1, )";
  // null was read as 0 and blamed on the topology's /node/nvlink/GBps_per_link.
  expect_input_error(ccsim("all_reduce_perf --calibration " + write_temp("null.json", base + R"("beta_Bps": null}}})")),
                     {"null.json: /classes/nvlink/beta_Bps: must be a number (got null)"});
  expect_input_error(
      ccsim("all_reduce_perf --calibration " + write_temp("fit.json", base + R"("beta_Bps": 3e11, "fit": {"r2": "high"}}}})")),
      {"fit.json: /classes/nvlink/fit/r2: must be a number"});
  expect_input_error(
      ccsim("all_reduce_perf --calibration " + write_temp("fitp.json", base + R"("beta_Bps": 3e11, "fit": {"points": [1]}}}})")),
      {"fitp.json: /classes/nvlink/fit/points"});
  // fit.segments of the wrong shape were accepted with exit 0.
  for (const auto& [seg, place] : std::vector<std::pair<std::string, std::string>>{
           {R"([1, "x"])", "/classes/nvlink/fit/segments/0: must be an object (got 1)"},
           {R"("x")", "/classes/nvlink/fit/segments: must be an array of segment objects (got \"x\")"},
           {R"([{"from_bytes": "x"}])", "/classes/nvlink/fit/segments/0/from_bytes: must be a number (got \"x\")"}}) {
    expect_input_error(ccsim("all_reduce_perf --calibration " +
                             write_temp("seg.json", base + R"("beta_Bps": 3e11, "fit": {"segments": )" + seg + "}}}}")),
                       {"seg.json: " + place});
  }
  EXPECT_EQ(ccsim("all_reduce_perf -b 1M -e 1M --calibration " +
                  write_temp("segok.json", base + R"("beta_Bps": 3e11, "fit": {"segments": [{"from_bytes": 1, "beta_Bps": 3e11}]}}}})"))
                .code,
            0);
}

TEST(HardeningJson, XmlNestingIsLimited) {
  std::string xml = "<system version=\"1\">\n";
  for (int i = 0; i < 30000; ++i) xml += "<pci>";
  expect_input_error(ccsim("topo --from-nccl-xml " + write_temp("deep.xml", xml)),
                     {"deep.xml", "line 2", "nested deeper than 64 levels"});
}

}  // namespace
}  // namespace ccsim
