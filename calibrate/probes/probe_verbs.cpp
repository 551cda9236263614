// ccsim-probe-verbs: RDMA bandwidth and latency between two hosts, like perftest's ib_write_bw /
// ib_read_bw / ib_send_bw / ib_write_lat / ib_read_lat / ib_send_lat, over one RC queue pair.
//
//   host A:  ccsim-probe-verbs --server [--port P] [--device mlx5_0] [--use-cuda 0]
//   host B:  ccsim-probe-verbs --client A [--port P] [--device mlx5_0] [--use-cuda 0] -o verbs.json
//
// A TCP connection bootstraps the run: the client sends its plan (tests, sizes, iterations, queue depths),
// both sides exchange their QP numbers, LIDs, GIDs, buffer addresses and rkeys, then run every test in
// lock step, with a TCP barrier after each size. The client measures and writes the samples; the server
// writes a document too (its own side, no samples).
//
// Buffers: 2 x maxbytes per side, S (source of writes and sends, target of the peer's reads) and R
// (target of the peer's writes and sends). Host memory by default; --use-cuda DEV puts them in GPU memory
// and registers them with ibv_reg_dmabuf_mr (cuMemGetHandleForAddressRange) or, failing that, ibv_reg_mr
// on the device pointer (needs nvidia-peermem).
//
// Bandwidth: `iters` WRs of one size with up to tx_depth outstanding, every cq_mod-th signalled; time from
// the first post to the last completion. Gb/s = 1e9 bit/s; MB/s = 2^20 bytes/s (as perftest prints).
// Latency: write and send ping-pong (one way = round trip / 2, as ib_write_lat / ib_send_lat report),
// read: one READ at a time (full round trip, as ib_read_lat). With GPU buffers the write ping-pong uses
// RDMA WRITE with immediate (a receive completion) instead of polling the last byte of the buffer.
#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#ifdef CCSIM_PROBE_WITH_CUDA
#include <cuda.h>
#include <cuda_runtime.h>

#include "probe_cuda_info.h"
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "probe_common.h"

using namespace ccsim::probe;

namespace {

struct Options {
  bool server = false;
  std::string host;
  int port = 18515;
  std::string device;
  int ib_port = 1, gid_index = -1, sl = 0, traffic_class = 0;
  std::uint64_t min_bytes = 2, max_bytes = 8ull << 20;
  double factor = 2;
  int iters_bw = 5000, iters_lat = 1000;
  std::uint64_t max_bytes_per_test = 16ull << 30;
  int tx_depth = 128, rx_depth = 512, cq_mod = 64, inline_size = 220;
  std::vector<std::string> tests = {"write", "read", "send"};
  std::vector<std::string> modes = {"bw", "lat"};
  int use_cuda = -1;
  std::string cuda_reg = "auto";
  int connect_timeout_s = 30, completion_timeout_s = 30;
  std::string output;
  bool quiet = false;
};

void usage() {
  std::printf(
      "ccsim-probe-verbs: RDMA (verbs) bandwidth and latency for ccsim calibration (docs/probes.md)\n"
      "usage: ccsim-probe-verbs --server [options]\n"
      "       ccsim-probe-verbs --client HOST [options]\n"
      "  -o, --output FILE       write the JSON document to FILE (default: stdout)\n"
      "      --server            wait for a client (the client's plan is used)\n"
      "      --client HOST       connect to the server on HOST\n"
      "  -p, --port P            TCP port of the bootstrap (default 18515)\n"
      "  -d, --device NAME       RDMA device, e.g. mlx5_0 (default: the first)\n"
      "  -i, --ib-port N         device port (default 1)\n"
      "  -x, --gid-index N       GID index (default: IB: none, LID routing; RoCE: the RoCE v2 IPv4 GID)\n"
      "      --sl N              service level (default 0)\n"
      "      --traffic-class N   GRH traffic class (default 0)\n"
      "  -b, --minbytes SIZE     smallest message (default 2)\n"
      "  -e, --maxbytes SIZE     largest message (default 8M)\n"
      "  -f, --stepfactor F      size factor (default 2)\n"
      "      --tests LIST        write,read,send (default: all)\n"
      "      --modes LIST        bw,lat (default: both)\n"
      "      --iters N           bandwidth iterations per size (default 5000)\n"
      "      --lat-iters N       latency iterations per size (default 1000)\n"
      "      --max-bytes-per-test SIZE  caps bandwidth iterations to this volume per size (default 16G, >=100 iters)\n"
      "  -t, --tx-depth N        outstanding WRs in bandwidth tests (default 128)\n"
      "  -r, --rx-depth N        posted receives (default 512)\n"
      "      --cq-mod N          signal every N-th WR (default 64)\n"
      "  -I, --inline-size N     max inline data requested (default 220; 0 disables inline)\n"
      "      --use-cuda DEV      buffers in the memory of GPU DEV%s\n"
      "      --cuda-reg MODE     auto | dmabuf | peermem (default auto: dmabuf, then peermem)\n"
      "      --connect-timeout S client: retry the TCP connection for S seconds (default 30)\n"
      "  -q, --quiet             no progress on stderr\n"
      "  -h, --help              this text\n"
      "Exit status: 0 ok, 1 no RDMA device / failure (an error document is written), 2 usage.\n",
#ifdef CCSIM_PROBE_WITH_CUDA
      ""
#else
      " (not available: built without CUDA)"
#endif
  );
}

Options parse(int argc, char** argv) {
  Options o;
  Args a{argc, argv};
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "-h" || k == "--help") { usage(); std::exit(0); }
    else if (k == "-o" || k == "--output") o.output = a.value(i);
    else if (k == "--server") o.server = true;
    else if (k == "--client") o.host = a.value(i);
    else if (k == "-p" || k == "--port") o.port = std::stoi(a.value(i));
    else if (k == "-d" || k == "--device" || k == "--ib-dev") o.device = a.value(i);
    else if (k == "-i" || k == "--ib-port") o.ib_port = std::stoi(a.value(i));
    else if (k == "-x" || k == "--gid-index") o.gid_index = std::stoi(a.value(i));
    else if (k == "--sl") o.sl = std::stoi(a.value(i));
    else if (k == "--traffic-class") o.traffic_class = std::stoi(a.value(i));
    else if (k == "-b" || k == "--minbytes") o.min_bytes = parse_size(a.value(i));
    else if (k == "-e" || k == "--maxbytes") o.max_bytes = parse_size(a.value(i));
    else if (k == "-f" || k == "--stepfactor") o.factor = std::stod(a.value(i));
    else if (k == "--tests") o.tests = split(a.value(i));
    else if (k == "--modes") o.modes = split(a.value(i));
    else if (k == "--iters" || k == "-n") o.iters_bw = std::stoi(a.value(i));
    else if (k == "--lat-iters") o.iters_lat = std::stoi(a.value(i));
    else if (k == "--max-bytes-per-test") o.max_bytes_per_test = parse_size(a.value(i));
    else if (k == "-t" || k == "--tx-depth") o.tx_depth = std::stoi(a.value(i));
    else if (k == "-r" || k == "--rx-depth") o.rx_depth = std::stoi(a.value(i));
    else if (k == "--cq-mod") o.cq_mod = std::stoi(a.value(i));
    else if (k == "-I" || k == "--inline-size") o.inline_size = std::stoi(a.value(i));
    else if (k == "--use-cuda") o.use_cuda = std::stoi(a.value(i));
    else if (k == "--cuda-reg") o.cuda_reg = a.value(i);
    else if (k == "--connect-timeout") o.connect_timeout_s = std::stoi(a.value(i));
    else if (k == "-q" || k == "--quiet") o.quiet = true;
    else throw ProbeError("unknown option " + k + " (see --help)");
  }
  if (o.server == !o.host.empty()) throw ProbeError("give exactly one of --server and --client HOST (see --help)");
  for (const auto& t : o.tests)
    if (t != "write" && t != "read" && t != "send") throw ProbeError("unknown test '" + t + "' in --tests");
  for (const auto& m : o.modes)
    if (m != "bw" && m != "lat") throw ProbeError("unknown mode '" + m + "' in --modes");
  if (o.cuda_reg != "auto" && o.cuda_reg != "dmabuf" && o.cuda_reg != "peermem")
    throw ProbeError("--cuda-reg must be auto, dmabuf or peermem");
  if (o.tx_depth < 1 || o.rx_depth < 2 || o.cq_mod < 1 || o.iters_bw < 1 || o.iters_lat < 1)
    throw ProbeError("depths and iteration counts must be positive");
#ifndef CCSIM_PROBE_WITH_CUDA
  if (o.use_cuda >= 0) throw ProbeError("--use-cuda: this binary was built without CUDA");
#endif
  return o;
}

// -------------------------------------------------------------------------------------------- TCP
class Tcp {
 public:
  ~Tcp() {
    if (fd_ >= 0) close(fd_);
    if (listen_fd_ >= 0) close(listen_fd_);
  }
  void serve(int port) {
    listen_fd_ = socket(AF_INET6, SOCK_STREAM, 0);
    bool v6 = listen_fd_ >= 0;
    if (!v6) listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (listen_fd_ < 0) throw ProbeError(std::string("socket: ") + std::strerror(errno));
    int one = 1, zero = 0;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    int rc;
    if (v6) {
      setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(static_cast<std::uint16_t>(port));
      rc = bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(static_cast<std::uint16_t>(port));
      rc = bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    }
    if (rc != 0) throw ProbeError("bind port " + std::to_string(port) + ": " + std::strerror(errno));
    if (listen(listen_fd_, 1) != 0) throw ProbeError(std::string("listen: ") + std::strerror(errno));
    fd_ = accept(listen_fd_, nullptr, nullptr);
    if (fd_ < 0) throw ProbeError(std::string("accept: ") + std::strerror(errno));
    nodelay();
  }
  void connect_to(const std::string& host, int port, int timeout_s) {
    double deadline = now_us() + timeout_s * 1e6;
    std::string last = "timed out";
    while (now_us() < deadline) {
      addrinfo hints{}, *res = nullptr;
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      int g = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
      if (g != 0) throw ProbeError("cannot resolve " + host + ": " + gai_strerror(g));
      for (addrinfo* p = res; p; p = p->ai_next) {
        int fd = socket(p->ai_family, p->ai_socktype, p->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, p->ai_addr, p->ai_addrlen) == 0) {
          fd_ = fd;
          break;
        }
        last = std::strerror(errno);
        close(fd);
      }
      freeaddrinfo(res);
      if (fd_ >= 0) {
        nodelay();
        return;
      }
      usleep(200000);
    }
    throw ProbeError("cannot connect to " + host + ":" + std::to_string(port) + ": " + last);
  }
  void send_all(const void* data, std::size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t k = ::send(fd_, p, n, MSG_NOSIGNAL);
      if (k <= 0) {
        if (k < 0 && errno == EINTR) continue;
        throw ProbeError("bootstrap connection lost (send)");
      }
      p += k;
      n -= static_cast<std::size_t>(k);
    }
  }
  void recv_all(void* data, std::size_t n) {
    char* p = static_cast<char*>(data);
    while (n > 0) {
      ssize_t k = ::recv(fd_, p, n, 0);
      if (k <= 0) {
        if (k < 0 && errno == EINTR) continue;
        throw ProbeError("bootstrap connection lost (peer gone?)");
      }
      p += k;
      n -= static_cast<std::size_t>(k);
    }
  }
  void send_json(const json& j) {
    std::string s = j.dump();
    std::uint32_t len = htonl(static_cast<std::uint32_t>(s.size()));
    send_all(&len, 4);
    send_all(s.data(), s.size());
  }
  json recv_json() {
    std::uint32_t len = 0;
    recv_all(&len, 4);
    len = ntohl(len);
    if (len > (64u << 20)) throw ProbeError("bootstrap: oversized message");
    std::string s(len, '\0');
    recv_all(s.data(), len);
    return json::parse(s);
  }
  void barrier() {
    char c = 'b', d = 0;
    send_all(&c, 1);
    recv_all(&d, 1);
    if (d != 'b') throw ProbeError("bootstrap: out of step");
  }

 private:
  void nodelay() {
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  int fd_ = -1, listen_fd_ = -1;
};

// ------------------------------------------------------------------------------------------ memory
struct Buffer {
  char* base = nullptr;  // what was allocated
  char* ptr = nullptr;   // aligned start, 2 x max bytes: S = ptr, R = ptr + half
  std::size_t len = 0, half = 0;
  bool gpu = false;
  int gpu_dev = -1;
  std::string registration = "host";
  ibv_mr* mr = nullptr;
};

constexpr std::size_t kAlign = 2u << 20;
std::size_t round_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

#ifdef CCSIM_PROBE_WITH_CUDA
using GetHandleFn = CUresult (*)(void*, CUdeviceptr, std::size_t, CUmemRangeHandleType, unsigned long long);

GetHandleFn get_handle_fn() {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
#if CUDART_VERSION >= 12050
  if (cudaGetDriverEntryPointByVersion("cuMemGetHandleForAddressRange", &fn, 11070, cudaEnableDefault, &q) != cudaSuccess)
    fn = nullptr;
#elif CUDART_VERSION >= 12000
  if (cudaGetDriverEntryPoint("cuMemGetHandleForAddressRange", &fn, cudaEnableDefault, &q) != cudaSuccess) fn = nullptr;
#else
  (void)q;
  if (cudaGetDriverEntryPoint("cuMemGetHandleForAddressRange", &fn, cudaEnableDefault) != cudaSuccess) fn = nullptr;
#endif
  cudaGetLastError();
  return reinterpret_cast<GetHandleFn>(fn);
}
#endif

void alloc_buffer(Buffer& b, std::size_t max_bytes, int use_cuda, ibv_pd* pd, const std::string& reg_mode, json& notes) {
  b.half = round_up(std::max<std::size_t>(max_bytes, 64), 4096);
  b.len = round_up(2 * b.half, kAlign);
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (use_cuda < 0) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, b.len) != 0) throw ProbeError("cannot allocate " + std::to_string(b.len) + " bytes of host memory");
    b.base = b.ptr = static_cast<char*>(p);
    std::memset(b.ptr, 0, b.len);
    std::memset(b.ptr, 1, b.half);
    b.mr = ibv_reg_mr(pd, b.ptr, b.len, access);
    if (!b.mr) throw ProbeError(std::string("ibv_reg_mr (host memory): ") + std::strerror(errno));
    return;
  }
#ifdef CCSIM_PROBE_WITH_CUDA
  b.gpu = true;
  b.gpu_dev = use_cuda;
  CCSIM_CUDA_CHECK(cudaSetDevice(use_cuda));
  void* p = nullptr;
  CCSIM_CUDA_CHECK(cudaMalloc(&p, b.len + kAlign));
  b.base = static_cast<char*>(p);
  b.ptr = reinterpret_cast<char*>(round_up(reinterpret_cast<std::uintptr_t>(p), kAlign));
  CCSIM_CUDA_CHECK(cudaMemset(b.ptr, 0, b.len));
  CCSIM_CUDA_CHECK(cudaMemset(b.ptr, 1, b.half));
  CCSIM_CUDA_CHECK(cudaDeviceSynchronize());
  std::string why;
  if (reg_mode != "peermem") {
#ifdef CCSIM_HAVE_IBV_REG_DMABUF_MR
    GetHandleFn fn = get_handle_fn();
    if (!fn) {
      why = "cuMemGetHandleForAddressRange not available (driver older than CUDA 11.7)";
    } else {
      int fd = -1;
      CUresult r = fn(&fd, reinterpret_cast<CUdeviceptr>(b.ptr), b.len, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
      if (r != CUDA_SUCCESS || fd < 0) {
        why = "cuMemGetHandleForAddressRange failed (CUresult " + std::to_string(static_cast<int>(r)) + ")";
      } else {
        b.mr = ibv_reg_dmabuf_mr(pd, 0, b.len, reinterpret_cast<std::uint64_t>(b.ptr), fd, access);
        if (!b.mr) why = std::string("ibv_reg_dmabuf_mr: ") + std::strerror(errno);
        close(fd);
      }
    }
#else
    why = "libibverbs without ibv_reg_dmabuf_mr";
#endif
    if (b.mr) {
      b.registration = "dmabuf";
      return;
    }
    if (reg_mode == "dmabuf") throw ProbeError("dma-buf registration of GPU memory failed: " + why);
    notes.push_back("dma-buf registration not used: " + why + "; trying ibv_reg_mr (nvidia-peermem)");
  }
  b.mr = ibv_reg_mr(pd, b.ptr, b.len, access);
  if (!b.mr)
    throw ProbeError(std::string("ibv_reg_mr on GPU memory failed (") + std::strerror(errno) +
                     "): is nvidia-peermem loaded? " + why);
  b.registration = "peermem";
#else
  (void)reg_mode;
  (void)notes;
  throw ProbeError("--use-cuda: built without CUDA");
#endif
}

void free_buffer(Buffer& b) {
  if (b.mr) ibv_dereg_mr(b.mr);
  b.mr = nullptr;
#ifdef CCSIM_PROBE_WITH_CUDA
  if (b.gpu) {
    cudaFree(b.base);
    b.base = nullptr;
    return;
  }
#endif
  std::free(b.base);
  b.base = nullptr;
}

// --------------------------------------------------------------------------------------------- RDMA
struct Peer {
  std::uint32_t qpn = 0, psn = 0, rkey = 0, lid = 0;
  std::uint64_t addr = 0;  // start of the peer's buffer (S); its R is addr + half
  std::uint64_t half = 0;
  ibv_gid gid{};
  int mtu = 0, max_rd_atomic = 1;
};

std::string gid_hex(const ibv_gid& g) {
  char s[40];
  for (int i = 0; i < 16; ++i) std::snprintf(s + 2 * i, 3, "%02x", g.raw[i]);
  return s;
}
ibv_gid gid_from_hex(const std::string& h) {
  ibv_gid g{};
  for (int i = 0; i < 16 && 2 * i + 1 < static_cast<int>(h.size()); ++i)
    g.raw[i] = static_cast<std::uint8_t>(std::stoi(h.substr(2 * i, 2), nullptr, 16));
  return g;
}
int mtu_bytes(int mtu_enum) { return mtu_enum >= 1 && mtu_enum <= 5 ? 128 << mtu_enum : 0; }

struct Rdma {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* scq = nullptr;
  ibv_cq* rcq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_port_attr port{};
  ibv_device_attr dev{};
  std::string name, link_layer;
  int port_num = 1, gid_index = -1;
  bool use_grh = false;
  ibv_gid gid{};
  std::uint32_t psn = 0;
  int max_inline = 0;
  int rq_outstanding = 0;
  int completion_timeout_s = 30;

  ~Rdma() {
    if (qp) ibv_destroy_qp(qp);
    if (scq) ibv_destroy_cq(scq);
    if (rcq) ibv_destroy_cq(rcq);
    // the MR is deregistered by free_buffer before the PD goes
    if (pd) ibv_dealloc_pd(pd);
    if (ctx) ibv_close_device(ctx);
  }
};

// The RoCE v2 GID with an IPv4-mapped address (what perftest and NCCL pick), else any RoCE v2, else 0.
int auto_gid_index(Rdma& r) {
  int best = -1, v2 = -1;
  for (int i = 0; i < r.port.gid_tbl_len && i < 256; ++i) {
    ibv_gid g{};
    if (ibv_query_gid(r.ctx, static_cast<std::uint8_t>(r.port_num), i, &g) != 0) continue;
    bool zero = true;
    for (auto c : g.raw) zero = zero && c == 0;
    if (zero) continue;
    std::string type = read_sys("/sys/class/infiniband/" + r.name + "/ports/" + std::to_string(r.port_num) +
                                "/gid_attrs/types/" + std::to_string(i));
    if (type.find("v2") == std::string::npos) continue;
    bool v4 = true;
    for (int k = 0; k < 10; ++k) v4 = v4 && g.raw[k] == 0;
    v4 = v4 && g.raw[10] == 0xff && g.raw[11] == 0xff;
    if (v4 && best < 0) best = i;
    if (v2 < 0) v2 = i;
  }
  return best >= 0 ? best : (v2 >= 0 ? v2 : 0);
}

void open_device(Rdma& r, const Options& o, json& doc) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list || n == 0) {
    if (list) ibv_free_device_list(list);
    throw ProbeError("no RDMA device found (ibv_get_device_list returned " + std::to_string(n) +
                     " devices; is the rdma-core provider / kernel driver present?)");
  }
  ibv_device* chosen = nullptr;
  json names = json::array();
  for (int i = 0; i < n; ++i) {
    names.push_back(ibv_get_device_name(list[i]));
    if (!chosen && (o.device.empty() || o.device == ibv_get_device_name(list[i]))) chosen = list[i];
  }
  doc["machine"]["rdma_devices"] = names;
  if (!chosen) {
    ibv_free_device_list(list);
    throw ProbeError("RDMA device '" + o.device + "' not found");
  }
  r.name = ibv_get_device_name(chosen);
  r.ctx = ibv_open_device(chosen);
  ibv_free_device_list(list);
  if (!r.ctx) throw ProbeError("ibv_open_device(" + r.name + "): " + std::strerror(errno));
  if (ibv_query_device(r.ctx, &r.dev) != 0) throw ProbeError("ibv_query_device failed");
  r.port_num = o.ib_port;
  if (ibv_query_port(r.ctx, static_cast<std::uint8_t>(r.port_num), &r.port) != 0)
    throw ProbeError("ibv_query_port(" + r.name + " port " + std::to_string(r.port_num) + ") failed");
  if (r.port.state != IBV_PORT_ACTIVE)
    throw ProbeError(r.name + " port " + std::to_string(r.port_num) + " is not ACTIVE (state " + ibv_port_state_str(r.port.state) + ")");
  r.link_layer = r.port.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "IB";
  bool eth = r.port.link_layer == IBV_LINK_LAYER_ETHERNET;
  r.gid_index = o.gid_index >= 0 ? o.gid_index : (eth ? auto_gid_index(r) : -1);
  r.use_grh = eth || o.gid_index >= 0;
  if (r.gid_index >= 0 && ibv_query_gid(r.ctx, static_cast<std::uint8_t>(r.port_num), r.gid_index, &r.gid) != 0)
    throw ProbeError("ibv_query_gid(index " + std::to_string(r.gid_index) + ") failed");
  r.pd = ibv_alloc_pd(r.ctx);
  if (!r.pd) throw ProbeError("ibv_alloc_pd failed");
  r.completion_timeout_s = o.completion_timeout_s;
}

void create_qp(Rdma& r, int tx_depth, int rx_depth, int inline_size) {
  r.scq = ibv_create_cq(r.ctx, tx_depth * 2 + 16, nullptr, nullptr, 0);
  r.rcq = ibv_create_cq(r.ctx, rx_depth * 2 + 16, nullptr, nullptr, 0);
  if (!r.scq || !r.rcq) throw ProbeError(std::string("ibv_create_cq: ") + std::strerror(errno));
  ibv_qp_init_attr ia{};
  ia.send_cq = r.scq;
  ia.recv_cq = r.rcq;
  ia.qp_type = IBV_QPT_RC;
  ia.cap.max_send_wr = static_cast<std::uint32_t>(tx_depth);
  ia.cap.max_recv_wr = static_cast<std::uint32_t>(rx_depth);
  ia.cap.max_send_sge = 1;
  ia.cap.max_recv_sge = 1;
  ia.cap.max_inline_data = static_cast<std::uint32_t>(std::max(0, inline_size));
  r.qp = ibv_create_qp(r.pd, &ia);
  if (!r.qp && inline_size > 0) {
    ia.cap.max_inline_data = 0;
    r.qp = ibv_create_qp(r.pd, &ia);
  }
  if (!r.qp) throw ProbeError(std::string("ibv_create_qp: ") + std::strerror(errno));
  r.max_inline = static_cast<int>(ia.cap.max_inline_data);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = static_cast<std::uint8_t>(r.port_num);
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE;
  if (ibv_modify_qp(r.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
    throw ProbeError(std::string("ibv_modify_qp(INIT): ") + std::strerror(errno));
  r.psn = static_cast<std::uint32_t>(now_us()) & 0xffffff;
}

void connect_qp(Rdma& r, const Peer& p, const Options& o) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = static_cast<ibv_mtu>(std::min<int>(r.port.active_mtu, p.mtu));
  a.dest_qp_num = p.qpn;
  a.rq_psn = p.psn;
  a.max_dest_rd_atomic = static_cast<std::uint8_t>(std::clamp(r.dev.max_qp_rd_atom, 1, 16));
  a.min_rnr_timer = 12;
  a.ah_attr.is_global = r.use_grh ? 1 : 0;
  a.ah_attr.dlid = static_cast<std::uint16_t>(p.lid);
  a.ah_attr.sl = static_cast<std::uint8_t>(o.sl);
  a.ah_attr.src_path_bits = 0;
  a.ah_attr.port_num = static_cast<std::uint8_t>(r.port_num);
  if (r.use_grh) {
    a.ah_attr.grh.dgid = p.gid;
    a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(r.gid_index);
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.grh.traffic_class = static_cast<std::uint8_t>(o.traffic_class);
  }
  if (ibv_modify_qp(r.qp, &a,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
    throw ProbeError(std::string("ibv_modify_qp(RTR): ") + std::strerror(errno));
  ibv_qp_attr s{};
  s.qp_state = IBV_QPS_RTS;
  s.timeout = 14;
  s.retry_cnt = 7;
  s.rnr_retry = 7;
  s.sq_psn = r.psn;
  s.max_rd_atomic = static_cast<std::uint8_t>(std::clamp(std::min(r.dev.max_qp_rd_atom, p.max_rd_atomic), 1, 16));
  if (ibv_modify_qp(r.qp, &s,
                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                        IBV_QP_MAX_QP_RD_ATOMIC) != 0)
    throw ProbeError(std::string("ibv_modify_qp(RTS): ") + std::strerror(errno));
}

void post(Rdma& r, ibv_wr_opcode op, const char* local, std::uint32_t lkey, std::uint32_t len,
          std::uint64_t remote, std::uint32_t rkey, bool signaled, bool inl, std::uint64_t wr_id) {
  ibv_sge sge{};
  sge.addr = reinterpret_cast<std::uint64_t>(local);
  sge.length = len;
  sge.lkey = lkey;
  ibv_send_wr wr{}, *bad = nullptr;
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = (signaled ? IBV_SEND_SIGNALED : 0) | (inl ? IBV_SEND_INLINE : 0);
  if (op != IBV_WR_SEND) {
    wr.wr.rdma.remote_addr = remote;
    wr.wr.rdma.rkey = rkey;
  }
  if (op == IBV_WR_RDMA_WRITE_WITH_IMM) wr.imm_data = htonl(static_cast<std::uint32_t>(wr_id));
  int rc = ibv_post_send(r.qp, &wr, &bad);
  if (rc != 0) throw ProbeError(std::string("ibv_post_send: ") + std::strerror(rc));
}

// Keeps `want` receives posted (each for the whole R half, so that leftovers fit any later size).
void fill_rq(Rdma& r, Buffer& b, int want) {
  while (r.rq_outstanding < want) {
    ibv_sge sge{};
    sge.addr = reinterpret_cast<std::uint64_t>(b.ptr + b.half);
    sge.length = static_cast<std::uint32_t>(b.half);
    sge.lkey = b.mr->lkey;
    ibv_recv_wr wr{}, *bad = nullptr;
    wr.wr_id = 0;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    int rc = ibv_post_recv(r.qp, &wr, &bad);
    if (rc != 0) throw ProbeError(std::string("ibv_post_recv: ") + std::strerror(rc));
    ++r.rq_outstanding;
  }
}

// Polls until at least one completion; returns how many (up to max). Throws on error status or timeout.
int poll(Rdma& r, ibv_cq* cq, ibv_wc* wc, int max) {
  double deadline = 0;
  for (std::uint64_t spins = 0;; ++spins) {
    int n = ibv_poll_cq(cq, max, wc);
    if (n < 0) throw ProbeError("ibv_poll_cq failed");
    for (int i = 0; i < n; ++i)
      if (wc[i].status != IBV_WC_SUCCESS)
        throw ProbeError(std::string("completion with error: ") + ibv_wc_status_str(wc[i].status) +
                         " (vendor error " + std::to_string(wc[i].vendor_err) + ")");
    if (n > 0) {
      if (cq == r.rcq) r.rq_outstanding -= n;
      return n;
    }
    if ((spins & 0xfffff) == 0) {
      double t = now_us();
      if (deadline == 0) deadline = t + r.completion_timeout_s * 1e6;
      else if (t > deadline) throw ProbeError("timed out waiting for a completion (peer gone or link down?)");
    }
  }
}

// --------------------------------------------------------------------------------------------- tests
struct Plan {
  std::vector<std::string> tests, modes;
  std::vector<std::uint64_t> sizes;
  int iters_bw = 0, iters_lat = 0, tx_depth = 0, rx_depth = 0, cq_mod = 0, inline_size = 0;
  std::uint64_t max_bytes_per_test = 0;
  json to_json() const {
    return {{"tests", tests}, {"modes", modes}, {"sizes", sizes}, {"iters_bw", iters_bw}, {"iters_lat", iters_lat},
            {"tx_depth", tx_depth}, {"rx_depth", rx_depth}, {"cq_mod", cq_mod}, {"inline_size", inline_size},
            {"max_bytes_per_test", max_bytes_per_test}};
  }
  static Plan from_json(const json& j) {
    Plan p;
    p.tests = j.at("tests").get<std::vector<std::string>>();
    p.modes = j.at("modes").get<std::vector<std::string>>();
    p.sizes = j.at("sizes").get<std::vector<std::uint64_t>>();
    p.iters_bw = j.at("iters_bw");
    p.iters_lat = j.at("iters_lat");
    p.tx_depth = j.at("tx_depth");
    p.rx_depth = j.at("rx_depth");
    p.cq_mod = j.at("cq_mod");
    p.inline_size = j.at("inline_size");
    p.max_bytes_per_test = j.at("max_bytes_per_test");
    return p;
  }
  int bw_iters(std::uint64_t bytes) const {
    std::uint64_t cap = max_bytes_per_test / std::max<std::uint64_t>(bytes, 1);
    const std::uint64_t hi = static_cast<std::uint64_t>(iters_bw);
    return static_cast<int>(std::clamp<std::uint64_t>(cap, std::min<std::uint64_t>(100, hi), hi));
  }
};

struct Session {
  Rdma& r;
  Buffer& b;
  Peer& peer;
  Tcp& tcp;
  const Plan& plan;
  bool client;
  char* S() const { return b.ptr; }
  char* R() const { return b.ptr + b.half; }
  std::uint64_t peerS() const { return peer.addr; }
  std::uint64_t peerR() const { return peer.addr + peer.half; }
  void clear_R() {
#ifdef CCSIM_PROBE_WITH_CUDA
    if (b.gpu) {
      CCSIM_CUDA_CHECK(cudaMemset(R(), 0, b.half));
      CCSIM_CUDA_CHECK(cudaDeviceSynchronize());
      return;
    }
#endif
    std::memset(R(), 0, b.half);
  }
};

const char* perftest_name(const std::string& test, const std::string& mode) {
  if (mode == "bw") return test == "write" ? "ib_write_bw" : test == "read" ? "ib_read_bw" : "ib_send_bw";
  return test == "write" ? "ib_write_lat" : test == "read" ? "ib_read_lat" : "ib_send_lat";
}

// Bandwidth: the client drives; for SEND the server keeps receives posted and counts completions.
json run_bw(Session& s, const std::string& test, std::uint64_t bytes) {
  Rdma& r = s.r;
  const int iters = s.plan.bw_iters(bytes);
  const int depth = s.plan.tx_depth;
  const int cq_mod = std::max(1, std::min(s.plan.cq_mod, depth));
  const std::uint32_t len = static_cast<std::uint32_t>(bytes);
  ibv_wc wc[64];
  if (test == "send" && !s.client) {
    fill_rq(r, s.b, std::min(s.plan.rx_depth, r.rq_outstanding + iters));
    s.tcp.barrier();  // receives are posted
    int received = 0;
    while (received < iters) {
      int n = poll(r, r.rcq, wc, 64);
      received += n;
      int still_needed = iters - received;
      if (r.rq_outstanding < still_needed) fill_rq(r, s.b, std::min(s.plan.rx_depth, still_needed));
    }
    s.tcp.barrier();
    return nullptr;
  }
  if (!s.client) {  // WRITE/READ: the server's CPU is not involved
    s.tcp.barrier();
    s.tcp.barrier();
    return nullptr;
  }
  s.tcp.barrier();
  ibv_wr_opcode op = test == "write" ? IBV_WR_RDMA_WRITE : test == "read" ? IBV_WR_RDMA_READ : IBV_WR_SEND;
  // WRITE/SEND: S -> peer R; READ: peer S -> local R
  const char* local = test == "read" ? s.R() : s.S();
  std::uint64_t remote = test == "read" ? s.peerS() : s.peerR();
  bool inl = test != "read" && !s.b.gpu && static_cast<int>(len) <= r.max_inline;
  int posted = 0, completed = 0;
  double t0 = now_us();
  while (completed < iters) {
    while (posted < iters && posted - completed < depth) {
      bool sig = (posted + 1) % cq_mod == 0 || posted + 1 == iters;
      post(r, op, local, s.b.mr->lkey, len, remote, s.peer.rkey, sig, inl, static_cast<std::uint64_t>(posted));
      ++posted;
    }
    int n = poll(r, r.scq, wc, 64);
    for (int i = 0; i < n; ++i) completed = std::max(completed, static_cast<int>(wc[i].wr_id) + 1);
  }
  double t1 = now_us();
  s.tcp.barrier();
  double secs = (t1 - t0) / 1e6;
  double Bps = static_cast<double>(bytes) * iters / secs;
  return {{"test", test + "_bw"},
          {"perftest_equivalent", perftest_name(test, "bw")},
          {"bytes", bytes},
          {"iters", iters},
          {"tx_depth", depth},
          {"cq_mod", cq_mod},
          {"inline", inl},
          {"time_us_total", r6(t1 - t0)},
          {"bw_avg_Gbps", r6(Bps * 8 / 1e9)},
          {"bw_avg_MBps", r6(Bps / (1024.0 * 1024.0))},
          {"bw_avg_GBps", r6(Bps / 1e9)},
          {"msg_rate_Mpps", r6(iters / secs / 1e6)}};
}

// Latency ping-pong (write, send) or one-at-a-time READ.
json run_lat(Session& s, const std::string& test, std::uint64_t bytes) {
  Rdma& r = s.r;
  const int iters = s.plan.iters_lat;
  const int warm = std::min(100, iters / 10);
  const int total = warm + iters;
  const std::uint32_t len = static_cast<std::uint32_t>(bytes);
  const bool gpu = s.b.gpu;
  const bool poll_memory = test == "write" && !gpu;  // like ib_write_lat; GPU memory: WRITE_WITH_IMM
  bool inl = test != "read" && !gpu && static_cast<int>(len) <= r.max_inline;
  ibv_wc wc[16];
  s.clear_R();
  bool need_recv = test == "send" || (test == "write" && !poll_memory);
  if (need_recv) fill_rq(r, s.b, s.plan.rx_depth);
  s.tcp.barrier();
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(iters));
  if (test == "read") {
    if (s.client) {
      for (int k = 0; k < total; ++k) {
        double t0 = now_us();
        post(r, IBV_WR_RDMA_READ, s.R(), s.b.mr->lkey, len, s.peerS(), s.peer.rkey, true, false, static_cast<std::uint64_t>(k));
        poll(r, r.scq, wc, 1);
        double t1 = now_us();
        if (k >= warm) us.push_back(t1 - t0);
      }
    }
  } else {
    ibv_wr_opcode op = test == "send" ? IBV_WR_SEND : (poll_memory ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM);
    volatile char* last_in = s.R() + len - 1;  // written by the peer (host memory only)
    char* last_out = s.S() + len - 1;
    auto send_one = [&](int k) {
      if (poll_memory) *last_out = static_cast<char>(k % 255 + 1);
      post(r, op, s.S(), s.b.mr->lkey, len, s.peerR(), s.peer.rkey, true, inl, static_cast<std::uint64_t>(k));
    };
    auto wait_one = [&](int k) {
      if (poll_memory) {
        const char want = static_cast<char>(k % 255 + 1);
        double deadline = 0;
        for (std::uint64_t spins = 0; *last_in != want; ++spins)
          if ((spins & 0xfffff) == 0) {
            double t = now_us();
            if (deadline == 0) deadline = t + r.completion_timeout_s * 1e6;
            else if (t > deadline) throw ProbeError("timed out waiting for the peer's write");
          }
      } else {
        poll(r, r.rcq, wc, 1);
        fill_rq(r, s.b, s.plan.rx_depth);
      }
    };
    for (int k = 0; k < total; ++k) {
      if (s.client) {
        double t0 = now_us();
        send_one(k);
        wait_one(k);
        double t1 = now_us();
        poll(r, r.scq, wc, 1);  // own send completion (already there)
        if (k >= warm) us.push_back((t1 - t0) / 2);
      } else {
        wait_one(k);
        send_one(k);
        poll(r, r.scq, wc, 1);
      }
    }
  }
  s.tcp.barrier();
  if (!s.client) return nullptr;
  Stats st = stats_of(us);
  return {{"test", test + "_lat"},
          {"perftest_equivalent", perftest_name(test, "lat")},
          {"bytes", bytes},
          {"iters", iters},
          {"warmup", warm},
          {"inline", inl},
          {"method", test == "read" ? "read_one_at_a_time" : test == "send" ? "send_pingpong"
                     : poll_memory ? "write_pingpong_poll_memory" : "write_imm_pingpong"},
          {"latency_is", test == "read" ? "round trip" : "round trip / 2"},
          {"t_min_us", r6(st.min)},
          {"t_max_us", r6(st.max)},
          {"t_typical_us", r6(st.median)},
          {"t_avg_us", r6(st.mean)},
          {"t_stdev_us", r6(st.stdev)},
          {"p99_us", r6(st.p99)},
          {"p999_us", r6(st.p999)}};
}

json side_info(const Rdma& r, const Buffer& b) {
  json j = {{"hostname", hostname()},
            {"device", r.name},
            {"ib_port", r.port_num},
            {"link_layer", r.link_layer},
            {"gid_index", r.gid_index >= 0 ? json(r.gid_index) : json(nullptr)},
            {"gid", r.gid_index >= 0 ? json(gid_hex(r.gid)) : json(nullptr)},
            {"lid", r.port.lid},
            {"active_mtu", mtu_bytes(r.port.active_mtu)},
            {"active_speed", r.port.active_speed},
            {"active_width", r.port.active_width},
            {"max_inline", r.max_inline},
            {"max_qp_rd_atom", r.dev.max_qp_rd_atom},
            {"fw_ver", r.dev.fw_ver},
            {"memory", b.gpu ? "cuda:" + std::to_string(b.gpu_dev) : std::string("host")},
            {"registration", b.registration}};
  return j;
}

int run(json& doc, const Options& o) {
  doc["role"] = o.server ? "server" : "client";
#ifdef CCSIM_PROBE_WITH_CUDA
  if (o.use_cuda >= 0) {
    if (add_cuda_machine_facts(doc) == 0) return 1;
  }
#endif
  Rdma r;
  open_device(r, o, doc);  // fails early (and cleanly) without an RDMA device
  Tcp tcp;
  Plan plan;
  if (o.server) {
    if (!o.quiet) std::fprintf(stderr, "[ccsim-probe-verbs] server: waiting on port %d\n", o.port);
    tcp.serve(o.port);
    json hello = tcp.recv_json();
    if (hello.value("hello", "") != "ccsim-probe-verbs") throw ProbeError("bootstrap: the peer is not ccsim-probe-verbs");
    plan = Plan::from_json(hello.at("plan"));
  } else {
    plan.tests = o.tests;
    plan.modes = o.modes;
    plan.sizes = size_sweep(o.min_bytes, o.max_bytes, o.factor);
    plan.iters_bw = o.iters_bw;
    plan.iters_lat = o.iters_lat;
    plan.tx_depth = o.tx_depth;
    plan.rx_depth = o.rx_depth;
    plan.cq_mod = o.cq_mod;
    plan.inline_size = o.inline_size;
    plan.max_bytes_per_test = o.max_bytes_per_test;
    if (plan.sizes.back() > 0x7fffffffull) throw ProbeError("--maxbytes: at most 2G per message");
    tcp.connect_to(o.host, o.port, o.connect_timeout_s);
    tcp.send_json({{"hello", "ccsim-probe-verbs"}, {"version", CCSIM_PROBE_VERSION}, {"plan", plan.to_json()}});
  }
  doc["parameters"] = plan.to_json();
  create_qp(r, plan.tx_depth, plan.rx_depth, plan.inline_size);
  Buffer b;
  json notes = json::array();
  alloc_buffer(b, plan.sizes.back(), o.use_cuda, r.pd, o.cuda_reg, notes);
  for (const auto& n : notes) add_error(doc, "registration", n.get<std::string>(), {{"severity", "note"}});
  json mine = side_info(r, b);
  mine["qpn"] = r.qp->qp_num;
  mine["psn"] = r.psn;
  mine["rkey"] = b.mr->rkey;
  mine["addr"] = reinterpret_cast<std::uint64_t>(b.ptr);
  mine["half"] = b.half;
  mine["mtu_enum"] = static_cast<int>(r.port.active_mtu);
  tcp.send_json(mine);
  json theirs = tcp.recv_json();
  Peer peer;
  peer.qpn = theirs.at("qpn");
  peer.psn = theirs.at("psn");
  peer.rkey = theirs.at("rkey");
  peer.lid = theirs.at("lid");
  peer.addr = theirs.at("addr");
  peer.half = theirs.at("half");
  peer.mtu = theirs.at("mtu_enum");
  peer.max_rd_atomic = theirs.at("max_qp_rd_atom");
  if (theirs.at("gid").is_string()) peer.gid = gid_from_hex(theirs.at("gid").get<std::string>());
  if (r.use_grh && !theirs.at("gid").is_string()) throw ProbeError("the peer has no GID but this side needs GRH (RoCE or --gid-index)");
  connect_qp(r, peer, o);
  tcp.barrier();
  json local = side_info(r, b), remote = theirs;
  for (const char* k : {"qpn", "psn", "rkey", "addr", "half", "mtu_enum"}) remote.erase(k);
  doc["local"] = local;
  doc["remote"] = remote;
  doc["path_mtu"] = mtu_bytes(std::min<int>(r.port.active_mtu, peer.mtu));

  Session s{r, b, peer, tcp, plan, !o.server};
  for (const auto& mode : plan.modes)
    for (const auto& test : plan.tests) {
      if (!o.quiet && !o.server) std::fprintf(stderr, "[ccsim-probe-verbs] %s\n", perftest_name(test, mode));
      for (std::uint64_t bytes : plan.sizes) {
        json sample = mode == "bw" ? run_bw(s, test, bytes) : run_lat(s, test, bytes);
        if (!sample.is_null()) doc["samples"].push_back(sample);
      }
    }
  tcp.barrier();
  ibv_destroy_qp(r.qp);
  r.qp = nullptr;
  free_buffer(b);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ccsim-probe-verbs: %s\n", e.what());
    return 2;
  }
  json doc = new_document("verbs", argc, argv);
  return run_probe("ccsim-probe-verbs", doc, o.output, [&] { return run(doc, o); });
}
