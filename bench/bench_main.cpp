// ccsim-bench: wall time and peak memory of the engine on the cases docs/performance.md tracks.
//   1. the README default: ring all_reduce, 32 x dgx-h100 (256 GPUs), 31 sizes 8 B .. 8 GiB
//   2. one 1 GiB ring all_reduce on 128 x dgx-h100 (1024 GPUs)
//   3. how one 1 GiB all_reduce grows with the node count
//   5. (--calibrate-rows) the alpha-beta fit behind `ccsim calibrate` on logs of 1k, 3k and 10k rows
//      (nccl-tests -b 1K -e 10M -i 1K writes 10k): it was superlinear (134 s at 10k rows)
//   4. (--tree) NCCL's Tree all_reduce on 32 x dgx-h100, 8 B .. 1 GiB: wall time per size and per
//      sweep (sizes grouped by chunk count, docs/tree.md)
//   5. (--moe) one skewed MoE layer (ratio:2.5, 4096 tokens per rank, DeepEP normal kernels) at EP 256
//      and 1024 (1024 experts there) on dgx-h100 nodes, then nccl and deepep-ll at EP 256: routing +
//      traffic + dispatch and combine in the engine (docs/moe.md)
//   6. (--scale [--quick]) time and peak memory against GPUs (ring, Tree, NVLSTree, alltoall), 64 .. 4096
//      (docs/performance.md, "Scale"):
//      1 GiB ring all_reduce, Ring/Simple as issue 12 ran it (orbit representatives, sim/ring_orbits.h),
//      alltoall (orbit representatives, sim/p2p_orbits.h), and the closed forms of both at 32768 GPUs;
//      each case in a child process of its own, so its peak memory is its own (--quick: up to 1024 GPUs)
// Peak memory is the larger of this process's and its simulation children's maximum resident set.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/ring.h"
#include "algorithms/tuner.h"
#include "algorithms/tree.h"
#include "algorithms/tree_closed_form.h"
#include "calibrate/fit.h"
#include "sim/engine.h"
#include "scenarios/moe/layer_report.h"
#include "scenarios/predict.h"
#include "topologies/spec.h"

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double peak_rss_mib() {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  return std::max(self.ru_maxrss, children.ru_maxrss) / 1024.0;
}

ccsim::Topology dgx(int nodes) {
  nlohmann::json spec = ccsim::load_topology_spec("dgx-h100");
  ccsim::set_node_count(spec, nodes);
  return ccsim::build_topology(spec, "dgx-h100");
}

// `algo`: NCCL_ALGO syntax ("Ring": the ring targets of docs/performance.md; "": NCCL's tuner).
void run_case(const std::string& name, int nodes, std::uint64_t min_bytes, std::uint64_t max_bytes,
              const std::string& algo = "Ring") {
  const ccsim::Topology topo = dgx(nodes);
  ccsim::PredictRequest req;
  req.filter = ccsim::parse_algo_filter(algo, "", "bench");
  req.sweep.min_bytes = min_bytes;
  req.sweep.max_bytes = max_bytes;
  req.sweep.step_factor = 2;
  const double t0 = now_s();
  const ccsim::Prediction p = ccsim::predict(topo, req);
  const double wall = now_s() - t0;
  std::size_t flows = 0, transfers = 0;
  for (const auto& r : p.sim) {
    flows += r.flows_simulated;
    transfers += r.transfers;
  }
  std::printf("| %-34s | %5d | %5zu | %12zu | %10zu | %8.2f | %9.0f |\n", name.c_str(), topo.num_gpus(), p.rows.size(),
              transfers, flows, wall, peak_rss_mib());
  std::fflush(stdout);
}

void tree_case(int nodes, ccsim::Proto proto) {
  const ccsim::Topology topo = dgx(nodes);
  const ccsim::TreePlan plan = ccsim::plan_trees(topo, 2 * topo.nics_per_node());
  const ccsim::TreeScheduleOptions o = ccsim::tree_options(proto);
  std::vector<double> sizes;
  for (double s = 8; s <= double(1ull << 30); s *= 2) sizes.push_back(s);
  ccsim::EngineOptions eo;
  eo.parallel_jobs = 1;
  std::printf("\nTree/%s, %d x dgx-h100 (%d GPUs), one size at a time:\n\n", ccsim::to_string(proto), nodes,
              topo.num_gpus());
  std::printf("| size B | chunks | transfers | flows simulated | engine us | closed form us | wall s |\n|---|---|---|---|---|---|---|\n");
  for (double size : sizes) {
    const double t0 = now_s();
    const ccsim::Schedule s = ccsim::tree_schedule(topo, plan, "all_reduce", size, o);
    const ccsim::SimResult r = ccsim::simulate_one(topo, s, eo);
    const double wall = now_s() - t0;
    const ccsim::TreeClosedForm cf = ccsim::tree_closed_form(topo, plan, size, o);
    std::printf("| %.0f | %d | %zu | %zu | %.1f | %.1f | %.2f |\n", size, cf.chunks, r.transfers, r.flows_simulated,
                r.time_s * 1e6, cf.time_s * 1e6, wall);
    std::fflush(stdout);
  }
  // The whole sweep as predict would run it: one schedule per chunk count, two sizes at a time.
  const double t0 = now_s();
  const auto groups = ccsim::tree_schedules_for_sizes(topo, plan, "all_reduce", sizes, o);
  std::vector<ccsim::SweepJob> jobs;
  for (const auto& g : groups) {
    ccsim::SweepJob j;
    j.schedule = &g.schedule;
    for (auto i : g.indices) j.sizes_bytes.push_back(sizes[i]);
    jobs.push_back(j);
  }
  ccsim::simulate_sweeps(topo, jobs, {});
  std::printf("\nwhole sweep (%zu sizes, %zu schedules, 2 jobs): %.2f s, peak RSS %.0f MiB\n", sizes.size(), groups.size(),
              now_s() - t0, peak_rss_mib());
}

// ratio:X is defined under contiguous placement, which needs EP to divide the experts: EP 1024 runs
// DeepSeek's 256-expert layer at 1024 experts (one per rank) with the same skew.
void moe_case(int nodes, ccsim::moe::Transport transport, int experts) {
  const ccsim::Topology topo = dgx(nodes);
  ccsim::moe::LayerRequest q;
  q.config.ep = topo.num_gpus();
  q.config.gpus_per_node = topo.gpus_per_node();
  q.config.node_limit = 4;
  q.config.experts = experts;
  q.routing = ccsim::moe::parse_routing_spec("ratio:2.5");
  q.transports = {transport};
  const double t0 = now_s();
  const ccsim::moe::LayerReport r = ccsim::moe::run_layer(topo, q);
  const double wall = now_s() - t0;
  const auto& t = r.transports.front();
  std::printf("| moe %s ratio:2.5, %d experts, 4096 tok | %5d | %9zu | %8.1f us | %8.1f us | %8.2f | %9.0f |\n",
              ccsim::moe::transport_name(transport), experts, topo.num_gpus(), t.dispatch.transfers + t.combine.transfers,
              t.dispatch.time_us, t.combine.time_us, wall, peak_rss_mib());
  std::fflush(stdout);
}

// A log of `rows` sizes 1 KiB apart, out-of-place and in-place: 20 us + size / 100 GB/s, a 15%
// efficiency sag in the middle, and +-1% measurement noise from mt19937_64 bits.
void calibrate_rows_case(int rows) {
  std::mt19937_64 rng(rows);
  std::vector<double> x, t;
  for (int i = 1; i <= rows; ++i) {
    const double s = 1024.0 * i;
    const double eff = i > rows / 3 && i < 2 * rows / 3 ? 0.85 : 1.0;
    for (int rep = 0; rep < 2; ++rep) {
      const double noise = 1 + 0.02 * (static_cast<double>(rng() >> 11) / 9007199254740992.0 - 0.5);
      x.push_back(s);
      t.push_back((20e-6 + s / (100e9 * eff)) * noise);
    }
  }
  const double t0 = now_s();
  const ccsim::AlphaBetaFit f = ccsim::fit_alpha_beta(x, t);
  std::printf("| %6d rows | %zu knots | %8.2f s |\n", rows, f.efficiency.size(), now_s() - t0);
}

}  // namespace

// One predict in a forked child: its wall time, user CPU and peak RSS (of the child and its own
// simulation children, from wait4), so that every row's memory is the case's alone.
void scale_case(const std::string& name, const std::string& collective, int nodes, const std::string& algo,
                const std::string& proto, ccsim::PredictModel model) {
  std::fflush(stdout);
  int pipe_fd[2];
  if (pipe(pipe_fd) != 0) return;
  const double t0 = now_s();
  const pid_t pid = fork();
  if (pid == 0) {
    close(pipe_fd[0]);
    const ccsim::Topology topo = dgx(nodes);
    ccsim::PredictRequest req;
    req.collective = collective;
    req.filter = ccsim::parse_algo_filter(algo, proto, "bench");
    req.sweep.min_bytes = req.sweep.max_bytes = 1ull << 30;
    req.sweep.step_factor = 2;
    req.model = model;
    const ccsim::Prediction p = ccsim::predict(topo, req);
    double out[3] = {p.rows.front().oop_time_us, 0, 0};
    for (const auto& r : p.sim) {
      out[1] += static_cast<double>(r.transfers);
      out[2] += static_cast<double>(r.flows_simulated);
    }
    if (write(pipe_fd[1], out, sizeof out) != static_cast<ssize_t>(sizeof out)) _exit(1);
    _exit(0);
  }
  close(pipe_fd[1]);
  double out[3] = {0, 0, 0};
  const bool got = read(pipe_fd[0], out, sizeof out) == static_cast<ssize_t>(sizeof out);
  close(pipe_fd[0]);
  int status = 0;
  rusage ru{};  // Linux: the child's own usage and that of its simulation children (RUSAGE_BOTH)
  wait4(pid, &status, 0, &ru);
  const double wall = now_s() - t0;
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::printf("| %-52s | %5d | failed (status %d) |\n", name.c_str(), nodes * 8, status);
    return;
  }
  std::printf("| %-52s | %5d | %10.1f | %11.0f | %9.0f | %7.2f | %7.2f | %7.0f |\n", name.c_str(), nodes * 8, out[0], out[1],
              out[2], wall, ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6, ru.ru_maxrss / 1024.0);
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--scale") == 0) {
    const bool quick = argc > 2 && std::strcmp(argv[2], "--quick") == 0;  // up to 1024 GPUs
    std::printf("| case (1 GiB, dgx-h100) | GPUs | time us | transfers | flows | wall s | user s | peak RSS MiB |\n"
                "|---|---|---|---|---|---|---|---|\n");
    for (int nodes : {8, 16, 32, 64, 128, 256, 512})
      if (!quick || nodes <= 128)
        scale_case("all_reduce --algo ring --proto simple", "all_reduce", nodes, "Ring", "Simple", ccsim::PredictModel::Engine);
    // The FIFO pipelines: SimGrid up to 512 GPUs, the fluid solver above (scenarios/replay.h).
    for (const char* algo : {"Tree", "NVLSTree"})
      for (int nodes : {8, 16, 32, 64, 128, 256, 512})
        if (!quick || nodes <= 128)
          scale_case(std::string("all_reduce --algo ") + algo + " --proto simple", "all_reduce", nodes, algo, "Simple",
                     ccsim::PredictModel::Engine);
    for (int nodes : {8, 16, 32, 64, 128, 256, 512})
      if (!quick || nodes <= 128) scale_case("alltoall", "alltoall", nodes, "", "", ccsim::PredictModel::Engine);
    scale_case("all_reduce --algo ring --proto simple, closed form", "all_reduce", 4096, "Ring", "Simple",
               ccsim::PredictModel::ClosedForm);
    scale_case("alltoall, closed form", "alltoall", 4096, "", "", ccsim::PredictModel::ClosedForm);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--moe") == 0) {
    std::printf("| case | GPUs | transfers | dispatch | combine | wall s | peak RSS MiB |\n|---|---|---|---|---|---|---|\n");
    using ccsim::moe::Transport;
    moe_case(32, Transport::DeepepNormal, 256);
    moe_case(128, Transport::DeepepNormal, 1024);
    moe_case(32, Transport::Nccl, 256);
    moe_case(32, Transport::DeepepLowLatency, 256);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--calibrate-rows") == 0) {
    std::printf("| log | efficiency | fit wall |\n|---|---|---|\n");
    for (int rows : {1000, 3000, 10000}) calibrate_rows_case(rows);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--tree") == 0) {
    for (ccsim::Proto p : {ccsim::Proto::LL, ccsim::Proto::LL128, ccsim::Proto::Simple}) tree_case(32, p);
    return 0;
  }
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::printf("| case | GPUs | sizes | transfers | flows simulated | wall s | peak RSS MiB |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  run_case("README default: all_reduce 8B..8GiB", 32, 8, 8ull << 30);
  run_case("README default, tuner's choice", 32, 8, 8ull << 30, "");
  if (!quick) run_case("1 GiB all_reduce", 128, 1ull << 30, 1ull << 30);
  for (int nodes : {1, 2, 4, 8, 16, 32, 64}) run_case("1 GiB all_reduce (scaling)", nodes, 1ull << 30, 1ull << 30);
  return 0;
}
