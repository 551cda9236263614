// `ccsim predict --trace FILE`: the replayed transfers of one collective as a Chrome / Perfetto
// trace (the JSON "trace events" format: chrome://tracing, ui.perfetto.dev). One process per rank
// (the transfers it sends) and one per busy link direction (the transfers crossing it), so a ring or
// a tree can be seen unfolding. Overlapping transfers of one process go on separate threads
// ("slot 0", "slot 1", ...): complete events of one thread must nest, transfers in flight together do not.
#pragma once
#include <string>

#include "algorithms/schedule.h"
#include "sim/engine.h"
#include "topologies/topology.h"

namespace ccsim {

// `result` must come from simulating `schedule` with EngineOptions::record_transfers. Times in
// microseconds from the start of the operation.
std::string chrome_trace_json(const Topology& topo, const Schedule& schedule, const SimResult& result,
                              const std::string& title);

}  // namespace ccsim
