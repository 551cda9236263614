// The ccsim sub-commands. Each takes the arguments after its name and returns the exit code;
// user-input errors are thrown as InputError and turned into exit code 2 by main().
#pragma once
#include <string>
#include <vector>

namespace ccsim {

// The engine replays every transfer of NCCL's schedule: a ring holds about 16 n^2 records (1024
// GPUs: 16.8 M records, 8 s, 1.4 GiB, docs/performance.md), so 2048 GPUs need ~4x that. Beyond,
// predict and schedule refuse up front rather than run for minutes and exhaust memory.
inline constexpr int kMaxEngineGpus = 2048;

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
