#include "report/validation_report.h"

namespace ccsim {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::NoSizes: return "no sizes";
    case Verdict::Within: return "within tolerance";
    case Verdict::Slower: return "slower than predicted";
    case Verdict::Faster: return "faster than predicted";
    case Verdict::Mixed: return "mixed";
  }
  return "?";
}

}  // namespace ccsim
