#!/usr/bin/env bash
# Builds ccsim (after scripts/setup.sh has installed the dependencies) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 300
