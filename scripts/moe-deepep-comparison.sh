#!/usr/bin/env bash
# Prints ccsim's predictions for DeepEP's published benchmark settings (docs/moe.md "Against DeepEP's
# published numbers"): H800 nodes (dgx-h100 with 8 NVLinks per GPU, one 400 Gb/s CX-7 per GPU).
#  normal kernels: 4096 tokens, hidden 7168, 256 experts, top-8, top-4 groups (at most 4 nodes per token),
#                  FP8 dispatch, BF16 combine, EP 8, 16, 32, 64;
#  low-latency kernels: 128 tokens, same layer, EP 8 .. 256.
set -euo pipefail
cd "$(dirname "$0")/.."
ccsim=./build/ccsim
h800=(--topology dgx-h100 --set node.nvlink.links_per_gpu=8 --hidden 7168 --experts 256 --topk 8 --seed 1)
echo "kernel,ep,phase,time_us,bottleneck,bottleneck_GBps"
for ep in 8 16 32 64; do
  "$ccsim" moe "${h800[@]}" --ep "$ep" --tokens 4096 --max-nodes 4 --transport deepep-normal --format csv |
    awk -F, -v ep="$ep" 'NR > 1 { printf "normal,%s,%s,%s,%s,%s\n", ep, $2, $3, $5, $6 }'
done
for ep in 8 16 32 64 128 256; do
  "$ccsim" moe "${h800[@]}" --ep "$ep" --tokens 128 --transport deepep-ll --format json |
    python3 -c 'import json,sys; j=json.load(sys.stdin); ep=sys.argv[1]
for ph in ("dispatch","combine"): print("ll,%s,%s,%.1f,%s,%.1f" % (ep, ph, j[ph]["time_us"], j[ph]["bottleneck"], j[ph]["bottleneck_GBps"]))' "$ep"
done
