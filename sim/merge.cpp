#include "sim/merge.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "common/flat_hash.h"

namespace ccsim {

namespace {

// True when no two records share (src, dst, rail, family, step): then nothing can merge, and the
// common case (already merged schedules of a million records) costs one hash pass.
bool all_connections_steps_unique(const Schedule& schedule) {
  FlatKeyMap seen(schedule.transfers.size());
  for (std::uint32_t i = 0; i < schedule.transfers.size(); ++i) {
    const auto& t = schedule.transfers[i];
    std::uint64_t key;
    if (!pack_transfer_key(t.src, t.dst, t.rail, t.family, t.step, &key) || !seen.insert(key, i)) return false;
  }
  return true;
}

}  // namespace

MergedSchedule unmerged(const Schedule& schedule) {
  MergedSchedule out;
  out.merged_of.resize(schedule.transfers.size());
  for (std::uint32_t i = 0; i < schedule.transfers.size(); ++i) out.merged_of[i] = i;
  return out;
}

MergedSchedule merge_identical_transfers(const Schedule& schedule) {
  if (schedule.keys_unique || all_connections_steps_unique(schedule)) return unmerged(schedule);
  MergedSchedule out;
  const auto count = schedule.transfers.size();
  out.merged_of.resize(count);
  using Key = std::tuple<int, int, int, int, int, double, double, std::vector<std::uint32_t>>;
  std::map<Key, std::uint32_t> group_of;
  std::vector<std::uint32_t> group_first;   // first original record of each group
  std::vector<int> group_size;
  std::vector<std::vector<std::uint32_t>> group_deps;
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto& t = schedule.transfers[i];
    std::vector<std::uint32_t> deps;
    for (std::uint32_t k = 0; k < t.dep_count; ++k) deps.push_back(out.merged_of[schedule.deps_of(t)[k]]);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    Key key{t.src, t.dst, t.rail, t.family, t.step, t.delay_s, t.bytes, deps};
    auto [it, inserted] = group_of.emplace(std::move(key), static_cast<std::uint32_t>(group_first.size()));
    if (inserted) {
      group_first.push_back(i);
      group_size.push_back(0);
      group_deps.push_back(std::get<7>(it->first));
    }
    ++group_size[it->second];
    out.merged_of[i] = it->second;
  }
  const bool uniform = !group_size.empty() &&
                       std::all_of(group_size.begin(), group_size.end(), [&](int s) { return s == group_size[0]; });
  if (!uniform || group_size[0] == 1) return unmerged(schedule);
  out.bundle = group_size[0];
  out.merged.emplace();
  Schedule& s = *out.merged;
  s.collective = schedule.collective;
  s.algorithm = schedule.algorithm;
  s.nranks = schedule.nranks;
  s.size_bytes = schedule.size_bytes;
  s.switches = schedule.switches;
  s.families_follow_rails = schedule.families_follow_rails;
  s.families_per_rail = schedule.families_per_rail;
  s.fifo_connections = schedule.fifo_connections;
  // A merged record stands for `bundle` flows (and connections), each under the caps.
  s.transfer_rate_cap_Bps = schedule.transfer_rate_cap_Bps * out.bundle;
  s.inter_node_channel_cap_Bps = schedule.inter_node_channel_cap_Bps * out.bundle;
  s.intra_node_channel_cap_Bps = schedule.intra_node_channel_cap_Bps * out.bundle;
  s.source_channel_cap_Bps = schedule.source_channel_cap_Bps * out.bundle;
  for (std::size_t g = 0; g < group_first.size(); ++g) {
    Transfer t = schedule.transfers[group_first[g]];
    t.lane = 0;
    t.bytes *= out.bundle;
    t.chunks *= out.bundle;
    s.add(t, group_deps[g]);
  }
  return out;
}

}  // namespace ccsim
