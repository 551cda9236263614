// Topology specifications: JSON documents (format "ccsim-topology/1", see docs/topology.md) that
// describe one node template and the fabric joining `nodes` copies of it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "topologies/topology.h"

namespace ccsim {

// Defaults of node.nic.ports_per_card and node.nic.fuse_ports (docs/topology.md "NIC ports"): one
// port per card, and NCCL fuses a card's ports into one network device (NCCL_NET_MERGE_LEVEL=PORT).
constexpr int kDefaultNicPortsPerCard = 1;
constexpr bool kDefaultFuseNicPorts = true;

// Loads a preset by name (see embedded_presets()) or a JSON file by path. Comments are allowed.
// Throws InputError naming the argument and listing the known presets when it is neither, and
// "FILE: line L, column C: <message>" when the JSON is malformed.
nlohmann::json load_topology_spec(const std::string& preset_or_file);

// Names of the embedded presets, sorted.
std::vector<std::string> known_presets();

// Applies `--set KEY=VALUE`: KEY is a dotted path into the spec ("node.nic.Gbps"), which must be a
// documented key; VALUE is parsed as a JSON literal (200, 2.5, true, null, "x") and taken as a
// plain string otherwise (roce). Intermediate objects are created when absent or null.
// Throws InputError(where, ...) naming the key and listing the valid keys at that level.
void apply_override(nlohmann::json& spec, const std::string& assignment, const std::string& where);

// `--nodes N`: sets /nodes (N >= 1, else InputError("--nodes", ...)).
void set_node_count(nlohmann::json& spec, int nodes);

// Documented keys of the object at `path` ("" for the root, "/node", "/node/nic", ...); empty if
// `path` is not an object of the format.
const std::vector<std::string>& spec_keys(const std::string& path);

// Validates the spec (every error names `source` and the JSON path, e.g.
// "dgx-h100.json: /node/nic/Gbps: must be > 0 (got 0)"), resolves defaults, builds and finalizes
// the graph. The resolved spec (all defaults filled in) is stored in Topology::spec.
Topology build_topology(const nlohmann::json& spec, const std::string& source);

// PCIe bandwidth per direction in bytes/s: GT/s per lane {3: 8, 4: 16, 5: 32, 6: 64} x lanes x 128/130 / 8.
double pcie_bandwidth_Bps(int generation, int lanes);
// Default one-way NIC-to-NIC latency (through one switch) of a transport, seconds.
double default_transport_latency_s(Transport t);

}  // namespace ccsim
