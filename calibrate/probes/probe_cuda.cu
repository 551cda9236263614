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
//   host_flag  latencies of NCCL's step handshakes through pinned host memory (not in the default set):
//         one GPU thread's dependent loads from host memory (gpu_read), a flag passed back and forth
//         between two thread blocks through host memory (gpu_gpu: an SHM step's FIFO flag) or device
//         memory (the same handshake without PCIe), and between a GPU thread and a CPU thread (gpu_cpu:
//         the kernel <-> proxy handshake of NCCL's network transports)
//   shm_fifo  NCCL's SHM transport played on one GPU (not in the default set): per channel a sender
//         block copies slices into a FIFO of 8 slots in pinned host memory and posts a tail flag, a
//         receiver block polls it, copies the slice out and posts the head that frees the slot; 1, 2, 4
//         and 8 such channels at once (node.pcie.shm_channel_GBps is the rate of one)
//   ll_step  NCCL's LL protocol handing one network step to its proxy (not in the default set): a
//         block of 512 threads stores the step's 16-byte lines (data and flag twice) into pinned host
//         memory, as LL's network sends do, while a CPU thread checks every line's flags before it may
//         send, as NCCL's send proxy does (src/transport/net.cc); against the same bytes followed by one
//         tail flag (Simple's handoff). Their difference is what LL's per-step handoff costs beyond
//         NCCL's model (docs/accuracy.md, the multi-node Tree/LL mid sizes)
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

// ---- host_flag kernels. Every spin is bounded (kSpinLimit polls): a flag that never comes sets *failed
// instead of hanging the GPU.
constexpr long long kSpinLimit = 1ll << 22;

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One thread follows `steps` links of a chain in pinned host memory: each load's address comes from the
// previous load, so the time per step is the GPU's read latency of host memory (a poll of an SHM flag).
__global__ void host_chase_kernel(const unsigned* chain, int steps, unsigned* sink, unsigned long long* ns) {
  const volatile unsigned* c = chain;
  unsigned i = 0;
  const unsigned long long t0 = global_ns();
  for (int s = 0; s < steps; ++s) i = c[i];
  ns[0] = global_ns() - t0;
  sink[0] = i;
}

// Thread 0 of block 0 and of block 1 pass a counter back and forth `rounds` times through two flags
// 128 bytes apart (`flags`: pinned host memory or device memory): block 0 stores r and waits for the
// echo, block 1 waits for r and stores it back. A round is two one-way handoffs (store, fence, the
// other side's poll), as a FIFO step of NCCL's SHM transport between a sender and a receiver block.
// A block whose partner gave up stops too (each poll also reads `failed`, in device memory: an L2 hit).
__global__ void block_pingpong_kernel(unsigned* flags, int rounds, unsigned long long* ns, int* failed) {
  if (threadIdx.x != 0) return;
  volatile unsigned* ping = flags;
  volatile unsigned* pong = flags + 32;
  const unsigned long long t0 = global_ns();
  for (int r = 1; r <= rounds; ++r) {
    volatile unsigned* mine = blockIdx.x == 0 ? ping : pong;
    volatile unsigned* theirs = blockIdx.x == 0 ? pong : ping;
    if (blockIdx.x == 0) {
      *mine = r;
      __threadfence_system();
    }
    long long spins = 0;
    while (*theirs != static_cast<unsigned>(r))
      if (++spins > kSpinLimit || *(volatile int*)failed) { *(volatile int*)failed = 1; return; }
    if (blockIdx.x == 1) {
      *mine = r;
      __threadfence_system();
    }
  }
  if (blockIdx.x == 0) ns[0] = global_ns() - t0;
}

// One GPU thread and one CPU thread pass a counter back and forth through pinned host memory: the GPU
// stores r into flags[0], the CPU (the loop in measure_host_flags) sees it and stores r into flags[32]. This is
// the kernel <-> proxy handshake of NCCL's network transports (the kernel posts a step, the proxy
// thread polls for it; the proxy posts completion, the kernel polls).
// ---- ll_step: the step's LL lines, {data, flag, data, flag} per 16 bytes stored at once with a
// volatile vector store (prims_ll.h storeLL), into pinned host memory; with `tail` the lines carry
// no meaning and one flag after a system-wide fence hands the step over (Simple's tail).
__global__ void ll_step_kernel(unsigned* lines, unsigned nlines, unsigned flag, unsigned* tail) {
  for (unsigned i = threadIdx.x; i < nlines; i += blockDim.x) {
    unsigned* p = lines + 4 * static_cast<std::size_t>(i);
    asm volatile("st.volatile.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(i), "r"(flag), "r"(i), "r"(flag)
                 : "memory");
  }
  if (tail != nullptr) {
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) *reinterpret_cast<volatile unsigned*>(tail) = flag;
  }
}

__global__ void gpu_cpu_pingpong_kernel(unsigned* flags, int rounds, unsigned long long* ns, int* failed) {
  volatile unsigned* to_cpu = flags;
  volatile unsigned* from_cpu = flags + 32;
  const unsigned long long t0 = global_ns();
  for (int r = 1; r <= rounds; ++r) {
    *to_cpu = r;
    __threadfence_system();
    long long spins = 0;
    while (*from_cpu != static_cast<unsigned>(r))
      if (++spins > kSpinLimit) { *failed = 1; return; }
  }
  ns[0] = global_ns() - t0;
}

// ---- shm_fifo: NCCL's SHM transport (src/transport/shm.cc, the FIFO on the receiver's side in host
// memory) on one GPU. Block pair p is one channel: block 2p (the sender) copies `steps` slices from device
// memory into slot s % kShmSlots of its FIFO, fences and posts tail = s + 1; block 2p+1 (the receiver)
// polls the tail, loads the slice (volatile, as NCCL loads a peer's buffer: the host memory's contents,
// never a cached copy; `plain` loads for comparison) into device memory and posts head = s + 1, which
// frees the slot for the sender. NCCL_STEPS = 8 slots; a Simple step is NCCL_BUFFSIZE / 8 = 512 KiB.
// Flags and FIFO are pinned host memory, as NCCL's ncclSendMem/ncclRecvMem for SHM.
constexpr int kShmSlots = 8;
// One 16-byte load that bypasses the caches' copies (NCCL's ld_volatile_global for a peer's buffer).
__device__ int4 ld_volatile16(const int4* p) {
  int4 v;
  asm volatile("ld.volatile.global.v4.s32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
template <bool kVolatile>
__global__ void shm_fifo_kernel(int4* fifo_base, unsigned* flags_base, const int4* src, int4* dst,
                                std::size_t slot16, int steps, int* failed) {
  const int pair = blockIdx.x / 2;
  const bool sender = blockIdx.x % 2 == 0;
  int4* fifo = fifo_base + static_cast<std::size_t>(pair) * kShmSlots * slot16;
  volatile unsigned* head = flags_base + pair * 64;  // flags 128 bytes apart, channels 256 bytes apart
  volatile unsigned* tail = flags_base + pair * 64 + 32;
  const int4* in = src + static_cast<std::size_t>(pair) * slot16;  // the same slice every step: the data
  int4* out = dst + static_cast<std::size_t>(pair) * slot16;       // does not matter, the traffic does
  __shared__ int stop;
  for (int s = 0; s < steps; ++s) {
    if (threadIdx.x == 0) {
      stop = 0;
      long long spins = 0;
      if (sender) {
        while (static_cast<int>(*head) + kShmSlots <= s)
          if (++spins > kSpinLimit) { stop = 1; break; }
      } else {
        while (static_cast<int>(*tail) <= s)
          if (++spins > kSpinLimit) { stop = 1; break; }
      }
    }
    __syncthreads();
    if (stop) {
      if (threadIdx.x == 0) *failed = 1;
      return;
    }
    int4* slot = fifo + static_cast<std::size_t>(s % kShmSlots) * slot16;
    const std::size_t stride = blockDim.x;
    for (std::size_t base = threadIdx.x; base < slot16; base += stride * kHostCopyUnroll) {
      int4 v[kHostCopyUnroll];
#pragma unroll
      for (int u = 0; u < kHostCopyUnroll; ++u)
        if (base + u * stride < slot16) {
          if (sender) {
            v[u] = in[base + u * stride];
          } else if (kVolatile) {
            v[u] = ld_volatile16(slot + base + u * stride);
          } else {
            v[u] = slot[base + u * stride];
          }
        }
#pragma unroll
      for (int u = 0; u < kHostCopyUnroll; ++u)
        if (base + u * stride < slot16) (sender ? slot : out)[base + u * stride] = v[u];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence_system();
      if (sender) *tail = s + 1;
      else *head = s + 1;
    }
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
  std::vector<int> shm_threads = {512, 256};       // shm_fifo: threads per block of the 512 KiB sweep
  int flag_rounds = 10000;                         // host_flag: handoffs (and chain steps) per repetition
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
      "      --tests LIST         any of d2d,h2d,d2h,p2p,launch,host_kernel,host_flag,shm_fifo,ll_step\n"
      "                           (default: d2d,h2d,d2h,p2p,launch)\n"
      "      --host-kernel-bytes SIZE  bytes per host_kernel sample and per shm_fifo channel (default 64M)\n"
      "      --shm-threads LIST   shm_fifo: threads per block, multiples of 32 up to 1024 (default 512,256)\n"
      "      --flag-rounds N      host_flag: round trips (and chain steps) per repetition (default 10000)\n"
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
    else if (k == "--flag-rounds") o.flag_rounds = std::stoi(a.value(i));
    else if (k == "--shm-threads") {
      o.shm_threads.clear();
      for (auto& t : split(a.value(i))) o.shm_threads.push_back(std::stoi(t));
    }
    else if (k == "-q" || k == "--quiet") o.quiet = true;
    else throw ProbeError("unknown option " + k + " (see --help)");
  }
  if (o.iters < 1 || o.warmup < 0) throw ProbeError("--iters must be >= 1 and --warmup >= 0");
  if (o.host_kernel_bytes < 16 || o.host_kernel_bytes % 16 != 0)
    throw ProbeError("--host-kernel-bytes must be a positive multiple of 16");
  if (o.flag_rounds < 2) throw ProbeError("--flag-rounds must be >= 2");
  for (const int t : o.shm_threads)
    if (t < 32 || t > 1024 || t % 32 != 0) throw ProbeError("--shm-threads: " + std::to_string(t) + " is not a multiple of 32 in [32, 1024]");
  o.min_iters = std::min(3, o.iters);
  for (const auto& t : o.tests)
    if (t != "d2d" && t != "h2d" && t != "d2h" && t != "p2p" && t != "launch" && t != "host_kernel" &&
        t != "host_flag" && t != "shm_fifo" && t != "ll_step")
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

// ---- host_flag: handshake latencies. Each repetition passes `rounds` handoffs (or chain steps) and
// yields microseconds per handoff (per step); the sample holds their statistics.
json flag_sample(json base, int rounds, const std::vector<double>& us) {
  const Stats s = stats_of(us);
  base["bytes"] = 0;
  base["iters"] = static_cast<int>(us.size());
  base["rounds"] = rounds;
  base["time_us_min"] = r6(s.min);
  base["time_us_median"] = r6(s.median);
  base["time_us_mean"] = r6(s.mean);
  base["time_us_max"] = r6(s.max);
  return base;
}

void measure_host_flags(json& doc, const Gpu& g, const Options& o) {
  const int reps = std::max(o.iters, 3);
  const int rounds = o.flag_rounds;
  // A chain of 4096 links 4 KiB apart in a random cyclic order (fixed seed: the same chain every run),
  // 16 MiB of pinned host memory: no two consecutive loads share a page or a cache line.
  constexpr unsigned kLinks = 4096, kStride = 1024;  // stride in unsigned elements (4 KiB)
  unsigned* chain = nullptr;
  unsigned* flags = nullptr;
  unsigned* dflags = nullptr;
  unsigned long long* dns = nullptr;
  int* dfailed = nullptr;
  std::unique_ptr<void, std::function<void(void*)>> guard(reinterpret_cast<void*>(1), [&](void*) {
    if (chain) cudaFreeHost(chain);
    if (flags) cudaFreeHost(flags);
    cudaFree(dflags);
    cudaFree(dns);
    cudaFree(dfailed);
  });
  CCSIM_CUDA_CHECK(cudaHostAlloc(&chain, std::size_t{kLinks} * kStride * sizeof(unsigned), cudaHostAllocMapped));
  CCSIM_CUDA_CHECK(cudaHostAlloc(&flags, 4096, cudaHostAllocMapped));
  CCSIM_CUDA_CHECK(cudaMalloc(&dflags, 4096));
  CCSIM_CUDA_CHECK(cudaMalloc(&dns, 2 * sizeof(unsigned long long)));
  CCSIM_CUDA_CHECK(cudaMalloc(&dfailed, sizeof(int)));
  std::vector<unsigned> order(kLinks);
  for (unsigned i = 0; i < kLinks; ++i) order[i] = i;
  std::uint64_t lcg = 0x9E3779B97F4A7C15ull;
  for (unsigned i = kLinks - 1; i > 0; --i) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    std::swap(order[i], order[(lcg >> 33) % (i + 1)]);
  }
  for (unsigned i = 0; i < kLinks; ++i) chain[order[i] * kStride] = order[(i + 1) % kLinks] * kStride;
  unsigned* mapped_chain = nullptr;
  unsigned* mapped_flags = nullptr;
  CCSIM_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped_chain), chain, 0));
  CCSIM_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mapped_flags), flags, 0));

  auto gpu_ns = [&] {
    unsigned long long ns = 0;
    CCSIM_CUDA_CHECK(cudaMemcpy(&ns, dns, sizeof ns, cudaMemcpyDeviceToHost));
    int failed = 0;
    CCSIM_CUDA_CHECK(cudaMemcpy(&failed, dfailed, sizeof failed, cudaMemcpyDeviceToHost));
    if (failed) throw ProbeError("a flag did not arrive within the spin limit");
    return static_cast<double>(ns);
  };
  auto reset = [&] {
    std::memset(flags, 0, 4096);
    CCSIM_CUDA_CHECK(cudaMemset(dflags, 0, 4096));
    CCSIM_CUDA_CHECK(cudaMemset(dfailed, 0, sizeof(int)));
  };

  // GPU read latency of pinned host memory (one warm-up walk first).
  std::vector<double> us;
  for (int rep = -1; rep < reps; ++rep) {
    reset();
    host_chase_kernel<<<1, 1, 0, g.stream>>>(mapped_chain, rounds, reinterpret_cast<unsigned*>(dns + 1), dns);
    CCSIM_CUDA_CHECK(cudaGetLastError());
    CCSIM_CUDA_CHECK(cudaStreamSynchronize(g.stream));
    const double ns = gpu_ns();
    if (rep >= 0) us.push_back(ns / 1e3 / rounds);
  }
  doc["samples"].push_back(flag_sample({{"test", "host_flag"}, {"kind", "gpu_read"}, {"memory", "pinned_host"},
                                        {"gpu", g.dev}, {"unit", "microseconds per dependent load"}},
                                       rounds, us));

  // Block <-> block through host memory (SHM's FIFO flag) and through device memory (the reference).
  for (const char* memory : {"pinned_host", "device"}) {
    unsigned* f = std::strcmp(memory, "device") == 0 ? dflags : mapped_flags;
    us.clear();
    for (int rep = -1; rep < reps; ++rep) {
      reset();
      block_pingpong_kernel<<<2, 32, 0, g.stream>>>(f, rounds, dns, dfailed);
      CCSIM_CUDA_CHECK(cudaGetLastError());
      CCSIM_CUDA_CHECK(cudaStreamSynchronize(g.stream));
      const double ns = gpu_ns();
      if (rep >= 0) us.push_back(ns / 1e3 / (2.0 * rounds));
    }
    doc["samples"].push_back(flag_sample({{"test", "host_flag"}, {"kind", "gpu_gpu"}, {"memory", memory},
                                          {"gpu", g.dev}, {"unit", "microseconds per one-way handoff"}},
                                         rounds, us));
  }

  // GPU thread <-> CPU thread through host memory (kernel <-> proxy).
  us.clear();
  volatile unsigned* to_cpu = flags;
  volatile unsigned* from_cpu = flags + 32;
  for (int rep = -1; rep < reps; ++rep) {
    reset();
    gpu_cpu_pingpong_kernel<<<1, 1, 0, g.stream>>>(mapped_flags, rounds, dns, dfailed);
    CCSIM_CUDA_CHECK(cudaGetLastError());
    const double deadline = now_us() + 10e6;
    for (int r = 1; r <= rounds; ++r) {
      while (*to_cpu != static_cast<unsigned>(r))
        if (now_us() > deadline) break;
      *from_cpu = static_cast<unsigned>(r);
    }
    CCSIM_CUDA_CHECK(cudaStreamSynchronize(g.stream));
    const double ns = gpu_ns();
    if (rep >= 0) us.push_back(ns / 1e3 / (2.0 * rounds));
  }
  doc["samples"].push_back(flag_sample({{"test", "host_flag"}, {"kind", "gpu_cpu"}, {"memory", "pinned_host"},
                                        {"gpu", g.dev}, {"unit", "microseconds per one-way handoff"}},
                                       rounds, us));
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
                       {"flag_rounds", o.flag_rounds},
                       {"shm_threads", o.shm_threads},
                       {"bandwidth_unit", "GB/s = 1e9 bytes/s of payload (bytes counted once)"}};
  Runner r(doc, o);
  std::uint64_t need = std::max(sizes.back(), pairs.empty() ? 0 : pair_sizes.back());
  if (wants(o, "host_kernel") || wants(o, "shm_fifo")) need = std::max(need, o.host_kernel_bytes);

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

  // ---- NCCL's SHM FIFO on one GPU: 1, 2, 4, 8 channels, Simple's 512 KiB step and a 64 KiB one
  if (wants(o, "shm_fifo")) {
    constexpr int kMaxPairs = 8;
    const std::uint64_t kSlots[] = {512 * 1024, 64 * 1024};
    char* fifo = nullptr;
    unsigned* flags = nullptr;
    const std::size_t fifo_bytes = std::size_t{kMaxPairs} * kShmSlots * kSlots[0];
    if (cudaHostAlloc(&fifo, fifo_bytes, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess ||
        cudaHostAlloc(&flags, 4096, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      add_error(doc, "shm_fifo", "cudaHostAlloc of the FIFO failed; skipped");
    } else {
      std::memset(fifo, 0, fifo_bytes);
      for (int d : devs) {
        Gpu& g = gpus[d];
        CCSIM_CUDA_CHECK(cudaSetDevice(d));
        void* mapped_fifo = nullptr;
        void* mapped_flags = nullptr;
        int* failed = nullptr;
        CCSIM_CUDA_CHECK(cudaHostGetDevicePointer(&mapped_fifo, fifo, 0));
        CCSIM_CUDA_CHECK(cudaHostGetDevicePointer(&mapped_flags, flags, 0));
        CCSIM_CUDA_CHECK(cudaMalloc(&failed, sizeof(int)));
        CCSIM_CUDA_CHECK(cudaMemset(failed, 0, sizeof(int)));
        r.progress("shm_fifo GPU " + std::to_string(d));
        // Volatile loads at both slot sizes, plain loads (for comparison) at Simple's, all with 512 threads
        // per block; then Simple's slot with each other --shm-threads count (NCCL runs Ring/Simple with
        // 256 threads where the ring's bandwidth is at most PCI_BW: the PCIe-only hosts SHM serves).
        struct Variant {
          bool vol;
          std::uint64_t slot;
          int threads;
        };
        std::vector<Variant> variants = {{true, kSlots[0], o.kernel_threads},
                                         {true, kSlots[1], o.kernel_threads},
                                         {false, kSlots[0], o.kernel_threads}};
        for (const int t : o.shm_threads)
          if (t != o.kernel_threads) variants.push_back({true, kSlots[0], t});
        for (const Variant& variant : variants) {
          const bool vol = variant.vol;
          const std::uint64_t slot = variant.slot;
          const int steps = static_cast<int>(std::max<std::uint64_t>(2 * kShmSlots, o.host_kernel_bytes / slot));
          for (int pairs = 1; pairs <= std::min(kMaxPairs, g.sms / 2); pairs *= 2) {
            if (std::uint64_t(pairs) * slot > g.capacity) break;
            const std::size_t before = doc["samples"].size();
            r.sample({{"test", "shm_fifo"}, {"host_memory", "pinned"}, {"gpu", d}, {"channels", pairs},
                      {"slot_bytes", slot}, {"slots", kShmSlots}, {"threads", variant.threads},
                      {"receiver_loads", vol ? "volatile" : "plain"}},
                     std::uint64_t(pairs) * steps * slot,
                     [&] {
                       // Each run starts from empty FIFOs: the flags count this run's steps.
                       CCSIM_CUDA_CHECK(cudaMemsetAsync(mapped_flags, 0, 4096, g.stream));
                       auto* kernel = vol ? shm_fifo_kernel<true> : shm_fifo_kernel<false>;
                       kernel<<<2 * pairs, variant.threads, 0, g.stream>>>(
                           static_cast<int4*>(mapped_fifo), static_cast<unsigned*>(mapped_flags),
                           reinterpret_cast<const int4*>(g.a), reinterpret_cast<int4*>(g.b), slot / 16, steps, failed);
                       CCSIM_CUDA_CHECK(cudaGetLastError());
                     },
                     g.stream);
            int bad = 0;
            CCSIM_CUDA_CHECK(cudaMemcpy(&bad, failed, sizeof bad, cudaMemcpyDeviceToHost));
            if (bad) {
              add_error(doc, "shm_fifo", "a FIFO flag did not arrive within the spin limit", {{"gpu", d}, {"channels", pairs}});
              if (doc["samples"].size() > before) doc["samples"].erase(doc["samples"].size() - 1);
              CCSIM_CUDA_CHECK(cudaMemset(failed, 0, sizeof(int)));
              continue;
            }
            if (doc["samples"].size() > before) {
              json& last = doc["samples"].back();
              last["bw_per_channel_GBps"] = r6(last.value("bw_GBps", 0.0) / pairs);
            }
          }
        }
        cudaFree(failed);
      }
    }
    if (fifo) cudaFreeHost(fifo);
    if (flags) cudaFreeHost(flags);
  }

  // ---- LL's network step handed to the proxy: 512 B .. 64 KiB of wire (an LL step is at most 64 KiB:
  // NCCL's LL buffer of 8 lines x 512 threads x 8 steps x 16 B), host time from the launch call to the
  // moment the CPU sees the whole step, LL lines (every flag checked, the scan restarted on a line not
  // yet written, as the proxy's next progress call does) against one tail flag.
  if (wants(o, "ll_step")) {
    constexpr unsigned kMaxWire = 64 * 1024, kThreads = 512;
    unsigned* lines = nullptr;
    unsigned* tail = nullptr;
    if (cudaHostAlloc(&lines, kMaxWire, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess ||
        cudaHostAlloc(&tail, 64, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();
      add_error(doc, "ll_step", "cudaHostAlloc of the step buffer failed; skipped");
    } else {
      for (int d : devs) {
        Gpu& g = gpus[d];
        CCSIM_CUDA_CHECK(cudaSetDevice(d));
        r.progress("ll_step GPU " + std::to_string(d));
        try {
          unsigned* mlines = nullptr;
          unsigned* mtail = nullptr;
          CCSIM_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mlines), lines, 0));
          CCSIM_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&mtail), tail, 0));
          std::memset(lines, 0, kMaxWire);
          *tail = 0;
          unsigned flag = 0;
          const int reps = std::max(o.iters, 3);
          for (unsigned wire = 512; wire <= kMaxWire; wire *= 2) {
            const unsigned nlines = wire / 16;
            for (const bool with_tail : {false, true}) {
              std::vector<double> us;
              for (int rep = -1; rep < reps; ++rep) {
                ++flag;
                const double t0 = now_us(), deadline = t0 + 1e6;
                ll_step_kernel<<<1, kThreads, 0, g.stream>>>(mlines, nlines, flag, with_tail ? mtail : nullptr);
                CCSIM_CUDA_CHECK(cudaGetLastError());
                const volatile unsigned* v = lines;
                bool seen = false;
                while (!seen && now_us() < deadline) {
                  if (with_tail) {
                    seen = *reinterpret_cast<const volatile unsigned*>(tail) == flag;
                  } else {
                    seen = true;
                    for (unsigned i = 0; i < nlines && seen; ++i) seen = v[4 * i + 1] == flag && v[4 * i + 3] == flag;
                  }
                }
                const double t1 = now_us();
                CCSIM_CUDA_CHECK(cudaStreamSynchronize(g.stream));
                if (!seen) throw ProbeError("the step's flags did not arrive within 1 s");
                if (rep >= 0) us.push_back(t1 - t0);
              }
              const Stats st = stats_of(us);
              doc["samples"].push_back({{"test", "ll_step"}, {"gpu", d}, {"handoff", with_tail ? "tail_flag" : "ll_lines"},
                                        {"bytes", wire}, {"threads", kThreads}, {"iters", reps},
                                        {"unit", "microseconds from the launch call to the CPU seeing the step"},
                                        {"time_us_min", r6(st.min)}, {"time_us_median", r6(st.median)},
                                        {"time_us_mean", r6(st.mean)}, {"time_us_max", r6(st.max)}});
            }
          }
        } catch (const std::exception& e) {
          add_error(doc, "ll_step", e.what(), {{"gpu", d}});
          cudaGetLastError();
        }
      }
    }
    if (lines) cudaFreeHost(lines);
    if (tail) cudaFreeHost(tail);
  }

  // ---- handshake latencies through pinned host memory (NCCL's SHM flags, kernel <-> proxy)
  if (wants(o, "host_flag")) {
    for (int d : devs) {
      CCSIM_CUDA_CHECK(cudaSetDevice(d));
      r.progress("host_flag GPU " + std::to_string(d));
      try {
        measure_host_flags(doc, gpus[d], o);
      } catch (const std::exception& e) {
        add_error(doc, "host_flag", e.what(), {{"gpu", d}});
        cudaGetLastError();
      }
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
