#include "calibrate/nccl_tests_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/error.h"
#include "common/json_input.h"
#include "common/text.h"

namespace ccsim {

namespace {

using nlohmann::json;

class JsonRunReader {
 public:
  explicit JsonRunReader(std::string file) : file_(std::move(file)) {}

  std::vector<NcclTestsRun> read(const json& doc) {
    if (!doc.is_object()) fail("", "an nccl-tests JSON result file is one object (with \"config\" and \"results\")");
    NcclTestsRun run;
    if (doc.contains("nccl_version")) {
      const long code = integer(doc, "nccl_version", "/nccl_version");
      if (code > 0) run.nccl_version = nccl_version_from_code(code);
    }
    read_args(doc, run);
    read_env(doc, run);
    if (!doc.contains("config")) fail("", "no \"config\" object: not an nccl-tests JSON result file (nccl-tests -J)");
    read_config(doc["config"], run);
    if (!doc.contains("results"))
      fail("", "no \"results\" list: the run ended before its first size (nccl-tests writes it with the table)");
    const json& results = doc["results"];
    if (!results.is_array()) fail("/results", "is not a list");
    if (results.empty()) fail("/results", "is empty: the run measured no size");
    for (std::size_t i = 0; i < results.size(); ++i) run.rows.push_back(row(results[i], "/results/" + std::to_string(i)));
    run.ranks = static_cast<int>(run.devices.size());
    if (doc.contains("average_bus_bandwidth") && doc["average_bus_bandwidth"].is_object()) {
      const json& avg = doc["average_bus_bandwidth"];
      if (avg.contains("bandwidth") && avg["bandwidth"].is_number()) {
        run.has_avg_busbw = true;
        run.avg_busbw_GBps = avg["bandwidth"].get<double>();
      }
    }
    return split_runs_by_type_and_op(std::move(run));  // -d all / -o all, as the text parser splits them
  }

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& what) const {
    throw InputError(pointer.empty() ? file_ : file_ + ": " + pointer, what);
  }

  long integer(const json& obj, const char* key, const std::string& pointer) const {
    if (!obj.contains(key)) fail(pointer, "is missing");
    const json& v = obj[key];
    if (!v.is_number_integer()) fail(pointer, "is not an integer: " + cut_for_message(v.dump()));
    return v.get<long>();
  }

  // nccl-tests writes its booleans as the strings "true" / "false" (util.cu jsonBool).
  static int flag(const json& obj, const char* key) {
    if (!obj.contains(key)) return -1;
    const json& v = obj[key];
    if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
    if (v.is_number_integer()) return v.get<long>() != 0 ? 1 : 0;
    if (v.is_string()) return v.get<std::string>() == "true" ? 1 : 0;
    return -1;
  }

  // args[0] is the binary ("./build/all_reduce_perf"): the collective, as the text's test header names it.
  void read_args(const json& doc, NcclTestsRun& run) const {
    if (!doc.contains("args") || !doc["args"].is_array() || doc["args"].empty() || !doc["args"][0].is_string()) return;
    const std::string c = nccl_tests_collective_from_name(doc["args"][0].get<std::string>());
    if (c.empty()) return;
    run.collective = c;
    run.named_collectives.push_back(c);
    // -z / --blocking: the config's "blocking_collectives" below says it too; the arguments are read
    // first so that the config, when present, has the last word.
    std::vector<std::string> args;
    for (const json& a : doc["args"])
      if (a.is_string()) args.push_back(a.get<std::string>());
    if (const int b = nccl_tests_blocking_flag(args); b >= 0) run.blocking = b;
    if (const int r = nccl_tests_local_register_flag(args); r >= 0) run.local_register = r;
  }

  static void read_env(const json& doc, NcclTestsRun& run) {
    if (!doc.contains("env") || !doc["env"].is_array()) return;
    for (const json& e : doc["env"]) {
      if (!e.is_string()) continue;
      const std::string s = e.get<std::string>();
      if (s.rfind("NCCL_", 0) == 0 && s.find('=') != std::string::npos) run.nccl_env.push_back(s);
    }
    std::sort(run.nccl_env.begin(), run.nccl_env.end());  // the environment's order is the shell's
  }

  void read_config(const json& config, NcclTestsRun& run) {
    if (!config.is_object()) fail("/config", "is not an object");
    auto integer_or = [&](const char* key, long fallback) {
      return config.contains(key) ? integer(config, key, std::string("/config/") + key) : fallback;
    };
    run.nthread = static_cast<int>(integer_or("nthreads", 0));
    run.ngpus = static_cast<int>(integer_or("ngpus", 0));
    run.min_bytes = static_cast<std::uint64_t>(std::max(0L, integer_or("minimum_bytes", 0)));
    run.max_bytes = static_cast<std::uint64_t>(std::max(0L, integer_or("maximum_bytes", 0)));
    if (config.contains("step_factor")) run.step = std::to_string(integer_or("step_factor", 0)) + "(factor)";
    else if (config.contains("step_bytes")) run.step = std::to_string(integer_or("step_bytes", 0)) + "(bytes)";
    run.warmup_iters = static_cast<int>(integer_or("warmup_iters", 0));
    run.iters = static_cast<int>(integer_or("iterations", 0));
    run.agg_iters = static_cast<int>(integer_or("aggregated_iterations", -1));
    run.validation = static_cast<int>(integer_or("validation", -1));
    run.graph = static_cast<int>(integer_or("graph", -1));
    if (const int b = flag(config, "blocking_collectives"); b >= 0) run.blocking = b;
    if (!config.contains("devices")) return;
    const json& devices = config["devices"];
    if (!devices.is_array()) fail("/config/devices", "is not a list");
    for (std::size_t i = 0; i < devices.size(); ++i) run.devices.push_back(device_line(devices[i], "/config/devices/" + std::to_string(i)));
  }

  // The device as the text output's "#  Rank  0 Group  0 Pid 123 on host device  0 [0000:1b:00] NAME"
  // line prints it (util.cu), so that one reader of device lines serves both.
  std::string device_line(const json& d, const std::string& pointer) const {
    if (!d.is_object()) fail(pointer, "is not an object");
    auto text = [&](const char* key) {
      if (!d.contains(key) || !d[key].is_string()) fail(pointer + "/" + key, "is missing or not a string");
      return d[key].get<std::string>();
    };
    const long rank = integer(d, "rank", pointer + "/rank");
    const long group = d.contains("group") ? integer(d, "group", pointer + "/group") : 0;
    const long pid = d.contains("pid") ? integer(d, "pid", pointer + "/pid") : 0;
    const long device = integer(d, "device", pointer + "/device");
    const std::string host = text("hostname");
    const std::string bus = d.contains("device_hex") && d["device_hex"].is_string() ? d["device_hex"].get<std::string>() : "";
    const std::string name = d.contains("device_info") && d["device_info"].is_string() ? d["device_info"].get<std::string>() : "";
    if (find_control_char(host + bus + name) != std::string::npos)
      fail(pointer, "a device field holds a control character or invalid UTF-8");
    return strprintf(" Rank %2ld Group %2ld Pid %6ld on %10s device %2ld [%s] %s", rank, group, pid, host.c_str(), device,
                     bus.c_str(), name.c_str());
  }

  NcclTestsRow row(const json& r, const std::string& pointer) const {
    if (!r.is_object()) fail(pointer, "is not an object");
    NcclTestsRow out;
    auto u64 = [&](const char* key) {
      const json& v = r.contains(key) ? r[key] : json();
      if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<long long>() >= 0))
        fail(pointer + "/" + key, "is missing or not a whole number of " + std::string(key == std::string("size") ? "bytes" : "elements") +
                                      ": " + cut_for_message(v.dump()));
      return v.get<std::uint64_t>();
    };
    out.size_bytes = u64("size");
    out.count = u64("count");
    if (r.contains("type") && r["type"].is_string()) out.type = r["type"].get<std::string>();
    if (r.contains("redop") && r["redop"].is_string()) out.redop = r["redop"].get<std::string>();
    // "root" is the text column as a string ("    -1", util.cu writeBenchmarkLinePreamble).
    if (r.contains("root")) {
      const json& root = r["root"];
      int v = -1;
      if (root.is_number_integer()) v = root.get<int>();
      else if (!root.is_string() || !parse_int(trim(root.get<std::string>()), v))
        fail(pointer + "/root", "is not a rank: " + cut_for_message(root.dump()));
      out.root = v;
    }
    const bool oop = half(r, "out_of_place", pointer, out.size_bytes, out.oop_time_us, out.oop_algbw_GBps, out.oop_busbw_GBps, out.oop_wrong);
    const bool ip = half(r, "in_place", pointer, out.size_bytes, out.ip_time_us, out.ip_algbw_GBps, out.ip_busbw_GBps, out.ip_wrong);
    if (!oop && !ip) fail(pointer, "has neither an \"out_of_place\" nor an \"in_place\" measurement");
    return out;
  }

  // One of a size's two measurements; false when the file has none ("out_of_place": null for a replay).
  bool half(const json& r, const char* key, const std::string& row_pointer, std::uint64_t size_bytes, double& time_us,
            double& algbw, double& busbw, long& wrong) const {
    wrong = -1;
    if (!r.contains(key) || r[key].is_null()) return false;
    const std::string pointer = row_pointer + "/" + key;
    const json& h = r[key];
    if (!h.is_object()) fail(pointer, "is not an object");
    // "time", or "cpu_time" when the run reported the CPU's time per iteration (-C 1).
    if (!h.contains("time") && !h.contains("cpu_time")) fail(pointer, "has no \"time\" (or \"cpu_time\", -C 1)");
    const char* time_key = h.contains("time") ? "time" : "cpu_time";
    time_us = number(h, time_key, pointer);
    if (!(time_us >= 0) || std::isinf(time_us))
      fail(pointer + "/" + time_key, "is not a measurement: " + cut_for_message(h[time_key].dump()) + " (negative, nan or inf)");
    if (time_us == 0 && size_bytes > 0)
      fail(pointer + "/" + time_key, "is 0 for " + std::to_string(size_bytes) + " bytes: not a measurement");
    algbw = number(h, "alg_bw", pointer);
    busbw = number(h, "bus_bw", pointer);
    if (h.contains("nwrong") && !h["nwrong"].is_null()) {
      const double w = number(h, "nwrong", pointer);
      if (!(w >= 0) || std::isinf(w)) fail(pointer + "/nwrong", "is not a count: " + cut_for_message(h["nwrong"].dump()));
      wrong = static_cast<long>(std::llround(w));
    }
    return true;
  }

  // A number; nccl-tests writes NaN as the string "nan" (util.cu jsonDouble).
  double number(const json& h, const char* key, const std::string& pointer) const {
    if (!h.contains(key)) fail(pointer + "/" + key, "is missing");
    const json& v = h[key];
    if (v.is_number()) return v.get<double>();
    if (v.is_string() && v.get<std::string>() == "nan") return std::nan("");
    fail(pointer + "/" + key, "is not a number: " + cut_for_message(v.dump()));
  }

  std::string file_;
};

}  // namespace

bool looks_like_nccl_tests_json(const std::string& text) {
  std::size_t i = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) ++i;
  return i < text.size() && text[i] == '{';
}

std::vector<NcclTestsRun> parse_nccl_tests_json(const std::string& text, const std::string& filename) {
  const std::size_t bom = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;
  const std::string body = text.substr(bom);
  json doc;
  try {
    doc = parse_user_json(body, filename, /*allow_comments=*/false);
  } catch (const InputError& e) {
    // nccl-tests closes the file's objects at exit: a run that was killed leaves it open.
    if (e.detail().find("unexpected end of input") != std::string::npos)
      throw InputError(e.where(), "the JSON ends before nccl-tests closed it (unexpected end of input): the run was cut short "
                                  "(killed, or still running when the file was copied)");
    throw;
  }
  return JsonRunReader(filename).read(doc);
}

}  // namespace ccsim
