#include "topologies/nccl_hardware_figures.h"

#include <cmath>

namespace ccsim {

int compcap_from_arch(const std::string& arch) {
  std::string digits;
  for (char c : arch)
    if (c >= '0' && c <= '9') digits += c;
  // No arch has more than 3 digits; a longer run (a typo, a fuzzed file) is unknown, not an overflow.
  if (digits.empty() || digits.size() > 4) return 0;
  return std::stoi(digits);
}

double nccl_nvlink_bw_per_link(int cc) {
  if (cc >= 100) return 40.1;
  if (cc >= 90) return 20.6;
  if (cc == 86) return 12.0;
  if (cc >= 70) return 20.0;
  return 18.0;
}

double nccl_nvlink_efficiency(int generation) {
  switch (generation) {
    case 1: return nccl_nvlink_bw_per_link(60) / 20.0;
    case 2: return nccl_nvlink_bw_per_link(70) / 25.0;
    case 3: return nccl_nvlink_bw_per_link(80) / 25.0;
    case 4: return nccl_nvlink_bw_per_link(90) / 25.0;
    case 5: return nccl_nvlink_bw_per_link(100) / 50.0;
    default: return 0.8;
  }
}

double nccl_pci_bw_from_link(double bandwidth_Bps) {
  const double lanes_x_gts = bandwidth_Bps * 8.0 * 130.0 / 128.0 / 1e9;
  return std::round(lanes_x_gts * 7.5 / 80.0 * 1000.0) / 1000.0;
}

double nccl_nvls_efficiency(int cc) { return cc >= 100 ? kNcclNvlsEfficiencyBlackwell : kNcclNvlsEfficiencyHopper; }

double nccl_net_overhead_us(const std::string& cpu_vendor) { return cpu_vendor == "amd" ? 2.0 : 1.0; }

double nccl_inter_cpu_bw(const std::string& vendor, int model_id, int family_id) {
  if (vendor == "intel") {
    if (model_id == 0) return 10.0;
    return model_id >= 0xCF ? 40.0 : model_id >= 0x8F ? 22.0 : model_id >= 0x55 ? 10.0 : 6.0;
  }
  if (vendor == "amd") return family_id >= 26 ? 32.0 : family_id == 25 ? 24.0 : 16.0;
  return 6.0;
}

}  // namespace ccsim
