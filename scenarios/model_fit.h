// Fitting the description to a measured nccl-tests run through ccsim's own model (`ccsim calibrate
// LOG --topology ...`, docs/calibration.md "Through the model").
//
// The ring calibration (calibrate/calibration.h) describes a run as an equivalent ring, which only
// ring collectives can use. This fit keeps the described hardware and NCCL's choices and changes two
// numbers of the description:
//   - the plateau: the efficiency of the link that bounds it in the engine's replay (the busiest link
//     at the largest size: NVLink, PCIe or the NIC), until the predicted plateau is the measured one;
//   - the latency side: the cost that sets it, until the median error of its sizes is 0. Across nodes
//     that is the network's per-step latency (node.nic.latency_us: the engine charges a network step
//     the larger of it and NCCL's per-step constant); where nccl-tests' -g N launches bound the small
//     sizes, the host's launch (node.cpu.launch_us). On one node without -g N the latency side is
//     NCCL's per-step constants and is not fitted.
// A cluster whose NICs deliver 0.83 of what the description says, or whose network steps cost 10 us,
// then carries that to every collective on it, all-to-all and send/recv included, at any node count.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/calibration.h"
#include "calibrate/nccl_tests_log.h"
#include "scenarios/validate.h"

namespace ccsim {

// One setting fitted.
struct SettingFit {
  std::string key;          // one of fitted_setting_keys()
  double described = 0;     // its value in the description (the default where the description is silent)
  double fitted = 0;        // the value that meets the measurement, within fitted_setting_range(key)
  std::vector<std::string> notes;  // where the fit stopped short (another bound, the range's end)
};

struct RunFit {
  SettingFit link;                   // the plateau's link efficiency
  std::string bottleneck;            // the link that bounds the plateau, in words ("n0.nic0 -> leaf.g0.r0 (...)")
  std::vector<std::uint64_t> plateau_sizes;  // the largest sizes on the bandwidth side
  double measured_busbw_GBps = 0;            // at the largest of them
  double predicted_busbw_GBps = 0;           // with the described value
  double fitted_busbw_GBps = 0;              // with the fitted value
  // The latency side's cost, when the run has sizes below the knee and a cost to fit there.
  std::optional<SettingFit> latency;
  std::vector<std::uint64_t> latency_sizes;  // the sizes below the knee of the described prediction
  double latency_error_described = 0;        // their median error (measured / predicted - 1), described
  double latency_error_fitted = 0;           // ... with both fitted settings
  std::vector<std::string> notes;            // about the run (why the latency side is not fitted)
  CalibrationSource source;
};

// Fits run `run_index` of `file` on the hardware `spec` (as validate takes them; the engine replays it
// whatever opts.model says). `link` ("nvlink", "pcie", "nic"; --link) names the link to fit where the
// user knows better than the model which one bounds the run (two bounds within a few percent cannot be
// told apart by a plateau); "" fits the busiest link of the replay at the largest size. InputError
// (naming the file) when the run has no size on the bandwidth side of the knee, when its plateau is not
// replayed by the engine, or when the link that bounds it has no efficiency to fit (host memory, the
// inter-socket link, NVLS's in-switch reduction); InputError("--link") when the hardware has no such link.
RunFit fit_through_model(const NcclTestsRun& run, const std::string& file, int run_index, const nlohmann::json& spec,
                         const std::string& topology_source, ValidateOptions opts, const std::string& link = "");

// The fits of several runs as a calibration's fitted settings: per setting the median of its fits,
// every run a source, the fits' notes kept.
FittedSettings fitted_settings(const std::vector<RunFit>& fits);

}  // namespace ccsim
