#include "algorithms/nvls.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "algorithms/endpoint_route.h"
#include "algorithms/step_timing.h"
#include "algorithms/tree.h"
#include "common/error.h"
#include "topologies/routing.h"

namespace ccsim {

bool nvls_supported(const Topology& topo) { return topo.has_nvswitch && topo.nvls_capable; }

NvlsOptions nccl_nvls_options(const NcclTopoSummary& summary) {
  NvlsOptions options;
  if (summary.nvls_channels > 0) options.channels = summary.nvls_channels;
  if (summary.nvls_graph.nChannels > 0) options.heads = summary.nvls_graph.nChannels;
  return options;
}

namespace {

void check_common(const Topology& topo, const char* algo, Proto proto) {
  if (proto != Proto::Simple)
    throw InputError("--proto", std::string(algo) + " runs the Simple protocol only in NCCL 2.30 (got " +
                                    to_string(proto) + ")");
  if (!nvls_supported(topo))
    throw InputError("--algo", std::string(algo) + " needs NVSwitch nodes with NVLink SHARP (node.nvlink.nvls); topology " +
                                   topo.name + " has none");
}

// Names of node v's NVSwitch and its reduction units.
std::string vertex_name(const Topology& topo, VertexKind kind, int node) {
  VertexId v;
  if (!topo.find_vertex(kind, node, 0, -1, &v))
    throw std::logic_error(std::string("topology has no ") + to_string(kind) + " in node " + std::to_string(node));
  return topo.vertex(v).name;
}

// Helper that appends records with delays computed from their routes.
struct Builder {
  const Topology& topo;
  Schedule& s;
  int channels;

  RouteLatencyCache latency;  // switch routes are not memoized by routing.cpp

  // `fixed_s`: the latency an idle transfer should show; the route's physical part is subtracted.
  std::uint32_t add(int src, int dst, int rail, double bytes, double fixed_s, int step, int family, int chunks,
                    const std::vector<std::uint32_t>& deps) {
    Transfer t;
    t.src = src;
    t.dst = dst;
    t.rail = rail;
    // Multimem traffic to and from the switch reaches only nvls_efficiency of the NVLink data rate:
    // on the wire it weighs bytes / efficiency (as LL's flags double a ring's bytes).
    const bool multimem = src >= s.nranks || dst >= s.nranks;
    t.bytes = multimem ? bytes / topo.nvls_efficiency : bytes;
    t.delay_s = std::max(0.0, fixed_s - latency.latency_s(topo, s, src, dst, rail));
    t.step = step;
    t.family = family;
    t.channels = channels;
    t.chunks = chunks;
    return s.add(t, deps);
  }
};

int one_node_heads(const Topology& topo, const NvlsOptions& options) {
  return options.heads > 0 ? options.heads : topo.num_gpus();
}

// NCCL's chunk for a one-node NVLS operation of this size, or the one the options force. NCCL starts
// from the Simple step (NCCL_BUFFSIZE / NCCL_STEPS, chunkSteps 1) capped at NCCL_NVLS_CHUNKSIZE.
double one_node_chunk_bytes(const Topology& topo, double size_bytes, const NvlsOptions& options) {
  if (options.chunk_bytes > 0) return options.chunk_bytes;
  const double step = static_cast<double>(nccl_buffer_bytes(topo, Proto::Simple)) / nccl230::kSteps;
  const double start = std::min(step, static_cast<double>(topo.nvls_chunk_bytes));
  return nccl_nvls_chunk_bytes(size_bytes, options.channels, one_node_heads(topo, options), start);
}

}  // namespace

Schedule nvls_schedule(const Topology& topo, const std::string& collective, double size_bytes, Proto proto) {
  check_common(topo, "NVLS", proto);
  return nvls_schedule(topo, collective, size_bytes, NvlsOptions{});
}

Schedule nvls_schedule(const Topology& topo, const std::string& collective, double size_bytes,
                       const NvlsOptions& options) {
  check_common(topo, "NVLS", Proto::Simple);
  if (topo.num_nodes() != 1)
    throw InputError("--algo", "NVLS across nodes needs CollNet (SHARP) in NCCL 2.30; use NVLSTree for " +
                                   std::to_string(topo.num_nodes()) + " nodes");
  const bool reduce = collective == "all_reduce" || collective == "reduce_scatter";
  const bool store = collective == "all_reduce" || collective == "all_gather";
  if (!reduce && !store)
    throw InputError("--collective", "NVLS runs all_reduce, reduce_scatter and all_gather (got " + collective + ")");
  Schedule s;
  s.collective = collective;
  s.algorithm = "nvls";
  s.nranks = topo.num_gpus();
  s.size_bytes = size_bytes;
  const int n = s.nranks;
  if (n < 2) return s;
  s.switches = {vertex_name(topo, VertexKind::NvSwitch, 0), vertex_name(topo, VertexKind::Reducer, 0)};
  const int sw = n, red = n + 1;
  const double slice = size_bytes / n;  // head j's part of the buffer
  // Chunks are a count here (Transfer::chunks): the flows are cut-through, whatever their size.
  const double chunk = one_node_chunk_bytes(topo, size_bytes, options);
  const int chunks = std::max(1, static_cast<int>(std::ceil(slice / options.channels / chunk)));
  // Every flow starts after NCCL's NVLS latency and the kernel's copy stages before and after it.
  const double fixed_s = options.intra_s + nvls_pipeline_fill_s(topo, collective, size_bytes, options);
  Builder b{topo, s, options.channels, {}};
  for (int j = 0; j < n; ++j) {
    // Family j: head j's slice. Step 0 is its ld_reduce, step 1 its st; all concurrent (cut-through).
    if (reduce) {
      for (int i = 0; i < n; ++i) b.add(i, red, -1, slice, fixed_s, 0, j, chunks, {});
      b.add(red, j, -1, slice, fixed_s, 0, j, chunks, {});
    }
    if (store) {
      b.add(j, sw, -1, slice, fixed_s, 1, j, chunks, {});
      for (int i = 0; i < n; ++i) b.add(sw, i, -1, slice, fixed_s, 1, j, chunks, {});
    }
  }
  return s;
}

std::vector<int> nvls_tree_heads(const Topology& topo) {
  const int gpus = topo.gpus_per_node();
  const int rails = std::min(topo.nics_per_node(), gpus);
  std::vector<int> heads;
  for (int rail = 0; rail < rails; ++rail) {
    int head = -1;
    for (int g = 0; g < gpus && head < 0; ++g)
      if (nic_for_gpu(topo, g) == rail && std::find(heads.begin(), heads.end(), g) == heads.end()) head = g;
    if (head < 0) head = rail % gpus;
    heads.push_back(head);
  }
  return heads;
}

double nccl_nvls_tree_chunk_bytes(double size_bytes, int channels, int heads, int nodes, double nvls_chunk_bytes,
                                  double tree_max_chunk_bytes) {
  double chunk = nvls_chunk_bytes;
  // NCCL_NVLSTREE_MAX_CHUNKSIZE: a set value caps the chunk; its default (-2, 0 here) is 64 KiB from 4
  // nodes on, else the NVLS chunk.
  if (tree_max_chunk_bytes > 0) chunk = std::min(chunk, tree_max_chunk_bytes);
  else if (nodes >= 4) chunk = std::min(chunk, 65536.0);
  const double ops = static_cast<double>(std::max(1, channels)) * std::max(1, heads);  // (channel, head) units
  if (size_bytes < 32 * ops * chunk && chunk > 262144) chunk = 262144;
  if (size_bytes < 16 * ops * chunk && chunk > 131072) chunk = 131072;
  if (size_bytes < 4 * ops * chunk && chunk > 65536) chunk = 65536;
  if (size_bytes < 1 * ops * chunk && chunk > 32768) chunk = 32768;
  const double grain = 512;  // Simple's grain (ncclProtoGrainSize)
  return std::max(grain, std::floor(chunk / grain) * grain);
}

namespace {

// Channels of each NVLSTree family. Every NVLS channel serves all H heads (NCCL's NVLSTree pattern runs
// nHeads chunks per channel and loop, enqueue.cc calcCollChunking), and the first half of the channels
// run tree 0, the second half tree 1 (connect.cc: channel c + nChannels is channel c's mirror), so
// the family (head h, tree t) is carried by half of the channels, at least one.
int channels_per_family(const NvlsOptions& options) { return std::max(1, options.channels / 2); }

// The NVLSTree chunk of one channel and head: NvlsOptions::chunk_bytes when set, else NCCL's rule.
double nvls_tree_chunk(const Topology& topo, double size_bytes, int heads, const NvlsOptions& options) {
  return options.chunk_bytes > 0 ? options.chunk_bytes
                                 : nccl_nvls_tree_chunk_bytes(size_bytes, options.channels, heads, topo.num_nodes(),
                                                              topo.nvls_chunk_bytes, topo.nvls_tree_max_chunk_bytes);
}

}  // namespace

int nvls_tree_chunks(const Topology& topo, double size_bytes, const NvlsOptions& options) {
  const int heads = std::max(1, static_cast<int>(nvls_tree_heads(topo).size()));
  const int families = 2 * heads;
  const double per_channel = size_bytes / families / channels_per_family(options);  // = S / (channels x heads)
  const double c = std::ceil(per_channel / nvls_tree_chunk(topo, size_bytes, heads, options));
  return clamp_chunks(c, options.max_chunks);
}

Schedule nvls_tree_schedule(const Topology& topo, const std::string& collective, double size_bytes, Proto proto) {
  check_common(topo, "NVLSTree", proto);
  return nvls_tree_schedule(topo, collective, size_bytes, NvlsOptions{});
}

Schedule nvls_tree_schedule(const Topology& topo, const std::string& collective, double size_bytes,
                            const NvlsOptions& options) {
  check_common(topo, "NVLSTree", Proto::Simple);
  if (collective != "all_reduce")
    throw InputError("--collective", "NVLSTree runs all_reduce only in NCCL 2.30 (got " + collective + ")");
  const int nodes = topo.num_nodes();
  if (nodes < 2) throw InputError("--algo", "NVLSTree needs several nodes (NCCL disables it on one node); use NVLS");
  if (topo.nics_per_node() < 1) throw InputError("--algo", "NVLSTree needs NICs between the nodes");
  Schedule s;
  s.collective = collective;
  s.algorithm = "nvls_tree";
  // Family 2h + t belongs to head h, the GPU of NIC rail h: the rail rotation maps it onto 2(h+1) + t
  // (the symmetry quotient, sim/symmetry.h; the NVSwitch and its reducer stay fixed).
  s.families_follow_rails = true;
  s.families_per_rail = 2;
  s.nranks = topo.num_gpus();
  s.size_bytes = size_bytes;
  const int gpn = topo.gpus_per_node();
  for (int v = 0; v < nodes; ++v) {
    s.switches.push_back(vertex_name(topo, VertexKind::NvSwitch, v));
    s.switches.push_back(vertex_name(topo, VertexKind::Reducer, v));
  }
  const auto sw = [&](int v) { return s.nranks + 2 * v; };
  const auto red = [&](int v) { return s.nranks + 2 * v + 1; };

  const std::vector<int> heads = nvls_tree_heads(topo);
  const int H = static_cast<int>(heads.size());
  const int families = 2 * H;
  const int chunks = nvls_tree_chunks(topo, size_bytes, options);
  const double c = size_bytes / families / chunks;  // bytes of one chunk of one family
  Builder b{topo, s, channels_per_family(options), {}};
  // A connection sends its chunks one after the other (a channel's warps, a NIC queue pair), as the
  // Tree's do (docs/tree.md): chunks in flight side by side would each crawl at a share of the rate.
  s.fifo_connections = true;
  // Every network hop of a family carries all its bytes, so capping those connections caps the family.
  // A channel's ceiling is shared by the H heads it serves: a family's connection (its records stand
  // for channels_per_family channels) gets 1/H of it per channel.
  s.inter_node_channel_cap_Bps = options.channel_rate_cap_Bps / H;

  // NCCL's double binary tree over the nodes: tree 0 and its mirror (or shift).
  const NodeTree trees[2] = {nccl_node_tree(nodes, 0), nccl_node_tree(nodes, 1)};

  std::vector<std::uint32_t> up(nodes), down(nodes);
  // result[f][v]: the last ld_reduce sum of family f delivered to node v's head.
  std::vector<std::vector<std::uint32_t>> result_of(families, std::vector<std::uint32_t>(nodes));
  for (int k = 0; k < chunks; ++k) {
    for (int h = 0; h < H; ++h) {
      for (int t = 0; t < 2; ++t) {
        const NodeTree& nt = trees[t];
        const int f = 2 * h + t;
        const int rail = h;
        auto head = [&](int v) { return v * gpn + heads[h]; };
        // ld_reduce inside every node: operands and the sum to the head run concurrently. The first
        // wave pays NVLSTree's intra-node latency (the operation's launch, baseLat being 0).
        // A head's reduce warps issue one chunk after the other: chunk k's ld_reduce starts when chunk
        // k-1's sum has arrived (without this, the engine's window would run several chunks side by
        // side at a fraction of the rate each, and the first sum would come late).
        const double intra = k == 0 ? options.tree_intra_s : 0.0;
        std::vector<std::uint32_t>& result = result_of[f];
        for (int v = 0; v < nodes; ++v) {
          std::vector<std::uint32_t> prev;
          if (k > 0) prev.push_back(result[v]);
          for (int i = 0; i < gpn; ++i) b.add(v * gpn + i, red(v), -1, c, intra, k, f, 1, prev);
          result[v] = b.add(red(v), head(v), -1, c, intra, k, f, 1, prev);
        }
        // Up the tree: a head sends once it has its node's sum and its children's partial sums.
        for (auto it = nt.top_down.rbegin(); it != nt.top_down.rend(); ++it) {
          const int v = *it;
          if (v == nt.root) continue;
          std::vector<std::uint32_t> deps{result[v]};
          for (int ch : nt.children[v]) deps.push_back(up[ch]);
          up[v] = b.add(head(v), head(nt.parent[v]), rail, c, options.net_step_s, k, f, 1, deps);
        }
        // Down the tree, and multimem.st of the result into every node as soon as its head has it
        // (the store and the switch's copies are concurrent: cut-through).
        for (int v : nt.top_down) {
          std::vector<std::uint32_t> have;
          if (v == nt.root) {
            have.push_back(result[v]);
            for (int ch : nt.children[v]) have.push_back(up[ch]);
          } else {
            have.push_back(down[v]);
          }
          for (int ch : nt.children[v]) down[ch] = b.add(head(v), head(ch), rail, c, options.net_step_s, k, f, 1, have);
          b.add(head(v), sw(v), -1, c, 0.0, k, f, 1, have);
          for (int i = 0; i < gpn; ++i) b.add(sw(v), v * gpn + i, -1, c, 0.0, k, f, 1, have);
        }
      }
    }
  }
  return s;
}

double nvls_tree_chunk_cap_bytes(const Topology& topo, const NvlsOptions& options) {
  const int heads = std::max(1, static_cast<int>(nvls_tree_heads(topo).size()));
  // The nominal chunk: the one of sizes past every shrinking threshold.
  const double nominal = nvls_tree_chunk(topo, 1e18, heads, options);
  const double cap = std::max(1, options.max_chunks) * nominal * 2 * heads * channels_per_family(options);
  // Past the cap the steady state extends the pipeline with nominal chunks: valid only where half of
  // the cap already runs them.
  return nvls_tree_chunk(topo, cap / 2, heads, options) == nominal ? cap : 0.0;
}

namespace {

// Per-direction bandwidth of GPU 0's link to its NVSwitch and of node 0's reduction link.
double gpu_switch_Bps(const Topology& topo) {
  VertexId sw;
  if (!topo.find_vertex(VertexKind::NvSwitch, 0, 0, -1, &sw)) throw std::logic_error("no NVSwitch");
  return topo.link(topo.edge_between(topo.gpu(0), sw)).bandwidth_Bps;
}
double reduce_Bps(const Topology& topo) {
  VertexId sw, red;
  if (!topo.find_vertex(VertexKind::NvSwitch, 0, 0, -1, &sw) || !topo.find_vertex(VertexKind::Reducer, 0, 0, -1, &red))
    throw std::logic_error("no NVLS reducer");
  return topo.link(topo.edge_between(sw, red)).bandwidth_Bps;
}

// The bandwidth term of nvls_closed_form_time_s: the busiest of the GPU links and the reducer.
double nvls_bandwidth_time_s(const Topology& topo, const std::string& collective, double size_bytes) {
  const double n = topo.num_gpus();
  // Multimem bytes weigh 1 / nvls_efficiency on the links and through the reducer.
  const double e = topo.nvls_efficiency;
  const double B = gpu_switch_Bps(topo) * e, R = reduce_Bps(topo) * e, S = size_bytes;
  if (collective == "all_reduce") return std::max(S * (1 + 1 / n) / B, n * S / R);
  if (collective == "reduce_scatter") return std::max(S / B, n * S / R);
  if (collective == "all_gather") return S / B;
  throw InputError("--collective", "NVLS runs all_reduce, reduce_scatter and all_gather (got " + collective + ")");
}

}  // namespace

double nccl_nvls_chunk_bytes(double size_bytes, int channels, int heads, double nvls_chunk_bytes) {
  double chunk = nvls_chunk_bytes;
  const double ops = static_cast<double>(std::max(1, channels)) * std::max(1, heads);  // (channel, head) units
  if (size_bytes < 64 * ops * chunk && chunk > 65536) chunk = 65536;
  if (size_bytes < 8 * ops * chunk && chunk > 32768) chunk = 32768;
  if (size_bytes < 2 * ops * chunk && chunk > 16384) chunk = 16384;
  return chunk;
}

int nvls_kernel_stages(const std::string& collective) { return collective == "all_reduce" ? 3 : 2; }

double nvls_pipeline_fill_s(const Topology& topo, const std::string& collective, double size_bytes,
                            const NvlsOptions& options) {
  const double loop = static_cast<double>(std::max(1, options.channels)) * one_node_heads(topo, options) *
                      one_node_chunk_bytes(topo, size_bytes, options);
  return (nvls_kernel_stages(collective) - 1) * nvls_bandwidth_time_s(topo, collective, std::min(size_bytes, loop));
}

std::string nvls_replay_note(const Topology& topo, const std::string& collective, double size_bytes,
                             const NvlsOptions& options) {
  const double chunk = one_node_chunk_bytes(topo, size_bytes, options);
  const int heads = one_node_heads(topo, options);
  const double loop = static_cast<double>(std::max(1, options.channels)) * heads * chunk;
  const int stages = nvls_kernel_stages(collective);
  char line[400];
  std::snprintf(line, sizeof line,
                "Replay (ccsim's engine, docs/nvls.md): NCCL's NVLS kernel passes each chunk through %d warp groups; "
                "chunk %.0f KiB x %d channels x %d heads = loops of %.2f MiB; pipeline fill %d loop(s) = %.2f us, "
                "which NCCL's model above does not count\n",
                stages, chunk / 1024, options.channels, heads, loop / (1024.0 * 1024.0), stages - 1,
                nvls_pipeline_fill_s(topo, collective, size_bytes, options) * 1e6);
  return line;
}

double nvls_closed_form_time_s(const Topology& topo, const std::string& collective, double size_bytes,
                               const NvlsOptions& options) {
  return options.intra_s + nvls_pipeline_fill_s(topo, collective, size_bytes, options) +
         nvls_bandwidth_time_s(topo, collective, size_bytes);
}

double nvls_tree_closed_form_time_s(const Topology& topo, double size_bytes, const NvlsOptions& options) {
  const int nodes = topo.num_nodes();
  const std::vector<int> heads = nvls_tree_heads(topo);
  const double H = static_cast<double>(heads.size());
  const double C = nvls_tree_chunks(topo, size_bytes, options);
  const double c = size_bytes / (2 * H) / C;
  int d = 0;
  while ((1 << d) < nodes) ++d;
  const double B = gpu_switch_Bps(topo) * topo.nvls_efficiency;  // multimem data rate (head <-> switch)
  const double beta = route_bandwidth_Bps(topo, route_between_gpus(topo, heads[0], topo.gpus_per_node() + heads[0], 0));
  // A connection's cap (NCCL's channel ceiling) bounds it whatever its share of the NIC.
  const double cap = options.channel_rate_cap_Bps * channels_per_family(options) / H;
  const auto capped = [&](double rate) { return cap > 0 ? std::min(rate, cap) : rate; };
  // The busiest NIC direction carries 2 connections with 2 nodes (up of one tree, down of the other)
  // and 4 beyond (an interior node sends up + 2 down in one tree and up in the other).
  const double r = capped(beta / (nodes == 2 ? 2.0 : 4.0));
  const double n = topo.gpus_per_node();
  const double first_ld_reduce = options.tree_intra_s + 2 * H * c / B;  // every family's chunk 0 at once
  // The pipeline: the first chunk up and down the tree at the idle rate, then one chunk per period of
  // the busiest NIC direction (FIFO connections), the last one stored by multimem.
  const double first_chunk = first_ld_reduce + 2 * d * (options.net_step_s + c / capped(beta)) + c / B;
  const double network = first_chunk + (C - 1) * c / r;
  // NVLink: every GPU moves S (1 + 1/n) of multimem traffic each way.
  const double intra = options.tree_intra_s + size_bytes * (1 + 1 / n) / B;
  return std::max(network, intra);
}

double nvls_tree_channel_cap_Bps(const NcclTopoSummary& summary) {
  if (summary.nvls_channels < 1) return 0;
  // algBw = busBw x nRanks / (2 (nRanks - 1)) for NVLSTree all_reduce (ncclTopoTuneModel's ratio).
  const double algbw_GBps = nccl_busbw_ceiling_GBps(summary, Func::AllReduce, Algo::NVLSTree, Proto::Simple) *
                            summary.nranks / (2.0 * (summary.nranks - 1));
  return algbw_GBps * 1e9 / summary.nvls_channels;
}

}  // namespace ccsim
