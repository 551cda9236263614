#include "cli/algo_options.h"

#include <cstdlib>

#include "topologies/nccl_env.h"

namespace ccsim {

AlgoProtoFilter algo_filter_from_args(const ParsedArgs& args, bool shell_environment) {
  auto from = [&](const std::string& flag, const char* env, std::string* where) {
    if (args.has(flag)) {
      *where = args.spelled(flag);
      return args.get(flag);
    }
    if (const std::string given = nccl_env_value(args.all("env"), env); !given.empty()) {
      *where = std::string("--env ") + env;
      return given;
    }
    const char* v = shell_environment ? std::getenv(env) : nullptr;
    if (v && *v) {
      *where = env;
      return std::string(v);
    }
    return std::string();
  };
  std::string algo_where, proto_where;
  const std::string algo = from("algo", "NCCL_ALGO", &algo_where);
  const std::string proto = from("proto", "NCCL_PROTO", &proto_where);
  std::string where = algo_where;
  if (!proto_where.empty()) where += (where.empty() ? "" : "/") + proto_where;
  return parse_algo_filter(algo, proto, where);
}

NcclVersion nccl_version_from_args(const ParsedArgs& args) {
  if (!args.has("nccl-version")) return default_nccl_version();
  return parse_nccl_version(args.get("nccl-version"), args.spelled("nccl-version"));
}

}  // namespace ccsim
