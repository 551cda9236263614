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
                     {"--nodes: 24000 GPUs is above the engine's limit of 4096", "--model closed-form"});
  // Above 2048 GPUs only schedules that stay small fit: rings and alltoall generated one orbit at a
  // time (sim/ring_orbits.h, sim/p2p_orbits.h) and Tree, NVLSTree and CollNet all_reduce, which grow
  // linearly in the GPUs.
  // 8 B by Tree/Simple on 300 nodes: NCCL's Tree latency, 8.4 + 2 (7 x 4.0 + 9 x 14) us (7 chain hops
  // in a node and ceil(log2 300) = 9 tree hops, up and down), replayed on the fluid solver, and
  // nccl-tests' first launch over its 20 iterations (4.2 / 20 us): 316.61, and the 8 bytes at each of
  // the 32 hops on the one channel NCCL runs at this size, at one channel's share of the Tree ceiling
  // (0.01 us).
  const auto tree = ccsim("all_reduce_perf --nodes 300 -b 8 -e 8 --algo tree --proto simple");
  ASSERT_EQ(tree.code, 0) << tree.err;
  EXPECT_NE(tree.out.find("  316.62  "), std::string::npos) << tree.out;
  // alltoall above 2048 GPUs: its orbit representatives (sim/p2p_orbits.h), planned from the nodes one
  // node rotation spans; 300 nodes are not whole leaf groups of 32, so every node's messages would
  // be planned (2400 x 2399), refused before any is.
  expect_input_error(ccsim("alltoall_perf --nodes 300 -b 1G -e 1G"),
                     {"--nodes: 2400 GPUs: alltoall's orbit representatives would plan 5757600 messages, above the "
                      "engine's limit of 4194304", "--model closed-form"});
  expect_input_error(ccsim("alltoall_perf --nodes 300 -b 1G -e 1G --no-symmetry"),
                     {"limit of 2048 for schedules it holds whole"});
  expect_input_error(ccsim("all_reduce_perf --nodes 300 -b 1G -e 1G --algo ring --no-symmetry"),
                     {"limit of 2048 for schedules it holds whole"});
  // 300 nodes are not whole leaf groups of 32: only the rails rotate, and the orbit representatives
  // (2400 x 8 x 4798 / 8 = 11.5 M records) are refused before any is built.
  expect_input_error(ccsim("all_reduce_perf --nodes 300 -b 1G -e 1G --algo ring"),
                     {"--nodes: 2400 GPUs: the ring's orbit representatives would be 11515200 records, above the engine's "
                      "limit of 8388608"});
  // The closed form at 65536 nodes took over 2 minutes (2048 nodes: 19 s, growing as nodes squared):
  // every route inside a node ran Dijkstra over the whole graph. Routes inside node n are now node
  // 0's, moved; 16384 nodes take a few seconds (the old code: about 20 minutes, past the wrapper's
  // 60 s timeout).
  const auto r = ccsim("all_reduce_perf --nodes 16384 --model closed-form -b 1G -e 1G");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("131072 ranks"), std::string::npos);
}

// --trace at 2048 GPUs ended in std::bad_alloc: a JSON tree of ~4 KB per event (a ring transfer makes
// ~4 events) on top of the whole schedule. The events are now written one by one, and a schedule of
// more than kMaxTraceTransfers (1 M: ~0.9 GB of JSON, 1.4 GiB peak at the limit) is refused before
// the trace builds it. 33 dgx-h100 nodes: the ring's 2 x 263 x 264 x 8 = 1110912 transfers.
TEST(HardeningCli, TracesAreLimitedBeforeTheirScheduleIsBuilt) {
  const std::string path = hardening::temp_path("trace.json");
  std::remove(path.c_str());
  expect_input_error(ccsim("predict --nodes 33 -b 1M -e 1M --algo ring --trace " + path),
                     {"--trace: the schedule has 1110912 transfers, above the 1048576 a trace holds"});
  std::ifstream written(path);
  EXPECT_FALSE(written.good()) << "no trace file is left behind";
  // Above 2048 GPUs a trace is refused before anything is built (it needs the whole schedule).
  expect_input_error(ccsim("predict --nodes 300 -b 1M -e 1M --algo ring --trace " + path),
                     {"--trace: a trace records every transfer of the whole schedule: at most 2048 GPUs"});
  std::ifstream none(path);
  EXPECT_FALSE(none.good()) << "no trace file is left behind";
}

// Library exceptions instead of an up-front limit: moe --tokens 1e8 ended in std::bad_alloc (1e7 ran
// 90 s silently), schedule --nodes 3000 and --nodes 2048 --expand in bad_alloc, --nodes 256 --expand
// took 47 s and 8.9 GB and --nodes 256 --dump over 100 s.
TEST(HardeningCli, MoeAndScheduleSizesAreLimitedUpFront) {
  expect_input_error(ccsim("moe --tokens 100000000"),
                     {"--tokens: 100000000 tokens per rank x EP 8 x top-k 8 = 6400000000 (token, expert) pairs, above "
                      "ccsim's limit of 67108864"});
  expect_input_error(ccsim("moe --tokens 10000000"), {"--tokens", "above ccsim's limit of 67108864", "~0.4 GiB"});
  EXPECT_EQ(ccsim("moe --tokens 4096").code, 0);
  expect_input_error(ccsim("schedule --nodes 3000"), {"--nodes: 24000 GPUs is above the engine's limit of 2048 for whole schedules"});
  expect_input_error(ccsim("schedule --nodes 2048 --expand"), {"--nodes: 16384 GPUs is above the engine's limit of 2048"});
  expect_input_error(ccsim("schedule --nodes 256 --expand"),
                     {"--expand: the schedule would hold", "above ccsim's limit of 83886080", "drop --expand"});
  expect_input_error(ccsim("schedule --nodes 256 --dump"),
                     {"--dump: the schedule has", "above the 1048576 that --dump prints"});
  expect_input_error(ccsim("schedule --nodes 256 --algo tree --dump"), {"--dump: the schedule has"});
  // Within the limits: answered.
  const auto r = ccsim("schedule --nodes 2 --expand");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(" transfers, "), std::string::npos);
}

// schedule ignored --proto (and NCCL_PROTO), a bogus value included, with exit 0.
TEST(HardeningCli, ScheduleChecksAndHonoursTheProtocol) {
  expect_input_error(ccsim("schedule --proto bogus"), {"--proto: unknown protocol 'bogus' (LL, LL128, Simple)"});
  expect_input_error(ccsim("schedule", "", "NCCL_PROTO=bogus"), {"NCCL_PROTO", "bogus"});
  expect_input_error(ccsim("schedule --collective broadcast --proto LL"), {"--proto: broadcast's schedule is NCCL's ring chain"});
  const auto simple = ccsim("schedule -b 1M --proto Simple --dump");
  const auto ll = ccsim("schedule -b 1M --proto LL --dump");
  const auto env = ccsim("schedule -b 1M --dump", "", "NCCL_PROTO=LL");
  ASSERT_EQ(simple.code, 0) << simple.err;
  ASSERT_EQ(ll.code, 0) << ll.err;
  EXPECT_NE(simple.out, ll.out);
  EXPECT_EQ(env.out, ll.out);
  // LL's flags double the bytes on the wire: the first record's bytes.
  auto first_bytes = [](const std::string& dump) {
    const auto at = dump.find(" bytes=");
    return at == std::string::npos ? -1.0 : std::stod(dump.substr(at + 7));
  };
  EXPECT_DOUBLE_EQ(first_bytes(ll.out), 2 * first_bytes(simple.out)) << ll.out.substr(0, 300);
}

// Error lines quoted whole user values up to ~1000 bytes with the whole message's byte count.
TEST(HardeningCli, ErrorLinesCutQuotedValuesTo80Characters) {
  const std::string big(60000, 'x');
  const std::string cut = std::string(80, 'x') + "... (60000 bytes)";
  for (const auto& [args, env] : std::vector<std::pair<std::string, std::string>>{
           {"all_reduce_perf --algo " + big, ""},
           {"all_reduce_perf --set node.nic.transport=" + big, ""},
           {"moe --routing " + big, ""},
           {"calibrate x.txt -o x.json --class " + big, ""},
           {"all_reduce_perf -b 1M -e 1M", "NCCL_ALGO=" + big}}) {
    const auto r = ccsim(args, "", env);
    expect_input_error(r, {cut});
    EXPECT_LT(r.err.size(), 300u) << r.err.substr(0, 400);
  }
}

}  // namespace
}  // namespace ccsim
