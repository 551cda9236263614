// nccl-tests datatype (-d) and reduction op (-o) names, as nccl-tests prints and accepts them.
#pragma once
#include <string>
#include <vector>

namespace ccsim {

// "int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"
// (f8* need NCCL >= 2.24 and an fp8-capable build of nccl-tests).
const std::vector<std::string>& nccl_datatype_names();
// Size in bytes of one element; InputError("-d", ...) listing the valid names for an unknown one.
int datatype_size(const std::string& name);
bool is_nccl_datatype(const std::string& name);

// "sum", "prod", "max", "min", "avg", "mulsum" (nccl-tests' -o list; "-o all" runs all of them).
const std::vector<std::string>& nccl_op_names();
bool is_nccl_op(const std::string& name);
// Returns name if valid ("all" included); InputError("-o", ...) listing the valid names otherwise.
std::string check_nccl_op(const std::string& name);

// What a collective's elements are and how it reduces them (nccl-tests' -d and -o names).
struct ReduceOperand {
  std::string datatype = "float";
  std::string op = "sum";
};

// The sweeps nccl-tests runs for -d TYPE -o OP, in its order (datatypes outer, ops inner): "all" is
// every name of nccl_datatype_names() / nccl_op_names(); a collective that does not reduce runs one
// sweep per datatype whatever -o says (its op is then "sum", which nothing reads). InputError("-d" /
// "-o") for an unknown name.
std::vector<ReduceOperand> nccl_tests_operands(const std::string& datatype, const std::string& op, bool reduces);

// Why NVLink SHARP cannot reduce `operand`; "" when it can. NCCL's ncclNvlsSupported
// (src/include/device.h, in step with src/device/generate.py): sum of int32, uint32, int64, uint64,
// half, bfloat16, float and double; min and max of the integer and half types; nothing of int8, uint8
// or fp8. Its getAlgoInfo then leaves NVLS and NVLSTree out of an all_reduce or reduce_scatter
// (all_gather does not reduce). (NCCL's symmetric kernels reduce fp8 by multimem on SM100;
// ccsim does not model them.)
std::string nvls_reduction_unsupported(const ReduceOperand& operand);

}  // namespace ccsim
