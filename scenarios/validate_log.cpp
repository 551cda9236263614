#include "scenarios/validate_log.h"

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <set>

#include "algorithms/collectives.h"
#include "common/error.h"
#include "common/text.h"

namespace ccsim {

bool parse_device_line(const std::string& text, DeviceLine* out) {
  // nccl-tests >= 2.10: "Rank  0 Group  0 Pid  31706 on host device  0 [0000:b4:00] NAME";
  // older: "Rank  0 Pid 112372 on localhost device  0 [0x00] NAME".
  const auto t = split_ws(text);
  DeviceLine d;
  std::size_t i = 0;
  if (t.size() < 2 || t[0] != "Rank" || !parse_int(t[1], d.rank)) return false;
  for (i = 2; i + 1 < t.size(); ++i) {
    if (t[i] == "Pid") d.pid = t[i + 1];
    else if (t[i] == "on") d.host = t[i + 1];
    else if (t[i] == "device" && parse_int(t[i + 1], d.device)) {
      // The bus id in brackets, then the GPU name.
      std::size_t k = i + 2;
      if (k < t.size() && !t[k].empty() && t[k][0] == '[') ++k;
      for (; k < t.size(); ++k) d.gpu_name += (d.gpu_name.empty() ? "" : " ") + t[k];
      break;
    }
  }
  if (d.host.empty() || d.device < 0) return false;
  *out = d;
  return true;
}

DeviceList device_list_of(const NcclTestsRun& run) {
  DeviceList l;
  std::set<std::string> processes, hosts;
  for (const auto& line : run.devices) {
    DeviceLine d;
    if (!parse_device_line(line, &d)) continue;
    ++l.lines;
    l.ranks = std::max(l.ranks, d.rank + 1);
    l.gpus_per_host = std::max(l.gpus_per_host, d.device + 1);
    processes.insert(d.host + ":" + d.pid);
    hosts.insert(d.host);
  }
  l.hosts = static_cast<int>(hosts.size());
  l.processes = static_cast<int>(processes.size());
  return l;
}

LogFacts infer_log_facts(const NcclTestsRun& run, const std::string& file, int run_index, const LogOverrides& ov) {
  LogFacts f;
  f.file = file;
  f.run_index = run_index;
  f.nccl_version = run.nccl_version;
  f.nccl_tests_version = run.nccl_tests_version;
  f.nccl_env = run.nccl_env;
  const auto fail = [&](const std::string& what) {
    throw InputError(file, (run_index > 0 ? "run " + std::to_string(run_index + 1) + ": " : std::string()) + what);
  };
  if (run.rows.empty()) fail("no result rows");
  // A log cut at a line boundary: the sweep stops before maxBytes and the closing "Avg bus bandwidth"
  // line is missing (nccl-tests prints it after the last size).
  const std::uint64_t last = run.rows.back().size_bytes;
  if (run.max_bytes > 0 && !run.has_avg_busbw && last < run.max_bytes && run.step.find("factor") != std::string::npos &&
      static_cast<double>(last) * std::atof(run.step.c_str()) <= static_cast<double>(run.max_bytes))
    fail("line " + std::to_string(run.rows.back().line) + ": truncated: the table stops at " + std::to_string(last) +
         " bytes before maxBytes " + std::to_string(run.max_bytes) + " and has no 'Avg bus bandwidth' line");
  const NcclTestsRow& first = run.rows.front();

  // The device list: ranks, processes, hosts. A cut list counts none of them: the ranks come from the
  // table (or its highest rank), the hosts from the topology, as without a list.
  const DeviceList list = device_list_of(run);
  const bool cut = list.abbreviated();
  const int device_ranks = cut ? 0 : static_cast<int>(run.devices.size());
  f.processes = cut ? 0 : list.processes;
  f.hosts = cut ? 0 : list.hosts;
  f.threads_per_process = run.nthread;

  // The collective: the flag, the log's name for it, else the table (calibrate/nccl_tests_infer.h),
  // with the ranks --ranks gives (it overrides the device list, below), else the device list's.
  const CollectiveInference inferred =
      infer_collective(run, ov.collective, ov.ranks > 0 ? ov.ranks : device_ranks, file,
                       run_index > 0 ? "run " + std::to_string(run_index + 1) + ": " : std::string());
  const CollectiveInfo* chosen = inferred.collective;
  f.collective_source = inferred.source;
  f.notes.insert(f.notes.end(), inferred.notes.begin(), inferred.notes.end());
  if (chosen->shape == CollectiveShape::None)
    fail(std::string("ccsim does not predict ") + chosen->name + " (it predicts " + predicted_collective_names() + ")");
  f.collective = chosen->name;

  // Ranks: the device list, else --ranks, else the busbw factor when it tells n.
  if (ov.ranks > 0) {
    f.ranks = ov.ranks;
    f.ranks_source = "--ranks";
    if (device_ranks > 0 && device_ranks != ov.ranks)
      f.notes.push_back("--ranks " + std::to_string(ov.ranks) + " overrides the device list's " + std::to_string(device_ranks));
  } else if (device_ranks > 0) {
    f.ranks = device_ranks;
    f.ranks_source = "device list";
  } else if (inferred.ranks > 0 && inferred.ranks >= list.ranks) {
    f.ranks = inferred.ranks;
    f.ranks_source = inferred.ranks_source;
  } else if (cut) {
    // The table does not single out n (2(n-1)/n at 1440 ranks is 1.9986, n +- 1 alike in four digits):
    // the highest rank listed, which an excerpt keeping the last line holds.
    f.ranks = list.ranks;
    f.ranks_source = "the highest rank listed (" + std::to_string(list.ranks - 1) + ")";
  } else {
    fail("cannot tell the rank count: the log has no device list ('#  Rank  0 Group  0 Pid ...') and " +
         std::string(chosen->busbw == BusbwRule::One ? "busbw = algbw for " + std::string(chosen->name)
                                                     : "busbw/algbw does not single out one n") +
         "; pass --ranks");
  }
  if (f.ranks < 1) fail("rank count must be positive");
  if (cut && ov.ranks <= 0)
    f.notes.push_back("the device list is cut (" + std::to_string(list.lines) + " line(s) for ranks up to " +
                      std::to_string(list.ranks - 1) + "): " + std::to_string(f.ranks) + " ranks from " + f.ranks_source +
                      "; its hosts and processes are not counted");

  // Processes and GPUs per process: a single process driving several GPUs (-g N, -t N) launches their
  // kernels one after the other.
  const int per_process = std::max(1, run.nthread) * std::max(1, run.ngpus);
  // Without the header's nGpus, GPUs per process are counted over the listed devices: an excerpt
  // that prints only the last device line (the GB200 logs: one line for 72-1440 ranks) says one GPU
  // per process, not that one process drove every rank.
  const int listed_per_process = list.processes == 0 ? 1 : std::max(1, list.lines / list.processes);
  f.gpus_per_process = run.ngpus > 0 ? per_process : listed_per_process;
  f.threads_per_process = std::max(1, run.nthread);
  if (run.column_header_implied)
    f.notes.push_back("no column header above the rows: read as nccl-tests' current columns (size count type redop root, "
                      "then time algbw busbw #wrong out of place and in place)");
  if (run.iters > 0) f.iters = run.iters;
  else
    f.notes.push_back(std::string(run.nthread > 0 ? "the run header prints no iteration count"
                                                  : "no run header ('# nThread ...')") +
                      ": nccl-tests' default timing loop assumed (20 iterations, -m 1, no CUDA graphs)");
  if (run.agg_iters > 0) f.agg_iters = run.agg_iters;
  if (run.graph > 0) f.graph_launches = run.graph;
  f.blocking = run.blocking > 0;
  if (run.local_register > 0)
    f.notes.push_back("the command registers the user buffers with NCCL (-R " + std::to_string(run.local_register) +
                      (run.local_register >= 2 ? ": symmetric windows, NCCL 2.27+'s symmetric kernels" : ": NCCL's zero-copy paths") +
                      "), which ccsim does not model: it predicts NCCL's copies through its own buffers, so the run can be "
                      "faster than predicted");
  if (f.processes == 0 || device_ranks < f.ranks) f.processes = std::max(1, f.ranks / std::max(1, f.gpus_per_process));
  if (f.hosts == 0 && ov.gpus_per_node > 0 && f.ranks % ov.gpus_per_node == 0) {
    f.notes.push_back(std::string(cut ? "a cut device list" : "no device list") + ": " + std::to_string(f.ranks) + " ranks taken as " +
                      std::to_string(f.ranks / ov.gpus_per_node) + " node(s) of the topology's " +
                      std::to_string(ov.gpus_per_node) + " GPUs");
  }

  f.datatype = run.has_type && !first.type.empty() ? first.type : "float";
  if (!run.has_type) f.notes.push_back("no type column: float assumed");
  f.op = chosen->reduces ? (run.has_redop && !first.redop.empty() && first.redop != "none" ? first.redop : "sum") : "";
  f.root = chosen->has_root ? std::max(0, first.root) : -1;
  f.has_out_of_place = std::any_of(run.rows.begin(), run.rows.end(), [](const NcclTestsRow& r) { return r.oop_time_us > 0; });
  f.has_in_place = run.has_in_place &&
                   std::any_of(run.rows.begin(), run.rows.end(), [](const NcclTestsRow& r) { return r.ip_time_us > 0; });
  if (!f.has_out_of_place && !f.has_in_place) fail("no row has a time");
  return f;
}

}  // namespace ccsim
