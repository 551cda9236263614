// `ccsim validate` on the real nccl-tests logs in tests/data: what the log says about its run
// (collective, ranks, processes, hosts, versions) read from the log alone, never its file name; the
// verdicts and likely causes against ccsim's prediction; the exit codes a cluster acceptance script
// relies on. Logs are fed as the tool printed them: the provenance lines tests/data adds on top
// ("# SOURCE:", "# COMMAND:" ...) are removed first.
#include <gtest/gtest.h>

#include "cli_runner.h"
#include "input_error_of.h"
#include "real_log_helpers.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "scenarios/validate.h"
#include "scenarios/validate_causes.h"
#include "scenarios/validate_debug.h"
#include "scenarios/validate_log.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

const std::string kData = std::string(CCSIM_SOURCE_DIR) + "/tests/data/";

std::string slurp(const std::string& path) { return testing::read_text_file(path); }

// The log as nccl-tests printed it: tests/data's provenance lines removed; with `keep_command`
// false, also the shell line that echoes the command (a log captured with `> file` has none).
std::string as_printed(const std::string& name, bool keep_command = true) {
  std::istringstream in(slurp(kData + name));
  std::string line, out;
  while (std::getline(in, line)) {
    bool provenance = false;
    for (const char* key : {"# SOURCE:", "# HARDWARE:", "# TOOL:", "# NOTE:", "# NCCL VERSION:", "# COMMAND:",
                            "# REPORTED SANITY:"})
      if (line.rfind(key, 0) == 0) provenance = true;
    if (provenance || (!keep_command && line.find("_perf ") != std::string::npos && line[0] != '#')) continue;
    out += line + "\n";
  }
  return out;
}

NcclTestsRun parse_one(const std::string& text) {
  std::istringstream in(text);
  auto runs = parse_nccl_tests_log(in, "log.txt");
  EXPECT_EQ(runs.size(), 1u);
  return runs.front();
}

LogFacts facts(const std::string& text, LogOverrides overrides = {}) {
  return infer_log_facts(parse_one(text), "log.txt", 0, overrides);
}

std::string temp_path(const std::string& name) { return testing::temp_file("validate_" + name); }

std::string write_temp(const std::string& name, const std::string& content) {
  return testing::write_temp_file("validate_" + name, content);
}

bool has_cause(const ValidatedRun& run, const std::string& id) {
  return std::any_of(run.causes.begin(), run.causes.end(), [&](const LikelyCause& c) { return c.id == id; });
}
const LikelyCause& cause(const ValidatedRun& run, const std::string& id) {
  for (const auto& c : run.causes)
    if (c.id == id) return c;
  throw std::runtime_error("no cause " + id);
}

// The hardware of the RTX 2080 Ti log: one node, two GPUs behind one PCIe Gen3 x16 switch, no NICs.
nlohmann::json rtx2080ti_spec() {
  nlohmann::json spec = load_topology_spec("pcie-gen4-8gpu");
  for (const char* o : {"node.gpu.count=2", "node.pcie.generation=3", "node.cpu.sockets=1",
                        "node.pcie.switches_per_socket=1", "node.nic.count=0"})
    apply_override(spec, o, "test");
  return spec;
}

ValidatedRun validate_text(const std::string& text, const nlohmann::json& spec, const std::string& source,
                           PredictModel model = PredictModel::Engine) {
  ValidateOptions opts;
  opts.model = model;
  return validate_run(parse_one(text), "log.txt", 0, spec, source, opts, DebugFacts{});
}

// ---------------------------------------------------------------- what the log says

TEST(ValidateLog, A100SingleProcessEightGpusFromTheTableAlone) {
  // No header line, no device list, the command not echoed: all_reduce and 8 ranks from the table.
  // busbw/algbw = 2(n-1)/n = 1.75 for n = 8 (e.g. 4 GiB: 232.44 / 132.82 = 1.7500); n = 7 gives 1.714,
  // n = 9 gives 1.778. "-g 8": one process, nThread 1 x nGpus 8.
  const LogFacts f = facts(as_printed("nccl-tests/a100x8-1node-allreduce.txt", false));
  EXPECT_EQ(f.collective, "all_reduce");
  EXPECT_EQ(f.collective_source.rfind("table:", 0), 0u) << f.collective_source;
  EXPECT_EQ(f.ranks, 8);
  EXPECT_NE(f.ranks_source.find("2(n-1)/n with n = 8"), std::string::npos) << f.ranks_source;
  EXPECT_EQ(f.gpus_per_process, 8);
  EXPECT_EQ(f.processes, 1);
  EXPECT_EQ(f.hosts, 0);
  EXPECT_EQ(f.datatype, "float");
  EXPECT_EQ(f.op, "sum");
  EXPECT_EQ(f.root, -1);
  EXPECT_TRUE(f.has_out_of_place);
  EXPECT_TRUE(f.has_in_place);
  EXPECT_EQ(f.nccl_version, "");
}

TEST(ValidateLog, H100SixteenMpiRanksWithoutDeviceList) {
  // 2(n-1)/n = 1.875 for n = 16 (16 GiB: 469.21 / 250.24 = 1.87504); 15 and 17 give 1.8667 and 1.8824,
  // 0.4% away, 40x the rounding of a 250 GB/s row.
  const LogFacts f = facts(as_printed("nccl-tests/h100x16-2node-ndr-allreduce.txt"));
  EXPECT_EQ(f.collective, "all_reduce");
  EXPECT_EQ(f.ranks, 16);
  EXPECT_EQ(f.gpus_per_process, 1);
  EXPECT_EQ(f.processes, 16);
  EXPECT_EQ(f.nccl_version, "2.26.2+cuda12.8");
}

// A log pasted in part: #309's 4 hosts x 8 H100 with only ranks 0, 1 and 31 of its 32 device lines.
// The three lines count neither the ranks nor the hosts; the ranks are the highest listed + 1 (the
// table's 2(n-1)/n = 1.9375 is within a rounding of n = 31 and 33), and with the hosts unknown the
// nodes come from the topology, so the facts are the whole list's but for the hosts.
TEST(ValidateLog, ACutDeviceListCountsTheRanksUpToTheHighestListed) {
  std::string text = as_printed("nccl-tests/h100x32-4node-ndr-allreduce-nccl2.26.2.txt");
  const LogFacts whole = facts(text);
  for (int r = 2; r <= 30; ++r) {
    const std::string key = (r < 10 ? "#  Rank  " : "#  Rank ") + std::to_string(r) + " Group";
    const std::size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    text.erase(at, text.find('\n', at) + 1 - at);
  }
  const LogFacts cut = facts(text);
  EXPECT_EQ(whole.ranks, 32);
  EXPECT_EQ(whole.hosts, 4);
  EXPECT_EQ(cut.ranks, 32);
  EXPECT_EQ(cut.hosts, 0);
  EXPECT_EQ(cut.processes, 32);
  EXPECT_EQ(cut.gpus_per_process, 1);
  EXPECT_EQ(cut.collective, "all_reduce");
  const auto said = std::find_if(cut.notes.begin(), cut.notes.end(),
                                 [](const std::string& n) { return n.find("the device list is cut (3 line(s) for ranks up to 31)") == 0; });
  EXPECT_NE(said, cut.notes.end());
  // Predicted on dgx-h100 either way (the hosts from its 8 GPUs per node): the same medians.
  const std::string file = temp_path("cut-device-list.txt");
  { std::ofstream(file) << text; }
  const auto a = testing::run_ccsim("validate " + kData + "nccl-tests/h100x32-4node-ndr-allreduce-nccl2.26.2.txt --format csv");
  const auto b = testing::run_ccsim("validate " + file + " --format csv");
  ASSERT_NE(b.code, 2) << b.err;
  EXPECT_NE(b.out.find("dgx-h100"), std::string::npos);
  const auto rows = [](const std::string& csv) {  // the per-size lines without their first field, the file
    std::string out;
    std::istringstream in(csv);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line[0] != '#' && line.rfind("file,", 0) != 0) out += line.substr(line.find(',')) + "\n";
    return out;
  };
  EXPECT_FALSE(rows(a.out).empty());
  EXPECT_EQ(rows(a.out), rows(b.out));
}

TEST(ValidateLog, Rtx2080TiNamedByTheEchoedCommand) {
  const LogFacts f = facts(as_printed("nccl-tests/rtx2080ti-x2-pcie-noP2P-allreduce.txt"));
  EXPECT_EQ(f.collective, "all_reduce");
  EXPECT_NE(f.collective_source.find("named in the log"), std::string::npos);
  EXPECT_EQ(f.ranks, 2);
  EXPECT_EQ(f.ranks_source, "device list");
  EXPECT_EQ(f.hosts, 1);
  EXPECT_EQ(f.processes, 1);  // one Pid for both devices: -g2
  EXPECT_EQ(f.gpus_per_process, 2);
}

// nccl-tests' -R (--local_register) is not in the header; an echoed command says it, in getopt_long's
// spellings, and the report notes that registered buffers (NCCL 2.27+'s symmetric kernels with -R 2)
// are a path ccsim does not model. Without it, or with -R 0, no note.
TEST(ValidateLog, RegisteredBuffersAreReadFromTheEchoedCommand) {
  const std::string text = as_printed("nccl-tests/rtx2080ti-x2-pcie-noP2P-allreduce.txt");
  const std::string command = "./build/all_reduce_perf -b 8 -e 1024M -f 2 -g2";
  ASSERT_NE(text.find(command), std::string::npos);
  const auto with = [&](const std::string& flag) {
    std::string t = text;
    t.replace(t.find(command), command.size(), command + " " + flag);
    return t;
  };
  const auto noted = [](const LogFacts& f) {
    return std::any_of(f.notes.begin(), f.notes.end(), [](const std::string& n) { return n.find("registers the user buffers") != std::string::npos; });
  };
  EXPECT_EQ(parse_one(text).local_register, -1);
  EXPECT_FALSE(noted(facts(text)));
  for (const auto& [flag, value] : std::vector<std::pair<std::string, int>>{
           {"-R 2", 2}, {"-R2", 2}, {"--local_register=1", 1}, {"--local_register 2", 2}, {"-R 0", 0}}) {
    EXPECT_EQ(parse_one(with(flag)).local_register, value) << flag;
    EXPECT_EQ(noted(facts(with(flag))), value > 0) << flag;
  }
  const LogFacts symmetric = facts(with("-R 2"));
  EXPECT_TRUE(std::any_of(symmetric.notes.begin(), symmetric.notes.end(),
                          [](const std::string& n) { return n.find("-R 2: symmetric windows, NCCL 2.27+'s symmetric kernels") != std::string::npos; }));
  EXPECT_EQ(facts(with("-R 2")).ranks, 2);  // the rest of the facts as before
}

TEST(ValidateLog, TwoRankAllReduceAndSendrecvPrintTheSameTable) {
  // On 2 ranks 2(n-1)/n = 1, sendrecv's factor; both reduce (sendrecv prints the -o op), both are
  // rootless, both count the whole buffer: without the command line the log cannot tell them apart.
  const std::string text = as_printed("nccl-tests/rtx2080ti-x2-pcie-noP2P-allreduce.txt", false);
  try {
    facts(text);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("all_reduce, sendrecv"), std::string::npos) << what;
    EXPECT_NE(what.find("--collective"), std::string::npos) << what;
  }
  LogOverrides o;
  o.collective = "sendrecv";
  EXPECT_EQ(facts(text, o).collective, "sendrecv");
}

TEST(ValidateLog, OlderLayoutWithoutRedopAndRootColumns) {
  // nccl-tests before the common header printed redop only for reductions and root only for rooted
  // collectives; busbw/algbw 0.875 = (n-1)/n with the 8 devices listed. alltoall would also fit, but
  // its counts are multiples of 16 bytes' worth of elements and this log has count 1 at 32 B.
  const LogFacts f = facts(as_printed("nccl-tests/nccltests_all_gather_2.txt", false));
  EXPECT_EQ(f.collective, "all_gather");
  EXPECT_NE(f.collective_source.find("size = 8 x count x element"), std::string::npos) << f.collective_source;
  EXPECT_EQ(f.ranks, 8);
  EXPECT_EQ(f.gpus_per_process, 8);
  EXPECT_EQ(f.op, "");
}

TEST(ValidateLog, OlderPerPeerCountsWithoutTheSixteenByteRounding) {
  // An older nccl-tests' scatter (aws-samples' README, srun --label): scatter.cu then divided the count
  // by the ranks and no more, so 64 B over 16 ranks prints count 1, which current nccl-tests rounds
  // to 16 bytes (4 floats). With root 0 and redop none, gather and scatter both fit (busbw/algbw
  // 15/16, size = 16 x count); before, the rounding rule left no collective at all.
  const std::string text = as_printed("nccl-tests/aws-samples-16rank-scatter-srun-label.txt");
  const std::string which = testing::input_error_of([&] { facts(text); });
  EXPECT_NE(which.find("gather, scatter all fit"), std::string::npos) << which;
  EXPECT_NE(which.find("size = 16 x count x element"), std::string::npos) << which;
  // Told which, validate says plainly that it has no model of it.
  LogOverrides o;
  o.collective = "scatter";
  const std::string unmodelled = testing::input_error_of([&] { facts(text, o); });
  EXPECT_NE(unmodelled.find("does not predict scatter"), std::string::npos) << unmodelled;
}

TEST(ValidateLog, AlltoallNewerVersionAcrossTenHosts) {
  const LogFacts f = facts(as_printed("nccl-tests/nccltests_alltoall_1.txt"));
  EXPECT_EQ(f.collective, "alltoall");
  EXPECT_EQ(f.ranks, 80);
  EXPECT_EQ(f.hosts, 10);
  EXPECT_EQ(f.processes, 80);
  EXPECT_EQ(f.gpus_per_process, 1);
  EXPECT_EQ(f.nccl_version, "2.29.2");
  EXPECT_EQ(f.nccl_tests_version, "2.17.8");
  EXPECT_EQ(f.datatype, "double");
}

TEST(ValidateLog, MpiTaggedOutputInsideADebugLog) {
  // mpirun --tag-output prefixes, NCCL INFO lines between: 16 ranks, one process each, on 2 hosts.
  const LogFacts f = facts(as_printed("samples/nccl_debug_2.txt"));
  EXPECT_EQ(f.collective, "all_reduce");
  EXPECT_EQ(f.ranks, 16);
  EXPECT_EQ(f.hosts, 2);
  EXPECT_EQ(f.processes, 16);
  EXPECT_EQ(f.gpus_per_process, 1);
}

// The 2080 Ti table with only one of its halves: the first five columns and either the out-of-place
// or the in-place group.
std::string one_half(bool in_place) {
  std::istringstream in(as_printed("nccl-tests/rtx2080ti-x2-pcie-noP2P-allreduce.txt"));
  std::string line, out;
  bool table = false;
  while (std::getline(in, line)) {
    if (line.find("out-of-place") != std::string::npos) {
      out += in_place ? "#                                                              in-place\n"
                      : "#                                                              out-of-place\n";
      table = true;
      continue;
    }
    if (table && !line.empty() && line[0] != '#') {
      std::istringstream f(line);
      std::vector<std::string> t((std::istream_iterator<std::string>(f)), std::istream_iterator<std::string>());
      if (t.size() == 13) {
        std::string row;
        for (int i = 0; i < 5; ++i) row += "  " + t[i];
        for (int i = in_place ? 9 : 5; i < (in_place ? 13 : 9); ++i) row += "  " + t[i];
        out += row + "\n";
        continue;
      }
    }
    if (table && line.rfind("#       size", 0) == 0) {
      out += "#       size         count      type   redop    root     time   algbw   busbw #wrong\n";
      continue;
    }
    if (table && line.rfind("#        (B)", 0) == 0) {
      out += "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n";
      continue;
    }
    out += line + "\n";
  }
  return out;
}

TEST(ValidateLog, OnlyOneOfTheInPlaceAndOutOfPlaceHalves) {
  const LogFacts oop = facts(one_half(false));
  EXPECT_TRUE(oop.has_out_of_place);
  EXPECT_FALSE(oop.has_in_place);
  const LogFacts ip = facts(one_half(true));
  EXPECT_FALSE(ip.has_out_of_place);
  EXPECT_TRUE(ip.has_in_place);
  // The in-place half is what gets validated: 1 GiB in-place took 268461 us (out-of-place 268588).
  const ValidatedRun run = validate_text(one_half(true), rtx2080ti_spec(), "pcie-gen4-8gpu", PredictModel::ClosedForm);
  EXPECT_EQ(run.sizes.back().size_bytes, 1073741824u);
  EXPECT_DOUBLE_EQ(run.sizes.back().measured_time_us, 268461);
  EXPECT_FALSE(run.sizes.back().measured_in_place_time_us.has_value());
}

TEST(ValidateLog, TruncatedLogs) {
  const std::string text = as_printed("nccl-tests/h100x16-2node-ndr-allreduce.txt");
  // Cut inside a row: the parser names the line.
  const std::string mid_row = text.substr(0, text.find("2097152        524288") + 40);
  EXPECT_THROW(facts(mid_row), InputError);
  // Cut at a line boundary: the sweep stops at 1 MiB of a 16 GiB -f 2 sweep, no closing line.
  const std::string at_line = text.substr(0, text.find("     2097152"));
  try {
    facts(at_line);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated: the table stops at 1048576 bytes before maxBytes 17179869184"),
              std::string::npos)
        << e.what();
  }
}

TEST(ValidateLog, DeviceLines) {
  DeviceLine d;
  ASSERT_TRUE(parse_device_line("Rank  1 Group  0 Pid  31706 on autodl-container-xxxxx device  1 [0000:b5:00] NVIDIA GeForce RTX 2080 Ti", &d));
  EXPECT_EQ(d.rank, 1);
  EXPECT_EQ(d.pid, "31706");
  EXPECT_EQ(d.host, "autodl-container-xxxxx");
  EXPECT_EQ(d.device, 1);
  EXPECT_EQ(d.gpu_name, "NVIDIA GeForce RTX 2080 Ti");
  ASSERT_TRUE(parse_device_line("Rank  7 Pid 112372 on localhost device  7 [0x00] A100-SXM4-40GB", &d));  // no Group
  EXPECT_EQ(d.host, "localhost");
  EXPECT_EQ(d.gpu_name, "A100-SXM4-40GB");
  EXPECT_FALSE(parse_device_line("Rank of the matrix", &d));
}

// ---------------------------------------------------------------- verdicts and causes

TEST(ValidateVerdict, Sides) {
  std::vector<ValidatedSize> s(4);
  const auto side = [&](std::vector<double> errors) {
    std::vector<const ValidatedSize*> p;
    s.assign(errors.size(), ValidatedSize{});
    for (std::size_t i = 0; i < errors.size(); ++i) {
      s[i].error = errors[i];
      s[i].within_tolerance = std::fabs(errors[i]) <= 0.2;
      p.push_back(&s[i]);
    }
    return side_verdict("bandwidth", p, 0.2);
  };
  EXPECT_EQ(side({}).verdict, Verdict::NoSizes);
  EXPECT_EQ(side({0.1, -0.05}).verdict, Verdict::Within);
  const SideVerdict mixed = side({0.05, -0.1, 0.3});
  EXPECT_EQ(mixed.verdict, Verdict::Mixed);
  EXPECT_EQ(mixed.within, 2);
  EXPECT_DOUBLE_EQ(mixed.median_error, 0.05);
  EXPECT_DOUBLE_EQ(mixed.worst_error, 0.3);
  EXPECT_EQ(side({0.3, 0.5, 0.1}).verdict, Verdict::Slower);
  EXPECT_EQ(side({-0.3, -0.25}).verdict, Verdict::Faster);
}

TEST(Validate, Rtx2080TiNamesTheHostStagedPath) {
  const ValidatedRun run = validate_text(as_printed("nccl-tests/rtx2080ti-x2-pcie-noP2P-allreduce.txt"),
                                         rtx2080ti_spec(), "pcie-gen4-8gpu");
  // Predicted plateau: PCIe Gen3 x16 = 8 GT/s x 16 lanes x 128/130 / 8 = 15.75 GB/s at the link's 0.8
  // efficiency = 12.60 GB/s, which a 2-rank ring all_reduce reaches as busbw. Measured: 4.00 GB/s.
  const ValidatedSize& last = run.sizes.back();
  EXPECT_NEAR(last.predicted_busbw_GBps, 8.0 * 16 * 128 / 130 / 8 * 0.8, 0.02 * 12.6);
  EXPECT_DOUBLE_EQ(last.measured_busbw_GBps, 4.00);
  EXPECT_EQ(run.bandwidth.verdict, Verdict::Slower);
  EXPECT_GT(run.bandwidth.median_error, 2.0);  // 3x slower
  EXPECT_FALSE(run.pass);
  ASSERT_TRUE(has_cause(run, "p2p-host-staged"));
  EXPECT_NE(cause(run, "p2p-host-staged").evidence.find("0.32 of the predicted 12.60 GB/s"), std::string::npos)
      << cause(run, "p2p-host-staged").evidence;
  EXPECT_NE(cause(run, "p2p-host-staged").next.find("nvidia-smi topo -p2p r"), std::string::npos);
  EXPECT_FALSE(has_cause(run, "gdr-off"));  // one node: no network
}

TEST(Validate, A100SingleProcessLaunchIsTheLatencyCause) {
  const ValidatedRun run =
      validate_text(as_printed("nccl-tests/a100x8-1node-allreduce.txt"), load_topology_spec("hgx-a100"), "hgx-a100");
  EXPECT_EQ(run.prediction.facts.nodes, 1);
  // The 8 serial launches (8 x 4.2 us, NCCL's enqueue and launch per communicator) put the latency
  // side's median within the tolerance (+18%); the approach to the plateau is still slow (+54% at
  // 8 MiB), so the mode is named.
  EXPECT_LT(run.latency.median_error, 0.20);
  EXPECT_EQ(run.latency.verdict, Verdict::Mixed);
  ASSERT_TRUE(has_cause(run, "single-process-multi-gpu"));
  EXPECT_NE(cause(run, "single-process-multi-gpu").evidence.find("8 GPUs per process"), std::string::npos);
  // The log's fastest iteration, 38.39 us at 2 KiB, is at least 8 serial launches and the last of its
  // 20 iterations' Ring/LL collectives (15.0 / 20 us): (38.39 - 0.75) / 8 = 4.7 us each at most,
  // above the 4.2 us default, so validate offers it.
  EXPECT_NE(cause(run, "single-process-multi-gpu").next.find("38.4 us at 2 KiB"), std::string::npos)
      << cause(run, "single-process-multi-gpu").next;
  EXPECT_NE(cause(run, "single-process-multi-gpu").next.find("--set node.cpu.launch_us=4.7"), std::string::npos)
      << cause(run, "single-process-multi-gpu").next;
  // With that value the 2 KiB floor is predicted within 0.5%: 8 x 4.7 + (15.0 + 0.98) / 20 = 38.40 us
  // (0.98 us: 2 x 7/8 of 2 KiB on the one channel NCCL runs, at 87.7 / 24 GB/s busBw).
  nlohmann::json spec = load_topology_spec("hgx-a100");
  apply_override(spec, "node.cpu.launch_us=4.7", "test");
  const ValidatedRun again = validate_text(as_printed("nccl-tests/a100x8-1node-allreduce.txt"), spec, "hgx-a100");
  const auto at_2k = std::find_if(again.sizes.begin(), again.sizes.end(),
                                  [](const ValidatedSize& z) { return z.size_bytes == 2048; });
  ASSERT_NE(at_2k, again.sizes.end());
  EXPECT_NEAR(at_2k->predicted_time_us, 8 * 4.7 + (15.0 + 2048 * 1.75 / (87.7e9 / 24) * 1e6) / 20, 0.01);
  // The plateau agrees (measured 232.44 GB/s busbw at 4 GiB): no bandwidth-side cause.
  EXPECT_TRUE(run.sizes.back().within_tolerance) << run.sizes.back().error;
  EXPECT_FALSE(has_cause(run, "too-few-channels"));
  EXPECT_FALSE(has_cause(run, "p2p-host-staged"));
}

TEST(Validate, H100TwoNodesAboveTheRingLimitIsNotAnError) {
  const ValidatedRun run = validate_text(as_printed("nccl-tests/h100x16-2node-ndr-allreduce.txt"),
                                         load_topology_spec("dgx-h100"), "dgx-h100");
  EXPECT_EQ(run.prediction.facts.nodes, 2);  // 16 ranks / 8 GPUs per dgx-h100 node
  EXPECT_LT(std::fabs(run.bandwidth.median_error), 0.2);
  ASSERT_TRUE(has_cause(run, "above-ring-limit"));
  const LikelyCause& ring = cause(run, "above-ring-limit");
  EXPECT_TRUE(ring.informational);
  EXPECT_NE(ring.evidence.find("measured busbw 468.46 GB/s"), std::string::npos) << ring.evidence;
  // Out-of-place 68.52 us vs in-place 24.70 us at 8 B, 94.40 vs 25.90 at 256 B: 2.8x and 3.6x.
  ASSERT_TRUE(has_cause(run, "straggler"));
  EXPECT_NE(cause(run, "straggler").evidence.find("8 B: out-of-place 68.52 us, in-place 24.70 us"), std::string::npos);
  EXPECT_NE(cause(run, "straggler").evidence.find("256 B: out-of-place 94.40 us"), std::string::npos);
  EXPECT_FALSE(has_cause(run, "gdr-off"));
  EXPECT_FALSE(has_cause(run, "nic-missing-or-slow"));
}

TEST(Validate, GpuDirectTcpCausesUseTcpChecksNotVerbs) {
  // A3 High's dstack all_gather over GPUDirect-TCPX reaches half the 4-NIC ring bound (docs/accuracy.md):
  // the network causes name the TCP plugin's checks (RxDM, the plugin's NIC list, ethtool), not
  // InfiniBand's (nvidia-peermem, ibstat).
  const ValidatedRun run = validate_text(slurp(kData + "nccl-tests/gcp-a3high-2node-tcpx-allgather-dstack.txt"),
                                         load_topology_spec("gcp-a3-high"), "gcp-a3-high", PredictModel::ClosedForm);
  ASSERT_TRUE(has_cause(run, "gdr-off"));
  EXPECT_NE(cause(run, "gdr-off").next.find("RxDM"), std::string::npos) << cause(run, "gdr-off").next;
  EXPECT_EQ(cause(run, "gdr-off").next.find("nvidia-peermem"), std::string::npos);
  ASSERT_TRUE(has_cause(run, "nic-missing-or-slow"));
  EXPECT_NE(cause(run, "nic-missing-or-slow").next.find("ethtool"), std::string::npos);
  EXPECT_EQ(cause(run, "nic-missing-or-slow").next.find("ibstat"), std::string::npos);
}

TEST(Validate, HostStagedTcpIsNotBlamedOnGdr) {
  // The same log described as NCCL's plain socket transport on 4 x 400 Gb/s (host staging already in
  // the prediction, ring bound 4 x 50 GB/s x 0.6 = 120 GB/s against the measured 50.2): the plateau is
  // slow, yet GPUDirect RDMA being off cannot explain it, so only the NIC cause is offered.
  nlohmann::json spec = load_topology_spec("dgx-h100");
  for (const char* o : {"node.nic.count=4", "node.nic.Gbps=400", "node.nic.transport=tcp"}) apply_override(spec, o, "test");
  const ValidatedRun run = validate_text(slurp(kData + "nccl-tests/gcp-a3high-2node-tcpx-allgather-dstack.txt"), spec,
                                         "dgx-h100", PredictModel::ClosedForm);
  ASSERT_TRUE(has_cause(run, "nic-missing-or-slow"));
  EXPECT_FALSE(has_cause(run, "gdr-off"));
}

TEST(Validate, DebugLogChoicesAgainstTheAssumedAlgorithms) {
  // An NCCL_DEBUG log printing only Tree choices, against a run ccsim predicts as Ring (one A100 node),
  // and a latency side slower than predicted (described with a 1 us host launch, so that the -g 8
  // bound is below NCCL's 15 us and the 40 us measured are 2.6x the prediction): NCCL's own choices
  // are named.
  nlohmann::json spec = load_topology_spec("hgx-a100");
  apply_override(spec, "node.cpu.launch_us=1", "test");
  const ValidatedRun run = validate_text(as_printed("nccl-tests/a100x8-1node-allreduce.txt"), spec, "hgx-a100",
                                   PredictModel::ClosedForm);
  DebugFacts debug;
  debug.present = true;
  debug.file = "debug.log";
  debug.algorithms = {"Tree"};
  const auto causes = likely_causes(run, build_topology(spec, "hgx-a100"), debug, nullptr, 0.2, default_nccl_version());
  const auto it = std::find_if(causes.begin(), causes.end(), [](const LikelyCause& c) { return c.id == "nccl-chose-otherwise"; });
  ASSERT_NE(it, causes.end());
  EXPECT_NE(it->evidence.find("debug.log shows NCCL choosing Tree; ccsim assumed Ring"), std::string::npos) << it->evidence;
}

// NCCL's printed choice per size against the tuner's, size by size. The real TUNING print of NCCL 2.22.3
// on 3 H100 nodes (NVIDIA/nccl#1453) names 14 sizes, all of them sizes of the 2-node H100 log; ccsim's
// 2.30 tuner for those 2 nodes picks otherwise at 4: 128 KiB (NCCL Tree/LL128, its 3 nodes' Tree/LL at
// 0.85 x llMaxBw; ccsim Tree/LL), 512 KiB and 1 MiB (2.22's NVLSTree latency 25 + 2 x 14 us against 2.30's
// 66.8: NVLSTree there, Tree/LL128 here) and 8 GiB (NVLSTree's bwInter / 2 beyond 2 nodes: Ring/Simple
// there, NVLSTree here). Choices equal to ccsim's say so, informationally.
TEST(Validate, DebugLogChoicesSizeBySize) {
  const nlohmann::json spec = load_topology_spec("dgx-h100");
  const ValidatedRun run = validate_text(as_printed("nccl-tests/h100x16-2node-ndr-allreduce.txt"), spec, "dgx-h100",
                                         PredictModel::ClosedForm);
  const DebugFacts printed = read_debug_facts(kData + "nccl-tests/h100x24-3node-tuner-debug-nccl2.22.3.txt");
  ASSERT_EQ(printed.choices.size(), 14u);
  EXPECT_EQ(printed.choices[9].bytes, 131072u);
  EXPECT_EQ(printed.choices[9].algorithm + "/" + printed.choices[9].protocol, "Tree/LL128");
  const Topology topo = build_topology(spec, "dgx-h100");
  auto cause = [&](const DebugFacts& d, const std::string& id) {
    const auto causes = likely_causes(run, topo, d, nullptr, 0.2, default_nccl_version());
    const auto it = std::find_if(causes.begin(), causes.end(), [&](const LikelyCause& c) { return c.id == id; });
    return it == causes.end() ? std::optional<LikelyCause>() : std::optional<LikelyCause>(*it);
  };
  const auto differ = cause(printed, "nccl-chose-otherwise");
  ASSERT_TRUE(differ.has_value());
  EXPECT_NE(differ->evidence.find("prints NCCL's choice at 14 of the log's sizes; 4 differ: 128 KiB: NCCL Tree/LL128, "
                                  "ccsim Tree/LL; 512 KiB: NCCL NVLSTree/Simple, ccsim Tree/LL128; 1 MiB: NCCL "
                                  "NVLSTree/Simple, ccsim Tree/LL128; 8 GiB: NCCL Ring/Simple, ccsim NVLSTree/Simple"),
            std::string::npos)
      << differ->evidence;
  DebugFacts same = printed;
  same.choices = {{"AllReduce", 8, "Tree", "LL"}, {"AllReduce", 2097152, "NVLSTree", "Simple"}, {"Broadcast", 8, "Ring", "LL"}};
  EXPECT_FALSE(cause(same, "nccl-chose-otherwise").has_value());
  const auto agree = cause(same, "nccl-choices-agree");
  ASSERT_TRUE(agree.has_value());
  EXPECT_TRUE(agree->informational);
  EXPECT_NE(agree->evidence.find("at 2 of the log's sizes"), std::string::npos) << agree->evidence;

  // AllGather on 8 ranks: a line naming the collective counts one rank's share, so "AllGather: 32 MiB"
  // is the 256 MiB row's choice and "AllGather: 4 MiB" the 32 MiB row's.
  const ValidatedRun ag = validate_text(as_printed("nccl-tests/h100x8-1node-allgather-nccl2.29.2.txt"), spec, "dgx-h100",
                                        PredictModel::ClosedForm);
  const std::uint64_t first = ag.sizes.front().size_bytes;  // 32 MiB
  DebugFacts named = printed;
  named.choices = {{"AllGather", first, "Tree", "LL"}, {"AllGather", first / 8, "NVLS", "Simple"}};
  const auto named_cause = likely_causes(ag, build_topology(spec, "dgx-h100"), named, nullptr, 0.2, default_nccl_version());
  const auto n = std::find_if(named_cause.begin(), named_cause.end(), [](const LikelyCause& c) { return c.id == "nccl-chose-otherwise"; });
  ASSERT_NE(n, named_cause.end());
  EXPECT_NE(n->evidence.find("at 2 of the log's sizes; 2 differ: 32 MiB: NCCL NVLS/Simple, ccsim Ring/Simple; 256 MiB: "
                             "NCCL Tree/LL, ccsim Ring/Simple"),
            std::string::npos)
      << n->evidence;
}

// A run with NCCL_DEBUG=INFO prints NCCL's lines among the table; validate reads them from the log
// itself when no --nccl-debug is given. Here every row of the DGX H100 log is followed by NCCL's COLL
// and TUNING lines for it (NCCL's choice: ccsim's tuner's Ring/LL at 8 B), and the report names the log
// as its own debug log; the p4d log (NCCL 2.8.3) carries its connections "via NET/AWS Libfabric/0/GDRDMA",
// so GPUDirect RDMA is not named a cause there. NCCL lines that do not parse leave the log validated.
TEST(Validate, ALogsOwnNcclDebugLines) {
  std::string text;
  std::istringstream rows(slurp(kData + "nccl-tests/dgx-h100-1node-allreduce-mpi-dgxc-benchmarking.txt"));
  for (std::string line; std::getline(rows, line);) {
    text += line + "\n";
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (first == "8")  // the 8-byte row
      text += "node01:1234:1234 [0] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n";
  }
  const std::string log = testing::write_temp_file("own-debug.txt", text);
  const auto r = testing::run_ccsim("validate " + log + " --topology dgx-h100");
  ASSERT_NE(r.code, 2) << r.err;
  EXPECT_NE(r.out.find("# NCCL_DEBUG log: " + log + " (its own NCCL_DEBUG lines)"), std::string::npos) << r.out.substr(0, 800);
  EXPECT_NE(r.out.find("[nccl-choices-agree]"), std::string::npos) << r.out;

  const auto p4d = testing::run_ccsim("validate " + kData +
                                      "nccl-tests/aws-p4d-2node-efa-allreduce-nccl2.8.3.txt --topology hgx-a100 --set "
                                      "node.nic.count=4 --set node.nic.Gbps=100 --set node.nic.transport=efa");
  ASSERT_NE(p4d.code, 2) << p4d.err;
  EXPECT_NE(p4d.out.find("(its own NCCL_DEBUG lines)"), std::string::npos);
  EXPECT_EQ(p4d.out.find("[gdr-off]"), std::string::npos) << p4d.out;

  // A TUNING table row cut short: --nccl-debug refuses such a file; read from the log itself, it is left out.
  const std::string garbled = testing::write_temp_file(
      "garbled-debug.txt",
      text + "n [0] NCCL INFO   Algorithm   |                            Tree                  |                            Ring                  |\n"
             "n [0] NCCL INFO   Protocol    |             LL |          LL128 |         Simple |             LL |          LL128 |         Simple |\n"
             "n [0] NCCL INFO     AllReduce |    15.2/  43.6 |\n");
  EXPECT_EQ(testing::run_ccsim("validate " + garbled + " --topology dgx-h100 --nccl-debug " + garbled).code, 2);
  const auto g = testing::run_ccsim("validate " + garbled + " --topology dgx-h100");
  EXPECT_NE(g.code, 2) << g.err;
  EXPECT_EQ(g.out.find("its own NCCL_DEBUG lines"), std::string::npos);
}

TEST(Validate, RanksPerHostMustMatchTheHardware) {
  // 2 ranks on one host against 8-GPU nodes: the user must describe the GPUs the run used.
  EXPECT_THROW(validate_text(as_printed("nccl-tests/rtx2080ti-x2-pcie-noP2P-allreduce.txt"),
                             load_topology_spec("pcie-gen4-8gpu"), "pcie-gen4-8gpu", PredictModel::ClosedForm),
               InputError);
}

TEST(ValidateDebug, TransportsChannelsAndEnvironment) {
  // Counted by hand (grep ' via ' on the NCCL INFO Channel lines): 464 P2P/CUMEM, 512 NET/.../GDRDMA.
  const DebugFacts d = read_debug_facts(kData + "samples/nccl_debug_2.txt");
  EXPECT_EQ(d.p2p_ipc_connections, 464);
  EXPECT_EQ(d.net_gdr_connections, 512);
  EXPECT_EQ(d.net_connections, 0);
  EXPECT_EQ(d.shm_connections, 0);
  EXPECT_EQ(d.channels, 16);  // "16 coll channels, 0 collnet channels, 16 nvls channels, ..."
  EXPECT_TRUE(d.nvls);
  EXPECT_NE(std::find(d.env.begin(), d.env.end(), "NCCL_BUFFSIZE=8388608"), d.env.end());
  EXPECT_EQ(d.tuner_plugin, "");  // NCCL's own tuner
}

TEST(ValidateDebug, TheTunerPluginNcclLoaded) {
  // NCCL's loader lines: "Using %s (v3)" (2.19-2.2x), "Using tuner plugin %s" (older loaders), and its
  // internal tuner, which is no plugin.
  const auto plugin_of = [](const std::string& lines) {
    const std::string f = testing::write_temp_file("validate_tuner_debug.txt", lines);
    const DebugFacts d = read_debug_facts(f);
    std::remove(f.c_str());
    return d.tuner_plugin;
  };
  EXPECT_EQ(plugin_of("h:1:1 [1] NCCL INFO TUNER/Plugin: Could not find: libnccl-tuner.so\n"
                      "h:1:1 [1] NCCL INFO TUNER/Plugin: Using nccl_ofi_tuner (v3)\n"),
            "nccl_ofi_tuner (v3)");
  EXPECT_EQ(plugin_of("NCCL INFO TUNER/Plugin: Failed to find ncclTunerPlugin_v3 symbol.\n"
                      "NCCL INFO TUNER/Plugin: Using tuner plugin A3xTunerPlugin_v2\n"),
            "A3xTunerPlugin_v2");
  EXPECT_EQ(plugin_of("NCCL INFO TUNER/Plugin: Using internal tuner plugin.\nNCCL INFO 16 coll channels\n"), "");
}

TEST(Validate, ATunerPluginIsNamedWhereTheRunMisses) {
  // aws-p5's 2-node all_reduce misses on its latency side (EFA's steps); aws-ofi-nccl loads its own
  // tuner on p5, which picks from its tables, not NCCL's model.
  DebugFacts debug;
  debug.present = true;
  debug.file = "p5-debug.txt";
  debug.tuner_plugin = "nccl_ofi_tuner (v3)";
  const ValidatedRun p5 = testing::validate_real_log("aws-p5-2node-efa-allreduce.txt", load_topology_spec("aws-p5"), "aws-p5");
  ASSERT_FALSE(p5.pass);
  const auto causes = likely_causes(p5, build_topology(load_topology_spec("aws-p5"), "aws-p5"), debug, nullptr, 0.2, default_nccl_version());
  const auto plugin = std::find_if(causes.begin(), causes.end(), [](const LikelyCause& c) { return c.id == "tuner-plugin"; });
  ASSERT_NE(plugin, causes.end());
  EXPECT_NE(plugin->evidence.find("nccl_ofi_tuner (v3) (loaded, p5-debug.txt)"), std::string::npos) << plugin->evidence;
  // Without the plugin line, no such cause.
  debug.tuner_plugin.clear();
  const auto without = likely_causes(p5, build_topology(load_topology_spec("aws-p5"), "aws-p5"), debug, nullptr, 0.2, default_nccl_version());
  EXPECT_TRUE(std::none_of(without.begin(), without.end(), [](const LikelyCause& c) { return c.id == "tuner-plugin"; }));
}

// ---------------------------------------------------------------- the command and its exit codes

using CliRun = testing::CliResult;

CliRun ccsim(const std::string& args) { return testing::run_ccsim(args); }

const std::string k2080Ti =
    "--topology pcie-gen4-8gpu --set node.gpu.count=2 --set node.pcie.generation=3 --set node.cpu.sockets=1 "
    "--set node.pcie.switches_per_socket=1 --set node.nic.count=0";

TEST(ValidateCli, ExitCodesGateAnAcceptanceScript) {
  const std::string log = kData + "nccl-tests/rtx2080ti-x2-pcie-noP2P-allreduce.txt";
  // Worst error about +215%: outside the default 20%, inside 400%.
  const CliRun fail = ccsim("validate " + log + " " + k2080Ti + " --model closed-form");
  EXPECT_EQ(fail.code, 1) << fail.err;
  EXPECT_NE(fail.out.find("P2P disabled or redirected through the host"), std::string::npos);
  EXPECT_NE(fail.out.find("# result: FAIL"), std::string::npos);
  const CliRun pass = ccsim("validate " + log + " " + k2080Ti + " --model closed-form --tolerance 400");
  EXPECT_EQ(pass.code, 0) << pass.err;
  EXPECT_NE(pass.out.find("# result: PASS (28 of 28 sizes within 400%)"), std::string::npos) << pass.out;
}

TEST(ValidateCli, BadInputIsOneLineAndExit2WithoutOutputFile) {
  const std::string text = as_printed("nccl-tests/h100x16-2node-ndr-allreduce.txt");
  const std::string truncated = write_temp("truncated.txt", text.substr(0, text.find("     2097152")));
  const std::string html = temp_path("report.html");
  for (const std::string& args : {"validate " + truncated + " -o " + html, "validate " + truncated + "_missing",
                                  "validate " + kData + "nccl-tests/a100x8-1node-allreduce.txt --tolerance -5",
                                  std::string("validate")}) {
    const CliRun r = ccsim(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty());
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(std::ifstream(html).good());
  std::remove(truncated.c_str());
}

TEST(ValidateCli, HtmlJsonAndCsv) {
  const std::string log = kData + "nccl-tests/rtx2080ti-x2-pcie-noP2P-allreduce.txt";
  const std::string html = temp_path("v.html");
  EXPECT_EQ(ccsim("validate " + log + " " + k2080Ti + " --model closed-form -o " + html).code, 1);
  const std::string page = slurp(html);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("p2p-host-staged"), std::string::npos);
  std::remove(html.c_str());
  const CliRun json = ccsim("validate " + log + " " + k2080Ti + " --model closed-form --format json");
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["runs"][0]["log"]["collective"], "all_reduce");
  EXPECT_EQ(doc["runs"][0]["sizes"].size(), 28u);
  EXPECT_EQ(doc["pass"], false);
  const CliRun csv = ccsim("validate " + log + " " + k2080Ti + " --model closed-form --format csv");
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 4 + 1 + 28);  // metadata, header, sizes
}


TEST(ValidateCli, CcsimsOwnPredictionValidatesAgainstItself) {
  // ccsim's table is nccl-tests >= 2.17's layout ("# Collective test starting", no device list): fed
  // back, validate must infer the same run and find every size within the printed digits' rounding.
  struct Case {
    std::string perf, extra;
  };
  for (const Case& c : {Case{"all_reduce_perf -b 8 -e 1G -f 8 --nodes 2", ""},
                        Case{"all_gather_perf -b 1K -e 1G -f 8 --nodes 2", ""},
                        Case{"broadcast_perf -b 1K -e 1G -f 8 -r 3 --nodes 2", "--ranks 16"},
                        Case{"alltoall_perf -b 1M -e 1G -f 4 -d double --nodes 2", ""}}) {
    const CliRun predicted = ccsim(c.perf + " --model closed-form");
    ASSERT_EQ(predicted.code, 0) << predicted.err;
    const std::string log = write_temp("self.txt", predicted.out);
    const CliRun v = ccsim("validate " + log + " --nodes 2 --model closed-form --tolerance 1 --format json " + c.extra);
    EXPECT_EQ(v.code, 0) << c.perf << ": " << v.err << v.out;
    if (v.code == 2) continue;
    const auto doc = nlohmann::json::parse(v.out);
    const auto& run = doc["runs"][0];
    EXPECT_EQ(run["log"]["ranks"], 16) << c.perf;
    EXPECT_EQ(run["log"]["collective"], c.perf.substr(0, c.perf.find("_perf"))) << c.perf;
    for (const auto& s : run["sizes"]) EXPECT_LT(std::fabs(s["error"].get<double>()), 0.01) << c.perf << " " << s;
    std::remove(log.c_str());
  }
}

TEST(ValidateCli, AlgoAndProtoRestrictTheTunerAsTheRunWas) {
  // A run forced to Ring/Simple (Google's TCPX configuration) fed back: with the same --algo/--proto
  // every size matches within the printed digits; without them the tuner's own choice (Tree or
  // NVLSTree beats the ring limit on 2 nodes at 1 GiB) predicts another time. NCCL_ALGO in validate's
  // environment is not the run's and is not read.
  const CliRun predicted = ccsim("all_reduce_perf -b 1M -e 1G -f 32 --nodes 2 --algo Ring --proto Simple --model closed-form");
  ASSERT_EQ(predicted.code, 0) << predicted.err;
  const std::string log = write_temp("ring.txt", predicted.out);
  const std::string base = "validate " + log + " --nodes 2 --model closed-form --format json";
  const CliRun forced = ccsim(base + " --algo Ring --proto Simple");
  ASSERT_EQ(forced.code, 0) << forced.err << forced.out;
  const auto doc = nlohmann::json::parse(forced.out);
  EXPECT_NE(doc["hardware"].get<std::string>().find("--algo Ring --proto Simple"), std::string::npos) << doc["hardware"];
  for (const auto& size : doc["runs"][0]["sizes"]) {
    EXPECT_EQ(size["nccl_algorithm"], "Ring") << size;
    EXPECT_LT(std::fabs(size["error"].get<double>()), 0.01) << size;
  }
  const auto last_error = [](const CliRun& r) {
    return nlohmann::json::parse(r.out)["runs"][0]["sizes"].back()["error"].get<double>();
  };
  const CliRun tuned = ccsim(base);
  EXPECT_GT(std::fabs(last_error(tuned)), 0.05) << tuned.out;
  const CliRun env = testing::run_ccsim(base, "", "NCCL_ALGO=Ring NCCL_PROTO=Simple");
  EXPECT_DOUBLE_EQ(last_error(env), last_error(tuned));
  const CliRun bad = ccsim(base + " --algo Rnig");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--algo"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  std::remove(log.c_str());
}

}  // namespace
}  // namespace ccsim
