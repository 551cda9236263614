#include <iostream>

#include "algorithms/collectives.h"
#include "cli/commands.h"

namespace ccsim {

namespace {

// "all_reduce, ..., reduce (root: -r), alltoall, sendrecv": the collectives ccsim predicts, from the
// registry; the root flag is named after the last collective with a root.
std::string collectives_line() {
  std::string s;
  std::size_t last_rooted = 0;
  for (const auto& c : collectives()) {
    if (c.shape == CollectiveShape::None) continue;
    s += (s.empty() ? "" : ", ") + std::string(c.name);
    if (c.has_root) last_rooted = s.size();
  }
  if (last_rooted > 0) s.insert(last_rooted, " (root: -r)");
  return s;
}

}  // namespace

void print_help() {
  std::cout << R"(ccsim )" CCSIM_VERSION R"( - discrete-event simulator of GPU-cluster collective communication

Usage:
  ccsim predict [nccl-tests flags] [--topology PRESET|FILE] [--nodes N] [--set KEY=VALUE]... [--env NCCL_X=V]...
                [--collective C] [--format table|json|csv]
                [--output FILE] [--model engine|closed-form] [--algo A] [--proto P]
                [--channels N] [--jobs N] [--trace TRACE.json] [--nccl-version X.Y[.Z]]
  ccsim all_reduce_perf | all_gather_perf | reduce_scatter_perf | broadcast_perf | reduce_perf |
        alltoall_perf | sendrecv_perf [same flags as predict]
  ccsim explain [--collective C] -b SIZE [-e SIZE -f F] [-d TYPE] [-o OP] [--topology ...] [--algo A] [--proto P]
                [--nccl-version X.Y[.Z]]
                (sendrecv, alltoall: NCCL's P2P decisions per peer and message; no --algo/--proto)
  ccsim calibrate FILES... -o calib.json [--collective C] [--ranks N] [--nodes N] [--class nvlink|pcie|net]
  ccsim calibrate LOGS... --topology PRESET|FILE [--set KEY=VALUE]... [--env NCCL_X=V]... [--nccl-version X.Y]
                  [--algo A] [--proto P] [--link nvlink|pcie|nic] -o calib.json
                  (the bounding link's efficiency and the latency side's cost, fitted through the model: any collective)
  ccsim predict ... --calibration calib.json      (predict with fitted alpha, beta and efficiency)
  ccsim validate LOG... [--topology PRESET|FILE] [--nodes N] [--set KEY=VALUE]... [--env NCCL_X=V]... [--calibration F]
                 [--nccl-debug DEBUGLOG] [--tolerance PCT] [-o report.html] [--format table|json|csv]
                 [--collective C] [--ranks N] [--model engine|closed-form] [--algo A] [--proto P]
                 [--nccl-version X.Y[.Z]]
                 (a measured nccl-tests log against the prediction: exit 0 within tolerance, 1 not, 2 bad input;
                 without --topology, the preset of the GPUs the log's device list names, else dgx-h100)
  ccsim topo PRESET|FILE [--nodes N] [--set KEY=VALUE]...
  ccsim topo --from-nvidia-smi FILE | --from-nccl-xml FILE [-o OUT.json]   (import a node topology)
  ccsim schedule [--algo ring|tree|nvls|nvlstree|collnetdirect|collnetchain|pat] [--proto P] [--collective C] [-b SIZE] [--topology ...] [--dump] [--expand]
  ccsim moe [--topology ...] [--nodes N | --ep N] [--tokens T] [--hidden H] [--experts E] [--topk K]
            [--max-nodes M] [--routing uniform|zipf:S|hot:F:H|ratio:X|trace:FILE] [--seed N]
            [--transport nccl,deepep-normal,deepep-ll,allgather] [--eplb R | --placement P]
            [--dispatch-dtype fp8|bf16] [--combine-dtype fp8|bf16] [--pure-rdma] [--expert-compute-us US]
            [--calibration F] [--format table|json|csv] [--output FILE] [--matrix FILE]   (one MoE layer, docs/moe.md)
  ccsim moe SCENARIO.json [--seed N] [--format ...]    (several runs: scenarios/moe-*.json)
  ccsim run SCENARIO.json -o DIR [--jobs N] [--shard K/N] [-q]   (what-if matrix: DIR/results.json, results.csv,
                                                   report.html; sweeps, stragglers and measured logs to validate;
                                                   --shard: the K-th of N parts, docs/scenarios.md, docs/cluster.md)
  ccsim merge DIR... -o OUT [--scenario FILE]      (shards' folders into one result, byte-identical to one run)
  ccsim help | --version

Collectives (C): )" << collectives_line() << R"(.
nccl-tests flags: -b/--minbytes, -e/--maxbytes, -f/--stepfactor, -i/--stepbytes, -d/--datatype,
  -o/--op, -r/--root, -g/--ngpus and -t/--nthreads (GPUs per thread, threads per process: one thread
  launches its GPUs' kernels serially, node.cpu.launch_us each plus node.cpu.launch_us_per_channel
  per channel the collective runs on, docs/collectives.md "Launch mode");
  -n/--iters, -m/--agg_iters, -z/--blocking, -G/--cudagraph as nccl-tests' timing loop has them (the
  first iteration waits for its launches; -z 1 adds them to every iteration; -G replays them from a
  graph); -w -c -a -p -C -T -R are accepted and ignored. -d all / -o all run one sweep per datatype
  and op, as nccl-tests does (an op NVLink SHARP cannot reduce, int8 or prod, runs without NVLS).
  Sizes take K, M, G, T suffixes (powers of 1024), as nccl-tests does.
--algo/--proto (or NCCL_ALGO/NCCL_PROTO) use NCCL's syntax: "Ring,Tree", "^NVLS", "LL128,Simple".
  The engine replays the tuner's choice (Ring, Tree, NVLS, NVLSTree up to 64 nodes, CollNet up to 8, PAT);
  where it cannot, the row is NCCL's cost model of the choice and the header says so. --model
  closed-form gives NCCL 2.30.7's cost model for every size; with a --calibration of a ring, the
  calibrated ring's closed form is the default (the model the fit was made with; --model engine
  replays it, docs/calibration.md). alltoall and sendrecv are NCCL's
  grouped send/recv (no tuner: LL or Simple per message, docs/collectives.md).
  --algo custom: vLLM's custom all-reduce inside one node below 8 MiB, NCCL above.
--nccl-version X.Y[.Z] (2.19-2.30, default 2.30.7): the tuner constants of that NCCL release pick the
  algorithm and protocol and cost the closed form (docs/nccl-model.md "NCCL versions").
--trace FILE (one size, engine): the replayed transfers as a Chrome/Perfetto trace, one process per
  rank and per busy link (open in ui.perfetto.dev or chrome://tracing).
Presets: aws-p5, azure-nd-h100-v5, dgx-b200, dgx-h100, dgx-h200, dgx1-v100, dgx2-v100, gb200-nvl72, gcp-a3-high, gcp-a3-mega, hgx-a100, hgx-h800, oci-a100, oci-h100, pcie-gen4-8gpu
  (see docs/topology.md for --set keys).
--env NCCL_NAME=VALUE (repeatable): an NCCL setting the run was made with, as the description change it
  stands for: NCCL_P2P_DISABLE, NCCL_P2P_LEVEL, NCCL_NVLS_ENABLE, NCCL_NET_GDR_LEVEL, NCCL_IB_DISABLE,
  NCCL_IB_MERGE_NICS, NCCL_NET_MERGE_LEVEL,
  NCCL_COLLNET_ENABLE, NCCL_MNNVL_ENABLE, NCCL_NVLS_CHUNKSIZE, NCCL_NVLSTREE_MAX_CHUNKSIZE,
  NCCL_P2P_NET_CHUNKSIZE, NCCL_P2P_NVL_CHUNKSIZE, NCCL_P2P_PCI_CHUNKSIZE, NCCL_MIN_NCHANNELS,
  NCCL_MAX_NCHANNELS (and the NRINGS names), NCCL_MIN_CTAS, NCCL_MAX_CTAS, NCCL_NVLS_NCHANNELS,
  NCCL_BUFFSIZE, NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE, NCCL_NCHANNELS_PER_NET_PEER,
  NCCL_P2P_LL_THRESHOLD, NCCL_ALGO, NCCL_PROTO;
  others are reported as not modelled
  (docs/topology.md "NCCL environment").
Exit codes: 0 success, 2 bad input (one line on stderr naming the file and place), 1 internal error.
)";
}

}  // namespace ccsim
