// NCCL environment settings (`--env NCCL_P2P_DISABLE=1`, a scenario's "env") as what they change in
// a cluster's description: the run a user made with NCCL_P2P_DISABLE=1, NCCL_NVLS_ENABLE=0,
// NCCL_NET_GDR_LEVEL=LOC or NCCL_IB_DISABLE=1 is predicted on the paths NCCL then takes, through the
// same spec keys `--set` writes (docs/topology.md "NCCL environment"). Values and defaults are
// NCCL's (NCCL documentation, "Environment Variables"; NCCL 2.30).
//
// Three kinds of names:
//   modelled: the setting becomes spec keys (P2P, NVLS, GPUDirect RDMA, IB verbs, CollNet, MNNVL,
//     chunk sizes, channel counts, protocol buffers), or NCCL_ALGO / NCCL_PROTO, which the tuner's
//     filter reads (cli/algo_options.h);
//   known but not modelled (NCCL_NTHREADS, NCCL_SHM_DISABLE, NCCL_NET_GDR_READ, ...): they change
//     the run, ccsim predicts NCCL's default for them and says so;
//   any other NCCL_* name: no effect on cost (NCCL_DEBUG, NCCL_SOCKET_IFNAME, ...).
// A name that is not NCCL_*, a missing '=', or a value NCCL would not accept for a modelled name
// is an InputError naming the setting.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccsim {

// What one setting did, for the report: "NCCL_P2P_DISABLE=1: node.pcie.p2p=none, ...".
struct NcclEnvNote {
  std::string setting;  // "NCCL_P2P_DISABLE=1"
  std::string effect;   // "node.pcie.p2p=none, node.nvlink.nccl_p2p=false (NCCL's SHM transport inside the node)"
  bool modelled = true; // false: recognised or unknown, predicted at NCCL's default
  std::string text() const { return setting + ": " + effect; }
};

// Applies one NAME=VALUE setting to `spec` (after --nodes and --set), returning what it did.
// `where` names the setting in errors ("--env NCCL_P2P_DISABLE=yes", "s.json: /cluster/env/0");
// `source` names the spec in errors of the spec itself (the settings that need the node's path types
// build it first).
NcclEnvNote apply_nccl_env(nlohmann::json& spec, const std::string& assignment, const std::string& where,
                           const std::string& source);

// Whether apply_nccl_env changes the description (or the tuner's filter) for `name`.
bool nccl_env_modelled(const std::string& name);

// The value of `name` in a list of NAME=VALUE settings (the last one wins, as a shell's would);
// empty when absent.
std::string nccl_env_value(const std::vector<std::string>& settings, const std::string& name);

}  // namespace ccsim
