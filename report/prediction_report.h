// The typed report of one prediction (a `ccsim predict` / `*_perf` sweep): every renderer (the
// nccl-tests table, JSON, CSV, HTML) and `ccsim validate` read this struct, so a new output format is
// one file in report/ and nothing reads a report back by string keys. Built by
// make_prediction_report() (scenarios/predict.h) from a Prediction; field names carry their units.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/nccl_tests_log.h"
#include "scenarios/launch_mode.h"
#include "scenarios/nccl_tests_table.h"

namespace ccsim {

// One link direction the engine reports (busiest first).
struct ReportLink {
  std::string from, to;     // vertex names, in the direction of traffic
  std::string label;        // link description ("nvlink ...", "ib ...")
  std::string link_class;   // to_string(LinkKind): "NVLink", "PCIe", "network", ...
  double bandwidth_GBps = 0;
  double bytes = 0;         // carried in this direction over the operation
  double busy_us = 0;       // time with at least one flow on it
  double utilization = 0;   // bytes / bandwidth / operation time (0..1)
};

// One size of the sweep: the nccl-tests row (what a measurement would print, predicted) and how ccsim
// got it.
struct ReportSize {
  NcclTestsRow row;  // size_bytes, count, type, redop, root, time_us / algbw / busbw out-of-place and in-place
  // NCCL's choice (within --algo/--proto/NCCL_ALGO/NCCL_PROTO) and its cost model.
  std::string nccl_algorithm;     // "Ring", "NVLSTree", ... ; "P2P" for sendrecv / alltoall
  std::string nccl_protocol;      // "LL", "LL128", "Simple"
  double nccl_model_time_us = 0;  // NCCL's cost model of its pick (0 for P2P: NCCL has none)
  // Share of NCCL's cost model time that is latency (its latency term over its total) at this size;
  // nullopt where NCCL has no model (P2P, vLLM's custom all-reduce).
  std::optional<double> latency_share;
  // What ccsim predicted: "Tree/LL", "Ring (calibrated)", "NVLS/Simple (NCCL cost model: ...)".
  std::string predicted;
  std::string replayed_algorithm;  // the algorithm the row's time comes from ("Ring", "Tree", "P2P", "custom")
  std::string replayed_protocol;
  bool by_engine = false;          // true: the engine replayed it; false: a closed form / NCCL's model
  // nccl-tests -g N: the row's time is the host's N serial launches, not the collective (the device
  // would have finished sooner; scenarios/launch_mode.h).
  bool launch_bound = false;
  // The channels NCCL runs the collective on at this size (nccl_channels_threads), whose work every
  // launch prepares (node.cpu.launch_us_per_channel); 0 for P2P and vLLM's custom all-reduce.
  int nccl_channels = 0;
  // The collective's own time at this size, before nccl-tests' timing loop adds the host's launches
  // (scenarios/launch_mode.h); not printed: validate reads it to tell which sizes the launches bound
  // whatever the per-channel cost described.
  double device_time_us = 0;
  std::optional<ReportLink> busiest_link;  // engine rows: the busiest link direction at this size
};

// The facts the table's preamble and the JSON/CSV metadata print.
struct ReportFacts {
  // The nccl-tests header line ("# nThread 1 nGpus 1 minBytes ... graph: 0") and program name, as the
  // command line asked for them.
  NcclTestsHeader table_header;
  std::string ccsim_version;
  std::string collective;       // "all_reduce"
  std::string topology_name;    // preset or file name
  int nranks = 0, nodes = 0, gpus_per_node = 0;
  std::string model;            // "engine (SimGrid ...) replaying the tuner's choice" / "closed form: ..."
  std::string cost_model;       // kNcclModelVersion
  std::string step_constants;   // kStepTimingSource
  bool p2p = false;             // sendrecv / alltoall: no tuner, no ring alpha-beta
  std::string nccl_choice;      // "Ring/LL 8 B..64 KiB; NVLS/Simple 128 KiB..8 GiB"
  std::string predicted_as;     // the same over what was predicted
  std::string datatype, op;
  std::string algo_filter, proto_filter;  // as given; empty when none
  int channels = 0;             // engine ring channels
  int nccl_coll_channels = 0;   // comm->nChannels as ccsim estimates NCCL's (summarize_for_nccl)
  int ring_families = 0;
  // The ring's alpha-beta with Ring's protocol at the largest size, and the knee S* = n alpha beta.
  std::string ring_protocol;    // "Simple"
  double launch_s = 0, alpha_s = 0, beta_Bps = 0;
  double knee_bytes = 0;
  std::string bottleneck;       // the ring's limiting link, in words
  // The busbw a Simple ring across the network holds at most, its channels' copies: the channels NCCL
  // runs at the largest size x node.gpu.net_ring_channel_GBps (Topology::net_ring_channel_Bps), GB/s;
  // 0 where the largest size is not such a ring or no rate is set.
  double ring_channel_bound_GBps = 0;
  int ring_channel_bound_channels = 0;
  // nccl-tests' launch mode (-t, -g) and timing loop (-n, -m, -z, -G), normalized, and the host time
  // of one launch (node.cpu.launch_us): scenarios/launch_mode.h.
  LaunchMode launch;
  double host_launch_s = 0;
  double host_launch_per_channel_s = 0;  // node.cpu.launch_us_per_channel, on top of each launch
  // --calibration: the file, the ring class it was read for (empty: the file has none, only NIC or
  // SHM figures), the topology settings it changed and what else it said.
  std::string calibration_file, calibration_class;
  std::vector<std::string> calibration_overrides, calibration_notes;
  // --env: what each NCCL setting did ("NCCL_P2P_DISABLE=1: node.pcie.p2p=none, ...").
  std::vector<std::string> nccl_env;
  // Engine: the busiest link directions at the largest size (up to 5) and the replay's bookkeeping.
  std::vector<ReportLink> busiest_links_at_largest_size;
  bool has_engine_stats = false;
  std::size_t transfers = 0, flows_simulated = 0;
  int symmetry_order = 1, merge_bundle = 1;
  nlohmann::json topology_spec;  // the resolved topology JSON, recorded in JSON/CSV outputs
};

struct PredictionReport {
  ReportFacts facts;
  std::vector<ReportSize> sizes;
  // The nccl-tests rows of `sizes`, in order (what the table, JSON and CSV rows print).
  std::vector<NcclTestsRow> rows() const;
};

}  // namespace ccsim
