#include "topologies/nic_affinity.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "topologies/nvlink_domain.h"
#include "topologies/routing.h"

namespace ccsim {

namespace {

// How close a GPU and a NIC of node 0 are: path class first, then route bandwidth (bytes/s).
struct Closeness {
  PathClass path = PathClass::Net;
  double bandwidth_Bps = 0;
};

Closeness closeness(const Topology& topo, int local_gpu, int nic) {
  const VertexId g = topo.gpu(local_gpu), n = topo.nic(0, nic);
  // In an NVLink domain of several hosts a GPU has no PCIe path to another host's NICs (the hosts
  // share only NVLink): farthest of all, never one of its NICs.
  if (hosts_per_node(topo) > 1 && local_gpu / gpus_per_host(topo) != nic / nics_per_host(topo))
    return {PathClass::Net, 0.0};
  return {path_class(topo, g, n), route_bandwidth_Bps(topo, route_between(topo, g, n))};
}

// a strictly closer than b; bandwidths within 1e-9 relative count as equal (routes built from the
// same link rates).
bool closer(const Closeness& a, const Closeness& b) {
  if (a.path != b.path) return a.path < b.path;
  return a.bandwidth_Bps > b.bandwidth_Bps * (1 + 1e-9);
}

}  // namespace

NicAffinity compute_nic_affinities(const Topology& topo) {
  const int G = topo.gpus_per_node(), N = topo.nics_per_node();
  NicAffinity a;
  a.gpu_nics.assign(G, {});
  a.nic_gpu.assign(N, -1);
  if (N == 0) return a;
  std::vector<std::vector<Closeness>> c(G, std::vector<Closeness>(N));
  for (int g = 0; g < G; ++g)
    for (int n = 0; n < N; ++n) c[g][n] = closeness(topo, g, n);
  // ncclTopoGetLocal both ways: a GPU's closest NICs, a NIC's closest GPUs.
  auto local_nics = [&](int g) {
    std::vector<int> out;
    for (int n = 0; n < N; ++n) {
      if (!out.empty() && closer(c[g][out[0]], c[g][n])) continue;
      if (!out.empty() && closer(c[g][n], c[g][out[0]])) out.clear();
      out.push_back(n);
    }
    return out;
  };
  auto local_gpus = [&](int n) {
    std::vector<int> out;
    for (int g = 0; g < G; ++g) {
      if (!out.empty() && closer(c[out[0]][n], c[g][n])) continue;
      if (!out.empty() && closer(c[g][n], c[out[0]][n])) out.clear();
      out.push_back(g);
    }
    return out;
  };
  // Each GPU takes its share DIVUP(|L|, |local GPUs of L[0]|) of its local NICs L, least used by
  // lower-numbered GPUs first, then lowest index (ncclTopoGetLocalNet's round robin over that many).
  std::vector<int> used(N, 0);
  for (int g = 0; g < G; ++g) {
    std::vector<int> pool = local_nics(g);
    const int sharers = static_cast<int>(local_gpus(pool[0]).size());
    const int share = (static_cast<int>(pool.size()) + sharers - 1) / sharers;
    std::stable_sort(pool.begin(), pool.end(), [&](int x, int y) { return used[x] < used[y]; });
    pool.resize(share);
    for (int n : pool) ++used[n];
    a.gpu_nics[g] = pool;
  }
  // ncclTopoGetLocalGpu: over the channels, the first of the NIC's closest GPUs whose channel uses it;
  // failing that (the NIC is no closest GPU's), any GPU whose channel uses it.
  int max_share = 0;
  for (const auto& s : a.gpu_nics) max_share = std::max(max_share, static_cast<int>(s.size()));
  for (int n = 0; n < N; ++n) {
    const std::vector<int> near = local_gpus(n);
    for (int pass = 0; pass < 2 && a.nic_gpu[n] < 0; ++pass)
      for (int ch = 0; ch < max_share && a.nic_gpu[n] < 0; ++ch)
        for (int g = 0; g < G && a.nic_gpu[n] < 0; ++g) {
          if (pass == 0 && std::find(near.begin(), near.end(), g) == near.end()) continue;
          const auto& s = a.gpu_nics[g];
          if (ch < static_cast<int>(s.size()) && s[ch] == n) a.nic_gpu[n] = g;
        }
  }
  return a;
}

namespace {

void check_gpu(const Topology& topo, int local_gpu, const char* who) {
  if (local_gpu < 0 || local_gpu >= topo.gpus_per_node())
    throw std::out_of_range(std::string(who) + ": local GPU " + std::to_string(local_gpu) + " out of range");
}

bool stored(const Topology& topo) {
  return static_cast<int>(topo.gpu_nics.size()) == topo.gpus_per_node() &&
         static_cast<int>(topo.nic_gpu.size()) == topo.nics_per_node();
}

}  // namespace

std::vector<int> nics_of_gpu(const Topology& topo, int local_gpu) {
  check_gpu(topo, local_gpu, "nics_of_gpu");
  if (stored(topo)) return topo.gpu_nics[local_gpu];
  return compute_nic_affinities(topo).gpu_nics[local_gpu];
}

int nic_for_channel(const Topology& topo, int local_gpu, int channel) {
  if (channel < 0) throw std::out_of_range("nic_for_channel: channel " + std::to_string(channel) + " out of range");
  const std::vector<int> s = nics_of_gpu(topo, local_gpu);
  return s.empty() ? -1 : s[channel % s.size()];
}

int nic_for_gpu(const Topology& topo, int local_gpu) {
  check_gpu(topo, local_gpu, "nic_for_gpu");
  if (static_cast<int>(topo.nic_affinity.size()) == topo.gpus_per_node()) return topo.nic_affinity[local_gpu];
  return nic_for_channel(topo, local_gpu, 0);
}

int first_gpu_on_rail(const Topology& topo, int rail) {
  if (rail < 0 || rail >= topo.nics_per_node()) return -1;
  if (stored(topo)) return topo.nic_gpu[rail];
  return compute_nic_affinities(topo).nic_gpu[rail];
}

std::vector<int> compute_nic_affinity(const Topology& topo) {
  const NicAffinity a = compute_nic_affinities(topo);
  std::vector<int> out(topo.gpus_per_node(), -1);
  for (int g = 0; g < topo.gpus_per_node(); ++g)
    if (!a.gpu_nics[g].empty()) out[g] = a.gpu_nics[g][0];
  return out;
}

}  // namespace ccsim
