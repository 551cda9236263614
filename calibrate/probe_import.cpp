#include "calibrate/probe_import.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "calibrate/fit.h"
#include "calibrate/nccl_tests_log.h"
#include "calibrate/probes/probe_schema.h"
#include "common/error.h"
#include "common/json_input.h"
#include "common/text.h"

namespace ccsim {
namespace {

using nlohmann::json;

const json& samples_of(const ProbeDocument& p) { return p.doc.at("samples"); }

double number_or(const json& obj, const char* key, double fallback) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : fallback;
}

}  // namespace

ProbeDocument parse_probe_document(const std::string& path, const std::string& text) {
  ProbeDocument p;
  p.path = path;
  p.doc = parse_user_json(text, path, /*allow_comments=*/false);
  const std::vector<std::string> problems = probe::check_probe_document(p.doc);
  if (!problems.empty())
    throw InputError(path, "not a ccsim probe document (docs/probes.md, \"JSON schema\"): " + problems.front() +
                               (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""));
  p.probe = p.doc.at("probe").get<std::string>();
  if (samples_of(p).empty()) {
    const json& errors = p.doc.at("errors");
    throw InputError(path, "the " + p.probe + " probe measured nothing" +
                               (errors.empty() ? std::string("")
                                               : ": " + errors.front().at("test").get<std::string>() + ": " +
                                                     cut_for_message(errors.front().at("message").get<std::string>())));
  }
  return p;
}

std::vector<RingCurve> ring_curves_from_nccl_probe(const ProbeDocument& probe, const NcclTestsOptions& opt) {
  check_calibration_options(opt);
  const json& doc = probe.doc;
  // The collectives NCCL chose for itself, as nccl-tests runs them; the forced NCCL_ALGO / NCCL_PROTO
  // combinations describe one algorithm each, not the curve a default prediction is compared with.
  std::map<std::string, RingCurve> by_collective;
  std::map<std::string, double> peak_busbw;
  std::set<std::string> other_combinations;
  const std::string wanted = opt.collective.empty() ? "" : nccl_tests_collective_from_name(opt.collective);
  const json& params = doc.value("parameters", json::object());
  const int processes = static_cast<int>(number_or(params, "processes", 0));
  std::set<std::string> hosts;
  for (const auto& r : doc.value("ranks", json::array()))
    if (r.is_object() && r.contains("hostname") && r.at("hostname").is_string()) hosts.insert(r.at("hostname").get<std::string>());
  const int doc_nodes = hosts.empty() ? 1 : static_cast<int>(hosts.size());
  const json& samples = samples_of(probe);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const json& s = samples[i];
    const std::string test = s.at("test").get<std::string>();
    if (!is_ring_collective(test) || (!wanted.empty() && test != wanted)) continue;
    if (s.at("combination").get<std::string>() != "default") {
      other_combinations.insert(s.at("combination").get<std::string>());
      continue;
    }
    const std::string where = "samples[" + std::to_string(i) + "]";
    const int nranks = s.at("nranks").get<int>();
    const double bytes = s.at("bytes").get<double>();
    const double host_avg = number_or(s, "time_us_host_avg", 0), median_us = s.at("time_us_median").get<double>();
    const double time_us = host_avg > 0 ? host_avg : median_us;
    if (!(bytes > 0) || !(time_us > 0) || !std::isfinite(time_us)) continue;  // a 0-byte call or a failed size
    RingCurve& c = by_collective[test];
    if (c.sizes.empty()) {
      c.file = probe.path;
      c.run = static_cast<int>(by_collective.size()) - 1;
      c.collective = test;
      c.collective_source = "the probe sample's test";
      c.ranks = nranks;
      c.nodes = doc_nodes;
      // Without MPI one process runs every local GPU from one thread (ncclCommInitAll, group calls):
      // its launches are serial, as nccl-tests -g N.
      c.gpus_per_thread = processes > 0 && nranks % processes == 0 ? nranks / processes : 1;
      if (host_avg <= 0)
        c.warnings.push_back(probe.path + ": " + where + ": no time_us_host_avg; the per-call median is used");
    } else if (c.ranks != nranks) {
      throw InputError(probe.path, where + ": nranks " + std::to_string(nranks) + " differs from the " +
                                       std::to_string(c.ranks) + " of the earlier " + test + " samples");
    }
    c.sizes.push_back(bytes);
    c.times_s.push_back(time_us * 1e-6);
    peak_busbw[test] = std::max(peak_busbw[test], s.at("busbw_GBps").get<double>() * 1e9);
  }
  if (by_collective.empty())
    throw InputError(probe.path, "no all_reduce, all_gather or reduce_scatter samples of NCCL's default choice" +
                                     std::string(wanted.empty() ? "" : " for " + wanted) +
                                     (other_combinations.empty()
                                          ? std::string("")
                                          : " (only forced combinations: " + join(std::vector<std::string>(other_combinations.begin(), other_combinations.end()), ", ") +
                                                "; rerun without --no-default)"));
  std::vector<RingCurve> out;
  for (auto& [test, c] : by_collective) {
    if (opt.ranks > 0 && opt.ranks != c.ranks)
      throw InputError("--ranks", std::to_string(opt.ranks) + " contradicts " + probe.path + ", which ran " +
                                      std::to_string(c.ranks) + " ranks");
    if (opt.nodes > 0 && !hosts.empty() && opt.nodes != c.nodes)
      throw InputError("--nodes", std::to_string(opt.nodes) + " contradicts " + probe.path + ", which ran on " +
                                      std::to_string(c.nodes) + " hosts");
    if (opt.nodes > 0) c.nodes = opt.nodes;
    if (c.ranks < 2) throw InputError(probe.path, "a collective on " + std::to_string(c.ranks) + " rank has nothing to calibrate");
    const std::set<double> distinct(c.sizes.begin(), c.sizes.end());
    if (distinct.size() < 3)
      throw InputError(probe.path, test + ": " + std::to_string(distinct.size()) +
                                       " sizes with a time; at least 3 are needed to fit");
    c.path_class = opt.path_class.empty() ? ring_path_class(c.nodes, peak_busbw[test]) : opt.path_class;
    if (c.gpus_per_thread > 1)
      c.warnings.push_back(probe.path + ": " + test + ": one process drove " + std::to_string(c.gpus_per_thread) +
                           " GPUs (the probe without MPI): its latency side includes their serial host launches; "
                           "predict with -g " + std::to_string(c.gpus_per_thread) + " to compare, or run the probe under "
                           "mpirun with one process per GPU");
    out.push_back(std::move(c));
  }
  return out;
}

void add_verbs_probe(Calibration& cal, const ProbeDocument& probe) {
  // One perftest table per test, its samples in document order.
  std::map<std::string, PerftestRun> runs;
  std::vector<std::string> order;
  for (const json& s : samples_of(probe)) {
    const std::string test = s.at("perftest_equivalent").get<std::string>();
    PerftestRun& run = runs[test];
    if (run.test.empty()) {
      run.test = test;
      run.index = static_cast<int>(order.size());
      order.push_back(test);
    }
    run.is_bandwidth = s.contains("bw_avg_Gbps");
    run.units = run.is_bandwidth ? "Gb/sec" : "usec";
    PerftestSample p;
    p.bytes = s.at("bytes").get<std::uint64_t>();
    p.iterations = s.at("iters").get<std::uint64_t>();
    if (run.is_bandwidth) {
      p.bw_avg_Gbps = s.at("bw_avg_Gbps").get<double>();
      p.msg_rate_Mpps = number_or(s, "msg_rate_Mpps", -1);
    } else {
      p.t_min_us = s.at("t_min_us").get<double>();
      p.t_typical_us = s.at("t_typical_us").get<double>();
      p.t_avg_us = s.at("t_avg_us").get<double>();
      p.p99_us = s.at("p99_us").get<double>();
    }
    run.samples.push_back(p);
  }
  std::vector<PerftestRun> tables;
  for (const auto& t : order) tables.push_back(runs.at(t));
  std::vector<std::string> notes;
  const json& local = probe.doc.value("local", json::object());
  if (local.is_object() && local.contains("memory") && local.at("memory").is_string())
    notes.push_back(probe.path + ": buffers in " + local.at("memory").get<std::string>() + " memory" +
                    (local.contains("registration") && local.at("registration").is_string()
                         ? " (" + local.at("registration").get<std::string>() + " registration)"
                         : std::string("")));
  if (!add_perftest_runs(cal, probe.path, tables, notes))
    throw InputError(probe.path, "no verbs probe sample with a bandwidth or latency value to calibrate from");
}

// One channel of NCCL's SHM transport, per GPU: the shm_fifo test's one channel at Simple's 512 KiB step
// with volatile loads and 512 threads (the transport itself: FIFO, flags, handshake; NCCL's Simple block
// size, except on PCIe-only hosts where NCCL runs Ring/Simple with 256 threads and the probe's 256-thread
// sample is the rate: about half, docs/probes.md), else the host_kernel test's one block reading pinned
// host memory (the stream of loads alone, an upper bound of the former: 18.3 against 17.3 GB/s on
// calibrate/samples/h200-probe-cuda.json).
void add_cuda_probe(Calibration& cal, const ProbeDocument& probe) {
  constexpr int kSimpleStepBytes = 512 * 1024;  // NCCL_BUFFSIZE 4 MiB / NCCL_STEPS 8
  constexpr int kSimpleThreads = 512;           // NCCL_SIMPLE_MAX_NTHREADS
  // Per GPU (GPU, GB/s): shm_fifo's one channel with `threads` per block, or (fifo false) host_kernel's
  // one reading block.
  auto rates = [&](bool fifo, int threads) {
    std::vector<std::pair<int, double>> out;
    for (const json& s : samples_of(probe)) {
      const bool match =
          fifo ? s.at("test") == "shm_fifo" && s.value("channels", 0) == 1 && s.value("slot_bytes", 0) == kSimpleStepBytes &&
                     s.value("receiver_loads", "") == "volatile" && s.value("threads", 0) == threads
               : s.at("test") == "host_kernel" && s.value("direction", "") == "read" && s.value("blocks", 0) == 1;
      const double rate = match ? s.value(fifo ? "bw_per_channel_GBps" : "bw_per_block_GBps", 0.0) : 0.0;
      if (rate > 0) out.push_back({s.at("gpu").get<int>(), rate});
    }
    return out;
  };
  bool fifo = true;
  auto found = rates(true, kSimpleThreads);
  if (found.empty()) {
    fifo = false;
    found = rates(false, 0);
  }
  if (found.empty())
    throw InputError(probe.path, "no shm_fifo sample of 1 channel and no host_kernel read sample at 1 block (run "
                                 "ccsim-probe-cuda --tests shm_fifo); the cuda probe's other tests are not calibration "
                                 "inputs yet (docs/calibration.md)");
  std::vector<double> per_gpu;
  std::vector<std::string> gpus;
  for (const auto& [gpu, rate] : found) {
    per_gpu.push_back(rate * 1e9);
    gpus.push_back("GPU " + std::to_string(gpu) + " " + strprintf("%.6g", rate) + " GB/s");
  }
  ShmCalibration shm = cal.shm.value_or(ShmCalibration{});
  shm.channel_Bps = median(per_gpu);
  CalibrationSource src;
  src.file = probe.path;
  src.kind = fifo ? "ccsim-probe-cuda shm_fifo" : "ccsim-probe-cuda host_kernel";
  src.collective = fifo ? "shm_fifo, 1 channel, 512 KiB steps, 512 threads" : "host_kernel read, 1 block";
  src.points = per_gpu.size();
  src.beta_Bps = shm.channel_Bps;
  src.method = per_gpu.size() == 1 ? "one GPU" : "median over " + std::to_string(per_gpu.size()) + " GPUs";
  shm.sources.push_back(src);
  shm.notes.push_back(probe.path + (fifo ? ": one channel of NCCL's SHM transport played on the GPU (a FIFO of 8 "
                                           "slots in pinned host memory between a sender and a receiver block): "
                                         : ": one thread block reading pinned host memory, as one channel of NCCL's "
                                           "SHM transport loads its FIFO (an upper bound; shm_fifo measures the "
                                           "transport): ") +
                      join(gpus, ", "));
  // NCCL runs Ring/Simple with 256 threads on hosts whose ring bandwidth is at most PCI_BW (the PCIe-only
  // hosts SHM serves); the document's 256-thread sample is the channel rate there, said with its --set.
  std::vector<double> half_block;
  for (const auto& [gpu, rate] : rates(true, kSimpleThreads / 2)) half_block.push_back(rate);
  if (fifo && !half_block.empty())
    shm.notes.push_back(strprintf("with 256 threads per block, as NCCL runs Ring/Simple on PCIe-only hosts, the "
                                  "channel moves %.6g GB/s: --set node.pcie.shm_channel_GBps=%.6g for such a host",
                                  median(half_block), median(half_block)));
  // The step's flag: host_flag's handoff between two thread blocks through pinned host memory, one way
  // (the tail an SHM step waits for), median over GPUs.
  std::vector<double> handoff_s;
  std::vector<std::string> handoff_gpus;
  for (const json& s : samples_of(probe)) {
    if (s.at("test") != "host_flag" || s.value("kind", "") != "gpu_gpu" || s.value("memory", "") != "pinned_host")
      continue;
    const double us = s.value("time_us_median", 0.0);
    if (us <= 0) continue;
    handoff_s.push_back(us * 1e-6);
    handoff_gpus.push_back("GPU " + std::to_string(s.at("gpu").get<int>()) + " " + strprintf("%.4g", us) + " us");
  }
  if (!handoff_s.empty()) {
    shm.step_s = median(handoff_s);
    shm.notes.push_back(probe.path + ": an SHM step's flag, two thread blocks passing a counter through pinned host "
                                     "memory, one way (node.pcie.shm_step_us): " +
                        join(handoff_gpus, ", "));
  }
  cal.shm = shm;
}

}  // namespace ccsim
