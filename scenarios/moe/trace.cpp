#include "scenarios/moe/trace.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/input_file.h"
#include "common/json_input.h"

namespace ccsim::moe {
namespace {

using nlohmann::json;

struct TraceToken {
  int layer = 0;
  int rank = -1;  // -1: dealt to ranks in blocks
  std::vector<std::int32_t> experts;
};

std::string trim(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(trim(cur));
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

// A whole number in [lo, hi], else InputError at `where` naming `what`.
long long whole(const std::string& text, long long lo, long long hi, const std::string& where, const std::string& what) {
  std::size_t used = 0;
  long long v = 0;
  bool ok = !text.empty();
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    ok = false;
  }
  if (!ok || used != text.size())
    throw InputError(where, what + " '" + text + "' is not a whole number");
  if (v < lo || v > hi)
    throw InputError(where, what + " " + text + " is out of range [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "]");
  return v;
}

void check_experts(const std::vector<std::int32_t>& ids, const MoeConfig& config, const std::string& where) {
  if (static_cast<int>(ids.size()) != config.top_k)
    throw InputError(where, "token has " + std::to_string(ids.size()) + " experts, top-k is " +
                                std::to_string(config.top_k));
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (ids[i] == ids[j]) throw InputError(where, "expert " + std::to_string(ids[i]) + " appears twice in one token");
}

std::vector<TraceToken> read_csv(const std::string& path, const std::string& text, const MoeConfig& config) {
  std::vector<TraceToken> tokens;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  int col_layer = -1, col_rank = -1, col_experts = -1;
  std::size_t columns = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = path + " line " + std::to_string(line_no);
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const auto fields = split(t, ',');
    if (columns == 0) {  // header
      for (std::size_t c = 0; c < fields.size(); ++c) {
        int* slot = fields[c] == "layer" ? &col_layer : fields[c] == "rank" ? &col_rank
                    : fields[c] == "experts" ? &col_experts : nullptr;
        if (!slot) throw InputError(where, "unknown column '" + fields[c] + "' (header: [layer,][rank,]experts)");
        if (*slot >= 0) throw InputError(where, "column '" + fields[c] + "' appears twice");
        *slot = static_cast<int>(c);
      }
      if (col_experts < 0) throw InputError(where, "header lacks the 'experts' column ([layer,][rank,]experts)");
      columns = fields.size();
      continue;
    }
    if (fields.size() != columns)
      throw InputError(where, "expected " + std::to_string(columns) + " comma-separated fields, got " +
                                  std::to_string(fields.size()));
    TraceToken tok;
    if (col_layer >= 0) tok.layer = static_cast<int>(whole(fields[col_layer], 0, 1 << 30, where, "layer"));
    if (col_rank >= 0) tok.rank = static_cast<int>(whole(fields[col_rank], 0, config.ep - 1, where, "rank"));
    std::istringstream ids(fields[col_experts]);
    std::string id;
    while (ids >> id) tok.experts.push_back(static_cast<std::int32_t>(whole(id, 0, config.experts - 1, where, "expert")));
    check_experts(tok.experts, config, where);
    tokens.push_back(std::move(tok));
  }
  if (columns == 0) throw InputError(path, "no header line ([layer,][rank,]experts)");
  return tokens;
}

std::vector<TraceToken> read_json(const std::string& path, const std::string& text, const MoeConfig& config) {
  const json doc = parse_user_json(text, path, /*allow_comments=*/false);
  if (!doc.is_object() || !doc.contains("tokens") || !doc["tokens"].is_array())
    throw InputError(path + " /tokens", "expected {\"tokens\": [{\"layer\": L, \"rank\": R, \"experts\": [..]}, ..]}");
  const auto number = [&](const json& v, long long lo, long long hi, const std::string& where, const char* what) {
    if (!v.is_number_integer()) throw InputError(where, std::string(what) + " must be a whole number");
    const long long x = v.get<long long>();
    if (x < lo || x > hi)
      throw InputError(where, std::string(what) + " " + std::to_string(x) + " is out of range [" + std::to_string(lo) +
                                  ", " + std::to_string(hi) + "]");
    return x;
  };
  std::vector<TraceToken> tokens;
  bool any_rank = false, any_unranked = false;
  const auto& list = doc["tokens"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = path + " /tokens/" + std::to_string(i);
    const json& o = list[i];
    if (!o.is_object() || !o.contains("experts") || !o["experts"].is_array())
      throw InputError(at, "expected an object with an \"experts\" array");
    TraceToken tok;
    for (const auto& [key, value] : o.items()) {
      if (key == "layer") tok.layer = static_cast<int>(number(value, 0, 1 << 30, at + "/layer", "layer"));
      else if (key == "rank") tok.rank = static_cast<int>(number(value, 0, config.ep - 1, at + "/rank", "rank"));
      else if (key != "experts") throw InputError(at + "/" + key, "unknown key (layer, rank, experts)");
    }
    (tok.rank >= 0 ? any_rank : any_unranked) = true;
    if (any_rank && any_unranked) throw InputError(at, "either every token names its rank or none does");
    const json& ids = o["experts"];
    for (std::size_t j = 0; j < ids.size(); ++j)
      tok.experts.push_back(static_cast<std::int32_t>(
          number(ids[j], 0, config.experts - 1, at + "/experts/" + std::to_string(j), "expert")));
    check_experts(tok.experts, config, at + "/experts");
    tokens.push_back(std::move(tok));
  }
  return tokens;
}

}  // namespace

Routing read_trace(const std::string& path, const MoeConfig& config, int layer) {
  return read_trace_text(path, read_input_file(path, "routing trace"), config, layer);
}

Routing read_trace_text(const std::string& path, const std::string& text, const MoeConfig& config, int layer) {
  const auto first = text.find_first_not_of(" \t\r\n");
  std::vector<TraceToken> all = first != std::string::npos && text[first] == '{' ? read_json(path, text, config)
                                                                                 : read_csv(path, text, config);
  if (all.empty()) throw InputError(path, "the trace has no tokens");
  if (layer < 0) {
    layer = std::numeric_limits<int>::max();
    for (const auto& t : all) layer = std::min(layer, t.layer);
  }
  std::vector<const TraceToken*> kept;
  for (const auto& t : all)
    if (t.layer == layer) kept.push_back(&t);
  if (kept.empty()) throw InputError(path, "no tokens of layer " + std::to_string(layer));

  Routing r;
  r.ep = config.ep;
  r.top_k = config.top_k;
  r.experts = config.experts;
  const auto n = static_cast<std::int64_t>(kept.size());
  // Owner rank of each kept token: its rank column, or blocks of n/EP in file order.
  std::vector<int> owner(kept.size());
  for (std::int64_t i = 0; i < n; ++i)
    owner[i] = kept[i]->rank >= 0 ? kept[i]->rank : static_cast<int>(i * config.ep / n);
  r.rank_offsets.assign(config.ep + 1, 0);
  for (int o : owner) ++r.rank_offsets[o + 1];
  for (int i = 0; i < config.ep; ++i) r.rank_offsets[i + 1] += r.rank_offsets[i];
  std::vector<std::int64_t> next(r.rank_offsets.begin(), r.rank_offsets.end() - 1);
  r.expert_ids.resize(static_cast<std::size_t>(n) * config.top_k);
  for (std::int64_t i = 0; i < n; ++i)  // stable: file order within a rank
    std::copy(kept[i]->experts.begin(), kept[i]->experts.end(), &r.expert_ids[next[owner[i]]++ * config.top_k]);
  return r;
}

}  // namespace ccsim::moe
