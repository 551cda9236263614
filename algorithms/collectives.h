// One entry per collective: what NCCL calls it, how nccl-tests sizes, labels and scores it, and how
// ccsim predicts it. nccl-tests gives each collective one small file over a shared harness
// (src/all_reduce.cu, src/alltoall.cu, ...: GetCollByteCount, GetBw, the RunTest's redop and root);
// this registry is ccsim's counterpart, so predict, validate, the table writer and the scenario
// runner read the same facts instead of switching on names. A new collective is one entry in
// collectives.cpp (and, if ccsim predicts it, a schedule shape below).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/nccl_model.h"

namespace ccsim {

// How ccsim predicts a collective.
enum class CollectiveShape {
  Tuned,  // NCCL's tuner picks an algorithm and protocol (all_reduce, all_gather, reduce_scatter)
  Chain,  // NCCL runs it on Ring only, as a pipelined chain along each ring (broadcast, reduce)
  P2P,    // grouped ncclSend/ncclRecv: no tuner, LL or Simple per message (sendrecv, alltoall)
  None,   // nccl-tests has it, ccsim does not predict it (read in logs only)
};

// nccl-tests' <Coll>GetCollByteCount: the count column and the size column for a requested size.
enum class CountRule {
  Whole,            // count = size / element; size = count x element
  PerRank,          // count = size / element / n per rank; size = count x n x element (all_gather, reduce_scatter)
  PerPeerAligned16, // per peer: (size / element / n) rounded down to 16 bytes' worth of elements (alltoall, gather, scatter)
};

// nccl-tests' <Coll>GetBw: busbw = algbw x factor.
enum class BusbwRule {
  AllReduce,  // 2(n-1)/n
  NMinus1,    // (n-1)/n
  One,        // 1
  Unknown,    // nccl-tests' factor not known to ccsim
};

// Who sends to whom in a P2P collective, which also says what one message carries.
enum class P2pPattern {
  None,
  RingNeighbour,  // sendrecv: rank r sends the whole size to r+1 (nccl-tests' sendrecv.cu)
  AllPairs,       // alltoall: every rank sends size / n to every rank
};

struct CollectiveInfo {
  const char* name;           // "all_reduce": ccsim's and nccl-tests' name (the binary is name + "_perf")
  const char* nccl_function;  // "ncclAllReduce" (P2P collectives: the grouped calls)
  CollectiveShape shape;
  std::optional<Func> tuner_func;  // NCCL's tuner function (Tuned and Chain shapes)
  CountRule count_rule;
  BusbwRule busbw;
  bool reduces;       // nccl-tests prints the op in the redop column ("none" otherwise)
  bool has_root;      // nccl-tests prints the root in the root column (-1 otherwise)
  int ring_step_multiple;  // ring steps = this x (n-1): all_reduce 2, all_gather / reduce_scatter 1; 0: no ring schedule
  P2pPattern p2p;          // P2P shape: who sends to whom
};

// Every collective, in the order nccl-tests lists its binaries.
const std::vector<CollectiveInfo>& collectives();
// The entry for `name` exactly as listed ("all_reduce"); nullptr when unknown.
const CollectiveInfo* find_collective(const std::string& name);
// The entry for any spelling users and logs use ("AllReduce", "all-reduce", "all_reduce_perf",
// "./build/all_reduce_perf_mpi"); nullptr when unknown.
const CollectiveInfo* find_collective_spelled(const std::string& name);
// The entry, or InputError(flag, "unknown collective ... (valid: <the predicted ones>)").
const CollectiveInfo& collective_info(const std::string& name, const std::string& flag = "--collective");
// "all_reduce, all_gather, ..." of the collectives ccsim predicts.
std::string predicted_collective_names();

// busbw / algbw for `info` on `nranks` ranks; InputError when the rule is unknown or nranks < 1.
double collective_busbw_factor(const CollectiveInfo& info, int nranks);
// nccl-tests' size and count columns for a requested size (-b/-e) on `nranks` ranks.
void collective_size_and_count(const CollectiveInfo& info, std::uint64_t requested, int type_size, int nranks,
                               std::uint64_t* size_bytes, std::uint64_t* count);
// nccl-tests' redop column ("none" for collectives that do not reduce) and root column (-1 for rootless ones).
std::string collective_redop_column(const CollectiveInfo& info, const std::string& op);
int collective_root_column(const CollectiveInfo& info, int root);

}  // namespace ccsim
