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

}  // namespace ccsim
