#include "report/chrome_trace.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "algorithms/endpoint_route.h"
#include "common/units.h"

namespace ccsim {

namespace {

// One trace process: its name and the end time of each of its threads (slots), to place an event
// on the first slot free at its start.
struct Track {
  std::string name;
  std::vector<double> slot_end_us;
  int place(double start_us, double end_us) {
    for (std::size_t k = 0; k < slot_end_us.size(); ++k)
      if (slot_end_us[k] <= start_us) {
        slot_end_us[k] = end_us;
        return static_cast<int>(k);
      }
    slot_end_us.push_back(end_us);
    return static_cast<int>(slot_end_us.size() - 1);
  }
};

std::string endpoint_name(const Schedule& s, int e) {
  return e < s.nranks ? "rank " + std::to_string(e) : s.switches.at(static_cast<std::size_t>(e - s.nranks));
}

}  // namespace

std::string chrome_trace_json(const Topology& topo, const Schedule& s, const SimResult& r, const std::string& title) {
  if (r.transfer_start_s.size() != s.transfers.size())
    throw std::logic_error("chrome_trace_json: the result has no per-transfer times (record_transfers)");
  // Transfers in start order (ties by index): slots fill deterministically.
  std::vector<std::size_t> order(s.transfers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return r.transfer_start_s[a] < r.transfer_start_s[b]; });

  // Processes: endpoints 0 .. num_endpoints-1 (ranks, then switches), then link directions in
  // first-use order. Two passes over the transfers, placing every event on the same slot each time:
  // the first finds the processes and their slots (the metadata events come first), the second
  // writes the events one by one (a JSON tree of every event took ~4 KB each: 1 GB for 246 k).
  std::vector<Track> tracks;
  std::map<LinkDirectionKey, std::size_t> link_track;
  const auto place_all = [&](const auto& emit) {
    tracks.assign(static_cast<std::size_t>(s.num_endpoints()), Track{});
    for (int e = 0; e < s.num_endpoints(); ++e) tracks[static_cast<std::size_t>(e)].name = endpoint_name(s, e);
    link_track.clear();
    for (std::size_t i : order) {
      const Transfer& t = s.transfers[i];
      const double start = r.transfer_start_s[i] * 1e6, end = r.transfer_end_s[i] * 1e6;
      const auto place = [&](std::size_t track) { emit(i, start, end, track, tracks[track].place(start, end)); };
      place(static_cast<std::size_t>(t.src));
      for (const Hop& h : transfer_route(topo, s, t.src, t.dst, t.rail)) {
        const LinkDirectionKey key = link_direction_key(topo, h);
        auto it = link_track.find(key);
        if (it == link_track.end()) {
          it = link_track.emplace(key, tracks.size()).first;
          tracks.push_back({"link " + describe_link_direction(topo, h.edge, key.dir), {}});
        }
        place(it->second);
      }
    }
  };
  place_all([](std::size_t, double, double, std::size_t, int) {});
  std::string out = "{\"displayTimeUnit\":\"ns\",\"otherData\":";
  out += nlohmann::json({{"title", title}, {"operation_time_us", r.time_s * 1e6}, {"ccsim_version", CCSIM_VERSION}}).dump();
  out += ",\"traceEvents\":[";
  bool first = true;
  const auto append = [&](const nlohmann::json& event) {
    if (!first) out += ',';
    first = false;
    out += event.dump();
  };
  for (std::size_t k = 0; k < tracks.size(); ++k) {
    if (tracks[k].slot_end_us.empty()) continue;  // an endpoint that sends nothing
    append({{"name", "process_name"}, {"ph", "M"}, {"pid", k + 1}, {"args", {{"name", tracks[k].name}}}});
    append({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", k + 1}, {"args", {{"sort_index", k}}}});
    for (std::size_t slot = 0; slot < tracks[k].slot_end_us.size(); ++slot)
      append({{"name", "thread_name"}, {"ph", "M"}, {"pid", k + 1}, {"tid", slot}, {"args", {{"name", "slot " + std::to_string(slot)}}}});
  }
  place_all([&](std::size_t i, double start, double end, std::size_t track, int slot) {
    const Transfer& t = s.transfers[i];
    const std::string name = endpoint_name(s, t.src) + " -> " + endpoint_name(s, t.dst);
    const nlohmann::json args = {{"bytes", t.bytes},  {"step", t.step},         {"family", t.family},
                                 {"rail", t.rail},    {"channels", t.channels}, {"chunks", t.chunks},
                                 {"delay_us", t.delay_s * 1e6}};
    append({{"name", name}, {"cat", "transfer"}, {"ph", "X"}, {"ts", start}, {"dur", end - start},
            {"pid", track + 1}, {"tid", slot}, {"args", args}});
  });
  out += "]}\n";
  return out;
}

}  // namespace ccsim
