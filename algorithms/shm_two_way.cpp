#include "algorithms/shm_two_way.h"

#include <map>
#include <utility>

#include "topologies/routing.h"

namespace ccsim {

std::vector<double> shm_two_way_weights(const Topology& topo, const Schedule& s) {
  std::vector<double> w(s.transfers.size(), 1.0);
  if (topo.shm_channel_Bps > 0 || topo.shm_two_way_efficiency >= 1 || !nccl_any_shm_pair(topo)) return w;
  std::map<std::pair<int, int>, bool> shm_pair;
  const auto is_shm = [&](const Transfer& t) {
    if (t.is_marker() || t.bytes <= 0 || t.src >= s.nranks || t.dst >= s.nranks) return false;
    auto it = shm_pair.find({t.src, t.dst});
    if (it == shm_pair.end())
      it = shm_pair.emplace(std::make_pair(t.src, t.dst), nccl_shm_pair(topo, t.src, t.dst)).first;
    return it->second;
  };
  std::vector<char> sends(static_cast<std::size_t>(s.nranks), 0), receives(sends.size(), 0);
  for (const Transfer& t : s.transfers)
    if (is_shm(t)) {
      sends[static_cast<std::size_t>(t.src)] = 1;
      receives[static_cast<std::size_t>(t.dst)] = 1;
    }
  for (std::size_t i = 0; i < s.transfers.size(); ++i) {
    const Transfer& t = s.transfers[i];
    if (is_shm(t) && (receives[static_cast<std::size_t>(t.src)] || sends[static_cast<std::size_t>(t.dst)]))
      w[i] = 1.0 / topo.shm_two_way_efficiency;
  }
  return w;
}

}  // namespace ccsim
