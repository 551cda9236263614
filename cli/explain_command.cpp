// `ccsim explain --collective C -b SIZE [-e SIZE -f F] [-d TYPE] [-o OP] [--topology ...] [--algo ...] [--proto ...]`:
// what NCCL logs under NCCL_DEBUG_SUBSYS=TUNING, for each size: every algorithm and protocol's
// latency, bandwidth and predicted time, and the choice. sendrecv and alltoall have no tuner: their
// report is NCCL's P2P decisions (algorithms/explain_p2p.h).
#include <iostream>

#include "algorithms/explain.h"
#include "algorithms/explain_p2p.h"
#include "algorithms/nccl_types.h"
#include "algorithms/nccl_channels.h"
#include "algorithms/nvls.h"
#include "algorithms/tuner.h"
#include "cli/algo_options.h"
#include "cli/commands.h"
#include "cli/topology_options.h"
#include "common/error.h"
#include "scenarios/predict.h"
#include "topologies/spec.h"

namespace ccsim {

int run_explain(const std::vector<std::string>& argv) {
  auto specs = topology_option_specs();
  for (const OptionSpec& s : std::vector<OptionSpec>{{"", "collective", true, false},
                                                     {"b", "minbytes", true, false},
                                                     {"e", "maxbytes", true, false},
                                                     {"f", "stepfactor", true, false},
                                                     {"", "algo", true, false},
                                                     {"", "proto", true, false},
                                                     {"", "nccl-version", true, false},
                                                     {"d", "datatype", true, false},
                                                     {"o", "op", true, false},
                                                     {"h", "help", false, false}})
    specs.push_back(s);
  const ParsedArgs args = parse_args(argv, specs);
  if (args.has("help")) {
    print_help();
    return 0;
  }
  if (!args.positional().empty())
    throw InputError("command line", "unexpected argument '" + args.positional().front() + "'");
  std::string source;
  std::vector<NcclEnvNote> env_notes;
  const Topology topo = build_topology(topology_spec_from_args(args, "dgx-h100", &source, &env_notes), source);
  const std::string collective = args.get("collective", "all_reduce");
  const bool p2p = collective == "sendrecv" || collective == "alltoall";
  if (p2p)
    for (const char* flag : {"algo", "proto"})
      if (args.has(flag))
        throw InputError(args.spelled(flag), collective + " is NCCL's grouped send/recv: it has no algorithm, and "
                                             "its protocol is LL or Simple per message by size (docs/collectives.md)");
  const Func func = p2p ? Func::AllReduce : func_from_collective(collective);
  SizeSweep sweep;
  sweep.min_bytes = parse_size_arg(args, "minbytes", 32ull << 20);  // -b 32M
  sweep.max_bytes = parse_size_arg(args, "maxbytes", sweep.min_bytes);
  sweep.step_factor = parse_double_arg(args, "stepfactor", 2);
  if (!(sweep.step_factor > 1)) throw InputError(args.spelled("stepfactor"), "step factor must be > 1");
  const AlgoProtoFilter filter = algo_filter_from_args(args);
  // One operand: NVLS runs only what NVLink SHARP reduces (choose); "all" is predict's several sweeps.
  const ReduceOperand operand{args.get("datatype", "float"), args.get("op", "sum")};
  for (const char* flag : {"datatype", "op"})
    if (args.get(flag, "") == "all") throw InputError(args.spelled(flag), "explain takes one datatype and one op");
  datatype_size(operand.datatype);  // InputError for an unknown name
  check_nccl_op(operand.op);
  NcclTopoSummary summary = summarize_for_nccl(topo);
  summary.nccl_version = nccl_version_from_args(args);
  for (const auto& n : env_notes) std::cout << "NCCL environment: " << n.text() << "\n";
  for (std::uint64_t size : sweep_sizes(sweep)) {
    std::cout << (p2p ? explain_p2p_report(topo, summary, collective, size) : explain_report(summary, func, size, filter, operand));
    // One-node NVLS: what the replay adds to NCCL's model (its kernel's pipeline fill).
    if (!p2p && topo.num_nodes() == 1 && choose(summary, func, size, filter, operand).algo == Algo::NVLS)
      std::cout << nvls_replay_note(topo, collective, static_cast<double>(size), nccl_nvls_options(summary));
  }
  std::cout << std::flush;
  return 0;
}

}  // namespace ccsim
