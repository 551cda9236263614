// How fast one thread block of an NCCL kernel copies to a peer GPU: the rate of one channel of NCCL's
// P2P transport. NCCL runs each channel as one thread block (CTA); a send/recv or all-to-all message
// spreads over a few channels (4 for 16-64 MiB, doubling with the size: algorithms/p2p.cpp), so below
// NVLink's rate the channels, not the links, bound it. The measured rate per channel follows the SM
// clock: 13.8 GB/s on A100 (1.41 GHz), 19.9-20.5 on H100 (1.98 GHz), about 9.8 bytes per SM cycle
// (docs/accuracy.md "A P2P channel's copy rate"). Units: GB/s = 1e9 B/s per direction.
#pragma once
#include <string>

namespace ccsim {

// Bytes one P2P channel moves per SM clock cycle: 55.19 GB/s on 4 channels at 64 MiB of a 2-GPU A100
// sendrecv (NVIDIA/nccl-tests#331, NCCL 2.22.3) over A100's 1.41 GHz boost clock.
constexpr double kP2pChannelBytesPerCycle = 55.19 / 4 / 1.41;

// The boost clock of the data-center part of a compute capability, GHz (0: not known): sm70 V100
// SXM2 1.53, sm75 T4 1.59, sm80 A100 SXM 1.41, sm86 A40 1.74, sm89 L40S 2.52, sm90 H100/H200 SXM
// 1.98, sm100 and later B200 1.98, sm120 RTX 5090 2.41 (NVIDIA's datasheets; B200's from hmc-tech.com).
double gpu_boost_clock_GHz(int compCap);

// The default per-channel rate of NCCL's P2P transport for an arch ("sm90"), bytes/s: the bytes per
// cycle above at the arch's boost clock; 0 (no cap) for an arch whose clock is not known.
double default_p2p_channel_Bps(const std::string& gpu_arch);

// The default cap on one channel of a ring across nodes for an arch, bytes/s: its P2P channel rate
// where a channel's copy was measured on that arch (sm80: NVIDIA/nccl-tests#331; sm90: an H100 node's
// sendrecv), 0 (no cap) elsewhere. Hopper rings across nodes hold 20.0-21.2 GB/s per channel on five
// clusters, the P2P channel's rate; Blackwell's run faster per channel than its clock-scaled default
// (docs/accuracy.md "A ring channel across nodes").
double default_net_ring_channel_Bps(const std::string& gpu_arch);

}  // namespace ccsim
