// NVLink domains of several hosts (node.nvlink.domain_size, docs/topology.md "NVLink domains"): a
// graph node of the Topology is one NVLink domain, which holds `hosts_per_node` hosts (spec nodes:
// servers, GB200 compute trays), each with its own CPUs, PCIe and NICs, all of whose GPUs share one
// NVSwitch. Read from the resolved spec that build_topology() records, so that the Topology type
// itself (included everywhere) stays as it is.
#pragma once
#include "topologies/topology.h"

namespace ccsim {

// Hosts per graph node: node.nvlink.domain_size of the resolved spec, 1 when absent.
inline int hosts_per_node(const Topology& topo) {
  const auto node = topo.spec.find("node");
  if (node == topo.spec.end() || !node->is_object()) return 1;
  const auto nv = node->find("nvlink");
  if (nv == node->end() || !nv->is_object()) return 1;
  const auto d = nv->find("domain_size");
  return d != nv->end() && d->is_number_integer() ? d->get<int>() : 1;
}
inline int num_hosts(const Topology& topo) { return topo.num_nodes() * hosts_per_node(topo); }
inline int gpus_per_host(const Topology& topo) { return topo.gpus_per_node() / hosts_per_node(topo); }
inline int nics_per_host(const Topology& topo) { return topo.nics_per_node() / hosts_per_node(topo); }
// The host (0 .. num_hosts-1) of a rank.
inline int host_of_rank(const Topology& topo, int rank) { return rank / gpus_per_host(topo); }

}  // namespace ccsim
