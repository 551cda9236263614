#include "scenarios/report_formats.h"

#include <charconv>
#include <cmath>

namespace ccsim {
namespace {

using ojson = nlohmann::ordered_json;

ojson wrong_json(long w) { return w < 0 ? ojson(nullptr) : ojson(w); }

ojson number_json(double v) {
  // JSON has no NaN/Inf; nlohmann would print null anyway, make it explicit.
  if (!std::isfinite(v)) return ojson(nullptr);
  return ojson(v);
}

}  // namespace

std::string shortest_double_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

const std::vector<std::string>& report_row_columns() {
  static const std::vector<std::string> cols = {
      "size_bytes",     "count",      "type",           "redop",          "root",     "oop_time_us", "oop_algbw_GBps",
      "oop_busbw_GBps", "oop_wrong",  "ip_time_us",     "ip_algbw_GBps",  "ip_busbw_GBps", "ip_wrong"};
  return cols;
}

std::string format_rows_json(const nlohmann::json& metadata, const std::vector<NcclTestsRow>& rows) {
  ojson doc;
  doc["metadata"] = ojson::parse(metadata.dump());  // nlohmann::json keeps keys sorted: stable order
  ojson arr = ojson::array();
  for (const auto& r : rows) {
    ojson o;
    o["size_bytes"] = r.size_bytes;
    o["count"] = r.count;
    o["type"] = r.type;
    o["redop"] = r.redop;
    o["root"] = r.root;
    o["oop_time_us"] = number_json(r.oop_time_us);
    o["oop_algbw_GBps"] = number_json(r.oop_algbw_GBps);
    o["oop_busbw_GBps"] = number_json(r.oop_busbw_GBps);
    o["oop_wrong"] = wrong_json(r.oop_wrong);
    o["ip_time_us"] = number_json(r.ip_time_us);
    o["ip_algbw_GBps"] = number_json(r.ip_algbw_GBps);
    o["ip_busbw_GBps"] = number_json(r.ip_busbw_GBps);
    o["ip_wrong"] = wrong_json(r.ip_wrong);
    arr.push_back(std::move(o));
  }
  doc["rows"] = std::move(arr);
  return doc.dump(2) + "\n";
}

std::string format_rows_csv(const nlohmann::json& metadata, const std::vector<NcclTestsRow>& rows) {
  std::string s;
  if (metadata.is_object()) {
    for (auto it = metadata.begin(); it != metadata.end(); ++it)
    {
      std::string v = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
      for (char& c : v)
        if (c == '\n' || c == '\r') c = ' ';  // keep each key on one comment line
      s += "# " + it.key() + ": " + v + "\n";
    }
  } else if (!metadata.is_null()) {
    s += "# metadata: " + metadata.dump() + "\n";
  }
  const auto& cols = report_row_columns();
  for (std::size_t i = 0; i < cols.size(); ++i) s += (i ? "," : "") + cols[i];
  s += "\n";
  auto wrong = [](long w) { return w < 0 ? std::string() : std::to_string(w); };
  for (const auto& r : rows) {
    s += std::to_string(r.size_bytes) + "," + std::to_string(r.count) + "," + csv_field(r.type) + "," +
         csv_field(r.redop) + "," + std::to_string(r.root) + "," + shortest_double_text(r.oop_time_us) + "," +
         shortest_double_text(r.oop_algbw_GBps) + "," + shortest_double_text(r.oop_busbw_GBps) + "," + wrong(r.oop_wrong) + "," +
         shortest_double_text(r.ip_time_us) + "," + shortest_double_text(r.ip_algbw_GBps) + "," + shortest_double_text(r.ip_busbw_GBps) + "," +
         wrong(r.ip_wrong) + "\n";
  }
  return s;
}

}  // namespace ccsim
