#include "algorithms/collectives.h"

#include <algorithm>
#include <cctype>

#include "common/error.h"

namespace ccsim {

const std::vector<CollectiveInfo>& collectives() {
  // The count, busbw, redop and root facts restate nccl-tests' per-collective files (src/<coll>.cu:
  // <Coll>GetCollByteCount, <Coll>GetBw and the TimeTest call of <Coll>RunTest).
  using S = CollectiveShape;
  using C = CountRule;
  using B = BusbwRule;
  using P = P2pPattern;
  static const std::vector<CollectiveInfo> all = {
      // name            NCCL function          shape     tuner function        count rule           busbw        reduces root  ring  p2p
      {"all_reduce",     "ncclAllReduce",       S::Tuned, Func::AllReduce,      C::Whole,            B::AllReduce, true,  false, 2, P::None},
      {"all_gather",     "ncclAllGather",       S::Tuned, Func::AllGather,      C::PerRank,          B::NMinus1,   false, false, 1, P::None},
      {"reduce_scatter", "ncclReduceScatter",   S::Tuned, Func::ReduceScatter,  C::PerRank,          B::NMinus1,   true,  false, 1, P::None},
      {"broadcast",      "ncclBroadcast",       S::Chain, Func::Broadcast,      C::Whole,            B::One,       false, true,  0, P::None},
      {"reduce",         "ncclReduce",          S::Chain, Func::Reduce,         C::Whole,            B::One,       true,  true,  0, P::None},
      {"alltoall",       "ncclSend/ncclRecv",   S::P2P,   std::nullopt,         C::PerPeerAligned16, B::NMinus1,   false, false, 0, P::AllPairs},
      // sendrecv's RunTest passes the -o op to TimeTest, so its redop column shows it.
      {"sendrecv",       "ncclSend/ncclRecv",   S::P2P,   std::nullopt,         C::Whole,            B::One,       true,  false, 0, P::RingNeighbour},
      {"gather",         "ncclSend/ncclRecv",   S::None,  std::nullopt,         C::PerPeerAligned16, B::NMinus1,   false, true,  0, P::None},
      {"scatter",        "ncclSend/ncclRecv",   S::None,  std::nullopt,         C::PerPeerAligned16, B::NMinus1,   false, true,  0, P::None},
      {"hypercube",      "ncclSend/ncclRecv",   S::None,  std::nullopt,         C::PerRank,          B::One,       false, false, 0, P::None},
      {"alltoallv",      "ncclSend/ncclRecv",   S::None,  std::nullopt,         C::PerPeerAligned16, B::Unknown,   false, false, 0, P::None},
  };
  return all;
}

namespace {

// "AllReduce", "all-reduce", "all_reduce_perf" -> "allreduce": the spellings users and logs use.
std::string squashed(const std::string& name) {
  std::string n = name;
  const std::size_t slash = n.find_last_of('/');
  if (slash != std::string::npos) n = n.substr(slash + 1);
  for (const char* suffix : {"_mpi", "_perf"}) {
    const std::string sfx = suffix;
    if (n.size() > sfx.size() && n.compare(n.size() - sfx.size(), sfx.size(), sfx) == 0) n.resize(n.size() - sfx.size());
  }
  std::string k;
  for (char c : n)
    if (c != '_' && c != '-' && c != ' ') k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return k;
}

}  // namespace

const CollectiveInfo* find_collective(const std::string& name) {
  for (const auto& c : collectives())
    if (name == c.name) return &c;
  return nullptr;
}

const CollectiveInfo* find_collective_spelled(const std::string& name) {
  const std::string key = squashed(name);
  for (const auto& c : collectives())
    if (squashed(c.name) == key) return &c;
  return nullptr;
}

std::string predicted_collective_names() {
  std::string s;
  for (const auto& c : collectives())
    if (c.shape != CollectiveShape::None) s += (s.empty() ? "" : ", ") + std::string(c.name);
  return s;
}

const CollectiveInfo& collective_info(const std::string& name, const std::string& flag) {
  const CollectiveInfo* c = find_collective(name);
  if (!c || c->shape == CollectiveShape::None)
    throw InputError(flag, "'" + name + "' is not available (available: " + predicted_collective_names() + ")");
  return *c;
}

double collective_busbw_factor(const CollectiveInfo& info, int nranks) {
  if (nranks < 1) throw InputError("ranks", "busbw needs at least 1 rank, got " + std::to_string(nranks));
  const double n = nranks;
  switch (info.busbw) {
    case BusbwRule::AllReduce: return 2.0 * (n - 1) / n;
    case BusbwRule::NMinus1: return (n - 1) / n;
    case BusbwRule::One: return 1.0;
    case BusbwRule::Unknown: break;
  }
  throw InputError("collective", std::string("no busbw factor for collective '") + info.name + "'");
}

void collective_size_and_count(const CollectiveInfo& info, std::uint64_t requested, int type_size, int nranks,
                               std::uint64_t* size_bytes, std::uint64_t* count) {
  const std::uint64_t ts = static_cast<std::uint64_t>(std::max(1, type_size));
  const std::uint64_t n = static_cast<std::uint64_t>(std::max(1, nranks));
  switch (info.count_rule) {
    case CountRule::Whole:
      *count = requested / ts;
      *size_bytes = *count * ts;
      return;
    case CountRule::PerRank:
      *count = requested / ts / n;
      *size_bytes = *count * ts * n;
      return;
    case CountRule::PerPeerAligned16: {
      // nccl-tests >= 2.14: (count / nranks) & -(16 / eltSize)
      const std::uint64_t align = std::max<std::uint64_t>(1, 16 / ts);
      *count = (requested / ts / n) / align * align;
      *size_bytes = *count * n * ts;
      return;
    }
  }
}

std::string collective_redop_column(const CollectiveInfo& info, const std::string& op) {
  return info.reduces ? op : "none";
}

int collective_root_column(const CollectiveInfo& info, int root) { return info.has_root ? root : -1; }

}  // namespace ccsim
