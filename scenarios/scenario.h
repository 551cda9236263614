// Scenario files ("ccsim-scenario/1", docs/scenarios.md): what `ccsim run` evaluates. A base cluster
// (a preset or topology file, a node count, --set style overrides, an optional calibration), the
// workloads to predict on it (collective size sweeps, or a straggler experiment), and the variants:
// named override sets and a matrix whose every combination of listed values is one variant.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/nccl_versions.h"
#include "calibrate/calibration.h"

namespace ccsim {

constexpr const char* kScenarioFormat = "ccsim-scenario/1";

// One collective sweep (kind "sweep"), one straggler experiment (kind "straggler") or one measured
// nccl-tests log validated against the prediction (kind "validate", as `ccsim validate`).
struct ScenarioWorkload {
  std::string name;                   // unique within the scenario; defaults to the collective
  std::string kind = "sweep";         // "sweep" | "straggler" | "validate"
  std::string collective = "all_reduce";
  std::uint64_t min_bytes = 0, max_bytes = 0;  // sweep: nccl-tests -b / -e
  double step_factor = 2;             // sweep: nccl-tests -f (> 1)
  std::string algo, proto;            // NCCL_ALGO / NCCL_PROTO syntax; empty: NCCL's choice
  NcclVersion nccl_version = default_nccl_version();  // "nccl_version": whose tuner constants (--nccl-version)
  bool nccl_version_given = false;
  std::string model = "engine";       // "engine" | "closed-form"
  std::string datatype = "float";
  // straggler: one collective of `min_bytes` (= max_bytes) where `late_rank` starts `delay_us` late.
  int late_rank = 0;
  double delay_us = 0;
  // validate: the measured log (resolved against the scenario file), an optional NCCL_DEBUG=INFO log
  // of the same run, the tolerance, and what the log cannot say (as validate's --collective / --ranks).
  std::string log_file, nccl_debug_file;
  double tolerance_pct = 20;
  int ranks = 0;
};

// One point of the what-if space: a name and the overrides applied on top of the base cluster.
struct ScenarioVariant {
  std::string name;
  std::vector<std::string> overrides;  // "key=value" (apply_override syntax), in application order
  // "NCCL_X=V" (--env syntax, topologies/nccl_env.h): the cluster's "env", then the named variant's,
  // applied after every override (NCCL acts on the hardware as described).
  std::vector<std::string> env;
};

struct Scenario {
  std::string file;                    // where it was read from, for messages
  std::string name, description;
  nlohmann::json base_spec;            // the topology specification with nodes and base overrides applied
  bool nodes_given = false;            // cluster.nodes was given (validate: it wins over the log's hosts)
  std::string topology_source;         // preset name or file, for build_topology messages
  std::string calibration_file;        // empty: none (resolved relative to the scenario file)
  std::optional<Calibration> calibration;  // the file, read once when the scenario is parsed
  std::vector<ScenarioWorkload> workloads;
  std::vector<ScenarioVariant> variants;     // named x matrix, expanded
  std::vector<std::uint64_t> rank_at_bytes;  // sizes the report ranks the variants at
};

// Variants (named x matrix) a scenario may expand to: each is built (and later run), and the
// matrix is a product, so a few lines of JSON could ask for 1e10 (seen reading the code after a
// fuzz_scenario_json timeout). The largest shipped scenario has 144.
inline constexpr std::size_t kMaxScenarioVariants = 10000;

// Parses and checks a scenario document. Every error is an InputError naming `file` and the JSON
// path ("capacity.json: /variants/matrix/node.nic.Gbps/1: ..."). Relative topology and
// calibration paths are resolved against `base_dir`. Variant overrides are checked against the
// topology format here (apply_override), and every variant's topology is built, so that a bad
// value fails before anything runs.
Scenario parse_scenario(const nlohmann::ordered_json& doc, const std::string& file, const std::string& base_dir);

// Reads `path` (malformed JSON: "path: line L, column C: ...") and parses it.
Scenario load_scenario(const std::string& path);

// The topology specification of one variant: the base with the variant's overrides applied.
nlohmann::json variant_spec(const Scenario& scenario, const ScenarioVariant& variant);

}  // namespace ccsim
