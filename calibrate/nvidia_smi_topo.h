// Parser for `nvidia-smi topo -m` output and its conversion to a ccsim-topology/1 node template.
// The parser works by structure: the column header (device names "GPU0".., "NIC0".. or older NIC names
// such as "mlx5_0", then "CPU Affinity", "NUMA Affinity", "GPU NUMA ID" when present), one row per device,
// and optionally the "Legend:" and "NIC Legend:" ("NIC0: mlx5_0") sections. Tabs and spaces are both accepted.
#pragma once
#include <istream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ccsim {

struct NvidiaSmiTopo {
  std::vector<std::string> devices;               // "GPU0".., "NIC0".. in header order
  std::vector<std::vector<std::string>> matrix;   // matrix[i][j]: "X", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS" (old "SOC")
  std::map<std::string, std::string> nic_names;   // "NIC0" -> "mlx5_0" from the NIC Legend (empty without legend)
  std::vector<std::string> cpu_affinity;          // per device, "" where not printed (NIC rows), "N/A" as printed
  std::vector<std::string> numa_affinity;         // per device, same convention
  std::vector<std::string> gpu_numa_id;           // per device, same convention
  std::vector<std::string> affinity_columns;      // "CPU Affinity", "NUMA Affinity", "GPU NUMA ID" as present
  bool has_legend = false;
  int header_line = 0;

  int num_gpus() const;
  int num_nics() const;
  int index_of(const std::string& device) const;  // -1 if absent
  const std::string& cell(const std::string& a, const std::string& b) const;  // throws std::out_of_range
};

// Throws InputError(filename, "line N: ...") for a malformed matrix (unknown cell value, truncated or extra
// fields, a row for an unknown device, a missing row), InputError(filename, ...) when there is no matrix.
NvidiaSmiTopo parse_nvidia_smi_topo(std::istream& in, const std::string& filename);
NvidiaSmiTopo parse_nvidia_smi_topo_file(const std::string& path);

// A ccsim-topology/1 spec (nodes = 1) approximating the node: GPU count, NVLink (links per GPU from NV#,
// NVSwitch when every GPU pair is NVLink-connected), NIC count, CPU sockets (NUMA affinity and SYS structure),
// PCIe switches (groups of devices joined by PIX/PXB), P2P mode. What the matrix cannot tell (GPU model,
// bandwidths, PCIe generation, NIC speed and transport) is guessed from the NVLink generation and listed in the
// spec's "description"; override it with --set. `source` names the input in the description.
nlohmann::json node_spec_from_nvidia_smi(const NvidiaSmiTopo& topo, const std::string& source);

}  // namespace ccsim
