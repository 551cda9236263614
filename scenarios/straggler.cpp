#include "scenarios/straggler.h"

#include <stdexcept>

namespace ccsim {

Schedule delay_rank_start(Schedule schedule, int rank, double delay_s) {
  if (rank < 0 || rank >= schedule.nranks) throw std::out_of_range("delay_rank_start: no rank " + std::to_string(rank));
  for (Transfer& t : schedule.transfers)
    if (t.src == rank && t.dep_count == 0) t.delay_s += delay_s;
  return schedule;
}

StragglerTimes per_rank_collective_times(const SimResult& result, int late_rank, double delay_s) {
  StragglerTimes out;
  for (std::size_t r = 0; r < result.rank_finish_s.size(); ++r) {
    const double start = static_cast<int>(r) == late_rank ? delay_s : 0.0;
    out.per_rank_s.push_back(result.rank_finish_s[r] - start);
    if (out.per_rank_s[r] < out.per_rank_s[static_cast<std::size_t>(out.shortest_rank)]) out.shortest_rank = static_cast<int>(r);
  }
  return out;
}

}  // namespace ccsim
