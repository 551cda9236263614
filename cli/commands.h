// The ccsim sub-commands. Each takes the arguments after its name and returns the exit code;
// user-input errors are thrown as InputError and turned into exit code 2 by main().
#pragma once
#include <string>
#include <vector>

#include "scenarios/replay.h"

namespace ccsim {

// The engine's limits (docs/errors.md). A whole ring schedule holds about 16 n^2 records (1024 GPUs:
// 16.8 M records, 1.4 GiB), so schedules held whole stop at 2048 GPUs (~6 GiB). Ring all_reduce,
// all_gather and reduce_scatter are generated as orbit representatives (sim/ring_orbits.h: 2.1 M
// records at 4096 dgx-h100 GPUs), and so is alltoall (sim/p2p_orbits.h: 20 k records); they stop at
// 4096 GPUs. Beyond, predict and schedule refuse up front rather than run for minutes and exhaust memory.
// kMaxWholeScheduleGpus: scenarios/replay.h (the ring recipe refuses a whole ring above it).
inline constexpr int kMaxEngineGpus = 4096;
// The largest expert-parallel group `moe` simulates, refused before its topology is built: 4x the
// EP1024 benchmark (about 15 s on 2 cores, docs/performance.md).
inline constexpr long long kMaxMoeGpus = 4096;

int run_predict(const std::vector<std::string>& args, const std::string& collective_from_alias);
int run_topo(const std::vector<std::string>& args);
int run_schedule(const std::vector<std::string>& args);
int run_explain(const std::vector<std::string>& args);
int run_moe(const std::vector<std::string>& args);
int run_validate(const std::vector<std::string>& args);
int run_scenario_command(const std::vector<std::string>& args);  // ccsim run
int run_merge(const std::vector<std::string>& args);             // ccsim merge
void print_help();

}  // namespace ccsim
