// ccsim-bench: wall time and peak memory of the engine on the cases docs/performance.md tracks.
//   1. the README default: ring all_reduce, 32 x dgx-h100 (256 GPUs), 31 sizes 8 B .. 8 GiB
//   2. one 1 GiB ring all_reduce on 128 x dgx-h100 (1024 GPUs)
//   3. how one 1 GiB all_reduce grows with the node count
// Peak memory is the larger of this process's and its simulation children's maximum resident set.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/ring.h"
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

void run_case(const std::string& name, int nodes, std::uint64_t min_bytes, std::uint64_t max_bytes) {
  const ccsim::Topology topo = dgx(nodes);
  ccsim::PredictRequest req;
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

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  std::printf("| case | GPUs | sizes | transfers | flows simulated | wall s | peak RSS MiB |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  run_case("README default: all_reduce 8B..8GiB", 32, 8, 8ull << 30);
  if (!quick) run_case("1 GiB all_reduce", 128, 1ull << 30, 1ull << 30);
  for (int nodes : {1, 2, 4, 8, 16, 32, 64}) run_case("1 GiB all_reduce (scaling)", nodes, 1ull << 30, 1ull << 30);
  return 0;
}
