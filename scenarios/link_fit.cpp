// Fitting the efficiency of the link that bounds a run's plateau through ccsim's model
// (scenarios/link_fit.h).
#include "scenarios/link_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "calibrate/fit.h"
#include "common/error.h"
#include "common/text.h"
#include "common/units.h"
#include "topologies/spec.h"

namespace ccsim {
namespace {

// The plateau is the median over the largest sizes on the bandwidth side: one size is one sample of
// nccl-tests' run-to-run noise (a few percent), three share it out without reaching back into the
// approach to the plateau on a sweep that ends early.
constexpr std::size_t kPlateauSizes = 3;
// The predicted plateau within 0.2% of the measured one ends the fit; a link-bound plateau gets there
// in one or two steps (its time is inversely proportional to the link's rate).
constexpr double kRatioTolerance = 0.002;
constexpr int kMaxIterations = 8;

// The description's object of the link class the engine reports, or "" where the class has no
// efficiency setting (host memory, the inter-socket link, NVLS's in-switch reduction).
std::string link_part(const std::string& link_class) {
  if (link_class == to_string(LinkKind::NvLink)) return "nvlink";
  if (link_class == to_string(LinkKind::Pcie)) return "pcie";
  if (link_class == to_string(LinkKind::Network)) return "nic";
  return "";
}

// Predicted over measured time at the plateau sizes (below 1: the machine is slower than the model).
double plateau_ratio(const ValidatedRun& v, const std::set<std::uint64_t>& plateau) {
  std::vector<double> r;
  for (const ValidatedSize& s : v.sizes)
    if (plateau.count(s.size_bytes) && s.measured_time_us > 0) r.push_back(s.predicted_time_us / s.measured_time_us);
  return median(r);
}

double busbw_at(const ValidatedRun& v, std::uint64_t size, bool measured) {
  for (const ValidatedSize& s : v.sizes)
    if (s.size_bytes == size) return measured ? s.measured_busbw_GBps : s.predicted_busbw_GBps;
  return 0;
}

}  // namespace

LinkFit fit_link_efficiency(const NcclTestsRun& run, const std::string& file, int run_index, const nlohmann::json& spec,
                            const std::string& topology_source, ValidateOptions opts, const std::string& link_asked) {
  opts.model = PredictModel::Engine;  // the links are the engine's
  const DebugFacts no_debug;
  const std::string where = "run " + std::to_string(run_index) + " (line " + std::to_string(run.header_line) + ")";
  const ValidatedRun first = validate_run(run, file, run_index, spec, topology_source, opts, no_debug);

  std::vector<const ValidatedSize*> bandwidth_side;
  for (const ValidatedSize& s : first.sizes)
    if (!s.latency_side) bandwidth_side.push_back(&s);
  if (bandwidth_side.empty())
    throw InputError(file, where + ": no size on the bandwidth side of the knee (S* = " + format_bytes(first.knee_bytes) +
                               "): the run ends before its plateau; measure up to larger sizes (-e) to fit a link's rate");
  std::sort(bandwidth_side.begin(), bandwidth_side.end(),
            [](const ValidatedSize* a, const ValidatedSize* b) { return a->size_bytes > b->size_bytes; });
  if (bandwidth_side.size() > kPlateauSizes) bandwidth_side.resize(kPlateauSizes);
  std::set<std::uint64_t> plateau;
  for (const ValidatedSize* s : bandwidth_side) plateau.insert(s->size_bytes);
  const std::uint64_t largest = bandwidth_side.front()->size_bytes;

  LinkFit fit;
  fit.plateau_sizes.assign(plateau.begin(), plateau.end());
  const ReportSize* at_largest = nullptr;
  for (const ReportSize& s : first.prediction.sizes)
    if (s.row.size_bytes == largest) at_largest = &s;
  if (!at_largest || !at_largest->busiest_link)
    throw InputError(file, where + ": the prediction at " + format_bytes(static_cast<double>(largest)) +
                               " is not the engine's replay (" + (at_largest ? at_largest->predicted : std::string("none")) +
                               "), so no link bounds it and none can be fitted");
  const ReportLink& link = *at_largest->busiest_link;
  fit.bottleneck = link.from + " -> " + link.to + " (" + link.label + ")";
  const std::string busiest = link_part(link.link_class);
  const std::string part = link_asked.empty() ? busiest : link_asked;
  if (part.empty())
    throw InputError(file, where + ": the plateau is bound by the " + link.link_class + " link " + fit.bottleneck +
                               ", whose rate has no efficiency setting to fit (" + join(link_efficiency_keys(), ", ") +
                               " have one)");
  fit.key = "node." + part + ".efficiency";
  const nlohmann::json& node = first.prediction.facts.topology_spec.at("node");
  if (!node.contains(part) || node.at(part).is_null() || (part == "nic" && node.at(part).value("count", 0) == 0))
    throw InputError("--link", "the hardware has no " + part + " link to fit (" + topology_source + ")");
  if (part != busiest)
    fit.notes.push_back("fitted " + fit.key + " as --link asks; the replay's busiest link at " +
                        format_bytes(static_cast<double>(largest)) + " is " + fit.bottleneck);
  fit.described = node.at(part).value("efficiency", 1.0);
  fit.measured_busbw_GBps = busbw_at(first, largest, true);
  fit.predicted_busbw_GBps = busbw_at(first, largest, false);

  // Only the plateau's rows are predicted again.
  NcclTestsRun plateau_run = run;
  plateau_run.rows.erase(std::remove_if(plateau_run.rows.begin(), plateau_run.rows.end(),
                                        [&](const NcclTestsRow& r) { return !plateau.count(r.size_bytes); }),
                         plateau_run.rows.end());
  double value = fit.described;
  double ratio = plateau_ratio(first, plateau);
  fit.fitted_busbw_GBps = fit.predicted_busbw_GBps;
  while (fit.iterations < kMaxIterations && std::fabs(ratio - 1) > kRatioTolerance) {
    const double next = std::min(1.0, value * ratio);
    if (next == value) {  // held at 1 and still faster than the link allows
      fit.notes.push_back(strprintf("the measured plateau (%.1f GB/s busbw at %s) is above what the described link reaches at "
                                    "efficiency 1 (%.1f): the description undercounts the hardware (more NICs or links than "
                                    "described?); %s held at 1",
                                    fit.measured_busbw_GBps, format_bytes(static_cast<double>(largest)).c_str(),
                                    fit.fitted_busbw_GBps, fit.key.c_str()));
      break;
    }
    nlohmann::json trial = spec;
    apply_override(trial, fit.key + "=" + strprintf("%.6g", next), "the link fit");
    const ValidatedRun v = validate_run(plateau_run, file, run_index, trial, topology_source, opts, no_debug);
    const double next_ratio = plateau_ratio(v, plateau);
    ++fit.iterations;
    if (std::fabs(next_ratio - ratio) < 0.25 * std::fabs(ratio - 1)) {
      // A link-bound plateau follows its rate; this one did not move (a ceiling of NCCL's or another
      // link sets it), so the value that did nothing is not kept.
      fit.notes.push_back(strprintf("the plateau does not follow %s (predicted/measured time %.3f at %.4g, %.3f at %.4g): "
                                    "another bound (a NCCL ceiling or another link) sets it; %s kept at %.4g",
                                    fit.key.c_str(), ratio, value, next_ratio, next, fit.key.c_str(), value));
      break;
    }
    value = next;
    ratio = next_ratio;
    fit.fitted_busbw_GBps = busbw_at(v, largest, false);
  }
  fit.fitted = value;

  CalibrationSource& s = fit.source;
  s.file = file;
  s.kind = "nccl-tests";
  s.run = run_index;
  s.collective = first.log.collective;
  s.ranks = first.log.ranks;
  s.nodes = first.prediction.facts.nodes;
  s.points = plateau.size();
  s.beta_Bps = fit.measured_busbw_GBps * 1e9;
  s.method = strprintf("through the model: %s %.4g -> %.4g; plateau %.1f GB/s busbw measured at %s, %.1f predicted with "
                       "the description, %.1f with the fit; bound by %s",
                       fit.key.c_str(), fit.described, fit.fitted, fit.measured_busbw_GBps,
                       format_bytes(static_cast<double>(largest)).c_str(), fit.predicted_busbw_GBps, fit.fitted_busbw_GBps,
                       fit.bottleneck.c_str());
  return fit;
}

LinkCalibration link_calibration(const std::vector<LinkFit>& fits) {
  LinkCalibration out;
  std::map<std::string, std::vector<double>> values;
  for (const LinkFit& f : fits) {
    values[f.key].push_back(f.fitted);
    out.sources.push_back(f.source);
    for (const std::string& n : f.notes) out.notes.push_back(f.source.file + ": " + n);
  }
  for (const auto& [key, v] : values) {
    out.efficiency[key] = median(v);
    if (v.size() > 1)
      out.notes.push_back(strprintf("%s: the median of %zu runs' fits (%.4g to %.4g)", key.c_str(), v.size(),
                                    *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())));
  }
  return out;
}

}  // namespace ccsim
