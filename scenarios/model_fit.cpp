// Fitting the description to a measured run through ccsim's model (scenarios/model_fit.h).
#include "scenarios/model_fit.h"

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
// The predicted plateau within 0.2% of the measured one ends the link's fit; a link-bound plateau gets
// there in one or two steps (its time is inversely proportional to the link's rate).
constexpr double kRatioTolerance = 0.002;
constexpr int kMaxLinkSteps = 8;
// The latency side's cost is bisected to a hundredth of a microsecond (or a median error within 0.2%).
constexpr double kLatencyToleranceUs = 0.01;
constexpr double kLatencyErrorTolerance = 0.002;
constexpr int kMaxLatencySteps = 40;

// The description's object of the link class the engine reports, or "" where the class has no
// efficiency setting (host memory, the inter-socket link, NVLS's in-switch reduction).
std::string link_part(const std::string& link_class) {
  if (link_class == to_string(LinkKind::NvLink)) return "nvlink";
  if (link_class == to_string(LinkKind::Pcie)) return "pcie";
  if (link_class == to_string(LinkKind::Network)) return "nic";
  return "";
}

// Predicted over measured time at the given sizes (below 1: the machine is slower than the model).
double time_ratio(const ValidatedRun& v, const std::set<std::uint64_t>& sizes) {
  std::vector<double> r;
  for (const ValidatedSize& s : v.sizes)
    if (sizes.count(s.size_bytes) && s.measured_time_us > 0) r.push_back(s.predicted_time_us / s.measured_time_us);
  return median(r);
}

// The median error (measured / predicted - 1) at the given sizes: validate's verdict of a side.
double median_error(const ValidatedRun& v, const std::set<std::uint64_t>& sizes) {
  std::vector<double> e;
  for (const ValidatedSize& s : v.sizes)
    if (sizes.count(s.size_bytes)) e.push_back(s.error);
  return median(e);
}

double busbw_at(const ValidatedRun& v, std::uint64_t size, bool measured) {
  for (const ValidatedSize& s : v.sizes)
    if (s.size_bytes == size) return measured ? s.measured_busbw_GBps : s.predicted_busbw_GBps;
  return 0;
}

// The run with only the rows of `sizes` (the fits predict only what they compare).
NcclTestsRun only_sizes(const NcclTestsRun& run, const std::set<std::uint64_t>& sizes) {
  NcclTestsRun out = run;
  out.rows.erase(std::remove_if(out.rows.begin(), out.rows.end(),
                                [&](const NcclTestsRow& r) { return !sizes.count(r.size_bytes); }),
                 out.rows.end());
  return out;
}

nlohmann::json with_setting(nlohmann::json spec, const std::string& key, double value) {
  apply_override(spec, key + "=" + strprintf("%.6g", value), "the fit through the model");
  return spec;
}

}  // namespace

RunFit fit_through_model(const NcclTestsRun& run, const std::string& file, int run_index, const nlohmann::json& spec,
                         const std::string& topology_source, ValidateOptions opts, const std::string& link_asked) {
  opts.model = PredictModel::Engine;  // the links are the engine's
  const DebugFacts no_debug;
  const std::string where = "run " + std::to_string(run_index) + " (line " + std::to_string(run.header_line) + ")";
  const ValidatedRun first = validate_run(run, file, run_index, spec, topology_source, opts, no_debug);
  auto validate = [&](const NcclTestsRun& r, const nlohmann::json& s) {
    return validate_run(r, file, run_index, s, topology_source, opts, no_debug);
  };

  // ---- The plateau: the bounding link's efficiency.
  std::vector<const ValidatedSize*> bandwidth_side;
  std::set<std::uint64_t> latency_sizes;
  for (const ValidatedSize& s : first.sizes) {
    if (s.latency_side)
      latency_sizes.insert(s.size_bytes);
    else
      bandwidth_side.push_back(&s);
  }
  if (bandwidth_side.empty())
    throw InputError(file, where + ": no size on the bandwidth side of the knee (S* = " + format_bytes(first.knee_bytes) +
                               "): the run ends before its plateau; measure up to larger sizes (-e) to fit a link's rate");
  std::sort(bandwidth_side.begin(), bandwidth_side.end(),
            [](const ValidatedSize* a, const ValidatedSize* b) { return a->size_bytes > b->size_bytes; });
  if (bandwidth_side.size() > kPlateauSizes) bandwidth_side.resize(kPlateauSizes);
  std::set<std::uint64_t> plateau;
  for (const ValidatedSize* s : bandwidth_side) plateau.insert(s->size_bytes);
  const std::uint64_t largest = bandwidth_side.front()->size_bytes;

  RunFit fit;
  fit.plateau_sizes.assign(plateau.begin(), plateau.end());
  const ReportSize* at_largest = nullptr;
  for (const ReportSize& s : first.prediction.sizes)
    if (s.row.size_bytes == largest) at_largest = &s;
  if (!at_largest || !at_largest->busiest_link)
    throw InputError(file, where + ": the prediction at " + format_bytes(static_cast<double>(largest)) +
                               " is not the engine's replay (" + (at_largest ? at_largest->predicted : std::string("none")) +
                               "), so no link bounds it and none can be fitted");
  const ReportLink& busiest = *at_largest->busiest_link;
  fit.bottleneck = busiest.from + " -> " + busiest.to + " (" + busiest.label + ")";
  const std::string busiest_part = link_part(busiest.link_class);
  const std::string part = link_asked.empty() ? busiest_part : link_asked;
  if (part.empty())
    throw InputError(file, where + ": the plateau is bound by the " + busiest.link_class + " link " + fit.bottleneck +
                               ", whose rate has no efficiency setting to fit (NVLink, PCIe and the NIC have one)");
  SettingFit& link = fit.link;
  link.key = "node." + part + ".efficiency";
  const nlohmann::json& node = first.prediction.facts.topology_spec.at("node");
  if (!node.contains(part) || node.at(part).is_null() || (part == "nic" && node.at(part).value("count", 0) == 0))
    throw InputError("--link", "the hardware has no " + part + " link to fit (" + topology_source + ")");
  if (part != busiest_part)
    link.notes.push_back("fitted " + link.key + " as --link asks; the replay's busiest link at " +
                         format_bytes(static_cast<double>(largest)) + " is " + fit.bottleneck);
  link.described = node.at(part).value("efficiency", 1.0);
  fit.measured_busbw_GBps = busbw_at(first, largest, true);
  fit.predicted_busbw_GBps = busbw_at(first, largest, false);
  fit.fitted_busbw_GBps = fit.predicted_busbw_GBps;

  const NcclTestsRun plateau_run = only_sizes(run, plateau);
  const double described_ratio = time_ratio(first, plateau);
  // Scales `setting` by predicted / measured time until the plateau meets the measurement; false when
  // the plateau does not follow it (a NCCL ceiling, another link or a kernel rate sets it).
  const auto fit_plateau = [&](SettingFit& setting) {
    const double max = fitted_setting_range(setting.key).max;
    double value = setting.described;
    double ratio = described_ratio;
    bool follows = true;
    for (int step = 0; step < kMaxLinkSteps && std::fabs(ratio - 1) > kRatioTolerance; ++step) {
      const double next = std::min(max, value * ratio);
      if (next == value) {  // held at the range's end and still faster than it allows
        setting.notes.push_back(strprintf("the measured plateau (%.1f GB/s busbw at %s) is above what the description "
                                          "reaches with %s at %.4g (%.1f): the description undercounts the hardware "
                                          "(more NICs or links than described?); held there",
                                          fit.measured_busbw_GBps, format_bytes(static_cast<double>(largest)).c_str(),
                                          setting.key.c_str(), max, fit.fitted_busbw_GBps));
        break;
      }
      const ValidatedRun v = validate(plateau_run, with_setting(spec, setting.key, next));
      const double next_ratio = time_ratio(v, plateau);
      if (std::fabs(next_ratio - ratio) < 0.25 * std::fabs(ratio - 1)) {
        // A plateau bound by this setting follows it; this one did not move, so the value that did
        // nothing is not kept.
        setting.notes.push_back(strprintf("the plateau does not follow %s (predicted/measured time %.3f at %.4g, %.3f at %.4g): "
                                          "another bound (a NCCL ceiling or another link) sets it; %s kept at %.4g",
                                          setting.key.c_str(), ratio, value, next_ratio, next, setting.key.c_str(), value));
        follows = false;
        break;
      }
      value = next;
      ratio = next_ratio;
      fit.fitted_busbw_GBps = busbw_at(v, largest, false);
    }
    setting.fitted = value;
    return follows;
  };
  const bool link_follows = fit_plateau(link);
  // A Simple ring across nodes runs at most one thread block's copy per channel
  // (node.gpu.net_ring_channel_GBps, Topology::net_ring_channel_Bps): below the links on Hopper, where
  // that rate, not a link's, is the one to fit.
  const double net_ring_GBps = node.at("gpu").value("net_ring_channel_GBps", 0.0);
  if (!link_follows && link_asked.empty() && net_ring_GBps > 0 && first.prediction.facts.nodes > 1 &&
      at_largest->predicted == "Ring/Simple") {
    SettingFit ring;
    ring.key = "node.gpu.net_ring_channel_GBps";
    ring.described = net_ring_GBps;
    const double link_busbw_GBps = fit.fitted_busbw_GBps;
    if (!fit_plateau(ring)) {
      fit.fitted_busbw_GBps = link_busbw_GBps;  // the ring's steps are not taken: the link's result stands
    } else {
      ring.notes.push_back("the plateau follows the ring channels' copy rate across nodes, not " + link.key +
                           " (the replay's busiest link " + fit.bottleneck + " has headroom): " + ring.key + " fitted");
      link = ring;
      fit.bottleneck = "the ring channels' copy rate (busiest link " + fit.bottleneck + ")";
    }
  }
  const nlohmann::json spec_with_link = with_setting(spec, link.key, link.fitted);

  // ---- The latency side: the cost that sets it.
  fit.latency_sizes.assign(latency_sizes.begin(), latency_sizes.end());
  if (latency_sizes.empty()) {
    fit.notes.push_back("no size below the knee (S* = " + format_bytes(first.knee_bytes) + "): the latency side is not fitted");
  } else {
    fit.latency_error_described = median_error(first, latency_sizes);
    bool launch_bound = false;
    for (const ReportSize& s : first.prediction.sizes)
      if (s.row.size_bytes == *latency_sizes.begin()) launch_bound = s.launch_bound;
    const std::string key = launch_bound ? "node.cpu.launch_us" : first.prediction.facts.nodes > 1 ? "node.nic.latency_us" : "";
    if (key.empty()) {
      fit.notes.push_back("one node (one NVLink domain) without nccl-tests' -g N: the latency side is NCCL's per-step constants, not fitted");
    } else {
      SettingFit lat;
      lat.key = key;
      lat.described = key == "node.cpu.launch_us" ? node.at("cpu").value("launch_us", 0.0) : node.at("nic").value("latency_us", 0.0);
      const NcclTestsRun latency_run = only_sizes(run, latency_sizes);
      // The predicted times grow with the cost, so the median error falls with it: bisection between
      // the described value and the end of the range the error points to.
      auto error_at = [&](double v) { return median_error(validate(latency_run, with_setting(spec_with_link, key, v)), latency_sizes); };
      const FittedSettingRange range = fitted_setting_range(key);
      lat.fitted = lat.described;
      double error = error_at(lat.described);
      if (std::fabs(error) > kLatencyErrorTolerance) {
        const bool raise = error > 0;  // the side is slower than predicted: a larger cost
        const double end = raise ? range.max : range.min;
        const double at_end = error_at(end);
        if (raise && at_end > 0) {
          lat.fitted = end;
          error = at_end;
          lat.notes.push_back(strprintf("the latency side stays %.0f%% slower than predicted with %s at the range's end "
                                        "(%.4g): held there", 100 * at_end, key.c_str(), end));
        } else if (!raise && at_end < 0) {
          lat.notes.push_back(strprintf("the latency side is %.0f%% faster than predicted even with %s at %.4g: what sets it "
                                        "is not this cost (NCCL's per-step constants, the launch); %s kept at %.4g",
                                        -100 * at_end, key.c_str(), end, key.c_str(), lat.described));
        } else {
          double lo = raise ? lat.described : end, hi = raise ? end : lat.described;
          std::optional<double> met;  // the error of a midpoint within the tolerance, which ends the search
          for (int step = 0; step < kMaxLatencySteps && hi - lo > kLatencyToleranceUs; ++step) {
            const double mid = 0.5 * (lo + hi);
            const double e = error_at(mid);
            if (std::fabs(e) <= kLatencyErrorTolerance) {
              lo = hi = mid;
              met = e;
              break;
            }
            (e > 0 ? lo : hi) = mid;
          }
          lat.fitted = 0.5 * (lo + hi);
          error = met ? *met : error_at(lat.fitted);
        }
      }
      fit.latency_error_fitted = error;
      fit.latency = lat;
    }
  }

  CalibrationSource& s = fit.source;
  s.file = file;
  s.kind = "nccl-tests";
  s.run = run_index;
  s.collective = first.log.collective;
  s.ranks = first.log.ranks;
  s.nodes = first.prediction.facts.nodes;
  s.points = plateau.size() + latency_sizes.size();
  s.beta_Bps = fit.measured_busbw_GBps * 1e9;
  s.method = strprintf("through the model: %s %.4g -> %.4g (plateau %.1f GB/s busbw measured at %s, %.1f predicted with the "
                       "description, %.1f with the fit; bound by %s)",
                       link.key.c_str(), link.described, link.fitted, fit.measured_busbw_GBps,
                       format_bytes(static_cast<double>(largest)).c_str(), fit.predicted_busbw_GBps, fit.fitted_busbw_GBps,
                       fit.bottleneck.c_str());
  if (fit.latency)
    s.method += strprintf("; %s %.4g -> %.4g (latency side, %zu sizes: median error %+.1f%% -> %+.1f%%)",
                          fit.latency->key.c_str(), fit.latency->described, fit.latency->fitted, latency_sizes.size(),
                          100 * fit.latency_error_described, 100 * fit.latency_error_fitted);
  return fit;
}

FittedSettings fitted_settings(const std::vector<RunFit>& fits) {
  FittedSettings out;
  std::map<std::string, std::vector<double>> values;
  for (const RunFit& f : fits) {
    out.sources.push_back(f.source);
    std::vector<const SettingFit*> settings{&f.link};
    if (f.latency) settings.push_back(&*f.latency);
    for (const SettingFit* s : settings) {
      values[s->key].push_back(s->fitted);
      for (const std::string& n : s->notes) out.notes.push_back(f.source.file + ": " + n);
    }
    for (const std::string& n : f.notes) out.notes.push_back(f.source.file + ": " + n);
  }
  for (const auto& [key, v] : values) {
    out.settings[key] = median(v);
    if (v.size() > 1)
      out.notes.push_back(strprintf("%s: the median of %zu runs' fits (%.4g to %.4g)", key.c_str(), v.size(),
                                    *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())));
  }
  return out;
}

}  // namespace ccsim
