#include "scenarios/validate_causes.h"

#include <algorithm>
#include <cmath>

#include "algorithms/collectives.h"
#include "algorithms/nccl_channels.h"
#include "algorithms/nccl_model.h"
#include "algorithms/p2p.h"
#include "common/text.h"
#include "common/units.h"
#include "scenarios/launch_mode.h"
#include "topologies/nccl_env.h"
#include "topologies/nccl_hardware_figures.h"
#include "topologies/routing.h"

namespace ccsim {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size();
  return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

std::string pct(double fraction) { return strprintf("%.0f%%", 100 * fraction); }
std::string gbps(double v) { return strprintf("%.2f GB/s", v); }

// A -g N log's host cost per channel and GPU (docs/accuracy.md "what -g N costs per channel"): the
// least-squares slope of the measured time over per_thread x channels (ReportSize::nccl_channels)
// among the sizes whose predicted device time the base launches (`base_launch_s` each) bound, where
// NCCL runs at least 3 different channel counts; 0 without them. `worst_error`: the largest error
// among those sizes.
double launch_cost_per_channel_us(const ValidatedRun& run, int per_thread, double base_launch_s, int* fewest, int* most,
                                  double* worst_error) {
  std::vector<double> x, y;
  *fewest = *most = 0;
  *worst_error = 0;
  // The sizes whose device time the base launches alone exceed: the set does not depend on the
  // per-channel cost the topology describes, so the value offered predicts with itself.
  // run.sizes[i] is the prediction's size i (validate_run).
  const LaunchMode& launch = run.prediction.facts.launch;
  for (std::size_t i = 0; i < run.sizes.size() && i < run.prediction.sizes.size(); ++i) {
    const ValidatedSize& v = run.sizes[i];
    const ReportSize& z = run.prediction.sizes[i];
    const int channels = host_bound(z.device_time_us * 1e-6, launch, base_launch_s) ? z.nccl_channels : 0;
    if (channels < 1) continue;
    x.push_back(static_cast<double>(per_thread) * channels);
    y.push_back(v.measured_time_us);
    *worst_error = std::max(*worst_error, v.error);
    *fewest = *fewest ? std::min(*fewest, channels) : channels;
    *most = std::max(*most, channels);
  }
  std::vector<double> distinct = x;
  std::sort(distinct.begin(), distinct.end());
  if (std::unique(distinct.begin(), distinct.end()) - distinct.begin() < 3) return 0;
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return slope > 0 ? slope : 0;
}

// The plateau of the bandwidth side: the largest sizes (up to 3) of it, measured and predicted busbw.
struct Plateau {
  bool present = false;
  double measured_GBps = 0, predicted_GBps = 0;
  std::uint64_t from_bytes = 0, to_bytes = 0;
  double ratio() const { return predicted_GBps > 0 ? measured_GBps / predicted_GBps : 0; }
};

Plateau plateau(const ValidatedRun& run) {
  std::vector<const ValidatedSize*> bw;
  for (const auto& s : run.sizes)
    if (!s.latency_side) bw.push_back(&s);
  Plateau p;
  if (bw.empty()) return p;
  const std::size_t k = std::min<std::size_t>(3, bw.size());
  std::vector<double> m, q;
  for (std::size_t i = bw.size() - k; i < bw.size(); ++i) {
    m.push_back(bw[i]->measured_busbw_GBps);
    q.push_back(bw[i]->predicted_busbw_GBps);
  }
  p.present = true;
  p.measured_GBps = median(m);
  p.predicted_GBps = median(q);
  p.from_bytes = bw[bw.size() - k]->size_bytes;
  p.to_bytes = bw.back()->size_bytes;
  return p;
}

std::string range_text(std::uint64_t a, std::uint64_t b) {
  return a == b ? format_bytes(static_cast<double>(a))
                : format_bytes(static_cast<double>(a)) + ".." + format_bytes(static_cast<double>(b));
}

std::string plateau_text(const Plateau& p) {
  return "bandwidth side (" + range_text(p.from_bytes, p.to_bytes) + "): measured busbw " + gbps(p.measured_GBps) +
         ", " + strprintf("%.2f", p.ratio()) + " of the predicted " + gbps(p.predicted_GBps);
}

// The smallest size's measured and predicted time, for the latency side's evidence.
std::string latency_text(const ValidatedRun& run) {
  const ValidatedSize& s = run.sizes.front();
  return "latency side: median " + pct(std::fabs(run.latency.median_error)) +
         (run.latency.median_error > 0 ? " slower" : " faster") + " than predicted (" +
         strprintf("%.1f us measured, %.1f us predicted at ", s.measured_time_us, s.predicted_time_us) +
         format_bytes(static_cast<double>(s.size_bytes)) + ")";
}

// The algorithm NCCL is assumed to run at the largest size.
std::string largest_choice(const ValidatedRun& run) {
  return run.sizes.back().nccl_algorithm + "/" + run.sizes.back().nccl_protocol;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// NCCL_* settings of the run and where they were read, for the causes' evidence.
struct RunSettings {
  std::vector<std::string> env;
  std::string where;  // "echoed in FILE", "recorded in the environment of FILE", or both
};

RunSettings run_settings(const LogFacts& log, const DebugFacts& debug) {
  RunSettings s;
  if (debug.present) s.env = debug.env;
  bool recorded = false;
  for (const auto& e : log.nccl_env)
    if (std::find(s.env.begin(), s.env.end(), e) == s.env.end()) {
      s.env.push_back(e);
      recorded = true;
    }
  const bool echoed = debug.present && !debug.env.empty();
  if (echoed) s.where = "echoed in " + debug.file;
  if (recorded) s.where += (echoed ? " and " : "") + std::string("recorded in the environment of ") + log.file;
  return s;
}

// Sizes whose out-of-place and in-place times differ by more than 1.5x, or whose time exceeds the next
// larger size's by 1.5x: one slow rank or interference in that measurement.
std::vector<std::string> spikes(const ValidatedRun& run) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < run.sizes.size(); ++i) {
    const ValidatedSize& s = run.sizes[i];
    const std::string at = format_bytes(static_cast<double>(s.size_bytes));
    if (s.measured_in_place_time_us && *s.measured_in_place_time_us > 0) {
      const double a = s.measured_time_us, b = *s.measured_in_place_time_us;
      if (std::max(a, b) > 1.5 * std::min(a, b)) {
        out.push_back(at + ": out-of-place " + strprintf("%.2f", a) + " us, in-place " + strprintf("%.2f", b) + " us");
        continue;
      }
    }
    if (i + 1 < run.sizes.size() && s.measured_time_us > 1.5 * run.sizes[i + 1].measured_time_us)
      out.push_back(at + ": " + strprintf("%.2f", s.measured_time_us) + " us, above the next size's " +
                    strprintf("%.2f", run.sizes[i + 1].measured_time_us) + " us");
  }
  return out;
}

// A validated size and the choice NCCL printed for it.
struct SizeChoice {
  const ValidatedSize* size;
  const DebugFacts::Choice* choice;
};

// The run's sizes whose choice the debug log prints. NCCL prints count x type size: the nccl-tests size
// for AllReduce, Broadcast and Reduce. For AllGather and ReduceScatter the lines that name the
// collective (NCCL 2.19+: "AllGather: N Bytes -> ...") count one rank's share, the older numeric lines
// the whole buffer (nBytes x nRanks), so each form is matched to the size it means.
std::vector<SizeChoice> printed_choices(const ValidatedRun& run, const DebugFacts& debug) {
  std::vector<SizeChoice> out;
  // NCCL prints a choice for the tuned collectives only (alltoall and sendrecv are grouped sends and
  // receives without an algorithm).
  const CollectiveInfo* info = find_collective(run.log.collective);
  if (!debug.present || !info || !info->tuner_func) return out;
  const std::string func = to_string(*info->tuner_func);
  const bool per_rank = func == "AllGather" || func == "ReduceScatter";
  for (const ValidatedSize& s : run.sizes) {
    for (const DebugFacts::Choice& c : debug.choices) {
      if (!c.collective.empty() && c.collective != func) continue;
      const bool share = per_rank && !c.collective.empty();
      const bool same = share ? run.log.ranks > 0 && c.bytes * static_cast<std::uint64_t>(run.log.ranks) == s.size_bytes
                              : c.bytes == s.size_bytes;
      if (!same) continue;
      out.push_back({&s, &c});
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<LikelyCause> likely_causes(const ValidatedRun& run, const Topology& topo, const DebugFacts& debug,
                                       const PredictionReport* ring_only, double tolerance, const NcclVersion& version) {
  std::vector<LikelyCause> causes;
  const LogFacts& log = run.log;
  const Plateau bw = plateau(run);
  // Bandwidth-side causes need the plateau itself slow: a side slower only on its way to the plateau
  // points at per-operation costs (latency side's causes).
  const bool bw_side_slow = run.bandwidth.verdict == Verdict::Slower;
  const bool bw_slow = bw_side_slow && bw.present && bw.ratio() < 1 - tolerance;
  const bool approach_slow = bw_side_slow && !bw_slow;
  const bool bw_fast = run.bandwidth.verdict == Verdict::Faster;
  const bool lat_slow = run.latency.verdict == Verdict::Slower;
  const int nodes = topo.num_nodes();
  const auto add = [&](const std::string& id, const std::string& title, const std::string& evidence,
                       const std::string& next, bool informational = false) {
    causes.push_back({id, title, evidence, next, informational});
  };
  bool bw_explained = false;
  // The network's checks differ by transport: verbs (InfiniBand, RoCE), EFA (libfabric) or TCP (sockets,
  // GPU-direct TCP).
  const Transport transport = topo.network.transport;
  const bool verbs_transport = transport == Transport::InfiniBand || transport == Transport::RoCE;
  const bool gpudirect_tcp = transport == Transport::GpuDirectTcpx || transport == Transport::GpuDirectTcpxo;

  // Ring-only plateau, for NVLS and the 2-node ring limit.
  double ring_plateau_GBps = 0;
  if (ring_only && bw.present) {
    std::vector<double> q;
    for (const auto& s : ring_only->sizes)
      if (s.row.size_bytes >= bw.from_bytes && s.row.size_bytes <= bw.to_bytes) q.push_back(s.row.oop_busbw_GBps);
    ring_plateau_GBps = median(q);
  }

  // --- bandwidth side ---
  if (bw_slow && bw.present && nodes == 1 && (topo.nvlinks_per_gpu == 0 || !topo.nccl_p2p || debug.shm_connections > 0)) {
    const bool some_shm = nccl_any_shm_pair(topo);
    std::string ev = plateau_text(bw) + ", predicted " +
                     (topo.nvlinks_per_gpu > 0 && topo.nccl_p2p ? std::string("over NVLink")
                      : !topo.nccl_p2p ? std::string("through NCCL's SHM transport (node.nvlink.nccl_p2p=false)")
                      : topo.pcie_p2p == "none" ? std::string("through NCCL's SHM transport (node.pcie.p2p=none)")
                      : some_shm
                          ? "partly through NCCL's SHM transport (GPU pairs farther than NCCL's P2P level " +
                                std::string(nccl_level_name(topo.pcie_p2p_level)) + ", node.pcie.nccl_p2p_level)"
                          : "over PCIe peer-to-peer (node.pcie.p2p=" + topo.pcie_p2p + ")");
    const bool shm = topo.pcie_p2p == "none" || !topo.nccl_p2p || some_shm;
    std::string per_channel;  // the SHM rate per channel the log's plateau implies, for another run
    if (shm && topo.shm_channel_Bps > 0) {
      ev += "; the topology already routes NCCL's SHM transport (through pinned host memory, both PCIe links and "
            "host memory twice) at " + gbps(topo.shm_channel_Bps / 1e9) + " per channel (node.pcie.shm_channel_GBps)";
    } else if (shm) {
      ev += "; the topology already routes NCCL's SHM transport (through pinned host memory, both PCIe links and "
            "host memory twice), but at the links' DMA rates (times " + strprintf("%.2g", topo.shm_two_way_efficiency) +
            " where a GPU both sends and receives through it, node.pcie.shm_two_way_efficiency): the rate one "
            "channel's thread block reaches with its loads from (and stores to) pinned host memory over PCIe is lower "
            "on this host and not given (node.pcie.shm_channel_GBps)";
      // A ring connection carries busbw (each rank sends busbw x time bytes to its successor), over the
      // prediction's channels.
      const int channels = run.prediction.facts.channels;
      if (channels > 0 && bw.measured_GBps > 0)
        per_channel = strprintf("%.3g", bw.measured_GBps / channels);
    } else {
      ev += "; a copy staged through host memory crosses the CPU's root complex and host memory instead of one "
            "switch hop";
    }
    if (debug.present)
      ev += "; " + std::to_string(debug.shm_connections) + " connection(s) via SHM and " +
            std::to_string(debug.p2p_ipc_connections) + " via P2P in " + debug.file;
    std::string next =
        "nvidia-smi topo -p2p r (NS: peer access not supported, as on GeForce cards); NCCL_DEBUG=INFO: 'via SHM' "
        "instead of 'via P2P/IPC' in the Channel lines confirms it; check NCCL_P2P_DISABLE / NCCL_P2P_LEVEL; on "
        "servers, ACS on the PCIe switches (lspci -vvv | grep ACSCtl: SrcValid+ sends peer traffic up to the root "
        "complex) and the IOMMU (iommu=pt); cuda-samples p2pBandwidthLatencyTest measures the P2P rate";
    if (!per_channel.empty())
      next += "; to predict other runs through SHM on this host: the plateau, " + gbps(bw.measured_GBps) + " busbw over " +
              std::to_string(run.prediction.facts.channels) + " channels, is " + per_channel +
              " GB/s per channel: --set node.pcie.shm_channel_GBps=" + per_channel +
              " (ccsim-probe-cuda --tests host_kernel measures it without NCCL, docs/probes.md)";
    add("p2p-host-staged", "P2P disabled or redirected through the host (SHM transport, ACS / IOMMU)", ev, next);
    bw_explained = true;
  }
  // sendrecv across nodes: each network peer's messages run on NCCL's few channels per network peer
  // (NCCL_NCHANNELS_PER_NET_PEER unset: up to 2.28, 2; from 2.29 one per 14 GB/s of NIC), and the
  // network path moves less per channel than a NIC carries (NVIDIA/nccl#1272: 18.3 GB/s on 2 channels,
  // 24.2 on 4, one Slingshot NIC; docs/accuracy.md "A P2P channel's copy rate"), a rate ccsim does not model.
  if (bw_slow && bw.present && nodes > 1 && log.collective == "sendrecv" && run.prediction.facts.p2p) {
    NcclTopoSummary summary = summarize_for_nccl(topo);
    summary.coll_channels = run.prediction.facts.nccl_coll_channels;
    summary.nccl_version = version;
    const P2pConfig cfg = nccl_p2p_config(topo, summary);
    const int channels = nccl_p2p_op(cfg, static_cast<double>(bw.to_bytes), true).channels;
    add("p2p-net-channels", "Few channels per network peer: NCCL's network path per channel below the NIC",
        plateau_text(bw) + "; each message to the other node runs on " + std::to_string(channels) +
            " channel(s) per peer (NCCL_NCHANNELS_PER_NET_PEER unset: " + version.label() + "'s rule), " +
            gbps(bw.measured_GBps / channels) + " per channel measured",
        "rerun with NCCL_NCHANNELS_PER_NET_PEER=4 (NVIDIA/nccl#1272: 18.3 -> 24.2 GB/s on one Slingshot NIC); "
        "--env NCCL_NCHANNELS_PER_NET_PEER=4 predicts its channels; NCCL 2.28 and older give a network peer 2 "
        "channels, 2.29 and later one per 14 GB/s of NIC: --nccl-version predicts the log's own rule");
  }
  if (bw_slow && bw.present && nodes > 1) {
    const bool debug_no_gdr = debug.present && debug.net_connections > 0 && debug.net_gdr_connections == 0;
    // Not where the description already stages through host memory (gpudirect_rdma false, TCP sockets):
    // the prediction then includes the staging, so it cannot explain a slower plateau.
    if (topo.network.gpudirect_rdma && (!debug.present || debug_no_gdr)) {
      std::string ev = plateau_text(bw);
      ev += debug_no_gdr ? "; " + std::to_string(debug.net_connections) + " network connection(s) without GDRDMA in " + debug.file
                         : "; without GPUDirect RDMA every network byte is staged through host memory and crosses "
                           "the CPU's root complex twice";
      if (transport == Transport::Efa)
        add("gdr-off", "GPUDirect RDMA off on EFA, or the GPU-NIC path crossing the CPU root complex", ev,
            "NCCL_DEBUG=INFO: the connection lines say 'via NET/AWS Libfabric/<n>/GDRDMA' when GDR is on; "
            "FI_EFA_USE_DEVICE_RDMA=1 (p4d, p5), the efa provider in use (fi_info -p efa), and aws-ofi-nccl's "
            "topology: each GPU's EFA devices under its PCIe switch (nvidia-smi topo -m: PIX/PXB)");
      else if (gpudirect_tcp)
        add("gdr-off", "GPU-direct TCP off: the net plugin not loaded, NCCL on its socket transport through host memory",
            ev,
            "NCCL_DEBUG=INFO: the 'Loaded net plugin' line and the connection lines name the transport (NET/Socket "
            "means the GPUDirect-TCPX/TCPXO plugin is not in use); check that the receive data path manager "
            "(RxDM) runs beside the job, the plugin library is on LD_LIBRARY_PATH, and NCCL_NET / the plugin's "
            "NIC list name every GPU NIC; nvidia-smi topo -m: each GPU's NICs at PIX/PXB");
      else
        add("gdr-off", "GPUDirect RDMA off, or the GPU-NIC path crossing the CPU root complex", ev,
            "NCCL_DEBUG=INFO: connection lines 'via NET/IB/<n>/GDRDMA' mean GDR is on; check the nvidia-peermem "
            "module (lsmod | grep nvidia_peermem) or dma-buf support, NCCL_NET_GDR_LEVEL, and nvidia-smi topo -m "
            "(GPU and NIC should be PIX/PXB, not PHB/NODE/SYS)");
    }
    const int nics = std::max(1, topo.nics_per_node());
    const int k = static_cast<int>(std::lround(bw.ratio() * nics));
    std::string ev = plateau_text(bw);
    if (nics > 1 && k >= 1 && k < nics) ev += strprintf(", about %d of %d NICs' worth", k, nics);
    add("nic-missing-or-slow", "A NIC missing, slower or on the wrong NUMA node", ev,
        transport == Transport::Efa
            ? "fi_info -p efa lists every EFA device (p5: 32, p4d: 4); NCCL_DEBUG=INFO: aws-ofi-nccl's 'NET/OFI' lines "
              "name the devices and rails it uses and the connection lines the NET device of each channel; "
              "nvidia-smi topo -m: each GPU has its EFA devices at PIX/PXB; the EFA installer's fi_pingpong / "
              "nccl-tests sendrecv_perf between two nodes for one device's rate"
        : verbs_transport
            ? "ibstat / ibv_devinfo: every HCA Active at the expected rate; NCCL_IB_HCA lists all of them; nvidia-smi "
              "topo -m: each GPU has a NIC at PIX/PXB (a NIC behind the other socket costs the inter-socket link); "
              "ib_write_bw --use_cuda between each NIC pair; NCCL_DEBUG=INFO 'NET/IB : Using [0]mlx5_0:1/IB ...' lists "
              "the NICs NCCL found"
            : "ethtool <if> (Speed) and ip link: every GPU NIC up at the expected rate; NCCL_SOCKET_IFNAME (or the "
              "GPU-direct TCP plugin's own NIC list) names all of them; nvidia-smi topo -m: each GPU has a NIC at "
              "PIX/PXB; NCCL_DEBUG=INFO lists the interfaces NCCL found ('NET/Socket : Using ...' or the plugin's "
              "line); iperf3 between each NIC pair for the line rate");
    bw_explained = true;
  }
  if (ring_only && bw.present && ring_plateau_GBps > 0 && (bw_slow || (debug.present && !debug.nvls)) && topo.nvls_capable &&
      run.sizes.back().nccl_algorithm.rfind("NVLS", 0) == 0 &&
      std::fabs(bw.measured_GBps / ring_plateau_GBps - 1) < std::fabs(bw.ratio() - 1)) {
    std::string ev = plateau_text(bw) + " with " + largest_choice(run) + "; the Ring-only prediction (" +
                     gbps(ring_plateau_GBps) + ") is closer";
    if (debug.present) ev += std::string("; ") + debug.file + (debug.nvls ? " shows NVLS set up" : " shows no NVLS channels");
    add("nvls-unavailable", "NVLS unavailable (or excluded), NCCL fell back to Ring", ev,
        "NCCL_DEBUG=INFO: 'NVLS multicast support is not available' or 0 nvls channels; check the fabric manager "
        "(systemctl status nvidia-fabricmanager), NCCL_NVLS_ENABLE, driver >= 530 with NCCL >= 2.17, and that "
        "NCCL_ALGO does not exclude NVLS");
    bw_explained = true;
  }
  // The NCCL settings the run was made with: those NCCL echoed (its NCCL_DEBUG lines) and those the
  // log's own record of its environment holds (nccl-tests' JSON result file).
  const RunSettings settings = run_settings(log, debug);
  const auto has_setting = [&](const std::string& name) {
    return std::any_of(settings.env.begin(), settings.env.end(), [&](const std::string& e) { return e.rfind(name + "=", 0) == 0; });
  };
  if ((has_setting("NCCL_ALGO") || has_setting("NCCL_PROTO")) && (bw_slow || lat_slow)) {
    std::string set;
    for (const auto& e : settings.env)
      if (e.rfind("NCCL_ALGO=", 0) == 0 || e.rfind("NCCL_PROTO=", 0) == 0) set += (set.empty() ? "" : ", ") + e;
    add("forced-algorithm-or-protocol", "A forced algorithm or protocol (NCCL_ALGO / NCCL_PROTO)",
        set + " " + settings.where + "; ccsim predicted NCCL's default choice (" + largest_choice(run) +
            " at the largest size)",
        "unset them unless intended, or predict the same restriction: --env " + replace_all(set, ", ", " --env ") +
            " (or --algo ... --proto ...)");
  }
  if (bw_slow || lat_slow) {
    // Settings the run was made with that change NCCL's paths (NCCL_P2P_DISABLE, NCCL_NVLS_ENABLE, ...):
    // ccsim predicts them when told (--env), not from the log.
    std::vector<std::string> paths;
    for (const auto& e : settings.env) {
      const std::string name = e.substr(0, e.find('='));
      if (nccl_env_modelled(name) && name != "NCCL_ALGO" && name != "NCCL_PROTO") paths.push_back(e);
    }
    if (!paths.empty()) {
      std::string flags, listed;
      for (const auto& e : paths) {
        flags += (flags.empty() ? "--env " : " --env ") + e;
        listed += (listed.empty() ? "" : ", ") + e;
      }
      add("nccl-settings", "NCCL settings that change its paths",
          listed + " " + settings.where + "; ccsim predicted the hardware as described, without them unless --env gave them",
          "predict the run as it was made: " + flags + " (docs/topology.md \"NCCL environment\")");
    }
  }
  // A tuner plugin (aws-ofi-nccl's, Google's gIB one, a site's own) chooses algorithms, protocols and
  // channels from its own tables; ccsim predicts NCCL's model.
  {
    std::string plugin;
    if (debug.present && !debug.tuner_plugin.empty()) plugin = debug.tuner_plugin + " (loaded, " + debug.file + ")";
    for (const auto& e : settings.env)
      if (e.rfind("NCCL_TUNER_PLUGIN=", 0) == 0 || e.rfind("NCCL_TUNER_CONFIG_PATH=", 0) == 0)
        plugin += (plugin.empty() ? "" : "; ") + e + " " + settings.where;
    if (!plugin.empty() && !run.pass)
      add("tuner-plugin", "A tuner plugin chose instead of NCCL's model",
          "the run used a tuner plugin: " + plugin + "; ccsim's tuner is NCCL's own model (" + run.prediction.facts.cost_model +
              "), so where the plugin's table picks another algorithm, protocol or channel count the prediction is of "
              "another choice",
          "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING prints the plugin's choice per size: give that log with "
          "--nccl-debug to compare size by size, and --algo / --proto with its choice predicts what ran");
  }
  const int predicted_channels = run.prediction.facts.nccl_coll_channels;
  if (debug.present && debug.channels > 0 && predicted_channels > 0 && debug.channels != predicted_channels &&
      (bw_slow || lat_slow)) {
    // NCCL printed its channel count: ccsim's is an estimate of NCCL's topology search.
    const std::string n = std::to_string(debug.channels);
    add("channel-count", "NCCL ran another number of channels than ccsim estimated",
        debug.file + " prints " + n + " coll channels; ccsim predicted with " + std::to_string(predicted_channels) +
            " (its estimate of NCCL's search and doublings, and the channel settings given; ccsim explain shows how)",
        "predict with NCCL's count: --env NCCL_MIN_NCHANNELS=" + n + " --env NCCL_MAX_NCHANNELS=" + n +
            " (a setting the run had, NCCL_MAX_CTAS or a different search, makes the difference)");
  }
  // NCCL printed its choices (NCCL_DEBUG_SUBSYS=TUNING or COLL lines): size by size where they name the
  // run's sizes, else the algorithms it used against those ccsim assumed.
  const std::vector<SizeChoice> printed = printed_choices(run, debug);
  if (!printed.empty()) {
    std::string differ;
    int n_differ = 0;
    for (const SizeChoice& c : printed) {
      const std::string assumed = c.size->nccl_algorithm + "/" + c.size->nccl_protocol;
      const std::string ran = c.choice->algorithm + "/" + c.choice->protocol;
      if (assumed == ran) continue;
      if (++n_differ <= 6)
        differ += std::string(differ.empty() ? "" : "; ") + format_bytes(static_cast<double>(c.size->size_bytes)) + ": NCCL " +
                  ran + ", ccsim " + assumed;
    }
    if (n_differ > 6) differ += "; " + std::to_string(n_differ - 6) + " more";
    if (n_differ > 0) {
      add("nccl-chose-otherwise", "NCCL ran other algorithms or protocols than ccsim's tuner assumed",
          debug.file + " prints NCCL's choice at " + std::to_string(printed.size()) + " of the log's sizes; " +
              std::to_string(n_differ) + (n_differ == 1 ? " differs: " : " differ: ") + differ,
          "a tuner plugin, NCCL_ALGO / NCCL_PROTO, or a NCCL version whose tuning differs from " +
              run.prediction.facts.cost_model +
              ": --nccl-version with the log's version, or --algo / --proto with NCCL's choice, predicts what ran");
    } else {
      add("nccl-choices-agree", "NCCL's printed choices are ccsim's tuner's",
          debug.file + " prints NCCL's choice at " + std::to_string(printed.size()) +
              " of the log's sizes, each the algorithm and protocol ccsim predicted with",
          "the gap, if any, is the cost of what ran, not the choice", true);
    }
  } else if (debug.present && !debug.algorithms.empty() && (bw_slow || lat_slow)) {
    std::vector<std::string> assumed;
    for (const auto& s : run.sizes)
      if (std::find(assumed.begin(), assumed.end(), s.nccl_algorithm) == assumed.end()) assumed.push_back(s.nccl_algorithm);
    std::vector<std::string> missing;
    for (const auto& a : assumed)
      if (std::find(debug.algorithms.begin(), debug.algorithms.end(), a) == debug.algorithms.end()) missing.push_back(a);
    if (!missing.empty()) {
      std::string printed_algos, absent;
      for (const auto& a : debug.algorithms) printed_algos += (printed_algos.empty() ? "" : ", ") + a;
      for (const auto& a : missing) absent += (absent.empty() ? "" : ", ") + a;
      add("nccl-chose-otherwise", "NCCL ran other algorithms than ccsim's tuner assumed",
          debug.file + " shows NCCL choosing " + printed_algos + "; ccsim assumed " + absent + " for some sizes",
          "a tuner plugin, NCCL_ALGO, or a NCCL version whose tuning differs from " + run.prediction.facts.cost_model +
              "; predict with the algorithms NCCL used (ccsim predict --algo ...) to see whether the rest agrees");
    }
  }
  if (bw_slow && bw.present && nodes == 1 && !bw_explained) {
    std::string ev = plateau_text(bw) + " with " + largest_choice(run) + " over NVLink";
    if (debug.present && debug.channels > 0) ev += "; NCCL used " + std::to_string(debug.channels) + " channels (" + debug.file + ")";
    add("too-few-channels", "Too few channels (or SMs busy with other work)", ev,
        "NCCL_DEBUG=INFO: 'N coll channels' against NCCL's default for this GPU; check NCCL_MIN_NCHANNELS / "
        "NCCL_MAX_NCHANNELS / NCCL_NTHREADS and other processes on the GPUs (nvidia-smi)");
    bw_explained = true;
  }
  if (ring_only && bw.present && nodes == 2 && bw.measured_GBps > ring_plateau_GBps * (1 + tolerance)) {
    add("above-ring-limit", "busbw above the ring limit on 2 nodes: Tree / NVLSTree, not an error",
        "measured busbw " + gbps(bw.measured_GBps) + " at " + range_text(bw.from_bytes, bw.to_bytes) +
            " exceeds the Ring-only prediction " + gbps(ring_plateau_GBps) +
            ": busbw's factor 2(n-1)/n assumes ring traffic, while on 2 nodes a tree (NCCL: " + largest_choice(run) +
            ") sends each byte across the network once per direction",
        "nothing to fix; compare with the predicted " + largest_choice(run) + " rate (" + gbps(bw.predicted_GBps) + ")",
        true);
  }
  // A Simple ring across nodes held by its channels' copies (node.gpu.net_ring_channel_GBps), not its
  // links: a setting, the channel count, moves that bound.
  const ReportFacts& facts = run.prediction.facts;
  if (bw.present && facts.ring_channel_bound_GBps > 0 && facts.ring_channel_bound_GBps < 0.98 * facts.beta_Bps / 1e9) {
    const double per_channel_GBps = facts.ring_channel_bound_GBps / facts.ring_channel_bound_channels;
    const int needed = static_cast<int>(std::ceil(facts.beta_Bps / 1e9 / per_channel_GBps));
    add("ring-channels", "The ring's channels, not its links, bound its plateau across nodes (a setting)",
        std::to_string(facts.ring_channel_bound_channels) + " channels x " + gbps(per_channel_GBps) + " = " +
            gbps(facts.ring_channel_bound_GBps) + " busbw at most (one thread block's copy per channel, "
            "node.gpu.net_ring_channel_GBps), below the links' " + gbps(facts.beta_Bps / 1e9) + "; " + plateau_text(bw),
        "more channels raise it to the links: NCCL_MIN_NCHANNELS=" + std::to_string(needed) + " (or NCCL_MIN_CTAS) gives the "
            "ring enough (NVIDIA/nccl-tests#309: 320.7 -> 391.4 GB/s busbw on 8 H100 nodes with NCCL_MIN_CTAS=24); "
            "--env NCCL_MIN_NCHANNELS=" + std::to_string(needed) + " predicts it; a measured rate per channel: "
            "--set node.gpu.net_ring_channel_GBps=R (ccsim calibrate --topology fits it)",
        true);
  }
  if (bw_fast && bw.present) {
    add("hardware-faster-than-described", "Faster than predicted: the hardware description is slower than the machine",
        plateau_text(bw),
        "check the --topology / --set values against the machine (nvlink.GBps_per_link, nic.Gbps, nic.count, "
        "pcie.generation); ccsim predicts NCCL's default choice (" + largest_choice(run) + ")");
  }

  // --- latency side (and sizes slower only on their way to the bandwidth plateau) ---
  std::string approach;
  if (approach_slow) {
    const ValidatedSize* worst = nullptr;
    for (const auto& s : run.sizes)
      if (!s.latency_side && (!worst || s.error > worst->error)) worst = &s;
    approach = "; the bandwidth side is slower below its plateau too (" + pct(worst->error) + " at " +
               format_bytes(static_cast<double>(worst->size_bytes)) + ") while the plateau is " +
               strprintf("%.2f", bw.ratio()) + " of the prediction";
  }
  // Host costs show on the latency side, or on the approach to a plateau whose latency side is met. A
  // log without sizes below the knee gives no such evidence: an approach miss there is not the host's.
  const bool host_evidence = lat_slow || (approach_slow && run.latency.sizes > 0);
  const std::string latency_state = lat_slow ? latency_text(run) : std::string("latency side within tolerance");
  // The launch mode the prediction ran in (validate derives it from the log's header).
  const int per_thread = run.prediction.facts.launch.gpus_per_thread;
  // -g N: sizes the launches bound that grow with NCCL's channels beyond the tolerance are the host's
  // too, whatever the latency side's median says.
  int fewest = 0, most = 0;
  double channel_worst = 0;
  const double per_channel_us = log.gpus_per_process > 1
                                    ? launch_cost_per_channel_us(run, per_thread, topo.host_launch_s, &fewest, &most, &channel_worst)
                                    : 0.0;
  const bool per_channel_cost = per_channel_us * 1e-6 > topo.host_launch_per_channel_s + 0.005e-6;
  if ((host_evidence || (per_channel_cost && channel_worst > tolerance)) && log.gpus_per_process > 1) {
    // An iteration takes at least its thread's serial launches, so the log's fastest one bounds this
    // host's cost per launch from above. Where the prediction of that size is host-bound it is the
    // launches plus the last collective's share of the timed iterations (scenarios/launch_mode.h):
    // that share, the prediction less its launches, is taken off so that the offered value
    // reproduces the measured floor.
    const auto fastest = std::min_element(run.sizes.begin(), run.sizes.end(), [](const auto& a, const auto& b) {
      return a.measured_time_us < b.measured_time_us;
    });
    std::string bound;
    if (fastest != run.sizes.end()) {
      // The predicted launch of that size is node.cpu.launch_us plus the per-channel cost of the channels
      // NCCL runs there (scenarios/predict.cpp); the offered launch_us is the floor less the latter.
      const std::size_t at = static_cast<std::size_t>(fastest - run.sizes.begin());
      const int channels = at < run.prediction.sizes.size() ? run.prediction.sizes[at].nccl_channels : 0;
      const LaunchMode& launch = run.prediction.facts.launch;
      const double launch_s = group_launch_s(topo.host_launch_s, topo.host_launch_per_channel_s, channels, launch);
      const double per_channel_s = launch_s - topo.host_launch_s;
      const double launches_us = host_launch_time_s(launch, launch_s) * 1e6;
      const double share_us = fastest->predicted_time_us - launches_us;
      const double floor_us = fastest->measured_time_us - (share_us >= 0 && share_us < launches_us ? share_us : 0.0);
      const double per_launch_us = floor_us / per_thread - per_channel_s * 1e6;
      const std::string per_launch = strprintf("%.1f", per_launch_us);
      if (per_launch_us > topo.host_launch_s * 1e6)
        bound = "; its fastest iteration, " + strprintf("%.1f", fastest->measured_time_us) + " us at " +
                format_bytes(static_cast<double>(fastest->size_bytes)) + ", bounds this host's cost at " + per_launch +
                " us per launch: --set node.cpu.launch_us=" + per_launch + " predicts with that bound";
    }
    if (per_channel_cost) {
      const std::string value = strprintf("%.3f", per_channel_us);
      bound += "; the sizes its launches bound grow with the channels NCCL runs for them (" + std::to_string(fewest) +
               " to " + std::to_string(most) + "), " + value +
               " us per channel and GPU (a host cost of every launch, which one thread pays for each of its GPUs): "
               "--set node.cpu.launch_us_per_channel=" + value + " predicts with it";
    }
    add("single-process-multi-gpu", "One process drives several GPUs (-g / -t): launches serialised",
        latency_state + approach + "; the log runs " + std::to_string(log.gpus_per_process) + " GPUs per process (nThread " +
            std::to_string(log.threads_per_process) + " x nGpus), so one thread launches every GPU's kernel of each "
            "operation in turn, a cost one process per GPU does not pay; the prediction already holds " +
            std::to_string(per_thread) + " x " + strprintf("%.1f", topo.host_launch_s * 1e6) +
            " us of serial launches per iteration (node.cpu.launch_us: NCCL's enqueue and launch per "
            "communicator, as measured on a DGX-A100; a slower host or NCCL version pays more)",
        "rerun with one process per GPU (mpirun -np <ranks> ... -g 1) to measure the latency a training job sees" +
            bound);
  } else if (host_evidence) {
    add("host-overhead", "Latency above the model: launch and proxy overheads on the host",
        latency_state + approach,
        "CPU frequency scaling (cpupower frequency-info), process and memory binding to the GPU's NUMA node "
        "(numactl, mpirun --bind-to), NCCL_PROTO not excluding LL; CUDA graphs (-G 1) remove the launch cost");
  }

  // --- either side: a straggler ---
  const std::vector<std::string> spiky = spikes(run);
  const bool uniform_slow = lat_slow && bw_slow && run.latency.median_error > 0 &&
                            std::fabs(run.latency.median_error - run.bandwidth.median_error) <
                                0.3 * std::max(run.latency.median_error, run.bandwidth.median_error);
  if (!spiky.empty() || uniform_slow) {
    std::string ev;
    if (uniform_slow)
      ev = "every size is slower by a similar factor (latency side " + pct(run.latency.median_error) +
           ", bandwidth side " + pct(run.bandwidth.median_error) + ")";
    for (std::size_t i = 0; i < spiky.size() && i < 3; ++i) ev += (ev.empty() ? "" : "; ") + spiky[i];
    if (spiky.size() > 3) ev += strprintf("; %zu more", spiky.size() - 3);
    add("straggler", "One slow rank or interference (a straggler shows as every other rank waiting)", ev,
        "rerun with more iterations (-n 100 -w 20) and see whether it repeats; run all_reduce_perf on each node "
        "alone to find the slow one; nvidia-smi -q -d PERFORMANCE,CLOCK for throttling; check other jobs and CPU "
        "binding",
        !uniform_slow);
  }
  return causes;
}

}  // namespace ccsim
