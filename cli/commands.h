// The ccsim sub-commands. Each takes the arguments after its name and returns the exit code;
// user-input errors are thrown as InputError and turned into exit code 2 by main().
#pragma once
#include <string>
#include <vector>

namespace ccsim {

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
