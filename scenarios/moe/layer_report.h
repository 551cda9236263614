// `ccsim moe`: one MoE layer's dispatch then combine, per transport, simulated on the topology, and the
// typed report that the table, JSON and CSV renderers print (docs/moe.md "Report" is the contract).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/moe/traffic.h"
#include "sim/engine.h"
#include "topologies/topology.h"

namespace ccsim::moe {

struct LayerRequest {
  MoeConfig config;
  RoutingSpec routing;
  PlacementSpec placement;
  std::uint64_t seed = 1;
  std::vector<Transport> transports{Transport::DeepepNormal};
  TransportOptions options;
  double expert_compute_us = 0;  // between dispatch and combine (the expert GEMMs); 0: back to back
  // --calibration: the file and the topology settings it made (settings fitted through the model, a
  // NIC's perftest figures), for the report; the topology the layer runs on already holds them.
  std::string calibration_file;
  std::vector<std::string> calibration_settings;
  // The layer's rails and nodes, and dispatch and combine, in separate simulations (sim/split.h),
  // each solved by the incremental fluid solver (sim/fluid_network.h): the same results as one
  // SimGrid simulation, far faster at large EP (docs/moe.md "Speed").
  EngineOptions engine = [] {
    EngineOptions o;
    o.split_independent = true;
    o.fluid_solver = true;
    return o;
  }();
};

struct PhaseReport {
  Phase phase = Phase::Dispatch;
  double time_us = 0;                  // slowest rank's finish - the phase's start
  double mean_rank_time_us = 0;        // mean over ranks of (finish - start)
  // Bytes per rank that cross each link class (sent), mean and max over ranks.
  double rdma_bytes_mean = 0, rdma_bytes_max = 0;
  double nvlink_bytes_mean = 0, nvlink_bytes_max = 0;
  std::string bottleneck;              // "rdma" or "nvlink": the class of the busiest link of the phase
  std::string busiest_link;            // that link, "a -> b (label)"
  double busiest_link_utilization = 0; // its bytes / bandwidth / phase time
  // DeepEP's "bottleneck bandwidth": logical bytes of the bottleneck class per rank (mean) / time.
  double bottleneck_GBps = 0;
  // The same quotient for each class (DeepEP's normal-kernel definitions), to compare with a benchmark
  // that names the other class than the one ccsim finds busiest.
  double rdma_logical_GBps = 0, nvlink_logical_GBps = 0;
  int slowest_rank = 0;
  std::string slowest_why;             // which of its links and how loaded, in words
  std::int64_t slowest_rank_tokens = 0;  // token copies the slowest rank receives (dispatch) / sends back (combine)
  double mean_rank_tokens = 0;
  std::size_t transfers = 0;           // records simulated for this phase
};

struct TransportReport {
  Transport transport = Transport::DeepepNormal;
  PhaseReport dispatch, combine;
  double layer_time_us = 0;            // dispatch start to combine end, expert compute included
};

struct LayerReport {
  LayerRequest request;                // what was asked (routing and placement names, config)
  std::string topology;                // topology name
  int nodes = 0, gpus_per_node = 0;
  RoutingStats routing;
  double zipf_s = 0;                   // the skew parameter used (fitted for ratio:x)
  std::vector<TransportReport> transports;
  // Rank x rank bytes of the first transport's dispatch (logical: what each source sends for each
  // destination GPU, relayed or not), for --matrix.
  std::vector<double> dispatch_matrix_bytes;
};

// Builds the layer (routing, placement), and per transport simulates dispatch then combine in one
// workload (combine after a barrier plus expert_compute_us, as DeepEP benchmarks each kernel).
LayerReport run_layer(const Topology& topo, const LayerRequest& request);

// Renderers: the table people read, JSON (the documented field names), CSV (one row per transport x
// phase), and the rank x rank CSV matrix.
std::string render_table(const LayerReport& report);
std::string render_json(const LayerReport& report);
std::string render_csv(const LayerReport& report);
std::string render_matrix_csv(const LayerReport& report);

}  // namespace ccsim::moe
