#include "algorithms/collnet.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "algorithms/endpoint_route.h"
#include "algorithms/nvls.h"
#include "common/error.h"
#include "topologies/routing.h"

namespace ccsim {

bool collnet_supported(const Topology& topo) {
  VertexId v;
  return topo.nics_per_node() > 0 && topo.find_vertex(VertexKind::Reducer, -1, 0, 0, &v);
}

int collnet_chunks(const Topology& topo, double size_bytes, const CollNetOptions& options) {
  const double heads = std::max<std::size_t>(1, nvls_tree_heads(topo).size());
  const double c = std::ceil(size_bytes / heads / options.chunk_bytes);
  return static_cast<int>(std::max(1.0, std::min<double>(std::max(1, options.max_chunks), c)));
}

Schedule collnet_direct_schedule(const Topology& topo, const std::string& collective, double size_bytes, Proto proto) {
  if (proto != Proto::Simple)
    throw InputError("--proto", std::string("CollNetDirect runs the Simple protocol only in NCCL 2.30 (got ") +
                                    to_string(proto) + ")");
  return collnet_direct_schedule(topo, collective, size_bytes, CollNetOptions{});
}

Schedule collnet_direct_schedule(const Topology& topo, const std::string& collective, double size_bytes,
                                 const CollNetOptions& options) {
  if (collective != "all_reduce")
    throw InputError("--collective", "ccsim builds CollNetDirect for all_reduce only (got " + collective + ")");
  if (!collnet_supported(topo))
    throw InputError("--algo", "CollNet needs a fabric whose switches reduce (fabric.sharp); topology " + topo.name +
                                   " has none");
  const int nodes = topo.num_nodes();
  if (nodes < 2) throw InputError("--algo", "CollNet needs several nodes");
  if (nodes > topo.nodes_per_leaf())
    throw InputError("--algo", "CollNet across several leaf groups (reduction at the spine) is not modelled");
  Schedule s;
  s.collective = collective;
  s.algorithm = "collnet_direct";
  s.nranks = topo.num_gpus();
  s.size_bytes = size_bytes;
  // A connection (QP, channel loop) serves its chunks in order; see Schedule::fifo_connections.
  s.fifo_connections = true;
  const int gpn = topo.gpus_per_node();
  const std::vector<int> heads = nvls_tree_heads(topo);  // the GPU affined to each NIC rail
  const int H = static_cast<int>(heads.size());
  for (int h = 0; h < H; ++h) {
    VertexId red;
    if (!topo.find_vertex(VertexKind::Reducer, -1, h, 0, &red)) throw std::logic_error("no SHARP reducer on rail");
    s.switches.push_back(topo.vertex(red).name);
  }
  const int C = collnet_chunks(topo, size_bytes, options);
  const double c = size_bytes / H / C;
  std::map<std::tuple<int, int, int>, double> memo;
  auto latency = [&](int src, int dst, int rail) {
    const auto key = std::make_tuple(src, dst, rail);
    auto it = memo.find(key);
    if (it == memo.end()) it = memo.emplace(key, route_latency_s(topo, transfer_route(topo, s, src, dst, rail))).first;
    return it->second;
  };
  auto add = [&](int src, int dst, int rail, double fixed_s, int k, int h, const std::vector<std::uint32_t>& deps) {
    Transfer t;
    t.src = src;
    t.dst = dst;
    t.rail = rail;
    t.bytes = c;
    t.delay_s = std::max(0.0, fixed_s - latency(src, dst, rail));
    t.step = k;
    t.family = h;
    return s.add(t, deps);
  };
  // NCCL's intra-node cost of one direction: min(1, ppn - 1) intraLat + 0.4 us per peer.
  const double intra = std::min(1, gpn - 1) * options.intra_s + (gpn - 1) * options.per_peer_s;
  std::vector<std::uint32_t> gathered, ups;
  // prev[h][rank]: rank's last write to head h; a GPU's writes to one head go in order (one connection).
  std::vector<std::vector<std::int64_t>> prev(H, std::vector<std::int64_t>(s.nranks, -1));
  for (int k = 0; k < C; ++k) {
    for (int h = 0; h < H; ++h) {
      const int red = s.nranks + h;
      ups.clear();
      for (int v = 0; v < nodes; ++v) {
        const int head = v * gpn + heads[h];
        // Every other local GPU writes its slice h to the head (direct, over NVLink).
        gathered.clear();
        for (int i = 0; i < gpn; ++i) {
          const int r = v * gpn + i;
          if (r == head) continue;
          std::vector<std::uint32_t> deps;
          if (prev[h][r] >= 0) deps.push_back(static_cast<std::uint32_t>(prev[h][r]));
          const std::uint32_t id = add(r, head, -1, k == 0 ? intra : 0.0, k, h, deps);
          prev[h][r] = id;
          gathered.push_back(id);
        }
        // The head sends the node's sum to the leaf's SHARP units; the network latency (up and back
        // down) is paid here, minus the physical latency of both routes.
        ups.push_back(add(head, red, h, options.net_s - latency(red, head, h), k, h, gathered));
      }
      // The switch returns the sum to every node's head once all nodes contributed; the head writes it
      // to the other local GPUs.
      for (int v = 0; v < nodes; ++v) {
        const int head = v * gpn + heads[h];
        const std::uint32_t down = add(red, head, h, 0.0, k, h, ups);
        for (int i = 0; i < gpn; ++i)
          if (v * gpn + i != head) add(head, v * gpn + i, -1, intra, k, h, {down});
      }
    }
  }
  return s;
}

}  // namespace ccsim
