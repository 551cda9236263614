#include "algorithms/custom_allreduce.h"

#include <algorithm>

#include "common/error.h"
#include "common/units.h"
#include "topologies/routing.h"

namespace ccsim {

const char* to_string(CustomArVariant v) { return v == CustomArVariant::OneShot ? "one-shot" : "two-shot"; }

CustomArVariant vllm_custom_ar_variant(int world_size, double size_bytes) {
  if (world_size == 2) return CustomArVariant::OneShot;
  if ((world_size <= 4 && size_bytes < 512.0 * 1024) || (world_size <= 8 && size_bytes < 256.0 * 1024))
    return CustomArVariant::OneShot;
  return CustomArVariant::TwoShot;
}

namespace {

bool all_pairs_on_nvlink(const Topology& topo) {
  const int n = topo.num_gpus();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      const Route r = route_between_gpus(topo, i, j);
      if (r.empty()) return false;
      for (const Hop& h : r)
        if (topo.link(h.edge).kind != LinkKind::NvLink) return false;
    }
  return true;
}

}  // namespace

void check_custom_allreduce(const Topology& topo, double size_bytes, const CustomAllreduceOptions& options,
                            const std::string& where) {
  const int n = topo.num_gpus();
  if (topo.num_nodes() != 1)
    throw InputError(where, "vLLM's custom all-reduce works inside one node only (it maps peers' buffers over "
                            "NVLink/PCIe P2P); this topology has " + std::to_string(topo.num_nodes()) + " nodes");
  if (n != 2 && n != 4 && n != 6 && n != 8)
    throw InputError(where, "vLLM's custom all-reduce supports 2, 4, 6 or 8 GPUs, not " + std::to_string(n));
  if (!all_pairs_on_nvlink(topo)) {
    if (n > 2)
      throw InputError(where, "vLLM disables its custom all-reduce on more than two GPUs that are not all "
                              "connected by NVLink (" + std::to_string(n) + " GPUs here)");
    if (topo.pcie_p2p == "none")
      throw InputError(where, "vLLM's custom all-reduce needs GPU peer-to-peer access; this node has PCIe P2P "
                              "disabled (node.pcie.p2p = none)");
  }
  if (!(size_bytes < options.max_bytes))
    throw InputError(where, "vLLM runs its custom all-reduce below its " + format_bytes(options.max_bytes) +
                                " buffer only (larger tensors go to NCCL); size " + format_bytes(size_bytes));
}

Schedule custom_allreduce_schedule(const Topology& topo, double size_bytes, const CustomAllreduceOptions& options) {
  check_custom_allreduce(topo, size_bytes, options);
  const int n = topo.num_gpus();
  const CustomArVariant v = vllm_custom_ar_variant(n, size_bytes);
  Schedule s;
  s.collective = "all_reduce";
  s.algorithm = std::string("custom ") + to_string(v);
  s.nranks = n;
  s.size_bytes = size_bytes;
  s.transfer_rate_cap_Bps = options.timing.read_Bps > 0 ? options.timing.read_Bps / (n - 1) : 0.0;
  // The fixed delay of a read is the step's software cost: the physical route latency is on the links.
  const auto add_step = [&](int step, double bytes, double fixed_s, const std::vector<std::uint32_t>& deps) {
    std::vector<std::uint32_t> ids;
    for (int reader = 0; reader < n; ++reader)
      for (int peer = 0; peer < n; ++peer) {
        if (peer == reader) continue;
        Transfer t;
        t.src = peer;  // the data moves from the peer's buffer to the reading GPU
        t.dst = reader;
        t.bytes = bytes;
        t.delay_s = fixed_s;
        t.step = step;
        ids.push_back(s.add(t, deps));
      }
    return ids;
  };
  if (v == CustomArVariant::OneShot) {
    add_step(0, size_bytes, options.timing.launch_s, {});
  } else {
    const auto first = add_step(0, size_bytes / n, options.timing.launch_s, {});
    add_step(1, size_bytes / n, options.timing.stage_barrier_s, first);
  }
  return s;
}

double custom_allreduce_time_s(const Topology& topo, double size_bytes, const CustomAllreduceOptions& options) {
  check_custom_allreduce(topo, size_bytes, options);
  const int n = topo.num_gpus();
  const CustomArVariant v = vllm_custom_ar_variant(n, size_bytes);
  const double per_peer = v == CustomArVariant::OneShot ? size_bytes : size_bytes / n;
  // Busiest link direction of one step: every GPU reads per_peer from every peer.
  LinkLoad load(topo);
  double latency = 0;
  for (int reader = 0; reader < n; ++reader)
    for (int peer = 0; peer < n; ++peer) {
      if (peer == reader) continue;
      const Route r = route_between_gpus(topo, peer, reader);
      latency = std::max(latency, route_latency_s(topo, r));
      for (const Hop& h : r) load.add(h, per_peer);
    }
  const double read_s = options.timing.read_Bps > 0 ? (n - 1) * per_peer / options.timing.read_Bps : 0.0;
  const double step_s = std::max(read_s, load.busiest().time_s);
  const int steps = v == CustomArVariant::OneShot ? 1 : 2;
  return options.timing.launch_s + (steps == 2 ? options.timing.stage_barrier_s : 0.0) + steps * (latency + step_s);
}

}  // namespace ccsim
