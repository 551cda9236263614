// libFuzzer target: a MoE routing trace (`moe --routing trace:FILE`, docs/moe.md "Trace format"),
// CSV or JSON, read by read_trace_text (scenarios/moe/trace.h) for the configuration of the
// repository's sample trace (EP 4, 16 experts, top-4). Contract (fuzz_input.h): a routing whose
// rank offsets and expert ids are consistent, or InputError.
#include "fuzz/fuzz_input.h"
#include "scenarios/moe/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ccsim::fuzz::check_contract([&] {
    ccsim::moe::MoeConfig config;
    config.ep = 4;
    config.gpus_per_node = 4;
    config.experts = 16;
    config.top_k = 4;
    const auto r = ccsim::moe::read_trace_text("fuzz.csv", ccsim::fuzz::input_text(data, size), config);
    // What the traffic model reads: EP+1 offsets, k ids per token, each id an expert.
    if (r.rank_offsets.size() != static_cast<std::size_t>(config.ep) + 1 ||
        r.expert_ids.size() != static_cast<std::size_t>(r.tokens()) * config.top_k)
      __builtin_trap();
    for (const auto id : r.expert_ids)
      if (id < 0 || id >= config.experts) __builtin_trap();
  });
}
