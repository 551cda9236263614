// ccsim-probe-nccl: NCCL collectives per algorithm x protocol, with NCCL's own view of the machine.
//
// For each combination ("default" = NCCL's own choice, then NCCL_ALGO x NCCL_PROTO from --algos/--protos),
// the environment variables are set and the communicators are created afresh; every collective is swept
// over the sizes. Single process: ncclCommInitAll over the local GPUs. With MPI (built with
// CCSIM_PROBE_WITH_MPI): one rank per process, ncclGetUniqueId broadcast by MPI, rank 0 writes the JSON.
//
// Sizes and bandwidths follow nccl-tests: "bytes" is the nccl-tests size column (all_gather: the gathered
// buffer, reduce_scatter: the input buffer, alltoall: one rank's send buffer), algbw = bytes / time and
// busbw = algbw * factor (all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall (n-1)/n; others 1).
// Out of place, float, sum, root 0.
//
// NCCL's INFO output (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING by default) goes to a file in a
// private temporary directory; its lines are embedded per combination (each distinct message once), with
// the NCCL_TOPO_DUMP_FILE topology XML and the NCCL_GRAPH_DUMP_FILE graph XML.
#include <cuda_runtime.h>
#include <nccl.h>
#ifdef CCSIM_PROBE_WITH_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "probe_common.h"
#include "probe_cuda_info.h"

using namespace ccsim::probe;

namespace {

struct Options {
  std::uint64_t min_bytes = 8, max_bytes = 1ull << 30;
  double factor = 2;
  int iters = 20, warmup = 5;
  double max_ms_per_size = 500;
  std::vector<std::string> colls = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                    "reduce",     "alltoall",   "sendrecv"};
  std::vector<std::string> algos = {"Ring", "Tree", "NVLS", "NVLSTree", "CollnetDirect", "CollnetChain", "PAT"};
  std::vector<std::string> protos = {"LL", "LL128", "Simple"};
  bool run_default = true, run_combos = true;
  int ngpus = 0;  // single process: 0 = all
  std::string output, log_dir, subsys = "INIT,GRAPH,TUNING";
  bool keep_logs = false, quiet = false, nccl_log = true;
  int max_log_lines = 20000;
};

void usage() {
  std::printf(
      "ccsim-probe-nccl: NCCL collective sweeps per algorithm x protocol for ccsim calibration (docs/probes.md)\n"
      "usage: ccsim-probe-nccl [options]            (single process, all local GPUs)\n"
      "       mpirun -np N ccsim-probe-nccl [options] (one GPU per rank; when built with MPI)\n"
      "  -o, --output FILE       write the JSON document to FILE (default: stdout; MPI: rank 0 writes)\n"
      "  -b, --minbytes SIZE     smallest size (default 8)\n"
      "  -e, --maxbytes SIZE     largest size (default 1G)\n"
      "  -f, --stepfactor F      size factor (default 2)\n"
      "      --iters N           timed iterations per size (default 20)\n"
      "      --warmup N          warm-up iterations per size (default 5)\n"
      "      --max-ms-per-size MS  cap on the timed iterations of one size (default 500; at least 3 run)\n"
      "      --colls LIST        all_reduce,all_gather,reduce_scatter,broadcast,reduce,alltoall,sendrecv (default: all)\n"
      "      --algos LIST        NCCL_ALGO values to force (default Ring,Tree,NVLS,NVLSTree,CollnetDirect,CollnetChain,PAT)\n"
      "      --protos LIST       NCCL_PROTO values to force (default LL,LL128,Simple)\n"
      "      --default-only      only NCCL's own choice (no forced combinations)\n"
      "      --no-default        only the forced combinations\n"
      "      --ngpus N           single process: use GPUs 0..N-1 (default: all)\n"
      "      --log-dir DIR       where NCCL writes its log and XML dumps (default: a new /tmp directory)\n"
      "      --keep-logs         keep that directory (default: removed at exit)\n"
      "      --debug-subsys S    NCCL_DEBUG_SUBSYS (default INIT,GRAPH,TUNING)\n"
      "      --max-log-lines N   distinct NCCL log lines kept per combination (default 20000)\n"
      "      --no-nccl-log       do not set NCCL_DEBUG* (no log in the output)\n"
      "  -q, --quiet             no progress on stderr\n"
      "  -h, --help              this text\n"
      "A combination NCCL refuses (at init or for a collective) is recorded in \"errors\" and skipped.\n"
      "Exit status: 0 ok, 1 no GPU / NCCL failure, 2 usage.\n");
}

Options parse(int argc, char** argv) {
  Options o;
  Args a{argc, argv};
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "-h" || k == "--help") { usage(); std::exit(0); }
    else if (k == "-o" || k == "--output") o.output = a.value(i);
    else if (k == "-b" || k == "--minbytes") o.min_bytes = parse_size(a.value(i));
    else if (k == "-e" || k == "--maxbytes") o.max_bytes = parse_size(a.value(i));
    else if (k == "-f" || k == "--stepfactor") o.factor = std::stod(a.value(i));
    else if (k == "--iters" || k == "-n") o.iters = std::stoi(a.value(i));
    else if (k == "--warmup" || k == "-w") o.warmup = std::stoi(a.value(i));
    else if (k == "--max-ms-per-size") o.max_ms_per_size = std::stod(a.value(i));
    else if (k == "--colls") o.colls = split(a.value(i));
    else if (k == "--algos") o.algos = split(a.value(i));
    else if (k == "--protos") o.protos = split(a.value(i));
    else if (k == "--default-only") o.run_combos = false;
    else if (k == "--no-default") o.run_default = false;
    else if (k == "--ngpus" || k == "-g") o.ngpus = std::stoi(a.value(i));
    else if (k == "--log-dir") o.log_dir = a.value(i);
    else if (k == "--keep-logs") o.keep_logs = true;
    else if (k == "--debug-subsys") o.subsys = a.value(i);
    else if (k == "--max-log-lines") o.max_log_lines = std::stoi(a.value(i));
    else if (k == "--no-nccl-log") o.nccl_log = false;
    else if (k == "-q" || k == "--quiet") o.quiet = true;
    else throw ProbeError("unknown option " + k + " (see --help)");
  }
  static const std::set<std::string> known = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                              "reduce",     "alltoall",   "sendrecv"};
  for (const auto& c : o.colls)
    if (!known.count(c)) throw ProbeError("unknown collective '" + c + "' in --colls");
  if (o.iters < 1 || o.warmup < 0) throw ProbeError("--iters must be >= 1 and --warmup >= 0");
  return o;
}

struct NcclFailure : ProbeError {
  using ProbeError::ProbeError;
};

std::string nccl_text(ncclResult_t r, ncclComm_t comm) {
  std::string s = ncclGetErrorString(r);
  const char* last = comm ? ncclGetLastError(comm) : ncclGetLastError(nullptr);
  if (last && *last) s += std::string(" (") + last + ")";
  return s;
}

#define NCCL_CHECK(call, comm)                                                                   \
  do {                                                                                           \
    ncclResult_t r_ = (call);                                                                    \
    if (r_ != ncclSuccess) throw NcclFailure(std::string(#call) + ": " + nccl_text(r_, comm));  \
  } while (0)

// ------------------------------------------------------------------------------------------ ranks
struct Local {
  int dev = 0, rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
  std::vector<cudaEvent_t> events;
};

struct World {
  int nranks = 0;
  bool mpi = false;
  int proc_rank = 0, nprocs = 1;
  std::vector<Local> locals;
  bool root() const { return proc_rank == 0; }
};

// Agreement between processes (no-ops in a single process).
bool all_ok(const World& w, bool ok) {
#ifdef CCSIM_PROBE_WITH_MPI
  if (w.mpi) {
    int v = ok ? 1 : 0, r = 0;
    MPI_Allreduce(&v, &r, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return r == 1;
  }
#endif
  (void)w;
  return ok;
}
void max_across(const World& w, std::vector<double>& v) {
#ifdef CCSIM_PROBE_WITH_MPI
  if (w.mpi && !v.empty()) MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
  (void)w;
  (void)v;
}
// Gathers one string per process on process 0 (single process: just {s}).
std::vector<std::string> gather_strings(const World& w, const std::string& s) {
#ifdef CCSIM_PROBE_WITH_MPI
  if (w.mpi) {
    int len = static_cast<int>(s.size());
    std::vector<int> lens(w.nprocs), displs(w.nprocs);
    MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string all;
    if (w.root()) {
      int total = 0;
      for (int i = 0; i < w.nprocs; ++i) { displs[i] = total; total += lens[i]; }
      all.resize(static_cast<std::size_t>(total));
    }
    MPI_Gatherv(s.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
    std::vector<std::string> out;
    if (w.root())
      for (int i = 0; i < w.nprocs; ++i) out.push_back(all.substr(static_cast<std::size_t>(displs[i]), static_cast<std::size_t>(lens[i])));
    return out;
  }
#endif
  (void)w;
  return {s};
}

void destroy_comms(World& w, bool abort) {
  for (auto& l : w.locals) {
    if (!l.comm) continue;
    cudaSetDevice(l.dev);
    if (abort) ncclCommAbort(l.comm);
    else ncclCommDestroy(l.comm);
    l.comm = nullptr;
  }
}

void init_comms(World& w) {
  if (!w.mpi) {
    std::vector<ncclComm_t> comms(w.locals.size());
    std::vector<int> devs;
    for (auto& l : w.locals) devs.push_back(l.dev);
    NCCL_CHECK(ncclCommInitAll(comms.data(), static_cast<int>(devs.size()), devs.data()), nullptr);
    for (std::size_t i = 0; i < comms.size(); ++i) w.locals[i].comm = comms[i];
    return;
  }
#ifdef CCSIM_PROBE_WITH_MPI
  ncclUniqueId id;
  ncclResult_t r = ncclSuccess;
  if (w.root()) r = ncclGetUniqueId(&id);
  if (!all_ok(w, r == ncclSuccess)) throw NcclFailure("ncclGetUniqueId: " + nccl_text(r, nullptr));
  MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
  Local& l = w.locals[0];
  cudaSetDevice(l.dev);
  r = ncclCommInitRank(&l.comm, w.nranks, id, l.rank);
  if (!all_ok(w, r == ncclSuccess)) {
    std::string msg = "ncclCommInitRank: " + nccl_text(r, nullptr);
    if (l.comm) ncclCommAbort(l.comm);
    l.comm = nullptr;
    throw NcclFailure(msg);
  }
#endif
}

// ------------------------------------------------------------------------------------ collectives
struct Shape {
  std::size_t count = 0;  // elements per call argument (see launch)
  std::uint64_t bytes = 0;  // nccl-tests size
  double busbw_factor = 1;
};

Shape shape_of(const std::string& c, std::uint64_t bytes, int n) {
  Shape s;
  const std::size_t w = sizeof(float);
  if (c == "all_reduce") { s.count = bytes / w; s.bytes = s.count * w; s.busbw_factor = 2.0 * (n - 1) / n; }
  else if (c == "all_gather" || c == "reduce_scatter" || c == "alltoall") {
    s.count = bytes / (w * n);
    s.bytes = s.count * w * n;
    s.busbw_factor = static_cast<double>(n - 1) / n;
  } else { s.count = bytes / w; s.bytes = s.count * w; s.busbw_factor = 1; }
  return s;
}

ncclResult_t launch_one(const std::string& c, Local& l, std::size_t count, int n) {
  const ncclDataType_t t = ncclFloat;
  if (c == "all_reduce") return ncclAllReduce(l.send, l.recv, count, t, ncclSum, l.comm, l.stream);
  if (c == "all_gather") return ncclAllGather(l.send, l.recv, count, t, l.comm, l.stream);
  if (c == "reduce_scatter") return ncclReduceScatter(l.send, l.recv, count, t, ncclSum, l.comm, l.stream);
  if (c == "broadcast") return ncclBroadcast(l.send, l.recv, count, t, 0, l.comm, l.stream);
  if (c == "reduce") return ncclReduce(l.send, l.recv, count, t, ncclSum, 0, l.comm, l.stream);
  if (c == "alltoall") {
    ncclResult_t r = ncclGroupStart();
    for (int p = 0; p < n && r == ncclSuccess; ++p) {
      const char* s = static_cast<const char*>(l.send) + static_cast<std::size_t>(p) * count * sizeof(float);
      char* d = static_cast<char*>(l.recv) + static_cast<std::size_t>(p) * count * sizeof(float);
      r = ncclSend(s, count, t, p, l.comm, l.stream);
      if (r == ncclSuccess) r = ncclRecv(d, count, t, p, l.comm, l.stream);
    }
    ncclResult_t e = ncclGroupEnd();
    return r != ncclSuccess ? r : e;
  }
  // sendrecv: to rank+1, from rank-1 (nccl-tests sendrecv_perf)
  ncclResult_t r = ncclGroupStart();
  if (r == ncclSuccess) r = ncclSend(l.send, count, t, (l.rank + 1) % n, l.comm, l.stream);
  if (r == ncclSuccess) r = ncclRecv(l.recv, count, t, (l.rank - 1 + n) % n, l.comm, l.stream);
  ncclResult_t e = ncclGroupEnd();
  return r != ncclSuccess ? r : e;
}

// One call of the collective on every local rank (grouped when a process drives several GPUs).
void launch_all(World& w, const std::string& c, std::size_t count) {
  NCCL_CHECK(ncclGroupStart(), nullptr);
  ncclResult_t first = ncclSuccess;
  ncclComm_t bad = nullptr;
  for (auto& l : w.locals) {
    ncclResult_t r = launch_one(c, l, count, w.nranks);
    if (r != ncclSuccess && first == ncclSuccess) { first = r; bad = l.comm; }
  }
  ncclResult_t e = ncclGroupEnd();
  if (first != ncclSuccess) throw NcclFailure(c + ": " + nccl_text(first, bad));
  if (e != ncclSuccess) throw NcclFailure(c + " (ncclGroupEnd): " + nccl_text(e, w.locals[0].comm));
}

void sync_all(World& w) {
  for (auto& l : w.locals) {
    cudaSetDevice(l.dev);
    CCSIM_CUDA_CHECK(cudaStreamSynchronize(l.stream));
  }
}

// A communicator left in an error state (asynchronous error) cannot be used again.
bool comms_healthy(World& w) {
  bool ok = true;
  for (auto& l : w.locals) {
    ncclResult_t async = ncclSuccess;
    if (!l.comm || ncclCommGetAsyncError(l.comm, &async) != ncclSuccess || (async != ncclSuccess && async != ncclInProgress)) ok = false;
  }
  return all_ok(w, ok);
}

struct Measure {
  Stats s;
  double host_avg_us = 0;
  int iters = 0, warmup = 0;
};

Measure measure(World& w, const std::string& c, std::size_t count, const Options& o) {
  Measure m;
  // First warm-up call, timed on the host to size the rest.
  double t0 = now_us();
  launch_all(w, c, count);
  sync_all(w);
  std::vector<double> est{std::max(1.0, now_us() - t0)};
  max_across(w, est);
  int more = std::max(0, std::min(o.warmup - 1, static_cast<int>(0.25 * o.max_ms_per_size * 1e3 / est[0])));
  for (int i = 0; i < more; ++i) launch_all(w, c, count);
  sync_all(w);
  m.warmup = 1 + more;
  if (more > 0) {
    // refine the estimate with a short timed batch
    double t1 = now_us();
    launch_all(w, c, count);
    sync_all(w);
    est[0] = std::max(1.0, now_us() - t1);
    max_across(w, est);
    m.warmup += 1;
  }
  int n = std::clamp(static_cast<int>(o.max_ms_per_size * 1e3 / est[0]), std::min(3, o.iters), o.iters);
  for (auto& l : w.locals) {
    cudaSetDevice(l.dev);
    while (l.events.size() < static_cast<std::size_t>(n) + 1) {
      cudaEvent_t e;
      CCSIM_CUDA_CHECK(cudaEventCreate(&e));
      l.events.push_back(e);
    }
  }
  // Back-to-back iterations with an event between consecutive ones on every stream; the host time of the
  // whole batch gives nccl-tests' average, the events give per-iteration times (max over ranks).
  for (auto& l : w.locals) {
    cudaSetDevice(l.dev);
    CCSIM_CUDA_CHECK(cudaEventRecord(l.events[0], l.stream));
  }
  double h0 = now_us();
  for (int k = 0; k < n; ++k) {
    launch_all(w, c, count);
    for (auto& l : w.locals) {
      cudaSetDevice(l.dev);
      CCSIM_CUDA_CHECK(cudaEventRecord(l.events[static_cast<std::size_t>(k) + 1], l.stream));
    }
  }
  sync_all(w);
  std::vector<double> per_iter(static_cast<std::size_t>(n), 0.0);
  for (auto& l : w.locals)
    for (int k = 0; k < n; ++k) {
      float ms = 0;
      CCSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, l.events[k], l.events[k + 1]));
      per_iter[k] = std::max(per_iter[k], static_cast<double>(ms) * 1e3);
    }
  std::vector<double> host{(now_us() - h0) / n};
  max_across(w, per_iter);
  max_across(w, host);
  m.s = stats_of(per_iter);
  m.host_avg_us = host[0];
  m.iters = n;
  return m;
}

// ------------------------------------------------------------------------------------ NCCL log
struct LogReader {
  std::string dir;
  std::string file;  // discovered after the first init
  std::uint64_t offset = 0;

  void discover() {
    if (!file.empty()) return;
    std::string pid = "." + std::to_string(getpid()) + ".log";
    for (const auto& n : list_dir(dir))
      if (n.rfind("nccl.", 0) == 0 && n.size() > pid.size() && n.compare(n.size() - pid.size(), pid.size(), pid) == 0)
        file = dir + "/" + n;
  }
  // New complete lines since the last call.
  std::vector<std::string> new_lines() {
    discover();
    std::vector<std::string> out;
    if (file.empty()) return out;
    std::ifstream in(file, std::ios::binary);
    if (!in) return out;
    in.seekg(static_cast<std::streamoff>(offset));
    std::string line;
    while (std::getline(in, line)) {
      if (in.eof()) break;  // partial last line: read it next time
      offset += line.size() + 1;
      out.push_back(line);
    }
    return out;
  }
};

// Each distinct message once (the text after "NCCL INFO", so per-call TUNING lines of equal size collapse),
// the full line of its first occurrence kept so that it can be fed to ccsim's NCCL log importer.
json dedup_log(const std::vector<std::string>& lines, int max_lines, std::size_t& dropped) {
  json out = json::array();
  std::set<std::string> seen;
  dropped = 0;
  for (const auto& l : lines) {
    std::size_t p = l.find("NCCL INFO");
    std::string key = p == std::string::npos ? l : l.substr(p);
    // keep the [dev] tag in the key so that per-rank lines (rings, trees) stay
    std::size_t b = l.find(" [");
    if (b != std::string::npos && b < p) key = l.substr(b, l.find(']', b) - b + 1) + key;
    if (!seen.insert(key).second) continue;
    if (static_cast<int>(out.size()) >= max_lines) { ++dropped; continue; }
    out.push_back(l);
  }
  return out;
}

std::string take_file(const std::string& path) {
  std::string s = read_text_file(path, 64u << 20);
  if (!s.empty()) std::remove(path.c_str());
  return s;
}

void remove_tree(const std::string& dir) {
  for (const auto& n : list_dir(dir)) std::remove((dir + "/" + n).c_str());
  rmdir(dir.c_str());
}

// ------------------------------------------------------------------------------------ main flow
struct Combo {
  std::string name, algo, proto;  // algo/proto "" = unset
};

int run(json& doc, const Options& o, World& w) {
  int version = 0;
  ncclGetVersion(&version);
  doc["machine"]["nccl_version"] = version;
  doc["machine"]["nccl_version_string"] = std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." + std::to_string(version % 100);
  doc["machine"]["nccl_header_version"] = std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." + std::to_string(NCCL_PATCH);
  int ndev = add_cuda_machine_facts(doc);
  if (ndev == 0) return 1;

  if (!w.mpi) {
    int n = o.ngpus > 0 ? std::min(o.ngpus, ndev) : ndev;
    for (int d = 0; d < n; ++d) {
      Local l;
      l.dev = d;
      l.rank = d;
      w.locals.push_back(l);
    }
    w.nranks = n;
  } else {
    Local l;
    int local_rank = w.proc_rank;
#ifdef CCSIM_PROBE_WITH_MPI
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.proc_rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);
#endif
    l.dev = local_rank % ndev;
    l.rank = w.proc_rank;
    w.locals.push_back(l);
    w.nranks = w.nprocs;
  }

  std::uint64_t max_bytes = o.max_bytes;
  std::vector<std::uint64_t> sizes = size_sweep(o.min_bytes, max_bytes, o.factor);
  for (auto& l : w.locals) {
    CCSIM_CUDA_CHECK(cudaSetDevice(l.dev));
    CCSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    CCSIM_CUDA_CHECK(cudaMalloc(&l.send, sizes.back()));
    CCSIM_CUDA_CHECK(cudaMalloc(&l.recv, sizes.back()));
    CCSIM_CUDA_CHECK(cudaMemset(l.send, 0, sizes.back()));
    CCSIM_CUDA_CHECK(cudaMemset(l.recv, 0, sizes.back()));
  }

  std::vector<Combo> combos;
  const char* user_algo = std::getenv("NCCL_ALGO");
  const char* user_proto = std::getenv("NCCL_PROTO");
  std::string ua = user_algo ? user_algo : "", up = user_proto ? user_proto : "";
  if (o.run_default) combos.push_back({"default", ua, up});
  if (o.run_combos)
    for (const auto& a : o.algos)
      for (const auto& p : o.protos) combos.push_back({a + "/" + p, a, p});

  json ranks = json::array();
  for (auto& l : w.locals) {
    char bus[64] = {0};
    cudaDeviceGetPCIBusId(bus, sizeof(bus), l.dev);
    ranks.push_back({{"rank", l.rank}, {"hostname", hostname()}, {"gpu", l.dev}, {"pci_bus_id", bus}});
  }
  if (w.mpi) {
    auto all = gather_strings(w, ranks.dump());
    if (w.root()) {
      ranks = json::array();
      for (const auto& s : all)
        for (const auto& r : json::parse(s)) ranks.push_back(r);
    }
  }
  doc["ranks"] = ranks;
  doc["parameters"] = {{"minbytes", o.min_bytes}, {"maxbytes", o.max_bytes}, {"stepfactor", o.factor},
                       {"iters", o.iters}, {"warmup", o.warmup}, {"max_ms_per_size", o.max_ms_per_size},
                       {"colls", o.colls}, {"algos", o.algos}, {"protos", o.protos},
                       {"run_default", o.run_default}, {"run_combos", o.run_combos},
                       {"nranks", w.nranks}, {"processes", w.nprocs}, {"mpi", w.mpi},
                       {"datatype", "float"}, {"op", "sum"}, {"root", 0}, {"in_place", false},
                       {"nccl_debug_subsys", o.nccl_log ? json(o.subsys) : json(nullptr)}};

  LogReader log;
  log.dir = o.log_dir;
  json combos_out = json::array();
  bool topo_done = false;
  auto progress = [&](const std::string& s) {
    if (!o.quiet && w.root()) std::fprintf(stderr, "[ccsim-probe-nccl] %s\n", s.c_str());
  };

  for (const Combo& cb : combos) {
    if (cb.algo.empty()) unsetenv("NCCL_ALGO"); else setenv("NCCL_ALGO", cb.algo.c_str(), 1);
    if (cb.proto.empty()) unsetenv("NCCL_PROTO"); else setenv("NCCL_PROTO", cb.proto.c_str(), 1);
    json cj = {{"combination", cb.name},
               {"NCCL_ALGO", cb.algo.empty() ? json(nullptr) : json(cb.algo)},
               {"NCCL_PROTO", cb.proto.empty() ? json(nullptr) : json(cb.proto)}};
    progress("combination " + cb.name + ": init");
    log.new_lines();  // skip anything logged before this init
    bool inited = false;
    double ti = now_us();
    try {
      init_comms(w);
      inited = true;
    } catch (const std::exception& e) {
      cj["init_error"] = e.what();
      if (w.root()) add_error(doc, "init", e.what(), {{"combination", cb.name}});
    }
    cj["init_s"] = r6((now_us() - ti) / 1e6);
    cj["accepted"] = json::object();
    if (inited) {
      if (!topo_done && o.nccl_log) {
        std::string topo = take_file(o.log_dir + "/topo.xml");
        if (!topo.empty()) { doc["nccl_topology_xml"] = topo; topo_done = true; }
      }
      if (o.nccl_log) {
        std::string graph = take_file(o.log_dir + "/graph.xml");
        cj["nccl_graph_xml"] = graph.empty() ? json(nullptr) : json(graph);
      }
      for (const auto& c : o.colls) {
        progress("combination " + cb.name + ": " + c);
        bool any = false, broken = false;
        for (std::uint64_t req : sizes) {
          Shape sh = shape_of(c, req, w.nranks);
          if (sh.count == 0) continue;
          bool ok = true;
          std::string err;
          Measure m;
          try {
            m = measure(w, c, sh.count, o);
          } catch (const std::exception& e) {
            ok = false;
            err = e.what();
          }
          if (!all_ok(w, ok)) {
            if (w.root())
              add_error(doc, c, err.empty() ? "failed on another rank" : err,
                        {{"combination", cb.name}, {"bytes", sh.bytes}, {"first_size", !any}});
            cudaGetLastError();
            if (!comms_healthy(w)) { broken = true; break; }
            if (!any) break;  // NCCL does not accept this collective with this combination
            continue;
          }
          any = true;
          double alg = m.s.median > 0 ? static_cast<double>(sh.bytes) / (m.s.median * 1e-6) / 1e9 : 0;
          if (w.root())
            doc["samples"].push_back({{"test", c},
                                      {"combination", cb.name},
                                      {"algo", cb.algo.empty() ? json(nullptr) : json(cb.algo)},
                                      {"proto", cb.proto.empty() ? json(nullptr) : json(cb.proto)},
                                      {"nranks", w.nranks},
                                      {"bytes", sh.bytes},
                                      {"count", sh.count},
                                      {"iters", m.iters},
                                      {"warmup", m.warmup},
                                      {"time_us_min", r6(m.s.min)},
                                      {"time_us_median", r6(m.s.median)},
                                      {"time_us_mean", r6(m.s.mean)},
                                      {"time_us_max", r6(m.s.max)},
                                      {"time_us_host_avg", r6(m.host_avg_us)},
                                      {"algbw_GBps", r6(alg)},
                                      {"busbw_GBps", r6(alg * sh.busbw_factor)},
                                      {"busbw_factor", r6(sh.busbw_factor)}});
        }
        cj["accepted"][c] = any;
        if (broken) {
          // The communicators are in an error state: recreate them for the next collective.
          destroy_comms(w, true);
          try {
            init_comms(w);
          } catch (const std::exception& e) {
            if (w.root()) add_error(doc, "init", e.what(), {{"combination", cb.name}});
            break;
          }
        }
      }
      destroy_comms(w, false);
    }
    if (o.nccl_log) {
      std::size_t dropped = 0;
      auto lines = log.new_lines();
      json mine = dedup_log(lines, o.max_log_lines, dropped);
      if (w.mpi) {
        auto all = gather_strings(w, mine.dump());
        if (w.root()) {
          mine = json::array();
          for (const auto& s : all)
            for (const auto& x : json::parse(s)) mine.push_back(x);
        }
      }
      cj["nccl_log_lines_read"] = lines.size();
      cj["nccl_log_lines_dropped"] = dropped;
      cj["nccl_log"] = mine;
    }
    combos_out.push_back(cj);
  }
  doc["combinations"] = combos_out;
  if (ua.empty()) unsetenv("NCCL_ALGO"); else setenv("NCCL_ALGO", ua.c_str(), 1);
  if (up.empty()) unsetenv("NCCL_PROTO"); else setenv("NCCL_PROTO", up.c_str(), 1);

  for (auto& l : w.locals) {
    cudaSetDevice(l.dev);
    for (auto e : l.events) cudaEventDestroy(e);
    cudaFree(l.send);
    cudaFree(l.recv);
    cudaStreamDestroy(l.stream);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ccsim-probe-nccl: %s\n", e.what());
    return 2;
  }
  World w;
#ifdef CCSIM_PROBE_WITH_MPI
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &w.proc_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.nprocs);
  w.mpi = w.nprocs > 1;  // a single MPI process behaves like the single-process mode
  if (!w.mpi) { w.proc_rank = 0; w.nprocs = 1; }
#endif
  // NCCL reads its debug settings once, at the first NCCL call: set them before anything else.
  bool own_dir = false;
  if (o.nccl_log) {
    if (o.log_dir.empty()) {
      char tmpl[] = "/tmp/ccsim-probe-nccl.XXXXXX";
      if (mkdtemp(tmpl)) { o.log_dir = tmpl; own_dir = true; }
    } else {
      mkdir(o.log_dir.c_str(), 0755);
    }
    if (o.log_dir.empty()) {
      o.nccl_log = false;
    } else {
      setenv("NCCL_DEBUG", "INFO", 1);
      setenv("NCCL_DEBUG_SUBSYS", o.subsys.c_str(), 1);
      setenv("NCCL_DEBUG_FILE", (o.log_dir + "/nccl.%h.%p.log").c_str(), 1);
      setenv("NCCL_TOPO_DUMP_FILE", (o.log_dir + "/topo.xml").c_str(), 1);
      setenv("NCCL_GRAPH_DUMP_FILE", (o.log_dir + "/graph.xml").c_str(), 1);
    }
  }
  json doc = new_document("nccl", argc, argv);
  doc["nccl_log_dir"] = o.nccl_log ? json(o.log_dir) : json(nullptr);
  int rc = 0;
  double t0 = now_us();
  try {
    rc = run(doc, o, w);
  } catch (const std::exception& e) {
    add_error(doc, "fatal", e.what());
    rc = 1;
  }
  doc["elapsed_s"] = r6((now_us() - t0) / 1e6);
  if (w.root() && !write_document(doc, o.output)) rc = 1;
  if (own_dir && !o.keep_logs) remove_tree(o.log_dir);
  if (rc != 0 && w.root()) std::fprintf(stderr, "ccsim-probe-nccl: failed, see \"errors\" in the output\n");
#ifdef CCSIM_PROBE_WITH_MPI
  MPI_Finalize();
#endif
  return rc;
}
