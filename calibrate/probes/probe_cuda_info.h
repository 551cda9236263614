// GPU facts for the "machine" block of the probes, through the CUDA runtime only (no NVML, no driver API
// link): per-GPU properties and attributes, and the P2P attribute matrix of every ordered pair.
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <utility>
#include <vector>

#include "probe_common.h"

namespace ccsim::probe {

inline std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

#define CCSIM_CUDA_CHECK(call)                                                                     \
  do {                                                                                             \
    cudaError_t ccsim_err_ = (call);                                                               \
    if (ccsim_err_ != cudaSuccess)                                                                 \
      throw ::ccsim::probe::ProbeError(std::string(#call) + " failed: " +                          \
                                       ::ccsim::probe::cuda_error_text(ccsim_err_));               \
  } while (0)

inline json gpu_facts(int dev) {
  json g;
  g["index"] = dev;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
    g["name"] = prop.name;
    g["memory_bytes"] = static_cast<std::uint64_t>(prop.totalGlobalMem);
    char uuid[64];
    std::string u = "GPU-";
    for (int i = 0; i < 16; ++i) {
      std::snprintf(uuid, sizeof(uuid), "%02x", static_cast<unsigned char>(prop.uuid.bytes[i]));
      u += uuid;
      if (i == 3 || i == 5 || i == 7 || i == 9) u += "-";
    }
    g["uuid"] = u;
  }
  char bus[64] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof(bus), dev) == cudaSuccess) g["pci_bus_id"] = bus;
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  g["sm"] = major * 10 + minor;
  g["compute_capability"] = std::to_string(major) + "." + std::to_string(minor);
  static const std::pair<const char*, int> attrs[] = {
      {"multiprocessor_count", cudaDevAttrMultiProcessorCount},
      {"clock_rate_khz", cudaDevAttrClockRate},
      {"memory_clock_rate_khz", cudaDevAttrMemoryClockRate},
      {"memory_bus_width_bits", cudaDevAttrGlobalMemoryBusWidth},
      {"l2_cache_bytes", cudaDevAttrL2CacheSize},
      {"max_shared_memory_per_multiprocessor", cudaDevAttrMaxSharedMemoryPerMultiprocessor},
      {"max_threads_per_multiprocessor", cudaDevAttrMaxThreadsPerMultiProcessor},
      {"async_engine_count", cudaDevAttrAsyncEngineCount},
      {"unified_addressing", cudaDevAttrUnifiedAddressing},
      {"pci_domain_id", cudaDevAttrPciDomainId},
      {"pci_bus", cudaDevAttrPciBusId},
      {"pci_device", cudaDevAttrPciDeviceId},
      {"integrated", cudaDevAttrIntegrated},
      {"concurrent_managed_access", cudaDevAttrConcurrentManagedAccess},
      {"host_native_atomic_supported", cudaDevAttrHostNativeAtomicSupported},
      {"gpu_direct_rdma_supported", cudaDevAttrGPUDirectRDMASupported},
      {"memory_pools_supported", cudaDevAttrMemoryPoolsSupported},
      {"dma_buf_supported", 124},  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED (no cudart enum name)
      {"numa_id", cudaDevAttrNumaId},
      {"host_numa_id", cudaDevAttrHostNumaId},
      {"mps_enabled", cudaDevAttrMpsEnabled},
  };
  json a = json::object();
  for (const auto& [name, attr] : attrs) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, static_cast<cudaDeviceAttr>(attr), dev) == cudaSuccess) a[name] = v;
    else cudaGetLastError();  // attribute unknown to this driver: leave it out
  }
  g["attributes"] = a;
  if (a.contains("multiprocessor_count")) g["multiprocessor_count"] = a["multiprocessor_count"];
  return g;
}

// cudaDeviceCanAccessPeer and the cudaDevP2PAttr* values for every ordered pair (src != dst).
inline json p2p_matrix(int ndev) {
  json out = json::array();
  for (int s = 0; s < ndev; ++s)
    for (int d = 0; d < ndev; ++d) {
      if (s == d) continue;
      json p = {{"src", s}, {"dst", d}};
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, s, d) == cudaSuccess) p["can_access_peer"] = can != 0;
      static const std::pair<const char*, cudaDeviceP2PAttr> attrs[] = {
          {"performance_rank", cudaDevP2PAttrPerformanceRank},
          {"access_supported", cudaDevP2PAttrAccessSupported},
          {"native_atomic_supported", cudaDevP2PAttrNativeAtomicSupported},
          {"cuda_array_access_supported", cudaDevP2PAttrCudaArrayAccessSupported},
      };
      for (const auto& [name, attr] : attrs) {
        int v = 0;
        if (cudaDeviceGetP2PAttribute(&v, attr, s, d) == cudaSuccess) p[name] = v;
        else cudaGetLastError();
      }
      out.push_back(p);
    }
  return out;
}

// Fills machine.gpus / p2p / CUDA versions. Returns the number of GPUs (0 with an error recorded when
// there is no usable GPU or driver).
inline int add_cuda_machine_facts(json& doc, const std::string& test = "machine") {
  json& m = doc["machine"];
  int rt = 0, drv = 0;
  if (cudaRuntimeGetVersion(&rt) == cudaSuccess) m["cuda_runtime_version"] = rt;
  if (cudaDriverGetVersion(&drv) == cudaSuccess && drv > 0) m["cuda_driver_version"] = drv;
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    add_error(doc, test, e != cudaSuccess ? "cudaGetDeviceCount failed: " + cuda_error_text(e) : "no CUDA device");
    cudaGetLastError();
    return 0;
  }
  json gpus = json::array();
  for (int d = 0; d < n; ++d) gpus.push_back(gpu_facts(d));
  m["gpus"] = gpus;
  m["p2p"] = p2p_matrix(n);
  return n;
}

}  // namespace ccsim::probe
