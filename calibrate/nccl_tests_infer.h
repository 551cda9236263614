// Which collective an nccl-tests table measures, told from the log alone, never from its file name:
// a --collective flag, else the log's own "# Collective test starting" line or echoed command, else the
// table: the redop and root columns, the count column (size = count x element, or x n per rank) and
// busbw/algbw against the rank count (nccl-tests' GetBw factors: 2(n-1)/n, (n-1)/n, 1). One
// implementation for `ccsim validate` (scenarios/validate_log.h) and `ccsim calibrate`.
#pragma once
#include <string>
#include <vector>

#include "algorithms/collectives.h"
#include "calibrate/nccl_tests_log.h"

namespace ccsim {

struct CollectiveInference {
  const CollectiveInfo* collective = nullptr;
  // "--collective", "named in the log (test header or echoed command)", or the table evidence
  // ("table: redop 'sum', root -1, busbw/algbw 1.7500").
  std::string source;
  std::string table_evidence;      // always filled, as in `source`
  std::vector<std::string> notes;  // the flag or the log's name does not fit the table
  // The rank count the table tells for the chosen collective (0: not told; the known count when given).
  int ranks = 0;
  std::string ranks_source;  // "count column: size = 8 x count x element", "busbw/algbw 1.7500 = 2(n-1)/n with n = 8"
};

// known_ranks: from the device list or the command line (0: unknown). Throws InputError(file, where +
// "cannot tell the collective: ...; pass --collective") when no collective or several fit and neither
// the flag nor the log names one; InputError("--collective", ...) for an unknown flag value.
CollectiveInference infer_collective(const NcclTestsRun& run, const std::string& collective_flag, int known_ranks,
                                     const std::string& file, const std::string& where);

// busbw / algbw of a run, from the rows whose algbw has at least 3 significant digits (>= 1 GB/s,
// printed with 2 decimals), median over those rows and both halves; 0 when no row qualifies.
double busbw_ratio(const NcclTestsRun& run);

}  // namespace ccsim
