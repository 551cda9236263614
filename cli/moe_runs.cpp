#include "cli/moe_runs.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "calibrate/calibration.h"
#include "cli/commands.h"
#include "cli/predict_options.h"
#include "cli/topology_options.h"
#include "common/error.h"
#include "topologies/spec.h"

namespace ccsim {

std::vector<OptionSpec> moe_option_specs() {
  std::vector<OptionSpec> specs = topology_option_specs();
  for (const char* name : {"tokens", "hidden", "experts", "topk", "ep", "max-nodes", "routing", "placement", "eplb",
                           "seed", "dispatch-dtype", "combine-dtype", "expert-compute-us", "format", "matrix",
                           "calibration"})
    specs.push_back({"", name, true, false});
  specs.push_back({"", "transport", true, true});
  specs.push_back({"o", "output", true, false});
  specs.push_back({"", "pure-rdma", false, false});
  return specs;
}

namespace {

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

}  // namespace

MoeRun moe_run_from_args(const ParsedArgs& given) {
  ParsedArgs args = given;
  MoeRun run;
  nlohmann::json spec;
  std::string source;
  {
    nlohmann::json probe = topology_spec_from_args(args.without("nodes").without("set").without("env"), "dgx-h100", &source);
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
  apply_topology_args(args, spec, source);
  // A calibration that changes the topology (fitted settings, NIC or SHM figures), after --set as in
  // predict. A ring calibration describes ring collectives, not the layer's all-to-all.
  const std::optional<CalibrationArg> calibration = calibration_from_args(args, spec);
  if (calibration && calibrates_ring(calibration->calibration))
    throw InputError(args.spelled("calibration"),
                     calibration->file + " holds an equivalent ring (ring all_reduce / all_gather / reduce_scatter); the "
                                         "layer's all-to-all takes a calibration of its description: ccsim calibrate LOG "
                                         "--topology ...");
  // kMaxMoeGpus (cli/commands.h), checked before the topology is built: fuzz_moe_scenario found
  // 47 168 nodes taking seconds to build.
  if (spec.contains("nodes") && spec["nodes"].is_number_integer() &&
      spec["nodes"].get<long long>() * gpn > kMaxMoeGpus)
    throw InputError(args.has("ep") && !args.has("nodes") ? args.spelled("ep") : "--nodes",
                     std::to_string(spec["nodes"].get<long long>() * gpn) + " GPUs is above the moe command's limit of " +
                         std::to_string(kMaxMoeGpus) + " (EP1024 takes about 15 s; the layer grows with EP x tokens)");
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
  if (calibration) {
    run.request.calibration_file = calibration->file;
    run.request.calibration_settings = calibration->overrides;
  }
  const int seed = parse_int_arg(args, "seed", 1, 0);
  run.request.seed = static_cast<std::uint64_t>(seed);
  run.request.options.pure_rdma = args.has("pure-rdma");
  run.request.expert_compute_us = parse_double_arg(args, "expert-compute-us", 0.0);
  if (!(run.request.expert_compute_us >= 0 && run.request.expert_compute_us < 1e9))
    throw InputError(args.spelled("expert-compute-us"), "expected a time in microseconds >= 0");
  return run;
}

}  // namespace ccsim
