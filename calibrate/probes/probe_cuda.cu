// ccsim-probe-cuda: copy bandwidth/latency of every intra-node path a collective uses, and kernel launch
// latency, on the GPUs of one machine. Writes one JSON document (docs/probes.md).
//
//   d2d   device-to-device on each GPU: cudaMemcpyAsync (copy engine) and a vectorized copy kernel
//   h2d   host->device per GPU, pinned (cudaMallocHost) and pageable (malloc) host memory
//   d2h   device->host, same
//   p2p   every ordered GPU pair (or neighbours): cudaMemcpyPeerAsync (copy engine) and copy kernels
//         reading the peer's memory (kernel_pull, runs on dst) or writing it (kernel_push, runs on src)
//   launch  empty kernel: back-to-back launch rate and launch + synchronize round trip
//   host_kernel  copy kernels of 1, 2, 4, ... thread blocks loading from (read) or storing to (write)
//         pinned host memory: what one channel of NCCL's SHM transport reaches, its thread block loading
//         the FIFO in host memory over PCIe (node.pcie.shm_channel_GBps; not in the default set)
//
// Each sample: warm-up, then timed repetitions with CUDA events (one event pair per repetition); the
// repetition count is capped so that one size takes about --max-ms-per-size. Reported: min, median, mean
// time in microseconds and the bandwidth of the median time in GB/s (1e9 bytes/s, bytes counted once).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "probe_common.h"
#include "probe_cuda_info.h"

using namespace ccsim::probe;

namespace {

__global__ void empty_kernel() {}

// Grid-stride copy, 16 bytes per thread and step, then the tail byte by byte. Buffers from cudaMalloc
// are 256-byte aligned, so the int4 part is aligned.
__global__ void copy_kernel(const int4* __restrict__ src, int4* __restrict__ dst, std::size_t n16,
                            std::size_t nbytes) {
  std::size_t tid = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = tid; i < n16; i += stride) dst[i] = src[i];
  const char* s = reinterpret_cast<const char*>(src);
  char* d = reinterpret_cast<char*>(dst);
  for (std::size_t i = n16 * 16 + tid; i < nbytes; i += stride) d[i] = s[i];
}

// Grid-stride copy between pinned host memory (mapped into the device's address space) and device
// memory, kHostCopyUnroll 16-byte loads in flight per thread before their stores, as NCCL's copy loops keep
// several loads outstanding. The byte count is a multiple of 16 (the sweep's sizes are).
constexpr int kHostCopyUnroll = 4;
__global__ void host_copy_kernel(const int4* __restrict__ src, int4* __restrict__ dst, std::size_t n16) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t base = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; base < n16;
       base += stride * kHostCopyUnroll) {
    int4 v[kHostCopyUnroll];
#pragma unroll
    for (int u = 0; u < kHostCopyUnroll; ++u)
      if (base + u * stride < n16) v[u] = src[base + u * stride];
#pragma unroll
    for (int u = 0; u < kHostCopyUnroll; ++u)
      if (base + u * stride < n16) dst[base + u * stride] = v[u];
  }
}

struct Options {
  std::uint64_t min_bytes = 8, max_bytes = 1ull << 30;
  double factor = 2;
  std::uint64_t pair_max_bytes = 256ull << 20;
  double pair_factor = 4;
  std::uint64_t pageable_max_bytes = 256ull << 20;
  int iters = 20, warmup = 5, min_iters = 3;
  double max_ms_per_size = 200;
  std::string pairs = "auto";
  std::vector<std::string> tests = {"d2d", "h2d", "d2h", "p2p", "launch"};
  std::vector<int> devices;  // empty = all
  int launch_batch = 1000, launch_roundtrips = 1000;
  int kernel_threads = 512, kernel_blocks_per_sm = 4;
  std::uint64_t host_kernel_bytes = 64ull << 20;  // per host_kernel sample
  std::string output;
  bool quiet = false;
};

void usage() {
  std::printf(
      "ccsim-probe-cuda: CUDA copy and launch microbenchmarks for ccsim calibration (docs/probes.md)\n"
      "usage: ccsim-probe-cuda [options]\n"
      "  -o, --output FILE        write the JSON document to FILE (default: stdout)\n"
      "  -b, --minbytes SIZE      smallest size (default 8)\n"
      "  -e, --maxbytes SIZE      largest size (default 1G)\n"
      "  -f, --stepfactor F       size multiplication factor (default 2)\n"
      "      --pair-maxbytes SIZE largest size of the GPU-pair sweeps (default 256M)\n"
      "      --pair-stepfactor F  factor of the GPU-pair sweeps (default 4)\n"
      "      --pageable-maxbytes SIZE  largest pageable host copy (default 256M)\n"
      "      --iters N            timed repetitions per size (default 20)\n"
      "      --warmup N           warm-up repetitions per size (default 5)\n"
      "      --max-ms-per-size MS cap on the timed repetitions of one size (default 200; at least 3 run)\n"
      "      --tests LIST         any of d2d,h2d,d2h,p2p,launch,host_kernel (default: d2d,h2d,d2h,p2p,launch)\n"
      "      --host-kernel-bytes SIZE  bytes per host_kernel sample (default 64M)\n"
      "      --pairs MODE         all | neighbors | none | list \"0:1,1:0\" (default: all up to 8 GPUs,\n"
      "                           neighbors (i<->i+1) above)\n"
      "      --devices LIST       GPU indices to use, e.g. 0,1,2,3 (default: all)\n"
      "      --launch-batch N     kernels per back-to-back repetition (default 1000)\n"
      "      --launch-roundtrips N  launch+synchronize repetitions (default 1000)\n"
      "  -q, --quiet              no progress on stderr\n"
      "  -h, --help               this text\n"
      "SIZE accepts K, M, G suffixes (powers of 1024). Exit status: 0 ok, 1 no GPU or fatal error, 2 usage.\n");
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
    else if (k == "--pair-maxbytes") o.pair_max_bytes = parse_size(a.value(i));
    else if (k == "--pair-stepfactor") o.pair_factor = std::stod(a.value(i));
    else if (k == "--pageable-maxbytes") o.pageable_max_bytes = parse_size(a.value(i));
    else if (k == "--iters" || k == "-n") o.iters = std::stoi(a.value(i));
    else if (k == "--warmup" || k == "-w") o.warmup = std::stoi(a.value(i));
    else if (k == "--max-ms-per-size") o.max_ms_per_size = std::stod(a.value(i));
    else if (k == "--tests") o.tests = split(a.value(i));
    else if (k == "--pairs") o.pairs = a.value(i);
    else if (k == "--devices") { for (auto& s : split(a.value(i))) o.devices.push_back(std::stoi(s)); }
    else if (k == "--launch-batch") o.launch_batch = std::stoi(a.value(i));
    else if (k == "--launch-roundtrips") o.launch_roundtrips = std::stoi(a.value(i));
    else if (k == "--host-kernel-bytes") o.host_kernel_bytes = parse_size(a.value(i));
    else if (k == "-q" || k == "--quiet") o.quiet = true;
    else throw ProbeError("unknown option " + k + " (see --help)");
  }
  if (o.iters < 1 || o.warmup < 0) throw ProbeError("--iters must be >= 1 and --warmup >= 0");
  if (o.host_kernel_bytes < 16 || o.host_kernel_bytes % 16 != 0)
    throw ProbeError("--host-kernel-bytes must be a positive multiple of 16");
  o.min_iters = std::min(3, o.iters);
  for (const auto& t : o.tests)
    if (t != "d2d" && t != "h2d" && t != "d2h" && t != "p2p" && t != "launch" && t != "host_kernel")
      throw ProbeError("unknown test '" + t + "' in --tests");
  return o;
}

bool wants(const Options& o, const char* t) { return std::find(o.tests.begin(), o.tests.end(), t) != o.tests.end(); }

struct Timing {
  Stats s;
  int iters = 0, warmup = 0;
};

// Times `op` (which enqueues one operation on `stream` of the current device): warm-up (the first one
// timed to size the rest), then repetitions each between two events.
Timing time_op(cudaStream_t stream, const std::function<void()>& op, const Options& o) {
  Timing t;
  cudaEvent_t e0, e1;
  CCSIM_CUDA_CHECK(cudaEventCreate(&e0));
  CCSIM_CUDA_CHECK(cudaEventCreate(&e1));
  std::unique_ptr<void, std::function<void(void*)>> guard(reinterpret_cast<void*>(1), [&](void*) {
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  });
  CCSIM_CUDA_CHECK(cudaEventRecord(e0, stream));
  op();
  CCSIM_CUDA_CHECK(cudaEventRecord(e1, stream));
  CCSIM_CUDA_CHECK(cudaEventSynchronize(e1));
  float first_ms = 0;
  CCSIM_CUDA_CHECK(cudaEventElapsedTime(&first_ms, e0, e1));
  double est = std::max(1e-4, static_cast<double>(first_ms));
  int more_warmup = std::max(0, std::min(o.warmup - 1, static_cast<int>(0.25 * o.max_ms_per_size / est)));
  if (more_warmup > 0) {
    CCSIM_CUDA_CHECK(cudaEventRecord(e0, stream));
    for (int i = 0; i < more_warmup; ++i) op();
    CCSIM_CUDA_CHECK(cudaEventRecord(e1, stream));
    CCSIM_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CCSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    est = std::max(1e-4, static_cast<double>(ms) / more_warmup);
  }
  t.warmup = 1 + more_warmup;
  int n = std::clamp(static_cast<int>(o.max_ms_per_size / est), o.min_iters, o.iters);
  std::vector<cudaEvent_t> ev(2 * static_cast<std::size_t>(n));
  for (auto& e : ev) CCSIM_CUDA_CHECK(cudaEventCreate(&e));
  std::vector<double> us;
  cudaError_t err = cudaSuccess;
  for (int i = 0; i < n && err == cudaSuccess; ++i) {
    err = cudaEventRecord(ev[2 * i], stream);
    op();
    if (err == cudaSuccess) err = cudaEventRecord(ev[2 * i + 1], stream);
  }
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  for (int i = 0; i < n && err == cudaSuccess; ++i) {
    float ms = 0;
    err = cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]);
    us.push_back(static_cast<double>(ms) * 1e3);
  }
  for (auto& e : ev) cudaEventDestroy(e);
  if (err != cudaSuccess) throw ProbeError("timing failed: " + cuda_error_text(err));
  CCSIM_CUDA_CHECK(cudaGetLastError());  // kernel launch errors
  t.s = stats_of(us);
  t.iters = n;
  return t;
}

json timing_json(json sample, std::uint64_t bytes, const Timing& t) {
  sample["bytes"] = bytes;
  sample["iters"] = t.iters;
  sample["warmup"] = t.warmup;
  sample["time_us_min"] = r6(t.s.min);
  sample["time_us_median"] = r6(t.s.median);
  sample["time_us_mean"] = r6(t.s.mean);
  sample["time_us_max"] = r6(t.s.max);
  sample["bw_GBps"] = t.s.median > 0 ? r6(static_cast<double>(bytes) / (t.s.median * 1e-6) / 1e9) : 0.0;
  return sample;
}

struct Gpu {
  int dev = 0;
  int sms = 1;
  cudaStream_t stream = nullptr;
  char* a = nullptr;  // source buffer
  char* b = nullptr;  // destination buffer
  std::uint64_t capacity = 0;
};

void launch_copy(const Gpu& g, const void* src, void* dst, std::uint64_t bytes, const Options& o) {
  std::size_t n16 = bytes / 16;
  std::size_t want = (std::max<std::size_t>(n16, 1) + o.kernel_threads - 1) / o.kernel_threads;
  unsigned blocks = static_cast<unsigned>(std::clamp<std::size_t>(want, 1, static_cast<std::size_t>(g.sms) * o.kernel_blocks_per_sm));
  copy_kernel<<<blocks, o.kernel_threads, 0, g.stream>>>(static_cast<const int4*>(src), static_cast<int4*>(dst), n16, bytes);
  CCSIM_CUDA_CHECK(cudaGetLastError());
}

class Runner {
 public:
  Runner(json& doc, const Options& o) : doc_(doc), o_(o) {}

  void progress(const std::string& what) {
    if (!o_.quiet) std::fprintf(stderr, "[ccsim-probe-cuda] %s\n", what.c_str());
  }

  // Runs one sample; a failure is recorded in "errors" and the sweep goes on with the next size.
  bool sample(const json& base, std::uint64_t bytes, const std::function<void()>& op, cudaStream_t stream) {
    try {
      Timing t = time_op(stream, op, o_);
      doc_["samples"].push_back(timing_json(base, bytes, t));
      return true;
    } catch (const std::exception& e) {
      json extra = base;
      extra["bytes"] = bytes;
      add_error(doc_, base.value("test", "?"), e.what(), extra);
      cudaGetLastError();
      return false;
    }
  }

  json& doc_;
  const Options& o_;
};

std::vector<std::pair<int, int>> select_pairs(const Options& o, const std::vector<int>& devs) {
  std::vector<std::pair<int, int>> out;
  std::string mode = o.pairs;
  if (mode == "auto") mode = devs.size() <= 8 ? "all" : "neighbors";
  if (mode == "none" || devs.size() < 2) return out;
  if (mode == "all") {
    for (int s : devs)
      for (int d : devs)
        if (s != d) out.push_back({s, d});
  } else if (mode == "neighbors") {
    for (std::size_t i = 0; i < devs.size(); ++i) {
      int s = devs[i], d = devs[(i + 1) % devs.size()];
      if (s == d) continue;
      out.push_back({s, d});
      if (devs.size() > 2 || i == 0) out.push_back({d, s});
    }
  } else {
    for (const std::string& p : split(mode)) {
      std::size_t c = p.find(':');
      if (c == std::string::npos) throw ProbeError("--pairs: expected all, neighbors, none or src:dst,...");
      int s = std::stoi(p.substr(0, c)), d = std::stoi(p.substr(c + 1));
      auto in = [&](int g) { return std::find(devs.begin(), devs.end(), g) != devs.end(); };
      if (s == d || !in(s) || !in(d)) throw ProbeError("--pairs: " + p + " is not a pair of distinct GPUs in use");
      out.push_back({s, d});
    }
  }
  return out;
}

int run(int argc, char** argv, json& doc, const Options& o) {
  int ndev = add_cuda_machine_facts(doc);
  if (ndev == 0) return 1;
  std::vector<int> devs = o.devices;
  if (devs.empty())
    for (int d = 0; d < ndev; ++d) devs.push_back(d);
  for (int d : devs)
    if (d < 0 || d >= ndev) throw ProbeError("--devices: GPU " + std::to_string(d) + " does not exist");
  auto sizes = size_sweep(o.min_bytes, o.max_bytes, o.factor);
  auto pair_sizes = size_sweep(o.min_bytes, std::min(o.max_bytes, o.pair_max_bytes), o.pair_factor);
  auto pairs = wants(o, "p2p") ? select_pairs(o, devs) : std::vector<std::pair<int, int>>{};
  doc["parameters"] = {{"minbytes", o.min_bytes},
                       {"maxbytes", o.max_bytes},
                       {"stepfactor", o.factor},
                       {"pair_maxbytes", o.pair_max_bytes},
                       {"pair_stepfactor", o.pair_factor},
                       {"pageable_maxbytes", o.pageable_max_bytes},
                       {"iters", o.iters},
                       {"warmup", o.warmup},
                       {"max_ms_per_size", o.max_ms_per_size},
                       {"tests", o.tests},
                       {"devices", devs},
                       {"pairs", o.pairs},
                       {"launch_batch", o.launch_batch},
                       {"launch_roundtrips", o.launch_roundtrips},
                       {"kernel_threads", o.kernel_threads},
                       {"kernel_blocks_per_sm", o.kernel_blocks_per_sm},
                       {"host_kernel_bytes", o.host_kernel_bytes},
                       {"bandwidth_unit", "GB/s = 1e9 bytes/s of payload (bytes counted once)"}};
  Runner r(doc, o);
  std::uint64_t need = std::max(sizes.back(), pairs.empty() ? 0 : pair_sizes.back());
  if (wants(o, "host_kernel")) need = std::max(need, o.host_kernel_bytes);

  // Buffers: two per GPU (a = source, b = destination). If memory is short, halve and say so.
  std::vector<Gpu> gpus(ndev);
  for (int d : devs) {
    Gpu& g = gpus[d];
    g.dev = d;
    CCSIM_CUDA_CHECK(cudaSetDevice(d));
    cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, d);
    CCSIM_CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
    std::uint64_t cap = need;
    while (cap >= 4096) {
      if (cudaMalloc(&g.a, cap) == cudaSuccess) {
        if (cudaMalloc(&g.b, cap) == cudaSuccess) break;
        cudaFree(g.a);
        g.a = nullptr;
      }
      cudaGetLastError();
      cap /= 2;
    }
    if (!g.b) throw ProbeError("cannot allocate device memory on GPU " + std::to_string(d));
    if (cap < need) add_error(doc, "alloc", "GPU " + std::to_string(d) + ": sizes above " + std::to_string(cap) + " bytes skipped (out of memory)");
    g.capacity = cap;
    CCSIM_CUDA_CHECK(cudaMemset(g.a, 1, cap));
    CCSIM_CUDA_CHECK(cudaMemset(g.b, 0, cap));
  }

  // ---- device to device
  if (wants(o, "d2d")) {
    for (int d : devs) {
      Gpu& g = gpus[d];
      CCSIM_CUDA_CHECK(cudaSetDevice(d));
      r.progress("d2d GPU " + std::to_string(d));
      for (auto bytes : sizes) {
        if (bytes > g.capacity) break;
        r.sample({{"test", "d2d"}, {"method", "copy_engine"}, {"gpu", d}}, bytes,
                 [&] { CCSIM_CUDA_CHECK(cudaMemcpyAsync(g.b, g.a, bytes, cudaMemcpyDeviceToDevice, g.stream)); }, g.stream);
        r.sample({{"test", "d2d"}, {"method", "kernel_copy"}, {"gpu", d}}, bytes,
                 [&] { launch_copy(g, g.a, g.b, bytes, o); }, g.stream);
      }
    }
  }

  // ---- host <-> device
  if (wants(o, "h2d") || wants(o, "d2h")) {
    std::uint64_t host_bytes = sizes.back();
    char* pinned = nullptr;
    char* pageable = nullptr;
    if (cudaMallocHost(&pinned, host_bytes) != cudaSuccess) {
      cudaGetLastError();
      pinned = nullptr;
      add_error(doc, "h2d", "cudaMallocHost of " + std::to_string(host_bytes) + " bytes failed; pinned tests skipped");
    } else {
      std::memset(pinned, 1, host_bytes);
    }
    std::uint64_t pageable_bytes = std::min(host_bytes, o.pageable_max_bytes);
    pageable = static_cast<char*>(std::malloc(pageable_bytes));
    if (pageable) std::memset(pageable, 1, pageable_bytes);  // fault the pages in
    for (const char* dir : {"h2d", "d2h"}) {
      if (!wants(o, dir)) continue;
      bool h2d = std::strcmp(dir, "h2d") == 0;
      for (int d : devs) {
        Gpu& g = gpus[d];
        CCSIM_CUDA_CHECK(cudaSetDevice(d));
        r.progress(std::string(dir) + " GPU " + std::to_string(d));
        for (const char* kind : {"pinned", "pageable"}) {
          char* host = std::strcmp(kind, "pinned") == 0 ? pinned : pageable;
          std::uint64_t limit = std::strcmp(kind, "pinned") == 0 ? host_bytes : pageable_bytes;
          if (!host) continue;
          for (auto bytes : sizes) {
            if (bytes > g.capacity || bytes > limit) break;
            r.sample({{"test", dir}, {"method", "copy_engine"}, {"host_memory", kind}, {"gpu", d}}, bytes,
                     [&] {
                       if (h2d) CCSIM_CUDA_CHECK(cudaMemcpyAsync(g.b, host, bytes, cudaMemcpyHostToDevice, g.stream));
                       else CCSIM_CUDA_CHECK(cudaMemcpyAsync(host, g.a, bytes, cudaMemcpyDeviceToHost, g.stream));
                     },
                     g.stream);
          }
        }
      }
    }
    if (pinned) cudaFreeHost(pinned);
    std::free(pageable);
  }

  // ---- peer to peer
  if (!pairs.empty()) {
    // Enable peer access wherever the hardware allows it; record the outcome per ordered pair.
    json access = json::array();
    std::vector<std::vector<int>> enabled(ndev, std::vector<int>(ndev, 0));
    for (auto [s, d] : pairs) {
      for (auto [from, to] : {std::pair<int, int>{s, d}, std::pair<int, int>{d, s}}) {
        if (enabled[from][to]) continue;
        int can = 0;
        cudaDeviceCanAccessPeer(&can, from, to);
        if (can) {
          CCSIM_CUDA_CHECK(cudaSetDevice(from));
          cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
          if (e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled) enabled[from][to] = 1;
          else add_error(doc, "p2p", "cudaDeviceEnablePeerAccess(" + std::to_string(from) + " -> " + std::to_string(to) + "): " + cuda_error_text(e));
          cudaGetLastError();
        } else {
          enabled[from][to] = -1;
        }
      }
    }
    for (int s = 0; s < ndev; ++s)
      for (int d = 0; d < ndev; ++d)
        if (enabled[s][d] != 0) access.push_back({{"accessor", s}, {"peer", d}, {"peer_access_enabled", enabled[s][d] == 1}});
    doc["peer_access"] = access;
    for (const auto& pr : pairs) {
      const int s = pr.first, d = pr.second;
      Gpu& gs = gpus[s];
      Gpu& gd = gpus[d];
      bool pull_ok = enabled[d][s] == 1;  // dst reads src memory
      bool push_ok = enabled[s][d] == 1;  // src writes dst memory
      r.progress("p2p " + std::to_string(s) + " -> " + std::to_string(d) + (pull_ok || push_ok ? "" : " (no P2P: staged copies only)"));
      std::uint64_t cap = std::min(gs.capacity, gd.capacity);
      for (auto bytes : pair_sizes) {
        if (bytes > cap) break;
        CCSIM_CUDA_CHECK(cudaSetDevice(d));
        r.sample({{"test", "p2p"}, {"method", "copy_engine"}, {"src", s}, {"dst", d}, {"stream_gpu", d},
                  {"p2p_enabled", pull_ok}},
                 bytes, [&] { CCSIM_CUDA_CHECK(cudaMemcpyPeerAsync(gd.b, d, gs.a, s, bytes, gd.stream)); }, gd.stream);
        if (pull_ok)
          r.sample({{"test", "p2p"}, {"method", "kernel_pull"}, {"src", s}, {"dst", d}, {"stream_gpu", d},
                    {"p2p_enabled", true}},
                   bytes, [&] { launch_copy(gd, gs.a, gd.b, bytes, o); }, gd.stream);
        if (push_ok) {
          CCSIM_CUDA_CHECK(cudaSetDevice(s));
          r.sample({{"test", "p2p"}, {"method", "kernel_push"}, {"src", s}, {"dst", d}, {"stream_gpu", s},
                    {"p2p_enabled", true}},
                   bytes, [&] { launch_copy(gs, gs.a, gd.b, bytes, o); }, gs.stream);
        }
      }
    }
  }

  // ---- kernels loading from / storing to pinned host memory, per thread-block count (NCCL's SHM
  // transport: each channel is one thread block loading its FIFO in host memory)
  if (wants(o, "host_kernel")) {
    char* host = nullptr;
    if (cudaHostAlloc(&host, o.host_kernel_bytes, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      add_error(doc, "host_kernel", "cudaHostAlloc of " + std::to_string(o.host_kernel_bytes) + " bytes failed; skipped");
    } else {
      std::memset(host, 1, o.host_kernel_bytes);
      const std::size_t n16 = o.host_kernel_bytes / 16;
      for (int d : devs) {
        Gpu& g = gpus[d];
        if (o.host_kernel_bytes > g.capacity) {
          add_error(doc, "host_kernel", "GPU " + std::to_string(d) + ": no device buffer of --host-kernel-bytes; skipped");
          continue;
        }
        CCSIM_CUDA_CHECK(cudaSetDevice(d));
        void* mapped = nullptr;
        CCSIM_CUDA_CHECK(cudaHostGetDevicePointer(&mapped, host, 0));
        r.progress("host_kernel GPU " + std::to_string(d));
        for (int blocks = 1;; blocks = std::min(2 * blocks, g.sms)) {
          for (const char* dir : {"read", "write"}) {
            const bool read = std::strcmp(dir, "read") == 0;
            const int4* src = static_cast<const int4*>(read ? mapped : static_cast<void*>(g.a));
            int4* dst = static_cast<int4*>(read ? static_cast<void*>(g.b) : mapped);
            const std::size_t before = doc["samples"].size();
            r.sample({{"test", "host_kernel"}, {"direction", dir}, {"host_memory", "pinned"}, {"gpu", d},
                      {"blocks", blocks}, {"threads", o.kernel_threads}},
                     o.host_kernel_bytes,
                     [&] {
                       host_copy_kernel<<<blocks, o.kernel_threads, 0, g.stream>>>(src, dst, n16);
                       CCSIM_CUDA_CHECK(cudaGetLastError());
                     },
                     g.stream);
            if (doc["samples"].size() > before) {
              json& last = doc["samples"].back();
              last["bw_per_block_GBps"] = r6(last.value("bw_GBps", 0.0) / blocks);
            }
          }
          if (blocks == g.sms) break;
        }
      }
      cudaFreeHost(host);
    }
  }

  // ---- kernel launch latency
  if (wants(o, "launch")) {
    for (int d : devs) {
      Gpu& g = gpus[d];
      CCSIM_CUDA_CHECK(cudaSetDevice(d));
      r.progress("launch GPU " + std::to_string(d));
      try {
        cudaEvent_t e0, e1;
        CCSIM_CUDA_CHECK(cudaEventCreate(&e0));
        CCSIM_CUDA_CHECK(cudaEventCreate(&e1));
        for (int i = 0; i < 100; ++i) empty_kernel<<<1, 1, 0, g.stream>>>();
        CCSIM_CUDA_CHECK(cudaStreamSynchronize(g.stream));
        // Back to back: GPU time per kernel (events around a batch) and host time per launch call.
        std::vector<double> gpu_us, host_us;
        int reps = std::max(o.iters, 3);
        for (int rep = 0; rep < reps; ++rep) {
          CCSIM_CUDA_CHECK(cudaEventRecord(e0, g.stream));
          double t0 = now_us();
          for (int i = 0; i < o.launch_batch; ++i) empty_kernel<<<1, 1, 0, g.stream>>>();
          double t1 = now_us();
          CCSIM_CUDA_CHECK(cudaEventRecord(e1, g.stream));
          CCSIM_CUDA_CHECK(cudaEventSynchronize(e1));
          CCSIM_CUDA_CHECK(cudaGetLastError());
          float ms = 0;
          CCSIM_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
          gpu_us.push_back(static_cast<double>(ms) * 1e3 / o.launch_batch);
          host_us.push_back((t1 - t0) / o.launch_batch);
        }
        Stats gs = stats_of(gpu_us), hs = stats_of(host_us);
        doc["samples"].push_back({{"test", "launch_back_to_back"}, {"gpu", d}, {"kernels_per_rep", o.launch_batch},
                                  {"iters", reps}, {"bytes", 0},
                                  {"time_us_min", r6(gs.min)}, {"time_us_median", r6(gs.median)},
                                  {"time_us_mean", r6(gs.mean)}, {"time_us_max", r6(gs.max)},
                                  {"host_launch_us_min", r6(hs.min)}, {"host_launch_us_median", r6(hs.median)},
                                  {"host_launch_us_mean", r6(hs.mean)}});
        // Round trip: launch one empty kernel and wait for it (host clock).
        std::vector<double> rt;
        for (int i = 0; i < o.launch_roundtrips; ++i) {
          double t0 = now_us();
          empty_kernel<<<1, 1, 0, g.stream>>>();
          cudaError_t e = cudaStreamSynchronize(g.stream);
          double t1 = now_us();
          if (e != cudaSuccess) throw ProbeError("cudaStreamSynchronize: " + cuda_error_text(e));
          rt.push_back(t1 - t0);
        }
        Stats rs = stats_of(rt);
        doc["samples"].push_back({{"test", "launch_sync_roundtrip"}, {"gpu", d}, {"iters", o.launch_roundtrips},
                                  {"bytes", 0},
                                  {"time_us_min", r6(rs.min)}, {"time_us_median", r6(rs.median)},
                                  {"time_us_mean", r6(rs.mean)}, {"time_us_max", r6(rs.max)},
                                  {"time_us_p99", r6(rs.p99)}});
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
      } catch (const std::exception& e) {
        add_error(doc, "launch", e.what(), {{"gpu", d}});
        cudaGetLastError();
      }
    }
  }

  for (int d : devs) {
    cudaSetDevice(d);
    cudaFree(gpus[d].a);
    cudaFree(gpus[d].b);
    cudaStreamDestroy(gpus[d].stream);
  }
  (void)argc;
  (void)argv;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ccsim-probe-cuda: %s\n", e.what());
    return 2;
  }
  json doc = new_document("cuda", argc, argv);
  return run_probe("ccsim-probe-cuda", doc, o.output, [&] { return run(argc, argv, doc, o); });
}
