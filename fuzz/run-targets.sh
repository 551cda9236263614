#!/usr/bin/env bash
# Runs fuzz targets one after another, each for SECONDS (default 600, the issue's 10 minutes), with
# the limits docs/fuzzing.md states: 1 s per input, 2 GiB, inputs up to 16 KiB. Fork mode keeps a
# timeout as an artifact and goes on (a shared machine stalls processes for seconds; every timeout
# artifact is then replayed alone to tell a stall from a slow input); a crash, leak or sanitizer
# report still stops the target. Logs and artifacts: OUT/<target>.log, OUT/<target>-*.
# Usage: fuzz/run-targets.sh [-t SECONDS] [-o OUT] TARGET...   (TARGET: perftest_log, ...)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=600
out=build-fuzz/runs
while getopts "t:o:" opt; do
  case "$opt" in
    t) seconds="$OPTARG" ;;
    o) out="$OPTARG" ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: fuzz/run-targets.sh [-t SECONDS] [-o OUT] TARGET..." >&2; exit 2; }
mkdir -p "$out"
fuzz/seed-corpora.sh build-fuzz/corpus
for target in "$@"; do
  bin="build-fuzz/fuzz_$target"
  [ -x "$bin" ] || { echo "no $bin: build the fuzz targets first (docs/fuzzing.md)" >&2; exit 2; }
  echo "== $target: $seconds s from $(date -u +%H:%M:%S) UTC" >&2
  status=0
  "$bin" -fork=1 -ignore_timeouts=1 -max_total_time="$seconds" -timeout=1 -rss_limit_mb=2048 -max_len=16384 \
    -artifact_prefix="$out/$target-" "build-fuzz/corpus/$target" >"$out/$target.log" 2>&1 || status=$?
  echo "== $target: exit $status; $(grep -E '^#[0-9]+: cov' "$out/$target.log" | tail -1)" >&2
  for artifact in "$out/$target"-timeout-*; do
    [ -e "$artifact" ] || continue
    start=$(date +%s%N)
    "$bin" -runs=1 "$artifact" >/dev/null 2>&1 || true
    echo "   timeout artifact $(basename "$artifact") replays in $(( ($(date +%s%N) - start) / 1000000 )) ms" >&2
  done
done
