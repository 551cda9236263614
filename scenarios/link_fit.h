// Fitting a link's achievable rate from a measured nccl-tests run through ccsim's own model
// (`ccsim calibrate LOG --topology ...`, docs/calibration.md "Through the model").
//
// The ring calibration (calibrate/calibration.h) describes a run as an equivalent ring, which only
// ring collectives can use. This fit keeps the described hardware and NCCL's choices and changes one
// number: the efficiency of the link that bounds the run's plateau in the engine's replay (the busiest
// link at the largest size: NVLink, PCIe or the NIC), until the predicted plateau is the measured one.
// A cluster whose NICs deliver 0.83 of what the description says then carries that to every
// collective on it, all-to-all and send/recv included, at any node count.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/calibration.h"
#include "calibrate/nccl_tests_log.h"
#include "scenarios/validate.h"

namespace ccsim {

struct LinkFit {
  std::string key;              // the setting fitted: one of link_efficiency_keys()
  double described = 0;         // its value in the description (the default where the description is silent)
  double fitted = 0;            // the value that puts the predicted plateau on the measured one, in (0, 1]
  std::string bottleneck;       // the link that bounds the plateau, in words ("n0.nic0 -> leaf.g0.r0 (network, ...)")
  std::vector<std::uint64_t> plateau_sizes;  // the sizes fitted: the largest ones on the bandwidth side
  double measured_busbw_GBps = 0;            // at the largest of them
  double predicted_busbw_GBps = 0;           // with the described value
  double fitted_busbw_GBps = 0;              // with the fitted value
  int iterations = 0;
  std::vector<std::string> notes;  // where the fit stopped short (a bound other than the link, the value held at 1)
  CalibrationSource source;
};

// Fits run `run_index` of `file` on the hardware `spec` (as validate takes them; the engine replays it
// whatever opts.model says). `link` ("nvlink", "pcie", "nic"; --link) names the link to fit where the
// user knows better than the model which one bounds the run (two bounds within a few percent cannot be
// told apart by a plateau); "" fits the busiest link of the replay at the largest size. InputError
// (naming the file) when the run has no size on the bandwidth side of the knee, when its plateau is not
// replayed by the engine, or when the link that bounds it has no efficiency to fit (host memory, the
// inter-socket link, NVLS's in-switch reduction); InputError("--link") when the hardware has no such link.
LinkFit fit_link_efficiency(const NcclTestsRun& run, const std::string& file, int run_index, const nlohmann::json& spec,
                            const std::string& topology_source, ValidateOptions opts, const std::string& link = "");

// The fits of several runs as a calibration's link section: per setting the median of its fits, every
// run a source, the fits' notes kept.
LinkCalibration link_calibration(const std::vector<LinkFit>& fits);

}  // namespace ccsim
