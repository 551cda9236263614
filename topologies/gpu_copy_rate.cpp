#include "topologies/gpu_copy_rate.h"

#include "topologies/nccl_hardware_figures.h"

namespace ccsim {

double gpu_boost_clock_GHz(int cc) {
  if (cc >= 120) return 2.41;
  if (cc >= 90) return 1.98;  // H100/H200 SXM, B200
  if (cc >= 89) return 2.52;
  if (cc >= 86) return 1.74;
  if (cc >= 80) return 1.41;
  if (cc >= 75) return 1.59;
  if (cc >= 70) return 1.53;
  return 0.0;
}

double default_p2p_channel_Bps(const std::string& gpu_arch) {
  return kP2pChannelBytesPerCycle * gpu_boost_clock_GHz(compcap_from_arch(gpu_arch)) * 1e9;
}

double default_net_ring_channel_Bps(const std::string& gpu_arch) {
  const int cc = compcap_from_arch(gpu_arch);
  // The archs whose P2P channel rate is a measurement, not the bytes per cycle at an assumed clock.
  const bool measured = (cc >= 80 && cc < 86) || (cc >= 90 && cc < 100);
  return measured ? default_p2p_channel_Bps(gpu_arch) : 0.0;
}

}  // namespace ccsim
