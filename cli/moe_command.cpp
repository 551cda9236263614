// `ccsim moe`: one MoE layer's expert-parallel dispatch and combine under a routing skew, per transport
// (docs/moe.md). Flags describe one layer; a scenario file (scenarios/moe-*.json) lists several runs that
// share a base, each written with the same keys as the flags (so one set of rules and error messages).
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/topology_options.h"
#include "common/error.h"
#include "common/input_file.h"
#include "common/text.h"
#include "common/json_input.h"
#include "common/output_file.h"
#include "scenarios/moe/layer_report.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

std::vector<OptionSpec> moe_option_specs() {
  std::vector<OptionSpec> specs = topology_option_specs();
  for (const char* name : {"tokens", "hidden", "experts", "topk", "ep", "max-nodes", "routing", "placement", "eplb",
                           "seed", "dispatch-dtype", "combine-dtype", "expert-compute-us", "format", "matrix"})
    specs.push_back({"", name, true, false});
  specs.push_back({"", "transport", true, true});
  specs.push_back({"o", "output", true, false});
  specs.push_back({"", "pure-rdma", false, false});
  return specs;
}

std::vector<moe::Transport> transports_from(const ParsedArgs& args) {
  std::vector<moe::Transport> out;
  for (const std::string& value : args.all("transport")) {
    std::stringstream list(value);
    std::string item;
    while (std::getline(list, item, ',')) out.push_back(moe::parse_transport(item, args.spelled("transport")));
  }
  if (out.empty()) out.push_back(moe::Transport::DeepepNormal);
  return out;
}

// The layer a set of flags describes, and the topology it runs on (--ep sets the node count when --nodes
// is absent; EP is every GPU of the cluster).
struct Run {
  std::string name;
  Topology topo;
  moe::LayerRequest request;
};

Run run_from_args(const ParsedArgs& given) {
  ParsedArgs args = given;
  Run run;
  nlohmann::json spec;
  std::string source;
  {
    nlohmann::json probe = topology_spec_from_args(args.without("nodes").without("set"), "dgx-h100", &source);
    spec = probe;
  }
  const int gpn = spec["node"]["gpu"].value("count", 1);
  if (args.has("ep") && !args.has("nodes")) {
    const int ep = parse_int_arg(args, "ep", 0, 1);
    if (gpn < 1 || ep % gpn != 0)
      throw InputError(args.spelled("ep"), "EP " + std::to_string(ep) + " is not a multiple of the " +
                                               std::to_string(gpn) + " GPUs per node");
    set_node_count(spec, ep / gpn);
  }
  apply_topology_args(args, spec);
  run.topo = build_topology(spec, source);
  moe::MoeConfig& c = run.request.config;
  c.gpus_per_node = run.topo.gpus_per_node();
  c.ep = run.topo.num_gpus();
  if (args.has("ep") && parse_int_arg(args, "ep", 0, 1) != c.ep)
    throw InputError(args.spelled("ep"), "EP " + args.get("ep") + " differs from the cluster's " +
                                             std::to_string(c.ep) + " GPUs (--nodes x GPUs per node)");
  c.tokens_per_rank = parse_int_arg(args, "tokens", 4096, 0);
  c.hidden = parse_int_arg(args, "hidden", 7168, 1);
  c.experts = parse_int_arg(args, "experts", 256, 1);
  c.top_k = parse_int_arg(args, "topk", 8, 1);
  c.node_limit = parse_int_arg(args, "max-nodes", 0, 0);
  if (args.has("dispatch-dtype")) c.dispatch_dtype = moe::parse_wire_dtype(args.get("dispatch-dtype"), args.spelled("dispatch-dtype"));
  if (args.has("combine-dtype")) c.combine_dtype = moe::parse_wire_dtype(args.get("combine-dtype"), args.spelled("combine-dtype"));
  moe::validate(c);
  run.request.routing = moe::parse_routing_spec(args.get("routing", "uniform"), args.spelled("routing"));
  run.request.transports = transports_from(args);
  if (args.has("eplb") && args.has("placement"))
    throw InputError(args.spelled("eplb"), "give --eplb R or --placement, not both");
  if (args.has("eplb")) {
    // DeepSeek's EPLB: hierarchical (per node) for prefill, global for decode (the low-latency kernels).
    const bool decode = run.request.transports.size() == 1 && run.request.transports[0] == moe::Transport::DeepepLowLatency;
    const int r = parse_int_arg(args, "eplb", 0, 0);
    run.request.placement = moe::parse_placement_spec((decode ? "eplb-global:" : "eplb:") + std::to_string(r), args.spelled("eplb"));
  } else {
    run.request.placement = moe::parse_placement_spec(args.get("placement", "contiguous"), args.spelled("placement"));
  }
  const int seed = parse_int_arg(args, "seed", 1, 0);
  run.request.seed = static_cast<std::uint64_t>(seed);
  run.request.options.pure_rdma = args.has("pure-rdma");
  run.request.expert_compute_us = parse_double_arg(args, "expert-compute-us", 0.0);
  if (!(run.request.expert_compute_us >= 0 && run.request.expert_compute_us < 1e9))
    throw InputError(args.spelled("expert-compute-us"), "expected a time in microseconds >= 0");
  return run;
}

// A scenario value as a flag's text.
std::string flag_text(const nlohmann::json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) {
    std::ostringstream s;
    s << v.get<double>();
    return s.str();
  }
  throw InputError(where, "expected a string or a number");
}

// Appends a scenario object's keys as flags ("set" and "transport" may be lists; "pure-rdma" a bool).
void append_flags(const nlohmann::json& obj, const std::string& where, const std::vector<std::string>& skip,
                  std::vector<std::string>* out) {
  if (!obj.is_object()) throw InputError(where, "expected an object");
  for (const auto& [key, value] : obj.items()) {
    if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    const std::string here = where + "/" + key;
    if (key == "pure-rdma") {
      if (!value.is_boolean()) throw InputError(here, "expected true or false");
      if (value.get<bool>()) out->push_back("--pure-rdma");
      continue;
    }
    if (value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        out->push_back("--" + key);
        out->push_back(flag_text(value[i], here + "/" + std::to_string(i)));
      }
      continue;
    }
    out->push_back("--" + key);
    out->push_back(flag_text(value, here));
  }
}

std::vector<Run> runs_from_scenario(const std::string& path, const std::vector<std::string>& extra) {
  const nlohmann::json j = parse_user_json(read_input_file(path, "scenario file"), path, /*allow_comments=*/false);
  if (!j.is_object()) throw InputError(path, "expected a JSON object");
  if (j.value("format", "") != "ccsim-moe-scenario/1")
    throw InputError(path + ": /format", "expected \"ccsim-moe-scenario/1\"");
  if (!j.contains("runs") || !j["runs"].is_array() || j["runs"].empty())
    throw InputError(path + ": /runs", "expected a non-empty list of runs");
  // Names and descriptions are printed into tables: strings without control characters, line
  // separators or invalid UTF-8 (common/text.h, find_control_char).
  auto text = [&](const nlohmann::json& obj, const std::string& key, const std::string& where, const std::string& fallback) {
    if (!obj.contains(key)) return fallback;
    const nlohmann::json& v = obj[key];
    if (!v.is_string()) throw InputError(where + "/" + key, "expected a string");
    const std::string t = v.get<std::string>();
    if (find_control_char(t) != std::string::npos)
      throw InputError(where + "/" + key, "must not contain control characters, line separators or invalid UTF-8 (got \"" +
                                              cut_for_message(t) + "\")");
    return t;
  };
  text(j, "description", path + ": ", "");
  std::vector<std::string> base;
  append_flags(j, path + ": ", {"format", "runs", "description"}, &base);
  std::vector<Run> runs;
  for (std::size_t i = 0; i < j["runs"].size(); ++i) {
    const std::string where = path + ": /runs/" + std::to_string(i);
    std::vector<std::string> flags = base;
    append_flags(j["runs"][i], where, {"name"}, &flags);
    flags.insert(flags.end(), extra.begin(), extra.end());
    const std::string name = text(j["runs"][i], "name", where, "run " + std::to_string(i));
    try {
      Run run = run_from_args(parse_args(flags, moe_option_specs()));
      run.name = name;
      runs.push_back(std::move(run));
    } catch (const InputError& e) {
      throw InputError(where, e.what());
    }
  }
  return runs;
}

}  // namespace

int run_moe(const std::vector<std::string>& argv) {
  const ParsedArgs args = parse_args(argv, moe_option_specs());
  if (args.positional().size() > 1) throw InputError("command line", "moe takes at most one scenario file");
  const std::string format = args.get("format", "table");
  if (format != "table" && format != "json" && format != "csv")
    throw InputError(args.spelled("format"), "expected table, json or csv, got '" + format + "'");
  std::vector<Run> runs;
  if (args.positional().empty()) {
    runs.push_back(run_from_args(args));
  } else {
    // Flags after the file apply to every run (e.g. --seed 2), except the output options.
    std::vector<std::string> extra;
    for (const char* name : {"seed", "tokens", "routing", "eplb", "placement", "expert-compute-us"})
      if (args.has(name)) extra.insert(extra.end(), {std::string("--") + name, args.get(name)});
    runs = runs_from_scenario(args.positional().front(), extra);
  }
  std::string text, matrix;
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const moe::LayerReport report = moe::run_layer(runs[i].topo, runs[i].request);
    if (i == 0 && args.has("matrix")) matrix = moe::render_matrix_csv(report);
    if (format == "json") {
      nlohmann::ordered_json one = nlohmann::ordered_json::parse(moe::render_json(report));
      if (!runs[i].name.empty()) one["run"] = runs[i].name;
      all.push_back(std::move(one));
    } else if (format == "csv") {
      std::string csv = moe::render_csv(report);
      if (runs.size() > 1) {
        // One CSV with a leading run column.
        std::stringstream lines(csv);
        std::string line;
        bool header = true;
        while (std::getline(lines, line)) {
          if (header) {
            if (i == 0) text += "run," + line + "\n";
            header = false;
          } else {
            text += runs[i].name + "," + line + "\n";
          }
        }
      } else {
        text += csv;
      }
    } else {
      if (runs.size() > 1) text += "## run: " + runs[i].name + "\n";
      text += moe::render_table(report);
    }
  }
  if (format == "json") text = (runs.size() == 1 && runs[0].name.empty() ? all[0].dump(2) : all.dump(2)) + "\n";
  if (args.has("matrix")) write_file_atomically(args.get("matrix"), matrix);
  write_output(args.get("output", ""), text);
  return 0;
}

}  // namespace ccsim
