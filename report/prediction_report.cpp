#include "report/prediction_report.h"

namespace ccsim {

std::vector<NcclTestsRow> PredictionReport::rows() const {
  std::vector<NcclTestsRow> out;
  out.reserve(sizes.size());
  for (const auto& s : sizes) out.push_back(s.row);
  return out;
}

}  // namespace ccsim
