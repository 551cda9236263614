#include "sim/steady_state.h"

#include <map>
#include <tuple>

namespace ccsim {

SimResult extend_pipeline(const SimResult& half, const SimResult& full, double full_size_bytes, double size_bytes) {
  const double half_size = full_size_bytes / 2;
  const auto extend = [&](double at_half, double at_full) {
    return at_full + (size_bytes - full_size_bytes) * (at_full - at_half) / (full_size_bytes - half_size);
  };
  SimResult out = full;
  out.time_s = extend(half.time_s, full.time_s);
  for (std::size_t r = 0; r < out.rank_finish_s.size() && r < half.rank_finish_s.size(); ++r)
    out.rank_finish_s[r] = extend(half.rank_finish_s[r], full.rank_finish_s[r]);
  out.transfer_start_s.clear();  // per-transfer times belong to the simulated schedule only
  out.transfer_end_s.clear();
  std::map<std::tuple<std::string, std::string, std::string>, double> busy_at_half;
  for (const LinkStat& l : half.links) busy_at_half[{l.from, l.to, l.label}] = l.busy_s;
  const double scale = size_bytes / full_size_bytes;
  for (LinkStat& l : out.links) {
    const auto it = busy_at_half.find({l.from, l.to, l.label});
    l.busy_s = it != busy_at_half.end() ? extend(it->second, l.busy_s) : l.busy_s * scale;
    l.bytes *= scale;
  }
  return out;
}

}  // namespace ccsim
