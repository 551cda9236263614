#pragma once
// What a log's network plugin says of the cluster. aws-ofi-nccl, the net plugin every EFA run on AWS
// loads, prints the EC2 instance it found ("NET/OFI Running on p5.48xlarge platform, ...") and sets NCCL
// up for it from its own table (src/platform-aws.cpp: the topology file, the latency it reports to NCCL,
// the NCCL_* defaults it exports). `ccsim validate` without --topology takes that instance's network
// instead of the GPUs' preset's InfiniBand (docs/validate.md "Hardware from the log").
#include <string>

#include "report/validation_report.h"
#include "scenarios/log_gpu_preset.h"

namespace ccsim {

// The network of the instance a log's plugin lines name, for a run of `gpus_per_host` GPUs per host: the
// preset of that instance where ccsim has one (p5 and p5e: aws-p5) and the run used its 8 GPUs, else the
// --set changes of its EFA network (NICs as NCCL sees them, `efa`, the plugin's latency and NCCL settings)
// to apply on the GPUs' preset. A provider without a known instance gives the transport and, where they
// fit the GPUs (a multiple or a divisor), the devices the plugin hands NCCL. Without aws-ofi-nccl, the
// network NCCL names ("Using network X"): Google's GPUDirect-TCPX and TCPXO plugins (the gcp-a3-high and
// gcp-a3-mega presets on 8 GPUs per host, else their transport) and gIB (RoCE).
// Empty when the lines say nothing of the network.
LogHardware network_from_plugin(const DebugFacts& debug, int gpus_per_host);

}  // namespace ccsim
