#!/usr/bin/env bash
# Validates every real nccl-tests log under tests/data/nccl-tests against ccsim's prediction from a
# preset and --set flags that describe the log's hardware as its source states it (nothing fitted to
# the log), and prints the table of docs/accuracy.md: per log the median error of the latency side
# and of the bandwidth side (measured time / predicted time - 1).
# Usage: bash scripts/accuracy.sh [CCSIM] [--log-nccl-versions | --calibrated-from-another-run | --fitted-links]
# --log-nccl-versions: only the logs whose NCCL version their source states, within the tuners ccsim
# models (docs/nccl-model.md "NCCL versions"), each predicted with --nccl-version of that version.
# --calibrated-from-another-run: pairs of logs from one machine or cluster; each log predicted with
# the calibration `ccsim calibrate` fits to the other (issue 11 allows "a calibration that came from a
# different run"; docs/accuracy.md "Calibrated from another run").
# --fitted-links: the same pairs and others of one node or cluster across collectives; each log
# predicted with the settings `ccsim calibrate --topology` fits to the other through the model
# (docs/accuracy.md "The description fitted through the model").
# --from-log: every log validated as a new user would, without describing the hardware: only the flags
# validate asks for when the table cannot tell (--collective, --ranks) and the closed form for the runs of
# over 100 ranks; the hardware column is what validate took from the log (docs/accuracy.md "From the log
# alone").
set -uo pipefail
cd "$(dirname "$0")/.."
ccsim=./build/ccsim
with_versions=0
cross_run=0
fitted_links=0
from_log=0
for a in "$@"; do
  case "$a" in
    --log-nccl-versions) with_versions=1 ;;
    --calibrated-from-another-run) cross_run=1 ;;
    --fitted-links) fitted_links=1 ;;
    --from-log) from_log=1 ;;
    *) ccsim=$a ;;
  esac
done
d=tests/data/nccl-tests

# The NCCL version each log's source states (printed in the log, or named by its README or chart);
# logs outside 2.19-2.30 (aws-p4d 2.8.3, dgx-a100-4gpu 2.16.2, Sheffield's 2.4.2 and 2.8.3) and logs that do not state one are absent.
declare -A nccl_version=(
  ["h100x16-2node-ndr-allreduce.txt"]=2.26.2                 # printed
  ["gcp-a3high-2node-tcpx-allreduce-gke.txt"]=2.19.4         # the GKE chart's TCPX image (docs/accuracy.md)
  ["gcp-a4-b200-2node-roce-allgather-nccl2.26.6.txt"]=2.26.6  # printed
  ["gcp-a4-b200-2node-vm-allgather-nccl2.25.1.txt"]=2.25.1  # printed
  ["coreweave-gb200-nvl72-1rack-72gpu-allreduce.txt"]=2.26.2   # CoreWeave's README
  ["coreweave-gb200-nvl72-2rack-144gpu-allreduce.txt"]=2.26.2  # CoreWeave's README
  ["coreweave-gb200-nvl72-20rack-1440gpu-allreduce.txt"]=2.26.2  # CoreWeave's README
  ["oci-gb200-32node-128gpu-2rack-allreduce-nccl2.29.2.txt"]=2.29.2  # printed
  ["hgx-h200-2node-spectrumx-roce-allreduce-nccl2.30.4.txt"]=2.30.4  # printed
  ["gcp-a3ultra-h200-2node-roce-allgather-nccl2.26.6.txt"]=2.26.6  # printed
  ["h100x8-1node-sendrecv-nccl2.29.2.txt"]=2.29.2  # printed
  ["a100x2-leonardo-nv4-sendrecv-nccl2.22.3.txt"]=2.22.3  # printed
  ["h100-1node-voltagepark-allreduce-g8-nccl2.24.3.txt"]=2.24.3  # printed (nccl-library=22403)
  ["h100x32-4node-ndr-allreduce-nccl2.26.2.txt"]=2.26.2  # printed
  ["h100x32-4node-voltagepark-ib-allreduce-nccl2.24.3.txt"]=2.24.3  # printed
  ["rtx5090-x8-epyc-p2p-allreduce-g8-nccl2.29.7.txt"]=2.29.7  # printed (nccl-library=22907)
  ["h100x8-1node-allgather-ring-g8-nccl2.26.2.txt"]=2.26.2  # printed
  ["h100x8-1node-reducescatter-ring-g8-nccl2.26.2.txt"]=2.26.2  # printed
  ["h100x8-1node-allgather-nccl2.29.2.txt"]=2.29.2  # printed (nccl-library=22902)
  ["h100x8-1node-reducescatter-nccl2.29.2.txt"]=2.29.2  # printed
  ["h100x8-1node-alltoall-nccl2.29.2.txt"]=2.29.2  # printed
  ["h100x80-10node-allgather-nccl2.29.2.txt"]=2.29.2  # printed
  ["h100x80-10node-reducescatter-nccl2.29.2.txt"]=2.29.2  # printed
  ["h100x80-10node-alltoall-nccl2.29.2.txt"]=2.29.2  # printed
  ["oci-h100x16-2node-roce-allreduce-nccl2.21.5.txt"]=2.21.5  # stated (NGC TensorFlow 24.06)
  ["gh200x2-2node-1gpu-alps-slingshot-allreduce-nccl2.30.7.txt"]=2.30.7  # printed
  ["oci-h200x16-2node-roce-allreduce-nccl2.27.5.txt"]=2.27.5  # printed
  ["aws-p4d-2node-efa-allreduce-ofi1.13.2-nccl2.23.4.txt"]=2.23.4  # printed
  ["coreweave-h200x16-2node-ib-allreduce-graph-symreg-nccl2.30.4.txt"]=2.30.4  # printed (nccl-library=23004)
  ["coreweave-h200x16-2node-ib-allreduce-nvlsoff-graph-symreg-nccl2.30.4.txt"]=2.30.4  # printed
  ["coreweave-h200x16-2node-ib-alltoall-graph-symreg-nccl2.30.4.txt"]=2.30.4  # printed
  ["azure-ndv5-h100x16-2node-ib-allreduce-nccl2.29.7.txt"]=2.29.7  # printed (nccl-library=22907)
  ["together-b200x64-8node-ib-sendrecv-nccl2.29.7.txt"]=2.29.7  # printed
  ["together-b200x128-16node-ib-sendrecv-nccl2.29.7.txt"]=2.29.7  # printed
  ["oci-gb300-1tray-4gpu-allreduce-nccl2.28.7.txt"]=2.28.7  # printed
  ["oci-gb300-2tray-8gpu-allreduce-nccl2.28.7.txt"]=2.28.7  # printed
  ["oci-gb300-16tray-64gpu-allreduce-nccl2.28.7.txt"]=2.28.7  # printed
  ["oke-gb300-4tray-16gpu-mnnvl-allreduce-nccl2.29.3.txt"]=2.29.3  # printed
  ["oci-gb300-32tray-128gpu-2rack-allreduce-nccl2.28.7.txt"]=2.28.7  # printed
  ["lambda-b200x16-2node-ib-allreduce-dstack-nccl2.26.2.txt"]=2.26.2  # printed
  ["lambda-h100x4-vm-nv18-allreduce-g4-nccl2.26.2.txt"]=2.26.2  # printed
  ["gcp-a3ultra-h200-2node-1gpu-1nic-allgather-nccl2.25.1.txt"]=2.25.1  # printed
  ["gcp-a4xmax-gb300-2node-crossdomain-allgather-nccl2.28.9.txt"]=2.28.9  # printed (nccl-library=22809)
  ["aws-g7e-rtxpro6000bw-2node-1gpu-efa-allreduce-nccl2.29.2.txt"]=2.29.2  # printed (NCCL INFO)
  ["together-b200x16-2node-ib-sendrecv-nccl2.29.7.txt"]=2.29.7  # printed
  ["together-b200x32-4node-ib-sendrecv-nccl2.29.7.txt"]=2.29.7  # printed
  ["snellius-h100x8-2node-4gpu-4xndr200-ib-allgather-nccl2.22.3.txt"]=2.22.3  # printed
  ["snellius-h100x8-2node-4gpu-4xndr200-ib-reducescatter-nccl2.22.3.txt"]=2.22.3  # printed
  ["snellius-h100x8-2node-4gpu-4xndr200-ib-allreduce-nccl2.22.3.txt"]=2.22.3  # printed
  ["h100x32-4node-voltagepark-ib-allgather-nccl2.24.3.txt"]=2.24.3  # printed
)

# log | hardware flags (what the log's source says about the machine), and --algo/--proto where the
# source states the run's NCCL_ALGO/NCCL_PROTO (Google's GPUDirect-TCPX and TCPXO configurations).
# The GB200 excerpts print only the last device line, so their ranks and trays are given; 144 ranks
# and more run the closed form (NCCL's own model of its choice; docs/accuracy.md says why).
cases=(
  "a100x8-1node-allreduce.txt|--topology hgx-a100"
  "a100x8-1node-allreduce-mpi.txt|--topology hgx-a100"
  "a100x8-superbench-allreduce-g8.txt|--topology hgx-a100"
  "a100x8-superbench-reducescatter-g8.txt|--topology hgx-a100"
  "a100x8-superbench-broadcast-g8.txt|--topology hgx-a100"
  "a100x8-superbench-reduce-g8.txt|--topology hgx-a100"
  "a100x8-galvatron-allreduce-g8.txt|--topology hgx-a100"
  "oci-bm-gpu4.8-a100x8-1node-allreduce-g8.txt|--topology hgx-a100"
  "h100x16-2node-ndr-allreduce.txt|--topology dgx-h100"
  "rtx2080ti-x2-pcie-noP2P-allreduce.txt|--topology pcie-gen4-8gpu --set node.gpu.count=2 --set node.pcie.generation=3 --set node.cpu.sockets=1 --set node.pcie.switches_per_socket=1 --set node.nic.count=0 --set node.pcie.p2p=none"
  "nccltests_alltoall_1.txt|--topology dgx-h100"
  "nccltests_all_gather_2.txt|--topology hgx-a100"
  "aws-p4d-2node-efa-allreduce-nccl2.8.3.txt|--topology hgx-a100 --set node.nic.count=4 --set node.nic.Gbps=100 --set node.nic.transport=efa --set node.nic.latency_us=75"
  "oci-bm-gpu4.8-a100-2node-roce-allreduce.txt|--topology oci-a100"
  "gcp-a3high-2node-tcpx-allgather-dstack.txt|--topology gcp-a3-high --algo Ring --proto Simple"
  "gcp-a3high-2node-tcpx-allreduce-gke.txt|--topology gcp-a3-high --algo Ring --proto Simple --env NCCL_MIN_NCHANNELS=12 --env NCCL_MAX_NCHANNELS=12"
  "gcp-a3mega-2node-tcpxo-allgather-dstack.txt|--topology gcp-a3-mega --algo Ring,Tree --proto Simple,LL128"
  "gcp-a3mega-2node-allreduce-8B-8G.txt|--topology gcp-a3-mega"
  "gcp-a4-b200-2node-roce-allgather-nccl2.26.6.txt|--topology dgx-b200 --set node.nic.transport=roce"
  "dgx-a100-4gpu-p2p-disabled-shm-allreduce.txt|--topology hgx-a100 --set node.gpu.count=4 --set node.nic.count=0 --env NCCL_P2P_DISABLE=1"
  "a40x4-nvlink-pairs-sys-p2p-disabled-allreduce.txt|--topology pcie-gen4-8gpu --ranks 4 --set node.gpu.count=4 --set node.nic.count=0 --env NCCL_P2P_DISABLE=1"
  "rtx4090-x2-pcie-allreduce-g2.txt|--topology pcie-gen4-8gpu --set node.gpu.count=2 --set node.cpu.sockets=1 --set node.pcie.switches_per_socket=1 --set node.nic.count=0 --set node.pcie.p2p=none"
  "rtx4090-x4-pcie-allreduce-g4.txt|--topology pcie-gen4-8gpu --set node.gpu.count=4 --set node.cpu.sockets=1 --set node.pcie.switches_per_socket=2 --set node.nic.count=0 --set node.pcie.p2p=none"
  "coreweave-gb200-nvl72-1rack-72gpu-allreduce.txt|--topology gb200-nvl72 --ranks 72 --nodes 18"
  "coreweave-gb200-nvl72-2rack-144gpu-allreduce.txt|--topology gb200-nvl72 --ranks 144 --nodes 36 --model closed-form"
  "coreweave-gb200-nvl72-20rack-1440gpu-allreduce.txt|--topology gb200-nvl72 --ranks 1440 --nodes 360 --model closed-form"
  "oci-gb200-32node-128gpu-2rack-allreduce-nccl2.29.2.txt|--topology gb200-nvl72 --ranks 128 --nodes 32 --model closed-form --set node.nvlink.domain_size=16 --set node.nic.count=8 --set node.nic.Gbps=200 --set node.nic.transport=roce --set node.nvlink.nvls=false"
  "oci-gb300-1tray-4gpu-allreduce-nccl2.28.7.txt|--topology gb200-nvl72 --nodes 1 --set node.nvlink.domain_size=1 --env NCCL_BUFFSIZE=16777216"
  "oci-gb300-2tray-8gpu-allreduce-nccl2.28.7.txt|--topology gb200-nvl72 --ranks 8 --nodes 2 --set node.nvlink.domain_size=2 --set node.nic.count=8 --set node.nic.Gbps=400 --set node.nic.transport=roce --env NCCL_BUFFSIZE=16777216"
  "oci-gb300-16tray-64gpu-allreduce-nccl2.28.7.txt|--topology gb200-nvl72 --ranks 64 --nodes 16 --set node.nvlink.domain_size=16 --set node.nic.count=8 --set node.nic.Gbps=400 --set node.nic.transport=roce --env NCCL_BUFFSIZE=16777216"
  "oke-gb300-4tray-16gpu-mnnvl-allreduce-nccl2.29.3.txt|--topology gb200-nvl72 --set node.nvlink.domain_size=4 --env NCCL_NVLS_ENABLE=0 --env NCCL_MIN_CTAS=16"
  "oci-gb300-1tray-4gpu-alltoall-nccl2.28.7.txt|--topology gb200-nvl72 --set node.nvlink.domain_size=1 --set node.nic.count=0"
  "oci-gb300-2tray-8gpu-alltoall-nccl2.28.7.txt|--topology gb200-nvl72 --ranks 8 --nodes 2 --set node.nvlink.domain_size=2 --set node.nic.count=8 --set node.nic.Gbps=400 --set node.nic.transport=roce --env NCCL_BUFFSIZE=16777216"
  "oci-gb300-16tray-64gpu-alltoall-nccl2.28.7.txt|--topology gb200-nvl72 --ranks 64 --nodes 16 --set node.nvlink.domain_size=16 --set node.nic.count=8 --set node.nic.Gbps=400 --set node.nic.transport=roce --env NCCL_BUFFSIZE=16777216"
  "oci-gb300-32tray-128gpu-2rack-alltoall-nccl2.28.7.txt|--topology gb200-nvl72 --ranks 128 --nodes 32 --set node.nvlink.domain_size=16 --set node.nic.count=8 --set node.nic.Gbps=400 --set node.nic.transport=roce --env NCCL_BUFFSIZE=16777216"
  "oci-gb300-32tray-128gpu-2rack-allreduce-nccl2.28.7.txt|--topology gb200-nvl72 --ranks 128 --nodes 32 --model closed-form --set node.nvlink.domain_size=16 --set node.nic.count=8 --set node.nic.Gbps=400 --set node.nic.transport=roce --env NCCL_BUFFSIZE=16777216"
  "aws-p5-2node-efa-allreduce.txt|--topology aws-p5"
  "hgx-h200-2node-spectrumx-roce-allreduce-nccl2.30.4.txt|--topology dgx-h200 --set node.nic.transport=roce"
  "gcp-a3ultra-h200-2node-roce-allgather-nccl2.26.6.txt|--topology dgx-h200 --set node.nic.transport=roce"
  "h800-1node-broadcast-g8-nccl2.18.3.txt|--topology hgx-h800"
  "dgx-h100-1node-allreduce-mpi-dgxc-benchmarking.txt|--topology dgx-h100"
  "h100-1node-voltagepark-allreduce-g8-nccl2.24.3.txt|--topology dgx-h100"
  "h100x32-4node-ndr-allreduce-nccl2.26.2.txt|--topology dgx-h100"
  "h100x32-4node-voltagepark-ib-allreduce-nccl2.24.3.txt|--topology dgx-h100"
  "h100x64-8node-ib-allreduce.txt|--topology dgx-h100"
  "h100x64-8node-ib-allreduce-minctas24.txt|--topology dgx-h100 --env NCCL_MIN_CTAS=24 --env NCCL_IB_QPS_PER_CONNECTION=2"
  "h100x16-2node-ib-allreduce-ring-minctas24.txt|--topology dgx-h100 --algo Ring --env NCCL_MIN_CTAS=24 --env NCCL_IB_QPS_PER_CONNECTION=2"
  "a100x8-1node-sendrecv-g8.txt|--topology hgx-a100 --collective sendrecv --ranks 8"
  "rtx2080ti-x2-pcie-noP2P-allgather.txt|--topology pcie-gen4-8gpu --set node.gpu.count=2 --set node.pcie.generation=3 --set node.cpu.sockets=1 --set node.pcie.switches_per_socket=1 --set node.nic.count=0 --set node.pcie.p2p=none"
  "rtx2080ti-x2-pcie-noP2P-broadcast.txt|--topology pcie-gen4-8gpu --set node.gpu.count=2 --set node.pcie.generation=3 --set node.cpu.sockets=1 --set node.pcie.switches_per_socket=1 --set node.nic.count=0 --set node.pcie.p2p=none"
  "rtx2080ti-x2-pcie-noP2P-reduce.txt|--topology pcie-gen4-8gpu --set node.gpu.count=2 --set node.pcie.generation=3 --set node.cpu.sockets=1 --set node.pcie.switches_per_socket=1 --set node.nic.count=0 --set node.pcie.p2p=none"
  "rtx2080ti-x2-pcie-noP2P-alltoall.txt|--topology pcie-gen4-8gpu --set node.gpu.count=2 --set node.pcie.generation=3 --set node.cpu.sockets=1 --set node.pcie.switches_per_socket=1 --set node.nic.count=0 --set node.pcie.p2p=none"
  "rtx4090-x8-epyc-shm-allreduce-g8.txt|--topology pcie-gen4-8gpu --set node.nic.count=0 --set node.pcie.p2p=none --set node.pcie.switches_per_socket=0 --set node.cpu.vendor=amd"
  "rtx5090-x8-epyc-p2p-allreduce-g8-nccl2.29.7.txt|--topology pcie-gen4-8gpu --set node.nic.count=0 --set node.pcie.generation=5 --set node.pcie.switches_per_socket=0 --set node.cpu.vendor=amd --set node.gpu.arch=sm120 --env NCCL_P2P_LEVEL=SYS"
  "v100x8-hybrid-cube-mesh-allreduce-g8.txt|--topology dgx1-v100 --set node.nvlink.peers=[[0,1,1],[0,2,1],[0,3,2],[0,6,2],[1,2,2],[1,3,1],[1,7,2],[2,3,2],[2,4,1],[3,5,1],[4,5,2],[4,6,1],[4,7,2],[5,6,2],[5,7,1],[6,7,1]]"
  "oci-bm-gpu3.8-v100x8-allreduce-1g-g8.txt|--topology dgx1-v100"
  "abci-v100x4-nvlink-allreduce-nccl2.8.4.txt|--topology dgx1-v100 --set node.gpu.count=4 --set node.nic.count=0 --set node.nvlink.peers=[[0,1,2],[0,2,2],[0,3,2],[1,2,2],[1,3,2],[2,3,2]]"
  "dgx2-v100x12-allreduce-g12.txt|--topology dgx2-v100 --set node.gpu.count=12 --set node.nic.count=0"
  "dgx2-v100x12-broadcast-g12.txt|--topology dgx2-v100 --set node.gpu.count=12 --set node.nic.count=0"
  "dgx2-v100x12-reduce-g12.txt|--topology dgx2-v100 --set node.gpu.count=12 --set node.nic.count=0"
  "a100x4-sxm4-nvlink-mesh-allreduce-g4.txt|--topology hgx-a100 --set node.gpu.count=4 --set node.nic.count=0 --set node.nvlink.nvswitch=false --set node.nvlink.peers=[[0,1,4],[0,2,4],[0,3,4],[1,2,4],[1,3,4],[2,3,4]]"
  "h100x8-1node-allgather-ring-g8-nccl2.26.2.txt|--topology dgx-h100 --algo Ring --env NCCL_NVLS_ENABLE=0"
  "h100x8-1node-reducescatter-ring-g8-nccl2.26.2.txt|--topology dgx-h100 --algo Ring --env NCCL_NVLS_ENABLE=0"
  "h100x8-1node-allgather-nccl2.29.2.txt|--topology dgx-h100"
  "h100x8-1node-reducescatter-nccl2.29.2.txt|--topology dgx-h100"
  "h100x8-1node-alltoall-nccl2.29.2.txt|--topology dgx-h100"
  "h100x16-2node-alltoall.txt|--topology dgx-h100"
  "h100x80-10node-allgather-nccl2.29.2.txt|--topology dgx-h100"
  "h100x80-10node-reducescatter-nccl2.29.2.txt|--topology dgx-h100"
  "h100x80-10node-alltoall-nccl2.29.2.txt|--topology dgx-h100"
  "crusoe-a100x16-2node-ib-allreduce-dstack.txt|--topology hgx-a100"
  "nebius-h100x16-2node-ib-allreduce-dstack.txt|--topology dgx-h100"
  "oci-h100x16-2node-roce-allreduce-nccl2.21.5.txt|--topology oci-h100"
  "oci-h200x16-2node-roce-allreduce-nccl2.27.5.txt|--topology dgx-h200 --set node.nic.transport=roce"
  "gh200x8-2node-alps-slingshot-allreduce.txt|--topology gh200-quad --set node.gpu.c2c=false --set node.nic.transport=roce"
  "gh200x8-2node-santis-slingshot-allreduce.txt|--topology gh200-quad --set node.gpu.c2c=false --set node.nic.transport=roce"
  "gh200x2-2node-1gpu-alps-slingshot-allreduce-nccl2.30.7.txt|--topology gh200-quad --set node.gpu.count=1 --set node.nvlink.peers=null --set node.nic.count=1 --set node.nic.transport=roce"
  "gcp-a4-b200-2node-vm-allgather-nccl2.25.1.txt|--topology dgx-b200 --set node.nic.transport=roce --collective all_gather"
  "gcp-a4-b200-2node-gke-allgather.txt|--topology dgx-b200 --set node.nic.transport=roce --collective all_gather"
  "h20x8-1node-allreduce-g8.txt|--topology dgx-h100"
  "h100x8-1node-sendrecv-nccl2.29.2.txt|--topology dgx-h100"
  "h100x16-2node-sendrecv.txt|--topology dgx-h100"
  "a100x2-leonardo-nv4-sendrecv-nccl2.22.3.txt|--topology hgx-a100 --set node.gpu.count=2 --set node.nic.count=0 --set node.nvlink.nvswitch=false --set node.nvlink.peers=[[0,1,4]] --env NCCL_P2P_LEVEL=NVL --env NCCL_BUFFSIZE=4194304"
  "gcp-a4-b200-1node-allreduce-g8-gib-tuner.txt|--topology dgx-b200 --env NCCL_NVLS_CHUNKSIZE=524288"
  "gcp-a4-b200-2node-gib-allreduce-gib-tuner.txt|--topology dgx-b200 --set node.nic.transport=roce --ranks 16 --env NCCL_NVLS_CHUNKSIZE=524288 --env NCCL_IB_QPS_PER_CONNECTION=4 --env NCCL_P2P_NET_CHUNKSIZE=131072"
  "lambda-b200x16-2node-ib-allreduce-dstack-nccl2.26.2.txt|--topology dgx-b200"
  "lambda-h100x4-vm-nv18-allreduce-g4-nccl2.26.2.txt|--topology dgx-h100 --set node.gpu.count=4 --set node.nic.count=0"
  "gcp-a3ultra-h200-2node-1gpu-1nic-allgather-nccl2.25.1.txt|--topology dgx-h200 --set node.gpu.count=1 --set node.nic.count=1 --set node.nic.transport=roce --collective all_gather"
  "gcp-a3ultra-h200-2node-gke-allgather.txt|--topology dgx-h200 --set node.nic.transport=roce --collective all_gather"
  "gcp-a4xmax-gb300-2node-crossdomain-allgather-nccl2.28.9.txt|--topology gb200-nvl72 --set node.nvlink.domain_size=1 --set node.nic.count=8 --set node.nic.Gbps=400 --set node.nic.transport=roce"
  "azure-nc12sv3-v100x2-pcie-allreduce-g2.txt|--topology pcie-gen4-8gpu --set node.gpu.count=2 --set node.pcie.generation=3 --set node.cpu.sockets=1 --set node.pcie.switches_per_socket=0 --set node.nic.count=0"
  "azure-nc12sv3-v100x2-pcie-allreduce-mpi.txt|--topology pcie-gen4-8gpu --set node.gpu.count=2 --set node.pcie.generation=3 --set node.cpu.sockets=1 --set node.pcie.switches_per_socket=0 --set node.nic.count=0 --env NCCL_P2P_LEVEL=NVL"
  "sheffield-v100pcie-x4-allreduce-g4-nccl2.4.2.txt|--topology pcie-gen4-8gpu --set node.gpu.count=4 --set node.pcie.generation=3 --set node.cpu.sockets=1 --set node.pcie.switches_per_socket=1 --set node.nic.count=0"
  "sheffield-v100pcie-x4-allreduce-g4-nccl2.8.3.txt|--topology pcie-gen4-8gpu --set node.gpu.count=4 --set node.pcie.generation=3 --set node.cpu.sockets=1 --set node.pcie.switches_per_socket=1 --set node.nic.count=0"
  "aws-g7e-rtxpro6000bw-2node-1gpu-efa-allreduce-nccl2.29.2.txt|--topology pcie-gen4-8gpu --set node.gpu.count=1 --set node.gpu.arch=sm120 --set node.pcie.generation=5 --set node.nic.count=1 --set node.nic.Gbps=100 --set node.nic.transport=efa --set node.nic.gpudirect_rdma=false --set node.nic.plugin_latency_us=35 --proto Simple --env NCCL_BUFFSIZE=8388608 --env NCCL_P2P_NET_CHUNKSIZE=524288"
  "together-b200x16-2node-ib-sendrecv-nccl2.29.7.txt|--topology dgx-b200 --env NCCL_NVLS_ENABLE=0"
  "together-b200x32-4node-ib-sendrecv-nccl2.29.7.txt|--topology dgx-b200 --env NCCL_NVLS_ENABLE=0"
  "gke-h200-2node-1gpu-1nic-dranet-mpijob-allreduce.txt|--topology dgx-h200 --set node.gpu.count=1 --set node.nic.count=1 --set node.nic.transport=roce"
  "snellius-h100x8-2node-4gpu-4xndr200-ib-allgather-nccl2.22.3.txt|--topology dgx-h100 --set node.gpu.count=4 --set node.nvlink.nvswitch=false --set node.nvlink.nvls=false --set node.nvlink.peers=[[0,1,6],[0,2,6],[0,3,6],[1,2,6],[1,3,6],[2,3,6]] --set node.nic.count=4 --set node.nic.Gbps=200"
  "snellius-h100x8-2node-4gpu-4xndr200-ib-reducescatter-nccl2.22.3.txt|--topology dgx-h100 --set node.gpu.count=4 --set node.nvlink.nvswitch=false --set node.nvlink.nvls=false --set node.nvlink.peers=[[0,1,6],[0,2,6],[0,3,6],[1,2,6],[1,3,6],[2,3,6]] --set node.nic.count=4 --set node.nic.Gbps=200"
  "snellius-h100x8-2node-4gpu-4xndr200-ib-allreduce-nccl2.22.3.txt|--topology dgx-h100 --set node.gpu.count=4 --set node.nvlink.nvswitch=false --set node.nvlink.nvls=false --set node.nvlink.peers=[[0,1,6],[0,2,6],[0,3,6],[1,2,6],[1,3,6],[2,3,6]] --set node.nic.count=4 --set node.nic.Gbps=200"
  "h100x32-4node-voltagepark-ib-allgather-nccl2.24.3.txt|--topology dgx-h100"
  "aws-p4d-2node-efa-allreduce-ofi1.13.2-nccl2.23.4.txt|--topology hgx-a100 --set node.nic.count=4 --set node.nic.Gbps=100 --set node.nic.transport=efa --set node.nic.latency_us=75"
  "coreweave-h200x16-2node-ib-allreduce-graph-symreg-nccl2.30.4.txt|--topology dgx-h200"
  "coreweave-h200x16-2node-ib-allreduce-nvlsoff-graph-symreg-nccl2.30.4.txt|--topology dgx-h200 --env NCCL_NVLS_ENABLE=0"
  "coreweave-h200x16-2node-ib-alltoall-graph-symreg-nccl2.30.4.txt|--topology dgx-h200"
  "azure-ndv5-h100x16-2node-ib-allreduce-nccl2.29.7.txt|--topology azure-nd-h100-v5"
  "together-b200x64-8node-ib-sendrecv-nccl2.29.7.txt|--topology dgx-b200 --env NCCL_NVLS_ENABLE=0"
  "together-b200x128-16node-ib-sendrecv-nccl2.29.7.txt|--topology dgx-b200 --env NCCL_NVLS_ENABLE=0"
  "sm02-a100pcie40gbx4-1node-allreduce-g4.txt|--topology pcie-gen4-8gpu --set node.gpu.count=4 --set node.gpu.arch=sm80 --set node.nic.count=0 --set node.pcie.switches_per_socket=0"
)
# The flags hold JSON arrays (node.nvlink.peers): no pathname expansion of their brackets.
set -f

# Prints one table row from `ccsim validate --format json` (file $3): log $1, flags $2, and an
# optional first column $4 (the run the calibration came from).
row() {
  python3 - "$1" "$2" "$3" "${4:-}" <<'PY'
import json, sys
r = json.load(open(sys.argv[3]))
run = r["runs"][0]
def side(s):
    return "%d, %+.0f%%" % (s["sizes"], 100 * s["median_error"]) if s["sizes"] else "none"
causes = ", ".join(c["id"] for c in run.get("causes", []))
first = "%s | " % sys.argv[4] if sys.argv[4] else ""
print("| %s%s | `%s` | %s, %d | %s | %s | %s |" % (first, sys.argv[1], sys.argv[2], run["log"]["collective"],
      run["log"]["ranks"], side(run["latency"]), side(run["bandwidth"]), causes))
PY
}

# One line per log for the summary: the latency and bandwidth sides' median errors ("none" where a
# side has no size) from `ccsim validate --format json` (file $1).
medians() {
  python3 - "$1" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
print(" ".join(repr(run[s]["median_error"]) if run[s]["sizes"] else "none" for s in ("latency", "bandwidth")))
PY
}

# How many logs meet issue 11's targets (bandwidth side within 10%, latency side within 20%, by median).
summary() {
  python3 - "$1" <<'PY'
import sys
lat = [l.split()[0] for l in open(sys.argv[1])]
bw = [l.split()[1] for l in open(sys.argv[1])]
def met(values, limit):
    v = [abs(float(x)) for x in values if x != "none"]
    return sum(x <= limit for x in v), len(v)
print()
print("Within issue 11's targets: bandwidth side %d of %d logs (median within 10%%), latency side %d of %d "
      "(median within 20%%; a log whose sizes all lie past the knee has none)." % (met(bw, 0.10) + met(lat, 0.20)))
PY
}

# The flags of a case that do not describe the hardware: what validate asks for when the log cannot
# tell (--collective, --ranks), --model closed-form (the engine's replay of 128 ranks and more is slow)
# and --nccl-version (with --log-nccl-versions).
log_only_flags() {
  local out="" prev=""
  for f in $1; do
    case "$prev" in --collective|--ranks|--nccl-version) out="$out $prev $f" ;; esac
    [ "$prev $f" = "--model closed-form" ] && out="$out --model closed-form"
    prev=$f
  done
  echo "${out# }"
}

# The hardware validate took (the json's "hardware" line without its reasons), for --from-log's rows.
hardware_taken() {
  python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["hardware"]; print(h.split(" (")[0])' "$1"
}

flags_of() {
  local c
  for c in "${cases[@]}"; do
    if [ "${c%%|*}" = "$1" ]; then echo "${c#*|}"; return; fi
  done
}

# Pairs of runs of one machine or cluster (the same source, the same host names or the same
# provider's machine type, as each log's header says): calibrated from the first, predicted for the
# second, both ways. Ring collectives only (ccsim calibrate fits an equivalent ring). A third field
# holds what `ccsim calibrate` needs and the logs do not say (their collective, ranks and nodes).
cross_runs=(
  "h100x80-10node-allgather-nccl2.29.2.txt|h100x80-10node-reducescatter-nccl2.29.2.txt"
  "h100x8-1node-allgather-nccl2.29.2.txt|h100x8-1node-reducescatter-nccl2.29.2.txt"
  "h100x8-1node-allgather-ring-g8-nccl2.26.2.txt|h100x8-1node-reducescatter-ring-g8-nccl2.26.2.txt"
  "a100x8-superbench-allreduce-g8.txt|a100x8-superbench-reducescatter-g8.txt"
  "a100x8-1node-allreduce-mpi.txt|a100x8-1node-allreduce.txt"
  "rtx2080ti-x2-pcie-noP2P-allreduce.txt|rtx2080ti-x2-pcie-noP2P-allgather.txt"
  "h100x16-2node-ib-allreduce-ring-minctas24.txt|h100x64-8node-ib-allreduce-minctas24.txt"
  "gh200x8-2node-alps-slingshot-allreduce.txt|gh200x8-2node-santis-slingshot-allreduce.txt"
  "gcp-a4-b200-2node-vm-allgather-nccl2.25.1.txt|gcp-a4-b200-2node-gke-allgather.txt|--collective all_gather --ranks 16 --nodes 2"
  "gcp-a3ultra-h200-2node-roce-allgather-nccl2.26.6.txt|gcp-a3ultra-h200-2node-gke-allgather.txt|--collective all_gather --ranks 16 --nodes 2"
  "azure-nc12sv3-v100x2-pcie-allreduce-mpi.txt|azure-nc12sv3-v100x2-pcie-allreduce-g2.txt"
  "sheffield-v100pcie-x4-allreduce-g4-nccl2.4.2.txt|sheffield-v100pcie-x4-allreduce-g4-nccl2.8.3.txt"
  "snellius-h100x8-2node-4gpu-4xndr200-ib-allgather-nccl2.22.3.txt|snellius-h100x8-2node-4gpu-4xndr200-ib-reducescatter-nccl2.22.3.txt"
)

# For --fitted-links, besides the pairs above: runs of one node or cluster in collectives an equivalent
# ring cannot carry (all-to-all, send/recv, broadcast, reduce).
model_fit_pairs=(
  "h100x8-1node-alltoall-nccl2.29.2.txt|h100x8-1node-allgather-nccl2.29.2.txt"
  "h100x8-1node-alltoall-nccl2.29.2.txt|h100x8-1node-sendrecv-nccl2.29.2.txt"
  "h100x80-10node-alltoall-nccl2.29.2.txt|h100x80-10node-allgather-nccl2.29.2.txt"
  "h100x16-2node-alltoall.txt|h100x16-2node-sendrecv.txt"
  "rtx2080ti-x2-pcie-noP2P-allreduce.txt|rtx2080ti-x2-pcie-noP2P-alltoall.txt"
  "rtx2080ti-x2-pcie-noP2P-allreduce.txt|rtx2080ti-x2-pcie-noP2P-broadcast.txt"
  "oci-gb300-2tray-8gpu-allreduce-nccl2.28.7.txt|oci-gb300-2tray-8gpu-alltoall-nccl2.28.7.txt"
  "oci-gb300-16tray-64gpu-allreduce-nccl2.28.7.txt|oci-gb300-16tray-64gpu-alltoall-nccl2.28.7.txt"
  "together-b200x16-2node-ib-sendrecv-nccl2.29.7.txt|together-b200x32-4node-ib-sendrecv-nccl2.29.7.txt"
  "snellius-h100x8-2node-4gpu-4xndr200-ib-allgather-nccl2.22.3.txt|snellius-h100x8-2node-4gpu-4xndr200-ib-allreduce-nccl2.22.3.txt"
  "coreweave-h200x16-2node-ib-allreduce-nvlsoff-graph-symreg-nccl2.30.4.txt|coreweave-h200x16-2node-ib-alltoall-graph-symreg-nccl2.30.4.txt"
  "dgx-a100-4gpu-p2p-disabled-shm-allreduce.txt|sm02-a100pcie40gbx4-1node-allreduce-g4.txt"
)

if [ $cross_run -eq 1 ] || [ $fitted_links -eq 1 ]; then
  if [ $fitted_links -eq 1 ]; then
    pairs=("${cross_runs[@]}" "${model_fit_pairs[@]}")
    echo "| fitted from | fitted settings | predicted log | hardware flags | collective, ranks | latency side: sizes, median error | bandwidth side: sizes, median error | causes |"
    echo "|---|---|---|---|---|---|---|---|"
  else
    pairs=("${cross_runs[@]}")
    echo "| calibrated from | predicted log | hardware flags | collective, ranks | latency side: sizes, median error | bandwidth side: sizes, median error | causes |"
    echo "|---|---|---|---|---|---|---|"
  fi
  work=$(mktemp -d)
  for p in "${pairs[@]}"; do
    IFS='|' read -r a b cal_flags <<<"$p"
    for dir in "$a|$b" "$b|$a"; do
      from=${dir%%|*}
      to=${dir#*|}
      flags=$(flags_of "$to")
      # The ring fit takes what the logs do not say; the fit through the model the log's hardware.
      fit_flags=$cal_flags
      first=$from
      if [ $fitted_links -eq 1 ]; then
        fit_flags=$(flags_of "$from")
        first="$from | -"
      fi
      # shellcheck disable=SC2086
      if ! "$ccsim" calibrate "$d/$from" $fit_flags -o "$work/cal.json" >"$work/out" 2>&1; then
        echo "| $first | $to | \`$flags\` | not calibrated: $(grep -m1 error "$work/out" | sed 's/^ccsim: error: //') | | | |"
        continue
      fi
      if [ $fitted_links -eq 1 ]; then
        first="$from | $(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["fitted"]["settings"]; print(", ".join("%s %.4g" % (k[len("node."):], v) for k, v in e.items()))' "$work/cal.json")"
      fi
      # shellcheck disable=SC2086
      if "$ccsim" validate "$d/$to" $flags --calibration "$work/cal.json" --format json >"$work/v.json" 2>"$work/err" ||
         [ $? -eq 1 ]; then
        row "$to" "$flags" "$work/v.json" "$first"
      else
        echo "| $first | $to | \`$flags\` | not predicted: $(sed 's/^ccsim: error: //' "$work/err" | head -1) | | | |"
      fi
    done
  done
  rm -rf "$work"
  exit 0
fi

echo "| log | hardware flags | collective, ranks | latency side: sizes, median error | bandwidth side: sizes, median error | causes |"
echo "|---|---|---|---|---|---|"
medians_file=$(mktemp)
for c in "${cases[@]}"; do
  log=${c%%|*}
  flags=${c#*|}
  if [ $with_versions -eq 1 ]; then
    [ -n "${nccl_version[$log]:-}" ] || continue
    flags="$flags --nccl-version ${nccl_version[$log]}"
  fi
  [ $from_log -eq 1 ] && flags=$(log_only_flags "$flags")
  tmp=$(mktemp)
  # shellcheck disable=SC2086
  "$ccsim" validate "$d/$log" $flags --format json >"$tmp" 2>"$tmp.err"
  rc=$?
  if [ $rc -eq 2 ]; then
    echo "| $log | \`$flags\` | not described: $(sed 's/^ccsim: error: //' "$tmp.err" | head -1) | | | |"
  else
    if [ $from_log -eq 1 ]; then
      row "$log" "$(hardware_taken "$tmp")${flags:+ $flags}" "$tmp"
    else
      row "$log" "$flags" "$tmp"
    fi
    medians "$tmp" >>"$medians_file"
  fi
  rm -f "$tmp" "$tmp.err"
done
summary "$medians_file"
rm -f "$medians_file"
