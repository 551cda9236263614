// The NIC transports of node.nic.transport and their defaults (docs/topology.md, "Transports"): the
// spec value, the label in link names, the payload fraction of the line rate, the one-way NIC-to-NIC
// latency, and where payloads go between the NIC and the GPU. Every default names its source in
// transports.cpp; build_topology (spec.cpp) reads them, and validate's network from a log's plugin
// lines (scenarios/log_net_platform.cpp) compares a printed plugin latency with `efa`'s.
#pragma once
#include <string>
#include <vector>

#include "topologies/topology.h"

namespace ccsim {

struct TransportInfo {
  Transport transport = Transport::InfiniBand;
  const char* name = "";      // the node.nic.transport value: "ib", "roce", "tcp", "tcpx", "tcpxo", "efa"
  const char* label = "";     // in link labels ("400Gb/s IB") and `ccsim topo`
  double efficiency = 1;      // default node.nic.efficiency: payload bytes / line-rate bytes
  double latency_us = 0;      // default node.nic.latency_us: one way, NIC to NIC through one switch
  // default node.nic.plugin_latency_us: the network latency the transport's NCCL net plugin reports
  // to NCCL's tuner (ncclNetProperties_t.latency); 0 is "not set", NCCL's own constants alone.
  double plugin_latency_us = 0;
  bool gpudirect_default = true;  // default node.nic.gpudirect_rdma
  // The net plugin reports NCCL_NET_DEVICE_UNPACK: received payloads land in GPU bounce buffers that
  // NCCL's kernel unpacks, and connect.cc doubles the collective channels below 16 on several nodes.
  bool unpack_device = false;
  // Which values of node.nic.gpudirect_rdma describe a real machine: tcp (NCCL's sockets) always
  // stages through host memory, tcpx/tcpxo never do (that is what they are); ib/roce do either.
  bool gpudirect_allowed = true;
  bool host_staging_allowed = true;
  const char* why_not = "";   // for the error line when a value is refused
};

// Every transport, in the order of docs/topology.md.
const std::vector<TransportInfo>& transports();
const TransportInfo& transport_info(Transport t);
// nullptr when `name` is no transport.
const TransportInfo* find_transport(const std::string& name);
// "ib", "roce", "tcp", "tcpx", "tcpxo", "efa": the valid values, for error messages.
std::vector<std::string> transport_names();

}  // namespace ccsim
