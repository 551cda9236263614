#include "scenarios/scenario.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/input_file.h"
#include "common/json_input.h"
#include "common/text.h"
#include "common/units.h"
#include "calibrate/nccl_tests_log.h"
#include "scenarios/validate_log.h"
#include "topologies/nccl_env.h"
#include "topologies/spec.h"

namespace ccsim {

namespace {

using ojson = nlohmann::ordered_json;

// A JSON value with its path, so that every check names the place: "file: /workloads/2/collective".
class Node {
 public:
  Node(const ojson& value, std::string path, const std::string& file) : v_(value), path_(std::move(path)), file_(file) {}
  const ojson& value() const { return v_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& what) const { throw InputError(file_ + ": " + (path_.empty() ? "/" : path_), what); }

  void expect_object(const std::vector<std::string>& keys) const {
    if (!v_.is_object()) fail("expected an object");
    for (const auto& [k, unused] : v_.items()) {
      bool known = false;
      for (const auto& key : keys) known = known || key == k;
      if (!known) {
        std::string list;
        for (const auto& key : keys) list += (list.empty() ? "" : ", ") + key;
        child_path(k).fail("unknown key '" + k + "' (valid keys: " + list + ")");
      }
    }
  }
  bool has(const std::string& key) const { return v_.contains(key) && !v_.at(key).is_null(); }
  Node at(const std::string& key) const { return Node(v_.at(key), path_ + "/" + key, file_); }
  Node at(std::size_t i) const { return Node(v_.at(i), path_ + "/" + std::to_string(i), file_); }
  Node child_path(const std::string& key) const { return Node(v_, path_ + "/" + key, file_); }

  std::string string() const {
    if (!v_.is_string()) fail("expected a string");
    return v_.get<std::string>();
  }
  std::string string_or(const std::string& key, const std::string& fallback) const {
    return has(key) ? at(key).string() : fallback;
  }
  // A name or description ccsim prints into tables and reports: no control character, line
  // separator or invalid UTF-8 (common/text.h, find_control_char).
  std::string text() const {
    const std::string s = string();
    if (find_control_char(s) != std::string::npos)
      fail("must not contain control characters, line separators or invalid UTF-8 (got \"" + cut_for_message(s) + "\")");
    return s;
  }
  std::string text_or(const std::string& key, const std::string& fallback) const {
    return has(key) ? at(key).text() : fallback;
  }
  double number() const {
    if (!v_.is_number()) fail("expected a number");
    return v_.get<double>();
  }
  int integer() const {
    if (!v_.is_number_integer()) fail("expected an integer");
    return v_.get<int>();
  }
  // A size: a number of bytes, or nccl-tests text ("64K", "8G").
  std::uint64_t size() const {
    if (v_.is_number_unsigned()) return v_.get<std::uint64_t>();
    if (v_.is_string()) return parse_size_bytes(v_.get<std::string>(), file_ + ": " + path_);
    fail("expected a size (bytes, or text such as \"64K\", \"8G\")");
  }
  std::size_t array_size() const {
    if (!v_.is_array()) fail("expected an array");
    return v_.size();
  }

 private:
  const ojson& v_;
  std::string path_;
  const std::string& file_;
};

// "key=value" for apply_override: the value as JSON text, which apply_override parses back.
std::string assignment(const std::string& key, const ojson& value) { return key + "=" + value.dump(); }

// A value as a variant name shows it: strings unquoted.
std::string value_label(const ojson& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// A relative path in the scenario is relative to the scenario file, as a user who keeps the
// scenario next to its logs expects; presets (no '/' and no '.') stay names.
std::string resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return base_dir + path;
}

// A validate workload: the log is read now, so that a missing, truncated or ambiguous log fails
// before anything runs, and the collective comes from the log (never from its file name).
void parse_validate_workload(const Node& w, const std::string& base_dir, ScenarioWorkload& out) {
  if (!w.has("log")) w.fail("missing 'log' (the measured nccl-tests log, relative to the scenario file)");
  out.log_file = std::filesystem::path(resolve(base_dir, w.at("log").string())).lexically_normal().string();
  if (w.has("nccl_debug")) out.nccl_debug_file = resolve(base_dir, w.at("nccl_debug").string());
  if (w.has("tolerance_pct")) {
    out.tolerance_pct = w.at("tolerance_pct").number();
    if (!(out.tolerance_pct > 0)) w.at("tolerance_pct").fail("must be a percentage above 0");
  }
  if (w.has("ranks")) {
    out.ranks = w.at("ranks").integer();
    if (out.ranks < 1) w.at("ranks").fail("must be >= 1");
  }
  for (const char* key : {"sizes", "size", "late_rank", "delay_us", "algo", "proto", "datatype"})
    if (w.has(key)) w.at(key).fail(std::string("a validate workload takes '") + key + "' from its log");
  LogOverrides overrides;
  overrides.collective = out.collective;
  overrides.ranks = out.ranks;
  overrides.gpus_per_node = 1;  // only to turn ranks into nodes; the variant's topology decides later
  try {
    const std::vector<NcclTestsRun> runs = parse_nccl_tests_file(out.log_file);
    out.collective = infer_log_facts(runs.at(0), out.log_file, 0, overrides).collective;
  } catch (const InputError& e) {
    w.at("log").fail(e.what());
  }
}

ScenarioWorkload parse_workload(const Node& w, const std::string& base_dir) {
  w.expect_object({"name", "kind", "collective", "sizes", "size", "algo", "proto", "model", "datatype", "late_rank",
                   "delay_us", "log", "nccl_debug", "tolerance_pct", "ranks", "nccl_version"});
  ScenarioWorkload out;
  if (w.has("nccl_version")) {
    try {
      out.nccl_version = parse_nccl_version(w.at("nccl_version").string(), "nccl_version");
    } catch (const InputError& e) {
      w.at("nccl_version").fail(e.detail());
    }
    out.nccl_version_given = true;
  }
  out.kind = w.string_or("kind", "sweep");
  if (out.kind != "sweep" && out.kind != "straggler" && out.kind != "validate")
    w.at("kind").fail("unknown kind '" + cut_for_message(out.kind) + "' (expected sweep, straggler or validate)");
  if (out.kind != "validate")
    for (const char* key : {"log", "nccl_debug", "tolerance_pct", "ranks"})
      if (w.has(key)) w.at(key).fail(std::string("'") + key + "' belongs to a validate workload");
  if (out.kind == "validate") {
    out.collective = w.string_or("collective", "");
  } else {
    out.collective = w.has("collective") ? w.at("collective").string() : (w.fail("missing 'collective'"), "");
  }
  if (out.kind == "validate") {
    if (!out.collective.empty() && nccl_tests_collective_from_name(out.collective) != out.collective)
      w.at("collective").fail("unknown collective '" + cut_for_message(out.collective) + "'");
    parse_validate_workload(w, base_dir, out);
    out.model = w.string_or("model", "engine");
    if (out.model != "engine" && out.model != "closed-form")
      w.at("model").fail("unknown model '" + out.model + "' (expected engine or closed-form)");
    const std::string file = out.log_file.substr(out.log_file.find_last_of('/') + 1);
    out.name = w.text_or("name", "validate " + file);
    return out;
  }
  if (nccl_tests_collective_from_name(out.collective) != out.collective)
    w.at("collective").fail("unknown collective '" + cut_for_message(out.collective) +
                            "' (expected all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv)");
  out.name = w.text_or("name", out.collective + (out.kind == "straggler" ? "-straggler" : ""));
  out.algo = w.string_or("algo", "");
  out.proto = w.string_or("proto", "");
  out.model = w.string_or("model", "engine");
  if (out.model != "engine" && out.model != "closed-form")
    w.at("model").fail("unknown model '" + out.model + "' (expected engine or closed-form)");
  out.datatype = w.string_or("datatype", "float");
  if (out.kind == "sweep") {
    if (!w.has("sizes")) w.fail("missing 'sizes' ({\"min\": \"1M\", \"max\": \"8G\", \"factor\": 2})");
    const Node s = w.at("sizes");
    s.expect_object({"min", "max", "factor"});
    if (!s.has("min") || !s.has("max")) s.fail("needs 'min' and 'max'");
    out.min_bytes = s.at("min").size();
    out.max_bytes = s.at("max").size();
    out.step_factor = s.has("factor") ? s.at("factor").number() : 2.0;
    if (!(out.step_factor > 1)) s.at("factor").fail("must be > 1");
    if (out.min_bytes == 0) s.at("min").fail("must be > 0 bytes");
    if (out.min_bytes > out.max_bytes) s.at("min").fail("is greater than 'max'");
  } else {
    if (!w.has("size")) w.fail("missing 'size' (the straggler's collective size)");
    out.min_bytes = out.max_bytes = w.at("size").size();
    if (out.min_bytes == 0) w.at("size").fail("must be > 0 bytes");
    if (!w.has("late_rank")) w.fail("missing 'late_rank'");
    out.late_rank = w.at("late_rank").integer();
    if (out.late_rank < 0) w.at("late_rank").fail("must be >= 0");
    if (!w.has("delay_us")) w.fail("missing 'delay_us'");
    out.delay_us = w.at("delay_us").number();
    if (!(out.delay_us > 0)) w.at("delay_us").fail("must be > 0");
    if (out.model != "engine") w.at("model").fail("a straggler needs the engine (per-rank times)");
    if (out.collective == "alltoall" || out.collective == "sendrecv")
      w.at("collective").fail("a straggler experiment runs a ring or tree collective, not " + out.collective);
  }
  return out;
}

// A list of "NCCL_X=V" strings (cluster.env, a named variant's env), each checked against `spec`
// (the settings applied in order to a copy) so that a bad one names its place in the file.
std::vector<std::string> env_list(const Node& list, const std::string& file, nlohmann::json spec,
                                  const std::string& source) {
  if (!list.value().is_array()) list.fail("expected a list of NCCL settings (\"NCCL_P2P_DISABLE=1\")");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.array_size(); ++i) {
    const Node item = list.at(i);
    const std::string setting = item.text();
    apply_nccl_env(spec, setting, file + ": " + item.path(), source);
    out.push_back(setting);
  }
  return out;
}

}  // namespace

nlohmann::json variant_spec(const Scenario& scenario, const ScenarioVariant& variant) {
  nlohmann::json spec = scenario.base_spec;
  const std::string where = scenario.file + " (variant " + variant.name + ")";
  for (const auto& o : variant.overrides) apply_override(spec, o, where);
  for (const auto& e : variant.env) apply_nccl_env(spec, e, where + ": " + cut_for_message(e), scenario.topology_source);
  return spec;
}

Scenario parse_scenario(const ojson& doc, const std::string& file, const std::string& base_dir) {
  Scenario sc;
  sc.file = file;
  const Node root(doc, "", file);
  root.expect_object({"format", "name", "description", "cluster", "workloads", "variants", "report"});
  if (!root.has("format")) root.fail("missing 'format' (expected \"" + std::string(kScenarioFormat) + "\")");
  if (root.at("format").string() != kScenarioFormat)
    root.at("format").fail("unknown format '" + cut_for_message(root.at("format").string()) + "' (expected " + kScenarioFormat + ")");
  sc.name = root.text_or("name", "scenario");
  sc.description = root.text_or("description", "");

  // ---- base cluster ----
  if (!root.has("cluster")) root.fail("missing 'cluster'");
  const Node cluster = root.at("cluster");
  cluster.expect_object({"topology", "nodes", "set", "env", "calibration"});
  const std::string topology = cluster.string_or("topology", "dgx-h100");
  const bool is_preset = topology.find('/') == std::string::npos && topology.find('.') == std::string::npos;
  sc.topology_source = is_preset ? topology : resolve(base_dir, topology);
  try {
    sc.base_spec = load_topology_spec(sc.topology_source);
  } catch (const InputError& e) {
    cluster.at("topology").fail(e.what());
  }
  if (cluster.has("nodes")) {
    const int nodes = cluster.at("nodes").integer();
    if (nodes < 1) cluster.at("nodes").fail("must be >= 1");
    set_node_count(sc.base_spec, nodes);
    sc.nodes_given = true;
  }
  if (cluster.has("set")) {
    const Node set = cluster.at("set");
    if (!set.value().is_object()) set.fail("expected an object of --set keys and values");
    for (const auto& [key, value] : set.value().items())
      apply_override(sc.base_spec, assignment(key, value), file + ": " + set.path() + "/" + key);
  }
  // NCCL settings of every variant (--env syntax): checked here, applied by variant_spec after the
  // variant's own --set keys.
  std::vector<std::string> cluster_env;
  if (cluster.has("env")) cluster_env = env_list(cluster.at("env"), file, sc.base_spec, sc.topology_source);
  if (cluster.has("calibration")) {
    sc.calibration_file = resolve(base_dir, cluster.at("calibration").string());
    std::ifstream probe(sc.calibration_file);
    if (!probe) cluster.at("calibration").fail("cannot open calibration file '" + sc.calibration_file + "'");
    // Read now: a bad file is refused before any variant runs, and only a ring calibration limits the
    // collectives (perftest's NIC figures describe the network for all of them).
    sc.calibration = load_calibration(sc.calibration_file);
  }

  // ---- workloads ----
  if (!root.has("workloads")) root.fail("missing 'workloads'");
  const Node workloads = root.at("workloads");
  if (workloads.array_size() == 0) workloads.fail("needs at least one workload");
  std::set<std::string> names;
  for (std::size_t i = 0; i < workloads.array_size(); ++i) {
    ScenarioWorkload w = parse_workload(workloads.at(i), base_dir);
    if (!names.insert(w.name).second) workloads.at(i).fail("duplicate workload name '" + w.name + "'");
    if (sc.calibration && calibrates_ring(*sc.calibration) && w.collective != "all_reduce" && w.collective != "all_gather" &&
        w.collective != "reduce_scatter")
      (workloads.at(i).has("collective") ? workloads.at(i).at("collective") : workloads.at(i))
          .fail("a calibration describes ring all_reduce / all_gather / reduce_scatter, not " + w.collective);
    sc.workloads.push_back(std::move(w));
  }

  // ---- variants: named x matrix ----
  std::vector<ScenarioVariant> named;
  std::vector<std::pair<std::string, std::vector<ojson>>> axes;
  if (root.has("variants")) {
    const Node v = root.at("variants");
    v.expect_object({"named", "matrix"});
    if (v.has("named")) {
      const Node list = v.at("named");
      std::set<std::string> seen;
      for (std::size_t i = 0; i < list.array_size(); ++i) {
        const Node item = list.at(i);
        item.expect_object({"name", "set", "env"});
        ScenarioVariant nv;
        nv.env = cluster_env;
        if (!item.has("name")) item.fail("missing 'name'");
        nv.name = item.at("name").text();
        if (nv.name.empty()) item.at("name").fail("must not be empty");
        if (!seen.insert(nv.name).second) item.at("name").fail("duplicate variant name '" + nv.name + "'");
        if (item.has("set")) {
          const Node set = item.at("set");
          if (!set.value().is_object()) set.fail("expected an object of --set keys and values");
          for (const auto& [key, value] : set.value().items()) {
            nlohmann::json probe = sc.base_spec;
            const std::string a = assignment(key, value);
            apply_override(probe, a, file + ": " + set.path() + "/" + key);
            nv.overrides.push_back(a);
          }
        }
        if (item.has("env")) {
          nlohmann::json probe = sc.base_spec;
          for (const auto& o : nv.overrides) apply_override(probe, o, file);
          for (const auto& e : cluster_env) apply_nccl_env(probe, e, file, sc.topology_source);
          for (const auto& e : env_list(item.at("env"), file, probe, sc.topology_source)) nv.env.push_back(e);
        }
        named.push_back(std::move(nv));
      }
    }
    if (v.has("matrix")) {
      const Node m = v.at("matrix");
      if (!m.value().is_object()) m.fail("expected an object: --set key -> list of values");
      for (const auto& [key, values] : m.value().items()) {
        const Node axis = m.at(key);
        if (axis.array_size() == 0) axis.fail("needs at least one value");
        std::vector<ojson> list;
        for (std::size_t i = 0; i < axis.array_size(); ++i) {
          nlohmann::json probe = sc.base_spec;
          apply_override(probe, assignment(key, axis.value().at(i)), file + ": " + axis.path() + "/" + std::to_string(i));
          list.push_back(axis.value().at(i));
        }
        axes.emplace_back(key, std::move(list));
      }
    }
  }
  if (named.empty()) named.push_back({"base", {}, cluster_env});
  // Every combination of the matrix values, the last axis varying fastest (like nested loops in the
  // order the file lists the axes).
  std::size_t combinations = 1;
  for (const auto& [key, values] : axes) {
    combinations *= values.size();  // stays far below overflow: checked at every axis
    if (combinations * named.size() > kMaxScenarioVariants)
      root.at("variants").fail("named x matrix gives more than " + std::to_string(kMaxScenarioVariants) +
                               " variants (at axis '" + cut_for_message(key) + "': " + std::to_string(named.size()) +
                               " named x " + std::to_string(combinations) + " combinations so far); split the scenario");
  }
  for (const auto& nv : named) {
    for (std::size_t c = 0; c < combinations; ++c) {
      ScenarioVariant v = nv;
      std::string label;
      std::size_t rest = c;
      std::vector<std::size_t> pick(axes.size());
      for (std::size_t a = axes.size(); a-- > 0;) {
        pick[a] = rest % axes[a].second.size();
        rest /= axes[a].second.size();
      }
      for (std::size_t a = 0; a < axes.size(); ++a) {
        const ojson& value = axes[a].second[pick[a]];
        v.overrides.push_back(assignment(axes[a].first, value));
        label += (label.empty() ? "" : " ") + axes[a].first + "=" + value_label(value);
      }
      if (!axes.empty()) v.name = named.size() == 1 && nv.name == "base" ? label : nv.name + " " + label;
      sc.variants.push_back(std::move(v));
    }
  }

  // Every variant's topology is built now: a combination the format rejects (NVLS without an
  // NVSwitch, SHARP on a single node) fails before anything runs.
  for (const auto& v : sc.variants) {
    const Topology topo = build_topology(variant_spec(sc, v), file + " (variant " + v.name + ")");
    for (std::size_t i = 0; i < sc.workloads.size(); ++i)
      if (sc.workloads[i].kind == "straggler" && sc.workloads[i].late_rank >= topo.num_gpus())
        workloads.at(i).at("late_rank").fail("rank " + std::to_string(sc.workloads[i].late_rank) + " is not a rank of variant '" +
                                             v.name + "' (" + std::to_string(topo.num_gpus()) + " ranks)");
  }

  // ---- report ----
  if (root.has("report")) {
    const Node r = root.at("report");
    r.expect_object({"rank_at"});
    if (r.has("rank_at")) {
      const Node list = r.at("rank_at");
      for (std::size_t i = 0; i < list.array_size(); ++i) sc.rank_at_bytes.push_back(list.at(i).size());
    }
  }
  return sc;
}

Scenario load_scenario(const std::string& path) {
  const ojson doc = parse_user_json<ojson>(read_input_file(path, "scenario file"), path, /*allow_comments=*/true);
  return parse_scenario(doc, path, directory_of(path));
}

}  // namespace ccsim
