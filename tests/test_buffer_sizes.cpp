// NCCL's protocol buffers (NCCL_BUFFSIZE, NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE) as inputs: a step
// is an eighth of the buffer (NCCL_STEPS), the chunk of trees, chains and CollNet, and the bound of the
// P2P chunk (init.cc: p2pChunkSize x NCCL_STEPS <= the Simple buffer). Defaults are NCCL 2.30's:
// LL 8 lines x 512 threads x 8 steps x 16 B = 512 KiB, LL128 120 x 640 x 8 x 8 B = 4800 KiB,
// Simple 4 MiB.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algorithms/chain.h"
#include "algorithms/ring.h"
#include "algorithms/step_timing.h"
#include "common/error.h"
#include "test_helpers.h"

namespace ccsim {
namespace {

TEST(BufferSizes, DefaultsAndSettings) {
  const Topology def = testing::preset("dgx-h100", 1);
  EXPECT_EQ(nccl_buffer_bytes(def, Proto::LL), 524288);
  EXPECT_EQ(nccl_buffer_bytes(def, Proto::LL128), 4915200);
  EXPECT_EQ(nccl_buffer_bytes(def, Proto::Simple), 4194304);
  const Topology set = testing::preset("dgx-h100", 1, {},
                                       {"NCCL_BUFFSIZE=8388608", "NCCL_LL_BUFFSIZE=262144", "NCCL_LL128_BUFFSIZE=1048576"});
  EXPECT_EQ(nccl_buffer_bytes(set, Proto::Simple), 8388608);
  EXPECT_EQ(nccl_buffer_bytes(set, Proto::LL), 262144);
  EXPECT_EQ(nccl_buffer_bytes(set, Proto::LL128), 1048576);
  // aws-p5 carries aws-ofi-nccl's 8 MiB; -2 (NCCL's default) takes it back out.
  EXPECT_EQ(nccl_buffer_bytes(testing::preset("aws-p5", 2), Proto::Simple), 8388608);
  EXPECT_EQ(nccl_buffer_bytes(testing::preset("aws-p5", 2, {}, {"NCCL_BUFFSIZE=-2"}), Proto::Simple), 4194304);
  // Outside 32 KiB .. 1 GiB: one error naming the setting or the key.
  EXPECT_THROW(testing::preset("dgx-h100", 1, {}, {"NCCL_BUFFSIZE=1000"}), InputError);
  EXPECT_THROW(testing::preset("dgx-h100", 1, {"node.gpu.nccl_buffsize_bytes=0"}), InputError);
}

// A broadcast's chunk is one step of the buffer: 64 MiB over a plan of 2 channels is 32 MiB per
// channel, 64 chunks of 512 KiB with NCCL's 4 MiB buffer and 32 of 1 MiB with 8 MiB.
TEST(BufferSizes, ChainChunksFollowTheBuffer) {
  const Topology def = testing::preset("dgx-h100", 1);
  const Topology big = testing::preset("dgx-h100", 1, {}, {"NCCL_BUFFSIZE=8388608"});
  const RingPlan plan = plan_rings(def, 2);
  ASSERT_EQ(plan.total_channels(), 2);
  ChainScheduleOptions o;
  o.chunk_wire_bytes = chain_chunk_wire_bytes(def, Proto::Simple);
  EXPECT_DOUBLE_EQ(o.chunk_wire_bytes, 524288);
  EXPECT_EQ(chain_chunks(plan, 64 << 20, o), 64);
  o.chunk_wire_bytes = chain_chunk_wire_bytes(big, Proto::Simple);
  EXPECT_DOUBLE_EQ(o.chunk_wire_bytes, 1048576);
  EXPECT_EQ(chain_chunks(plan, 64 << 20, o), 32);
}

// With NCCL's channel count given, every channel's chunks are units of the chain: 8 MiB over NCCL's
// 16 channels is 512 KiB per channel, one chunk each, 16 units (in lockstep on the plan's 2 channels
// it was 8 units of 1 MiB); 1 MiB is 16 units of 64 KiB; 24 MiB on 16 channels is 16 x 3.
TEST(BufferSizes, ChainChunksCountEveryNcclChannel) {
  const Topology def = testing::preset("dgx-h100", 1);
  const RingPlan plan = plan_rings(def, 2);
  ChainScheduleOptions o;
  o.chunk_wire_bytes = chain_chunk_wire_bytes(def, Proto::Simple);
  EXPECT_EQ(chain_chunks(plan, 8 << 20, o), 8);
  o.nccl_channels = 16;
  EXPECT_EQ(chain_chunks(plan, 8 << 20, o), 16);
  EXPECT_EQ(chain_chunks(plan, 1 << 20, o), 16);
  EXPECT_EQ(chain_chunks(plan, 24 << 20, o), 48);
}

}  // namespace
}  // namespace ccsim
