// The command line (issue 13): extra positional arguments were ignored, unknown names ended in
// exit 1 with a library exception, and messages blamed the wrong thing.
#include <gtest/gtest.h>

#include "hardening_helpers.h"

namespace ccsim {
namespace {

using hardening::ccsim;
using hardening::expect_input_error;

TEST(HardeningCli, ExtraPositionalArgumentsAreRefused) {
  expect_input_error(ccsim("schedule extra"), {"command line: unexpected argument 'extra'"});
  const std::string smi = std::string(CCSIM_SOURCE_DIR) + "/tests/data/samples/nvsmi_topo_1.txt";
  expect_input_error(ccsim("topo --from-nvidia-smi " + smi + " dgx-h100"),
                     {"command line", "give no topology besides ('dgx-h100')"});
}

TEST(HardeningCli, UnknownCollectiveIsAnInputError) {
  expect_input_error(ccsim("schedule --collective bogus"), {"--collective: unknown collective 'bogus'"});
}

TEST(HardeningCli, UnknownPresetNamesAreCut) {
  expect_input_error(ccsim("topo " + std::string(5000, 'x')), {"unknown topology preset", "... (5000 bytes)"});
}

TEST(HardeningCli, OneGpuIsNotBlamedOnNcclAlgo) {
  // It said "NCCL_ALGO/NCCL_PROTO: no algorithm/protocol left" with neither set.
  const auto r = ccsim("all_reduce_perf -b 1M -e 1M --set node.gpu.count=1 --set node.nvlink=null");
  expect_input_error(r, {"AllReduce on 1 GPU: a collective needs at least 2 ranks"});
  EXPECT_EQ(r.err.find("NCCL_ALGO"), std::string::npos) << r.err;
}

TEST(HardeningCli, TheEngineRefusesClustersAboveItsLimitUpFront) {
  // --nodes 3000 ran 10 minutes without a word.
  expect_input_error(ccsim("all_reduce_perf --nodes 3000"),
                     {"--nodes: 24000 GPUs is above the engine's limit of 2048", "--model closed-form"});
  // The closed form at 65536 nodes took over 2 minutes (2048 nodes: 19 s, growing as nodes squared):
  // every route inside a node ran Dijkstra over the whole graph. Routes inside node n are now node
  // 0's, moved; 16384 nodes take a few seconds (the old code: about 20 minutes, past the wrapper's
  // 60 s timeout).
  const auto r = ccsim("all_reduce_perf --nodes 16384 --model closed-form -b 1G -e 1G");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("131072 ranks"), std::string::npos);
}

}  // namespace
}  // namespace ccsim
