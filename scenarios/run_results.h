// What `ccsim run` computes for one variant of a scenario, and the files it writes: results.json
// (rows plus per-variant detail) and results.csv (one row per variant x workload x size), whose
// formats are scenarios/run_results_file.h. docs/scenarios.md describes every field.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/scenario.h"

namespace ccsim {

// One variant x workload x size.
struct RunRow {
  std::uint64_t size_bytes = 0;  // nccl-tests' size column
  double time_us = 0, algbw_GBps = 0, busbw_GBps = 0;
  std::string algorithm, protocol;  // what was predicted ("NVLSTree", "Simple"; "P2P" for alltoall / sendrecv)
  std::string predicted_as;         // predict's label: "Tree/LL128", "... (NCCL cost model: ...)"
  bool by_engine = false;           // replayed by the engine (else a closed form)
  // The engine's busiest link direction at this size (empty for closed-form rows: a cost model has
  // no links): "from -> to (label)", its class (NVLink, PCIe, Network, ...), bytes / (bandwidth x time).
  std::string busiest_link, busiest_link_class;
  double busiest_link_utilization = -1;
  // NCCL's cost model of the predicted (algorithm, protocol): latency / (latency + bytes / bandwidth);
  // -1 where NCCL has no cost model (P2P collectives, vLLM's custom all-reduce).
  double latency_share = -1;
  // validate workloads only (-1 / empty elsewhere): the log's time and busbw at this size, whether the
  // prediction is within the workload's tolerance (1) or not (0), and the side of the knee S*.
  double measured_time_us = -1, measured_busbw_GBps = -1;
  int within_tolerance = -1;
  std::string side;  // "latency" | "bandwidth"
};

// A validate workload's likely cause of a large error (scenarios/validate_causes.h).
struct RunCause {
  std::string id, title, evidence, next;
  bool informational = false;
};

// Per link class, the busiest link direction of the class at the workload's largest engine size.
struct LinkClassUse {
  std::string link_class;
  std::string link;
  double utilization = 0;  // bytes / (bandwidth x operation time)
};

struct ScenarioWorkloadResult {
  std::string workload, collective, kind;  // kind: "sweep" | "straggler" | "validate"
  double knee_bytes = 0;                   // ring S* = n alpha beta (predict's)
  std::vector<RunRow> rows;
  std::vector<LinkClassUse> link_classes;
  // straggler only: per-rank collective times with and without the late start
  int late_rank = -1;
  double delay_us = 0;
  std::vector<double> per_rank_us, baseline_per_rank_us;
  int shortest_rank = -1;  // the rank named late: the one whose collective was shortest
  // validate only: the log, the tolerance, every size within it, the facts and side verdicts as
  // lines, and the likely causes.
  std::string log_file;
  double tolerance_pct = 0;
  bool pass = false;
  std::vector<std::string> notes;
  std::vector<RunCause> causes;
};

struct VariantResult {
  std::size_t index = 0;  // the variant's place in the scenario (Scenario::variants): merge orders by it
  std::string name;
  std::vector<std::string> overrides;
  std::vector<std::string> env;        // the variant's NCCL settings (--env syntax), after the overrides
  std::vector<ScenarioWorkloadResult> workloads;
};

// How a variant's engine runs split the CPU: `engine_jobs` child processes per simulation sweep.
struct VariantRunOptions {
  int engine_jobs = 1;
};

// Evaluates every workload of one variant (in this process; the engine forks its own children).
VariantResult run_variant(const Scenario& scenario, std::size_t variant_index, const VariantRunOptions& options);

// Which part of a scenario's variants one `ccsim run --shard K/N` evaluates: variant i belongs to
// shard (i mod N) + 1, so that every shard gets variants from every region of the matrix (similar
// cost) and the N shards are disjoint and cover the scenario.
struct Shard {
  int index = 1, count = 1;  // K, N (1 <= K <= N); 1/1: the whole scenario
  bool holds(std::size_t variant) const { return static_cast<int>(variant % static_cast<std::size_t>(count)) == index - 1; }
  bool whole() const { return count == 1; }
};
// "K/N" (InputError naming --shard otherwise).
Shard parse_shard(const std::string& text);

}  // namespace ccsim
