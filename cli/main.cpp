// ccsim's single command-line entry point: dispatches to the sub-commands and turns errors into
// one line on stderr with exit code 2 (bad input) or 1 (internal error).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "calibrate/nccl_tests_log.h"
#include "cli/calibrate_command.h"
#include "cli/commands.h"
#include "common/error.h"
#include "common/text.h"

namespace {

// The last guard of "one line": control characters escaped, and a message longer than 1000
// characters (a thrower that quoted a value without cutting it to 80) cut there and marked as cut,
// with the message's own length, so that a value's byte count is never confused with it.
std::string one_line(const std::string& message) {
  constexpr std::size_t kMaxMessageChars = 1000;
  const std::string escaped = ccsim::cut_for_message(message, std::string::npos);
  if (escaped.size() <= kMaxMessageChars) return escaped;
  std::size_t end = kMaxMessageChars;
  while (end > 0 && (static_cast<unsigned char>(escaped[end]) & 0xc0) == 0x80) --end;  // a UTF-8 boundary
  return escaped.substr(0, end) + " ... (message cut at " + std::to_string(kMaxMessageChars) + " of " +
         std::to_string(escaped.size()) + " characters)";
}

int dispatch(const std::vector<std::string>& args) {
  try {
    if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
      ccsim::print_help();
      return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version" || args[0] == "version") {
      std::cout << "ccsim " << CCSIM_VERSION << "\n";
      return 0;
    }
    const std::string command = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (command == "predict") return ccsim::run_predict(rest, "");
    if (command == "topo") return ccsim::run_topo(rest);
    if (command == "schedule") return ccsim::run_schedule(rest);
    if (command == "explain") return ccsim::run_explain(rest);
    if (command == "calibrate") return ccsim::run_calibrate(rest);
    if (command == "moe") return ccsim::run_moe(rest);
    if (command == "validate") return ccsim::run_validate(rest);
    if (command == "run") return ccsim::run_scenario_command(rest);
    if (command == "merge") return ccsim::run_merge(rest);
    const std::string alias = ccsim::nccl_tests_collective_from_name(command);
    if (!alias.empty() && command.size() > 5 && command.substr(command.size() - 5) == "_perf")
      return ccsim::run_predict(rest, alias);
    throw ccsim::InputError("command line", "unknown command '" + ccsim::cut_for_message(command) + "' (see 'ccsim help')");
  } catch (const ccsim::InputError& e) {
    std::cerr << "ccsim: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ccsim: internal error: " << one_line(e.what()) << "\n";
    return 1;
  }
}

// Standard output is the result of most commands: a write that failed (a full disk, /dev/full, a
// closed pipe) is an error, not a silent exit 0.
// (The failing write happened inside an earlier flush; its errno is gone by now, so no reason.)
int check_stdout(int code) {
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return code;
  std::cerr << "ccsim: error: standard output: write failed (disk full, or a closed or unwritable output?)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  return check_stdout(dispatch(args));
}
