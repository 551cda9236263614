// `ccsim run SCENARIO.json -o DIR [--jobs N] [--shard K/N]`: evaluates every variant of a scenario
// (or the K-th of N disjoint parts of them: one task of a cluster job array, combined afterwards by
// `ccsim merge`), one child process per variant, N at a time, and writes DIR/results.json,
// DIR/results.csv and DIR/report.html. Ctrl-C stops the running variants and writes the finished
// ones (the files say the run is incomplete); every file is written whole or not at all.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>
#include <optional>
#include <cmath>
#include <algorithm>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/process_pool.h"
#include "cli/run_outputs.h"
#include "common/error.h"
#include "common/text.h"
#include "scenarios/run_results.h"
#include "scenarios/run_results_file.h"
#include "scenarios/scenario.h"

namespace ccsim {

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }

// SIGINT / SIGTERM set g_stop (no SA_RESTART: poll() returns at once) for the duration of a run.
class StopSignals {
 public:
  StopSignals() {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

std::string duration_text(double s) {
  if (s < 90) return strprintf("%.0f s", s);
  return strprintf("%.0f min %02.0f s", std::floor(s / 60), s - 60 * std::floor(s / 60));
}

// Progress on stderr: a bar redrawn in place on a terminal, one line per finished variant otherwise.
class Progress {
 public:
  Progress(std::size_t total, bool quiet) : total_(total), quiet_(quiet), tty_(::isatty(STDERR_FILENO) == 1) {}
  void update(std::size_t done, const std::string& finished_name) {
    if (quiet_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const std::string eta = done > 0 && done < total_
                                ? ", about " + duration_text(elapsed / static_cast<double>(done) * static_cast<double>(total_ - done)) + " left"
                                : "";
    if (tty_) {
      const int width = 30;
      const int filled = total_ ? static_cast<int>(width * done / total_) : width;
      std::cerr << "\r[" << std::string(static_cast<std::size_t>(filled), '#') << std::string(static_cast<std::size_t>(width - filled), '.')
                << "] " << done << "/" << total_ << " variants, " << duration_text(elapsed) << eta << "\x1b[K" << std::flush;
      if (done == total_) std::cerr << "\n";
    } else if (!finished_name.empty()) {
      std::cerr << "ccsim run: " << done << "/" << total_ << " variants done (" << finished_name << "), "
                << duration_text(elapsed) << " elapsed" << eta << "\n";
    }
  }
  void end_line() {
    if (tty_ && !quiet_) std::cerr << "\n";
  }
  double elapsed_s() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::size_t total_;
  bool quiet_, tty_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

int run_scenario_command(const std::vector<std::string>& argv) {
  const ParsedArgs args = parse_args(argv, {{"o", "output", true, false},
                                            {"", "jobs", true, false},
                                            {"", "shard", true, false},
                                            {"q", "quiet", false, false},
                                            {"h", "help", false, false}});
  if (args.has("help")) {
    print_help();
    return 0;
  }
  if (args.positional().size() != 1)
    throw InputError("command line", "expected one scenario file: ccsim run SCENARIO.json -o DIR");
  if (!args.has("output")) throw InputError("command line", "missing -o DIR (where results.json, results.csv and report.html go)");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int jobs = parse_int_arg(args, "jobs", static_cast<int>(cores), 1);
  const Shard shard = args.has("shard") ? parse_shard(args.get("shard")) : Shard{};
  const Scenario sc = load_scenario(args.positional().front());
  const std::string dir = args.get("output");
  ensure_output_directory(dir);
  std::vector<std::size_t> mine;  // the scenario's variants this run evaluates
  for (std::size_t i = 0; i < sc.variants.size(); ++i)
    if (shard.holds(i)) mine.push_back(i);

  // --jobs processes in all: N variants side by side, each engine sweep on one process; with fewer
  // variants than jobs, the spare processes go to each variant's engine (sim/engine.h parallel_jobs).
  const std::size_t n = mine.size();
  VariantRunOptions options;
  options.engine_jobs =
      std::max(1, jobs / static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(n, static_cast<std::size_t>(jobs)))));

  std::vector<std::optional<VariantResult>> results(n);
  std::size_t finished = 0;
  Progress progress(n, args.has("quiet"));
  PoolOutcome outcome;
  {
    g_stop = 0;
    StopSignals signals;
    ProcessPoolCallbacks cb;
    cb.done = [&](std::size_t i, const std::string& data) {
      results[i] = variant_result_from_json(nlohmann::json::parse(data));
      ++finished;
      progress.update(finished, sc.variants[mine[i]].name);
    };
    cb.tick = [&] { progress.update(finished, ""); };
    outcome = run_process_pool(
        n, [&](std::size_t i) { return variant_result_to_json(run_variant(sc, mine[i], options)).dump(); }, jobs, g_stop, cb);
  }
  std::vector<VariantResult> done;
  for (auto& r : results)
    if (r) done.push_back(std::move(*r));
  const bool complete = outcome == PoolOutcome::Finished;
  write_run_outputs(dir, sc, done, complete, shard);
  if (!complete) {
    progress.end_line();
    std::cerr << "ccsim run: interrupted: " << done.size() << " of " << n << " variants finished; their results are in " << dir
              << " (results.json says \"complete\": false)\n";
    return 130;
  }
  if (!args.has("quiet"))
    std::cerr << "ccsim run: " << n << " variants"
              << (shard.whole() ? "" : " (shard " + std::to_string(shard.index) + "/" + std::to_string(shard.count) + " of " +
                                           std::to_string(sc.variants.size()) + ")")
              << " x " << sc.workloads.size() << " workloads in " << duration_text(progress.elapsed_s()) << ": " << dir
              << "/results.json, results.csv, report.html\n";
  return 0;
}

}  // namespace ccsim
