#!/usr/bin/env bash
# Installs ccsim's build dependencies from Debian packages (only what is missing) and builds it.
# chromium renders report.html in the tests (tests/test_report_html.cpp skips without it).
# Idempotent and quiet when everything is already there. Run as root on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make pkg-config libsimgrid-dev libboost-graph-dev nlohmann-json3-dev libgtest-dev libibverbs-dev chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
echo "setup: built build/ccsim" >&2
