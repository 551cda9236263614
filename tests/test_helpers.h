// Small helpers shared by the tests.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/nccl_channels.h"
#include "topologies/nccl_env.h"
#include "topologies/spec.h"
#include "topologies/topology.h"

namespace ccsim::testing {

// What nccl-tests' timing adds to one process per GPU's collective at the defaults (-g 1, -n 20,
// node.cpu.launch_us 4.2): the first of the 20 timed iterations starts one launch after the timer
// (scenarios/launch_mode.h), 4.2 / 20 us per reported iteration.
inline constexpr double kFirstLaunchShareUs = 4.2 / 20;

// One P2P channel's copy on H100/H200, GB/s: 55.19 GB/s on 4 channels of an A100 pair's sendrecv
// (NVIDIA/nccl-tests#331) at A100's 1.41 GHz, at H100's 1.98 GHz (topologies/gpu_copy_rate.h). A Simple
// ring across nodes runs at most this per channel (node.gpu.net_ring_channel_GBps), so 2 x 8 NIC rails'
// 16 channels hold 310 GB/s busbw.
inline constexpr double kHopperChannelGBps = 55.19 / 4 / 1.41 * 1.98;
inline constexpr double kHopperNetRingGBps = 16 * kHopperChannelGBps;

// A cluster of `nodes` single-GPU nodes, each GPU behind a PCIe Gen5 x16 switch with one
// 400 Gb/s InfiniBand NIC: every ring hop is GPU -> PCIe -> NIC -> leaf [-> spine -> leaf] -> NIC -> PCIe -> GPU,
// identical for all hops, so the ring is uncongested and uniform. Efficiencies are 1 so that the
// links carry their nominal rates (400 Gb/s = 50 GB/s) and hand derivations stay simple.
inline nlohmann::json single_gpu_nodes_spec(int nodes, int nodes_per_leaf, double oversubscription) {
  nlohmann::json spec = {
      {"format", "ccsim-topology/1"},
      {"name", "test-1gpu"},
      {"nodes", nodes},
      {"node",
       {{"gpu", {{"model", "H100-PCIe"}, {"arch", "sm90"}, {"count", 1}}},
        {"cpu", {{"sockets", 1}, {"vendor", "intel"}}},
        {"pcie", {{"generation", 5}, {"lanes", 16}, {"switches_per_socket", 1}, {"p2p", "switch"}, {"efficiency", 1.0}}},
        {"nic",
         {{"count", 1}, {"Gbps", 400}, {"efficiency", 1.0}, {"transport", "ib"}, {"pcie_generation", 5}, {"pcie_lanes", 16}}}}},
      {"fabric",
       {{"kind", "rail-optimized-fat-tree"},
        {"nodes_per_leaf", nodes_per_leaf},
        {"oversubscription", oversubscription},
        {"switch_latency_us", 0.5}}}};
  return spec;
}

inline Topology preset(const std::string& name, int nodes) {
  nlohmann::json spec = load_topology_spec(name);
  set_node_count(spec, nodes);
  return build_topology(spec, name);
}

// A preset with `--set KEY=VALUE` changes and then `--env NCCL_NAME=VALUE` settings, as the CLI
// applies them.
inline Topology preset(const std::string& name, int nodes, const std::vector<std::string>& sets,
                       const std::vector<std::string>& envs = {}) {
  nlohmann::json spec = load_topology_spec(name);
  set_node_count(spec, nodes);
  for (const auto& s : sets) apply_override(spec, s, "--set");
  for (const auto& e : envs) apply_nccl_env(spec, e, "--env " + e, name);
  return build_topology(spec, name);
}

// NCCL's summary of `t` with comm->nChannels set to `coll_channels` and the proxy cost 1 us (what
// nccl_p2p_config takes), for P2P decisions under a chosen channel count.
inline NcclTopoSummary summary_with_channels(const Topology& t, int coll_channels) {
  NcclTopoSummary s = summarize_for_nccl(t);
  s.coll_channels = coll_channels;
  s.net_overhead_us = 1.0;
  return s;
}

}  // namespace ccsim::testing
