#include <gtest/gtest.h>
#include <cmath>
#include <cstdio>
#include "algorithms/tree.h"
#include "sim/engine.h"
#include "test_helpers.h"
namespace ccsim {
namespace {
TEST(TreeScratch, Print) {
  for (int n : {2, 4, 8, 16}) {
    const Topology topo = build_topology(testing::single_gpu_nodes_spec(n, 512, 1.0), "test");
    const TreePlan plan = plan_trees(topo, 2);
    for (int mc : {16, 64, 256}) {
      TreeScheduleOptions o; o.max_chunks = mc;
      const double S = 1 << 30;
      const Schedule s = tree_schedule(topo, plan, "all_reduce", S, o);
      for (int depth : {4, 8}) {
        EngineOptions eo; eo.pipeline_depth = depth;
        const SimResult r = simulate_one(topo, s, eo);
        const double bw = (n == 2 ? 1.0 : 2.0) * S / 50e9;
        std::printf("n=%d C=%d win=%d T=%.6f  T/(kS/b)=%.4f transfers=%zu depth=%d\n", n, mc, depth, r.time_s, r.time_s / bw, s.transfers.size(), plan.families[0].depth());
      }
    }
    const Schedule s8 = tree_schedule(topo, plan, "all_reduce", 8, {});
    std::printf("lat n=%d T=%.3f us expect %.3f\n", n, simulate_one(topo, s8, {}).time_s*1e6, 8.4 + 2*std::ceil(std::log2(n))*14);
  }
}
}
}
