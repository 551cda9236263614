#include "algorithms/collnet.h"

#include <algorithm>
#include <cmath>

#include "algorithms/endpoint_route.h"
#include "algorithms/nvls.h"
#include "algorithms/step_timing.h"
#include "common/error.h"
#include "topologies/routing.h"

namespace ccsim {

bool collnet_supported(const Topology& topo) {
  VertexId v;
  return topo.nics_per_node() > 0 && topo.find_vertex(VertexKind::Reducer, -1, 0, 0, &v);
}

namespace {

double chunk_bytes_of(const Topology& topo, const CollNetOptions& options) {
  return options.chunk_bytes > 0 ? options.chunk_bytes
                                 : static_cast<double>(nccl_buffer_bytes(topo, Proto::Simple)) / nccl230::kSteps;
}

}  // namespace

int collnet_chunks(const Topology& topo, double size_bytes, const CollNetOptions& options) {
  const double heads = std::max<std::size_t>(1, nvls_tree_heads(topo).size());
  const double c = std::ceil(size_bytes / heads / chunk_bytes_of(topo, options));
  return clamp_chunks(c, options.max_chunks);
}

double collnet_chunk_cap_bytes(const Topology& topo, const CollNetOptions& options) {
  const double heads = std::max<std::size_t>(1, nvls_tree_heads(topo).size());
  return std::max(1, options.max_chunks) * chunk_bytes_of(topo, options) * heads;
}

namespace {

// What both CollNet variants check and set up: the schedule with one SHARP reducer endpoint per rail,
// FIFO connections, the chunking, and transfers whose fixed delay excludes their route's latency.
class CollNetBuilder {
 public:
  CollNetBuilder(const Topology& topo, const std::string& collective, double size_bytes, const CollNetOptions& options,
                 const char* algorithm, const char* name)
      : topo_(topo) {
    if (collective != "all_reduce")
      throw InputError("--collective", std::string("ccsim builds ") + name + " for all_reduce only (got " + collective + ")");
    if (!collnet_supported(topo))
      throw InputError("--algo", "CollNet needs a fabric whose switches reduce (fabric.sharp); topology " + topo.name +
                                     " has none");
    if (topo.num_nodes() < 2) throw InputError("--algo", "CollNet needs several nodes");
    if (topo.num_nodes() > topo.nodes_per_leaf())
      throw InputError("--algo", "CollNet across several leaf groups (reduction at the spine) is not modelled");
    s.collective = collective;
    s.algorithm = algorithm;
    s.nranks = topo.num_gpus();
    s.size_bytes = size_bytes;
    // A connection (QP, channel loop) serves its chunks in order; see Schedule::fifo_connections.
    s.fifo_connections = true;
    heads = nvls_tree_heads(topo);  // the GPU affined to each NIC rail
    for (std::size_t h = 0; h < heads.size(); ++h) {
      VertexId red;
      if (!topo.find_vertex(VertexKind::Reducer, -1, static_cast<int>(h), 0, &red))
        throw std::logic_error("no SHARP reducer on rail");
      s.switches.push_back(topo.vertex(red).name);
    }
    chunks = collnet_chunks(topo, size_bytes, options);
    chunk_bytes = size_bytes / static_cast<double>(heads.size()) / chunks;
  }

  double latency(int src, int dst, int rail) {
    return latency_.latency_s(topo_, s, src, dst, rail);
  }

  // One chunk from src to dst; `fixed_s` is NCCL's latency of the hop, of which the route's physical
  // latency is already paid by the engine.
  std::uint32_t add(int src, int dst, int rail, double fixed_s, int k, int h, const std::vector<std::uint32_t>& deps) {
    Transfer t;
    t.src = src;
    t.dst = dst;
    t.rail = rail;
    t.bytes = chunk_bytes;
    t.delay_s = std::max(0.0, fixed_s - latency(src, dst, rail));
    t.step = k;
    t.family = h;
    return s.add(t, deps);
  }

  Schedule s;
  std::vector<int> heads;
  int chunks = 1;
  double chunk_bytes = 0;

 private:
  const Topology& topo_;
  RouteLatencyCache latency_;
};

}  // namespace

Schedule collnet_direct_schedule(const Topology& topo, const std::string& collective, double size_bytes, Proto proto) {
  if (proto != Proto::Simple)
    throw InputError("--proto", std::string("CollNetDirect runs the Simple protocol only in NCCL 2.30 (got ") +
                                    to_string(proto) + ")");
  return collnet_direct_schedule(topo, collective, size_bytes, CollNetOptions{});
}

Schedule collnet_direct_schedule(const Topology& topo, const std::string& collective, double size_bytes,
                                 const CollNetOptions& options) {
  CollNetBuilder b(topo, collective, size_bytes, options, "collnet_direct", "CollNetDirect");
  const int nodes = topo.num_nodes();
  const int gpn = topo.gpus_per_node();
  const int H = static_cast<int>(b.heads.size());
  // NCCL's intra-node cost of one direction: min(1, ppn - 1) intraLat + 0.4 us per peer.
  const double intra = std::min(1, gpn - 1) * options.intra_s + (gpn - 1) * options.per_peer_s;
  std::vector<std::uint32_t> gathered, ups;
  // prev[h][rank]: rank's last write to head h; a GPU's writes to one head go in order (one connection).
  std::vector<std::vector<std::int64_t>> prev(H, std::vector<std::int64_t>(b.s.nranks, -1));
  for (int k = 0; k < b.chunks; ++k) {
    for (int h = 0; h < H; ++h) {
      const int red = b.s.nranks + h;
      ups.clear();
      for (int v = 0; v < nodes; ++v) {
        const int head = v * gpn + b.heads[h];
        // Every other local GPU writes its slice h to the head (direct, over NVLink).
        gathered.clear();
        for (int i = 0; i < gpn; ++i) {
          const int r = v * gpn + i;
          if (r == head) continue;
          std::vector<std::uint32_t> deps;
          if (prev[h][r] >= 0) deps.push_back(static_cast<std::uint32_t>(prev[h][r]));
          const std::uint32_t id = b.add(r, head, -1, k == 0 ? intra : 0.0, k, h, deps);
          prev[h][r] = id;
          gathered.push_back(id);
        }
        // The head sends the node's sum to the leaf's SHARP units; the network latency (up and back
        // down) is paid here, minus the physical latency of both routes.
        ups.push_back(b.add(head, red, h, options.net_s - b.latency(red, head, h), k, h, gathered));
      }
      // The switch returns the sum to every node's head once all nodes contributed; the head writes it
      // to the other local GPUs.
      for (int v = 0; v < nodes; ++v) {
        const int head = v * gpn + b.heads[h];
        const std::uint32_t down = b.add(red, head, h, 0.0, k, h, ups);
        for (int i = 0; i < gpn; ++i)
          if (v * gpn + i != head) b.add(head, v * gpn + i, -1, intra, k, h, {down});
      }
    }
  }
  return std::move(b.s);
}

Schedule collnet_chain_schedule(const Topology& topo, const std::string& collective, double size_bytes, Proto proto) {
  if (proto != Proto::Simple)
    throw InputError("--proto", std::string("CollNetChain runs the Simple protocol only in NCCL 2.30 (got ") +
                                    to_string(proto) + ")");
  return collnet_chain_schedule(topo, collective, size_bytes, CollNetOptions{});
}

Schedule collnet_chain_schedule(const Topology& topo, const std::string& collective, double size_bytes,
                                const CollNetOptions& options) {
  CollNetBuilder b(topo, collective, size_bytes, options, "collnet_chain", "CollNetChain");
  const int nodes = topo.num_nodes();
  const int gpn = topo.gpus_per_node();
  const int H = static_cast<int>(b.heads.size());
  // NCCL's CollNetChain: a chain over the node's GPUs whose first GPU (the head, on NIC rail h) talks
  // to the SHARP units; every hop costs intraLat = hwLat[NVLINK][CollNetChain][Simple] (2.8 us) each
  // way, the network round trip interLat = hwLat[NET][CollNetChain][Simple] (30 us).
  const double hop_s = options.chain_intra_s, net_s = options.chain_net_s;
  // chains[h][0] is the head of rail h, then the other local GPUs in index order after it.
  std::vector<std::vector<int>> chains(H);
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < gpn; ++i) chains[h].push_back((b.heads[h] + i) % gpn);
  std::vector<std::uint32_t> ups;
  for (int k = 0; k < b.chunks; ++k) {
    for (int h = 0; h < H; ++h) {
      const int red = b.s.nranks + h;
      const std::vector<int>& chain = chains[h];
      ups.clear();
      for (int v = 0; v < nodes; ++v) {
        // Reduce up the chain, tail first: hop p+1 -> p waits for the hop that fed p+1.
        std::vector<std::uint32_t> deps;
        for (int p = gpn - 1; p >= 1; --p) {
          const std::uint32_t id = b.add(v * gpn + chain[p], v * gpn + chain[p - 1], -1, hop_s, k, h, deps);
          deps = {id};
        }
        ups.push_back(b.add(v * gpn + chain[0], red, h, net_s - b.latency(red, v * gpn + chain[0], h), k, h, deps));
      }
      // The sum comes back to every head and travels down the chain.
      for (int v = 0; v < nodes; ++v) {
        std::uint32_t last = b.add(red, v * gpn + chain[0], h, 0.0, k, h, ups);
        for (int p = 1; p < gpn; ++p) last = b.add(v * gpn + chain[p - 1], v * gpn + chain[p], -1, hop_s, k, h, {last});
      }
    }
  }
  return std::move(b.s);
}

}  // namespace ccsim
