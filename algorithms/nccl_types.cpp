#include "algorithms/nccl_types.h"

#include <algorithm>
#include <utility>

#include "common/error.h"
#include "common/text.h"

namespace ccsim {
namespace {

const std::vector<std::pair<std::string, int>>& type_table() {
  static const std::vector<std::pair<std::string, int>> t = {
      {"int8", 1},  {"uint8", 1}, {"int32", 4},  {"uint32", 4},   {"int64", 8},  {"uint64", 8},
      {"half", 2},  {"float", 4}, {"double", 8}, {"bfloat16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1}};
  return t;
}

}  // namespace

const std::vector<std::string>& nccl_datatype_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [name, size] : type_table()) n.push_back(name);
    return n;
  }();
  return names;
}

bool is_nccl_datatype(const std::string& name) {
  const auto& n = nccl_datatype_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

int datatype_size(const std::string& name) {
  for (const auto& [n, size] : type_table())
    if (n == name) return size;
  throw InputError("-d", "unknown datatype '" + name + "' (valid: " + join(nccl_datatype_names()) + ")");
}

const std::vector<std::string>& nccl_op_names() {
  static const std::vector<std::string> ops = {"sum", "prod", "max", "min", "avg", "mulsum"};
  return ops;
}

bool is_nccl_op(const std::string& name) {
  const auto& n = nccl_op_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

std::string check_nccl_op(const std::string& name) {
  if (name == "all" || is_nccl_op(name)) return name;
  throw InputError("-o", "unknown reduction op '" + name + "' (valid: " + join(nccl_op_names()) + ", all)");
}

std::vector<ReduceOperand> nccl_tests_operands(const std::string& datatype, const std::string& op, bool reduces) {
  std::vector<std::string> types = {datatype};
  if (datatype == "all") types = nccl_datatype_names();
  else datatype_size(datatype);  // InputError for an unknown name
  check_nccl_op(op);
  std::vector<std::string> ops = {reduces ? op : "sum"};
  if (reduces && op == "all") ops = nccl_op_names();
  std::vector<ReduceOperand> out;
  for (const std::string& t : types)
    for (const std::string& o : ops) out.push_back({t, o});
  return out;
}

std::string nvls_reduction_unsupported(const ReduceOperand& operand) {
  const std::string& t = operand.datatype;
  const std::string& op = operand.op;
  const bool integer = t == "int32" || t == "uint32" || t == "int64" || t == "uint64";
  bool ok = false;
  if (integer || t == "half" || t == "bfloat16") ok = op == "sum" || op == "min" || op == "max";
  else if (t == "float" || t == "double") ok = op == "sum";
  if (ok) return "";
  return "NVLink SHARP does not reduce " + op + " of " + t +
         " (NCCL's ncclNvlsSupported: sum of 32/64-bit integers, half, bfloat16, float, double; min/max of the integer "
         "and half types)";
}

}  // namespace ccsim
