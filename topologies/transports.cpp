#include "topologies/transports.h"

#include <stdexcept>

namespace ccsim {

const std::vector<TransportInfo>& transports() {
  static const std::vector<TransportInfo> all = [] {
    std::vector<TransportInfo> v;
    TransportInfo t;

    // InfiniBand verbs, GPUDirect RDMA: ib_write_bw reaches ~97% of the line rate; one-way small
    // messages take 1-2 us through one switch. NCCL's IB transport reports no latency to its tuner
    // (net_ib.cc, ncclIbGetProperties: "props->latency = 0; // Not set"), nor does RoCE (the same
    // transport) or the socket transport (net_socket.cc); Google's TCPX plugin neither (below).
    t = TransportInfo{};
    t.transport = Transport::InfiniBand, t.name = "ib", t.label = "IB";
    t.efficiency = 0.97, t.latency_us = 1.5, t.gpudirect_default = true;
    v.push_back(t);

    // RoCE v2: ~95% of the line rate (Ethernet/IP/UDP headers on top of IB's), 2-4 us one way.
    t = TransportInfo{};
    t.transport = Transport::RoCE, t.name = "roce", t.label = "RoCE";
    t.efficiency = 0.95, t.latency_us = 3.0, t.gpudirect_default = true;
    v.push_back(t);

    // NCCL's socket transport: payloads are copied through host memory by the proxy and the kernel
    // TCP stack, which cannot fill a 400 Gb/s NIC (seed document); 15-50 us one way.
    t = TransportInfo{};
    t.transport = Transport::TcpSockets, t.name = "tcp", t.label = "TCP";
    t.efficiency = 0.6, t.latency_us = 25.0, t.gpudirect_default = false;
    t.gpudirect_allowed = false;
    t.why_not = "NCCL's socket transport stages payloads through host memory; for TCP that moves payloads NIC<->GPU "
                "memory (Google's GPUDirect-TCPX/TCPXO) use transport tcpx or tcpxo";
    v.push_back(t);

    // Google's GPUDirect-TCPX (A3 High, nccl-plugin-gpudirecttcpx): the kernel's device-memory TCP
    // puts received payloads into GPU bounce buffers (headers stay in host memory) and NCCL's
    // receive kernel unpacks them into place; sends DMA from GPU memory. No host staging.
    // Efficiency 0.966: devmem TCP's measured goodput "96.6% line rate of each GPU/NIC pair, and
    // scales linearly for each NIC/GPU pair ... Line rate of each NIC/GPU pair is 200 Gb/sec" on A3
    // VMs (Mina Almasry, Google, netdev list, 2023-07-16, "Re: Memory providers multiplexing";
    // the Device Memory TCP RFC cover letter, 2023-07: "~96.6% line rate speeds with data sent and
    // received directly from/to device memory"). Latency: the plugin reports none to NCCL
    // (tcpxGetProperties: props->latency = 0) and no per-message figure is published; the data
    // still crosses the host's kernel TCP stack, so the socket transport's 25 us stands in.
    t = TransportInfo{};
    t.transport = Transport::GpuDirectTcpx, t.name = "tcpx", t.label = "TCPX";
    t.efficiency = 0.966, t.latency_us = 25.0, t.gpudirect_default = true;
    // The plugin's receive side is NCCL's unpack device (nccl-plugin-gpudirecttcpx ships the
    // unpack kernel's definitions, src/devcomm/unpack_defs1.h). TCPXO's plugin is not public, so it
    // keeps NCCL's host device type.
    t.unpack_device = true;
    t.host_staging_allowed = false;
    t.why_not = "GPUDirect-TCPX moves payloads NIC<->GPU memory by design; for host-staged sockets use transport tcp";
    v.push_back(t);

    // Google's GPUDirect-TCPXO (A3 Mega, nccl-plugin-gpudirect-tcpxo, "FasTrak"): the transfers are
    // offloaded to the IPU paired with each GPU (its Data Transfer Service, commands through the
    // LLCM device), zero-copy from and to GPU memory. No per-NIC achievable rate or latency of TCPXO
    // itself is published: the rate is devmem TCP's measured 96.6% of the same 200 Gb/s line
    // (above), the latency the socket transport's 25 us (docs/accuracy.md: A3 Mega's floor is
    // 123 us per all_reduce, not explained by this).
    t = TransportInfo{};
    t.transport = Transport::GpuDirectTcpxo, t.name = "tcpxo", t.label = "TCPXO";
    t.efficiency = 0.966, t.latency_us = 25.0, t.gpudirect_default = true;
    t.host_staging_allowed = false;
    t.why_not = "GPUDirect-TCPXO moves payloads NIC<->GPU memory by design; for host-staged sockets use transport tcp";
    v.push_back(t);

    // AWS's Elastic Fabric Adapter: the SRD protocol through libfabric's efa provider and the
    // aws-ofi-nccl net plugin (p4d, p5, trn), GPUDirect RDMA where the instance has it
    // (FI_EFA_USE_DEVICE_RDMA; p3dn has none). Latency 20 us per network step: aws-ofi-nccl's own
    // cost model of EFA (src/tuner/nccl_ofi_model.cpp: latency = internode steps x net_lat, with
    // TUNER_NET_LATENCY's default 20 us in nccl_ofi_param.h; on Simple it adds
    // TUNER_NET_COMP_OVERHEAD, 3 us, "~2 us in the device and ~1 us to write that completion up to
    // the host", which ccsim does not split by protocol). Plugin latency 75 us: what the plugin
    // reports to NCCL for p4d, p4de, p5 and p5e (src/platform-aws.cpp, the platform table's
    // .latency; p5en and later 35, p3dn 150: set node.nic.plugin_latency_us). Efficiency 0.95:
    // no EFA goodput figure is published; SRD runs over Ethernet, so RoCE's framing stands in.
    t = TransportInfo{};
    t.transport = Transport::Efa, t.name = "efa", t.label = "EFA";
    t.efficiency = 0.95, t.latency_us = 20.0, t.plugin_latency_us = 75.0, t.gpudirect_default = true;
    v.push_back(t);
    return v;
  }();
  return all;
}

const TransportInfo& transport_info(Transport t) {
  for (const auto& i : transports())
    if (i.transport == t) return i;
  throw std::logic_error("transport without defaults");
}

const TransportInfo* find_transport(const std::string& name) {
  for (const auto& i : transports())
    if (name == i.name) return &i;
  return nullptr;
}

std::vector<std::string> transport_names() {
  std::vector<std::string> names;
  for (const auto& i : transports()) names.push_back(i.name);
  return names;
}

}  // namespace ccsim
