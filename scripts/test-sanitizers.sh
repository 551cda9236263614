#!/usr/bin/env bash
# Builds ccsim with AddressSanitizer and UndefinedBehaviorSanitizer (-DCCSIM_SANITIZE=ON) into
# build-asan/ and runs the test suite there; any sanitizer report fails the run (docs/sanitizers.md).
# Needs what scripts/setup.sh installs. Extra arguments go to ctest (e.g. -R Engine to run a subset).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs="$(nproc)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCCSIM_SANITIZE=ON >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null

# halt_on_error / -fno-sanitize-recover=all: the first report ends the process with a failure.
# Leak detection stays on. Should libsimgrid (not instrumented, not ccsim's) leak at exit, suppress
# it by name in a file given as LSAN_OPTIONS=suppressions=... (docs/sanitizers.md), never by
# turning ASan off.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:exitcode=86"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=87"
ctest --test-dir build-asan --output-on-failure -j"$jobs" --timeout 600 "$@"
