// Structural check of a probe document (docs/probes.md, "JSON schema"): the keys every probe writes and
// the keys every sample of each probe has. Header only and GPU-free, for the tests and for `ccsim calibrate`,
// which can refuse a document before fitting it. Returns the problems found ("" path = document root);
// an empty list means the document has the documented shape (values are not judged).
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ccsim::probe {

inline std::vector<std::string> check_probe_document(const nlohmann::json& doc) {
  using nlohmann::json;
  std::vector<std::string> problems;
  auto need = [&](const json& obj, const std::string& where, const char* key, json::value_t type) {
    if (!obj.is_object() || !obj.contains(key)) {
      problems.push_back(where + ": missing \"" + key + "\"");
      return false;
    }
    const json& v = obj.at(key);
    bool ok = v.type() == type || (type == json::value_t::number_float && v.is_number()) ||
              (type == json::value_t::number_integer && v.is_number_integer()) ||
              (type == json::value_t::null);  // null: any type (or null) accepted
    if (!ok) problems.push_back(where + ": \"" + key + "\" has the wrong type");
    return ok;
  };
  using T = json::value_t;
  if (!doc.is_object()) return {"document is not a JSON object"};
  if (!need(doc, "", "probe", T::string)) return problems;
  const std::string probe = doc.at("probe");
  if (probe != "cuda" && probe != "nccl" && probe != "verbs") problems.push_back("probe: unknown probe \"" + probe + "\"");
  need(doc, "", "ccsim_probe_version", T::string);
  need(doc, "", "samples", T::array);
  need(doc, "", "errors", T::array);
  if (need(doc, "", "machine", T::object)) {
    const json& m = doc.at("machine");
    need(m, "machine", "hostname", T::string);
    need(m, "machine", "driver_version", T::null);
    need(m, "machine", "cuda_runtime_version", T::null);
    need(m, "machine", "nccl_version", T::null);
    if (need(m, "machine", "gpus", T::array))
      for (std::size_t i = 0; i < m.at("gpus").size(); ++i) {
        const json& g = m.at("gpus")[i];
        std::string w = "machine.gpus[" + std::to_string(i) + "]";
        need(g, w, "index", T::number_integer);
        need(g, w, "name", T::string);
        need(g, w, "pci_bus_id", T::string);
        need(g, w, "sm", T::number_integer);
        need(g, w, "memory_bytes", T::number_integer);
      }
    if (need(m, "machine", "nics", T::array))
      for (std::size_t i = 0; i < m.at("nics").size(); ++i) {
        std::string w = "machine.nics[" + std::to_string(i) + "]";
        need(m.at("nics")[i], w, "name", T::string);
        need(m.at("nics")[i], w, "ports", T::array);
      }
  }
  for (std::size_t i = 0; i < doc.value("errors", json::array()).size(); ++i) {
    std::string w = "errors[" + std::to_string(i) + "]";
    need(doc.at("errors")[i], w, "test", T::string);
    need(doc.at("errors")[i], w, "message", T::string);
  }
  if (!doc.contains("samples") || !doc.at("samples").is_array()) return problems;
  for (std::size_t i = 0; i < doc.at("samples").size(); ++i) {
    const json& s = doc.at("samples")[i];
    std::string w = "samples[" + std::to_string(i) + "]";
    if (!need(s, w, "test", T::string)) continue;
    need(s, w, "bytes", T::number_integer);
    need(s, w, "iters", T::number_integer);
    const std::string test = s.at("test");
    if (probe == "cuda") {
      for (const char* k : {"time_us_min", "time_us_median", "time_us_mean"}) need(s, w, k, T::number_float);
      if (test == "d2d" || test == "h2d" || test == "d2h" || test == "p2p") {
        need(s, w, "method", T::string);
        need(s, w, "bw_GBps", T::number_float);
        if (test == "p2p") {
          need(s, w, "src", T::number_integer);
          need(s, w, "dst", T::number_integer);
          need(s, w, "p2p_enabled", T::boolean);
        } else {
          need(s, w, "gpu", T::number_integer);
        }
        if (test == "h2d" || test == "d2h") need(s, w, "host_memory", T::string);
      } else if (test == "host_kernel") {
        need(s, w, "gpu", T::number_integer);
        need(s, w, "direction", T::string);
        need(s, w, "blocks", T::number_integer);
        need(s, w, "bw_GBps", T::number_float);
        need(s, w, "bw_per_block_GBps", T::number_float);
      } else if (test == "shm_fifo") {
        need(s, w, "gpu", T::number_integer);
        need(s, w, "channels", T::number_integer);
        need(s, w, "slot_bytes", T::number_integer);
        need(s, w, "receiver_loads", T::string);
        need(s, w, "bw_GBps", T::number_float);
        need(s, w, "bw_per_channel_GBps", T::number_float);
      } else if (test == "host_flag") {
        need(s, w, "gpu", T::number_integer);
        need(s, w, "kind", T::string);
        need(s, w, "memory", T::string);
        need(s, w, "rounds", T::number_integer);
      } else if (test == "launch_back_to_back" || test == "launch_sync_roundtrip") {
        need(s, w, "gpu", T::number_integer);
      } else {
        problems.push_back(w + ": unknown cuda test \"" + test + "\"");
      }
    } else if (probe == "nccl") {
      need(s, w, "combination", T::string);
      need(s, w, "nranks", T::number_integer);
      for (const char* k : {"time_us_min", "time_us_median", "time_us_mean", "algbw_GBps", "busbw_GBps"})
        need(s, w, k, T::number_float);
    } else if (probe == "verbs") {
      need(s, w, "perftest_equivalent", T::string);
      if (test.size() > 3 && test.compare(test.size() - 3, 3, "_bw") == 0) {
        for (const char* k : {"bw_avg_Gbps", "bw_avg_MBps", "msg_rate_Mpps"}) need(s, w, k, T::number_float);
      } else {
        for (const char* k : {"t_min_us", "t_typical_us", "t_avg_us", "p99_us"}) need(s, w, k, T::number_float);
      }
    }
  }
  return problems;
}

}  // namespace ccsim::probe
