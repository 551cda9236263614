// Routing traces (trace:FILE): per token its k expert ids, optionally its layer and source rank.
// CSV ("layer,rank,experts" header, any of layer/rank optional, experts space-separated) or JSON
// ({"tokens": [{"layer": 0, "rank": 3, "experts": [..]}, ...]}). Format in docs/moe.md.
#pragma once
#include <string>

#include "scenarios/moe/config.h"
#include "scenarios/moe/routing.h"

namespace ccsim::moe {

// Reads `path` (JSON if its first non-blank character is '{', else CSV) and keeps one layer
// (`layer`; -1 = the lowest layer present). Tokens with a rank column go to that rank; tokens
// without one are dealt to ranks in blocks (rank r gets tokens [r*n/EP, (r+1)*n/EP) in file
// order). Every token needs config.top_k distinct ids in [0, config.experts). Errors: InputError
// naming the file and line (CSV) or JSON path.
Routing read_trace(const std::string& path, const MoeConfig& config, int layer = -1);

// The same on a trace already read (`path` only names it in errors): the fuzz target and tests
// parse text without a file.
Routing read_trace_text(const std::string& path, const std::string& text, const MoeConfig& config, int layer = -1);

}  // namespace ccsim::moe
