#!/usr/bin/env bash
# Copies each fuzz target's seed inputs (real files from the repository: tests/data, the presets,
# the example scenarios) into DIR/<target>/ (default build-fuzz/corpus), a scratch directory that
# libFuzzer may grow; the repository keeps no generated corpus (docs/fuzzing.md).
# Usage: fuzz/seed-corpora.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-build-fuzz/corpus}"

seed() {  # seed TARGET FILE...
  local target="$1"
  shift
  mkdir -p "$out/$target"
  cp "$@" "$out/$target/"
}

seed nccl_tests_log tests/data/nccl-tests/*.txt
seed perftest_log tests/data/samples/perftest_*.txt
seed nvidia_smi_topo tests/data/samples/nvsmi_topo_*.txt
seed nccl_topo_xml tests/data/samples/nccl_topo_*.xml
seed nccl_debug_log tests/data/samples/nccl_debug_*.txt
seed topology_json topologies/presets/*.json
seed calibration_json tests/data/calibration/*.json
# `run` scenarios only (moe-*.json are the moe command's, another format). Not capacity-32node.json:
# its 144 variants of 256 GPUs take 30 s to build under the fuzzers' sanitizers, 30 times -timeout.
seed scenario_json scenarios/straggler-2node.json scenarios/validate-*.json
seed moe_trace scenarios/moe-trace-sample.csv tests/data/moe/trace-sample.json
seed moe_scenario scenarios/moe-*.json
seed run_results tests/data/run-results/*.json
# Regression inputs (tests/data/fuzz-regressions/<target>/) seed the next run of their target too.
for dir in tests/data/fuzz-regressions/*/; do
  [ -d "$dir" ] || continue
  target="$(basename "$dir")"
  if compgen -G "$dir*" >/dev/null; then seed "$target" "$dir"*; fi
done
echo "seed-corpora: $(find "$out" -type f | wc -l) files under $out" >&2
