// Calibration files ("ccsim-calibration/1", docs/calibration.md): per path class ("nvlink", "pcie",
// "net") the ring parameters fitted from real measurements (nccl-tests logs), the efficiency curve
// of the bandwidth term, the fit quality and the sources; optionally NIC point-to-point parameters
// fitted from perftest logs. calibration_effect() turns a calibration into topology overrides
// (--set style) and NCCL step timing for a prediction.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/step_timing.h"
#include "calibrate/fit.h"
#include "calibrate/perftest_log.h"

namespace ccsim {

constexpr const char* kCalibrationFormat = "ccsim-calibration/1";

// One measured curve and what was fitted from it.
struct CalibrationSource {
  std::string file;
  std::string kind;        // "nccl-tests", "ib_write_lat", "ib_write_bw", ...
  int run = 0;             // index of the run in the file (0-based)
  std::string collective;  // nccl-tests: "all_reduce" ...; perftest: the test
  int ranks = 0, nodes = 0;
  std::size_t points = 0;
  double intercept_s = 0;  // fitted time of a 0-byte operation
  double beta_Bps = 0;     // fitted bandwidth (ring step bandwidth for nccl-tests)
  double r2 = 0, max_rel_residual = 0;
  // perftest: "fit over N sizes", or "one size: bandwidth at 65536 B" (no fit: r2 and residual 0).
  std::string method;
};

// Ring model of one path class: T(S) = launch + steps*alpha + steps/n * S / (beta * eff(S)).
struct ClassCalibration {
  double alpha_s = 0;       // per ring step (mean over the ring's hops for multi-node rings)
  double beta_Bps = 0;      // ring step bandwidth, per direction per GPU (busbw at large sizes)
  double launch_s = 0;      // once per operation
  std::string launch_source;  // how launch was identified (default constant, or fitted over rank counts)
  std::string collective;   // of the reference source (efficiency and knee refer to it)
  int ranks = 0, nodes = 0;
  // nccl-tests -g of the reference source: with several GPUs per thread its latency side is the
  // host's serial launches (scenarios/launch_mode.h), so launch and alpha describe that mode.
  int gpus_per_thread = 1;
  double knee_bytes = 0;    // S* = n * alpha * beta
  std::vector<std::pair<double, double>> efficiency;  // (message size S in bytes, factor), sorted
  AlphaBetaFit fit;         // of the reference source (x in bytes-term units; efficiency in fit.efficiency)
  std::vector<CalibrationSource> sources;
  // What the written values do not carry exactly (a knot held at the file's bound), for the report.
  std::vector<std::string> notes;
};

// Point-to-point NIC parameters from perftest (ib_write_lat: latency; ib_write_bw: bandwidth).
struct NicCalibration {
  double latency_s = 0;  // one way, 0 when unknown
  double beta_Bps = 0;   // per NIC per direction, 0 when unknown
  std::vector<CalibrationSource> sources;
  // What the values rest on where it is not a fit: one-size tables (the other parameter is left to the
  // topology), server and client tables used once, halved bidirectional sums and read round trips.
  std::vector<std::string> notes;
};

// NCCL's SHM transport, one channel: a thread block streaming through pinned host memory (the
// ccsim-probe-cuda host_kernel test, 1 block reading). Applied as node.pcie.shm_channel_GBps, and the
// step's flag handoff through pinned host memory (host_flag) as node.pcie.shm_step_us.
struct ShmCalibration {
  double channel_Bps = 0;  // per channel, per direction
  double step_s = 0;       // one way, a flag between two thread blocks through pinned host memory; 0: not measured
  std::vector<CalibrationSource> sources;
  std::vector<std::string> notes;
};

// Settings of the description fitted through ccsim's own model to measured runs (`ccsim calibrate LOG
// --topology ...`, scenarios/model_fit.h): the achievable fraction of the rate of the link that bounds
// a run's plateau (node.{nvlink,pcie,nic}.efficiency), and the cost that sets its latency side (the
// network's per-step latency node.nic.latency_us, or with nccl-tests -g N the host's launch
// node.cpu.launch_us). A topology change, like the NIC and SHM figures: NCCL's tuner still chooses,
// for every collective (all-to-all and send/recv included), at any node count.
struct FittedSettings {
  std::map<std::string, double> settings;  // fitted_setting_keys() -> value within fitted_setting_range()
  std::vector<CalibrationSource> sources;
  std::vector<std::string> notes;
};

struct Calibration {
  std::map<std::string, ClassCalibration> classes;  // "nvlink", "pcie", "net"
  std::optional<NicCalibration> nic;
  std::optional<ShmCalibration> shm;
  std::optional<FittedSettings> fitted;
};

const std::vector<std::string>& calibration_classes();  // {"nvlink", "pcie", "net"}
// The settings a FittedSettings may hold: node.nvlink.efficiency, node.pcie.efficiency,
// node.nic.efficiency (in (0, 1]), node.gpu.net_ring_channel_GBps (in (0, 10000] GB/s),
// node.nic.latency_us (0 .. 1000 us), node.cpu.launch_us (0.01 .. 1000 us).
const std::vector<std::string>& fitted_setting_keys();
// The range a fitted setting's value must lie in (a JSON value outside it is refused; a fit stops at
// its ends).
struct FittedSettingRange {
  double min = 0, max = 0;
  bool min_inclusive = true;  // false for an efficiency: (0, 1]
};
FittedSettingRange fitted_setting_range(const std::string& key);

// Whether the calibration holds a ring class (fitted from nccl-tests or the nccl probe): only then
// does predict replay the calibrated ring. One with NIC (perftest, verbs probe), SHM (cuda probe) or
// fitted settings (a run fitted through the model) only is a topology change (calibration_effect's overrides), and NCCL's tuner still chooses
// the algorithm and protocol.
bool calibrates_ring(const Calibration& cal);
// `cal` when it calibrates the ring, else nullptr: what PredictRequest::calibration takes.
const Calibration* ring_calibration(const Calibration* cal);

// ---- Building a calibration ----

// A measured ring curve: message sizes (nccl-tests size column) and times, several measurements per
// size allowed (out-of-place and in-place).
struct RingCurve {
  std::string file;
  int run = 0;
  std::string collective;  // all_reduce, all_gather, reduce_scatter
  int ranks = 0, nodes = 0;
  int gpus_per_thread = 1;  // nccl-tests -g (the header's nGpus): GPUs one thread launched serially
  std::string path_class;  // nvlink, pcie, net
  std::string collective_source;  // how the collective was told (calibrate/nccl_tests_infer.h)
  std::vector<double> sizes, times_s;
  // Said to the user but not fatal: a table without nccl-tests' closing "Avg bus bandwidth" line
  // (a log cut short: its largest sizes, which set beta, are missing).
  std::vector<std::string> warnings;
};

struct NcclTestsOptions {
  int ranks = 0;                // 0: from the log (device list, or nThread*nGpus for one process)
  int nodes = 0;                // 0: from the device list's host names, else 1 for one process
  std::string path_class;       // "": guessed (several nodes: net; else peak busbw > 64 GB/s: nvlink; else pcie)
  std::string collective;       // "": from the log
};

// all_reduce, all_gather, reduce_scatter: the collectives with a ring model to calibrate.
bool is_ring_collective(const std::string& collective);
// The path class of a measured ring: several nodes: net; else a busbw above any PCIe link's (64 GB/s,
// Gen5 x16 is 63): nvlink; else pcie.
std::string ring_path_class(int nodes, double peak_busbw_Bps);
// InputError("--class" / "--collective") for an unknown class or a collective without a ring model.
void check_calibration_options(const NcclTestsOptions& options);

// Reads every run of an nccl-tests log as ring curves. InputError names the file (and "--ranks",
// "--nodes", "--class" or "--collective" when a flag is needed or wrong).
std::vector<RingCurve> ring_curves_from_nccl_tests(const std::string& path, const NcclTestsOptions& options);
// The same from the log's text, already read (once: the path may be a pipe).
std::vector<RingCurve> ring_curves_from_nccl_tests_text(const std::string& path, const std::string& text,
                                                        const NcclTestsOptions& options);

// Fits the curves class by class. launch: with curves of several rank counts in a class, launch and
// alpha are fitted together from the intercepts (a = launch + steps*alpha); with one rank count they
// are not separable and launch = default_launch_s (NCCL's baseLat 8.4 us). InputError when a curve
// has no bandwidth regime.
Calibration calibrate_ring_curves(const std::vector<RingCurve>& curves, double default_launch_s = StepTiming{}.launch_s);

// Adds NIC parameters from a perftest log (ib_*_lat: latency; ib_*_bw: bandwidth) when the perftest
// importer reads it: a table of 3 or more sizes is fitted; one of 1 or 2 sizes gives the quantity its
// test measures (bandwidth: the average bandwidth at the largest size; latency: t_typical at the
// smallest), the other is left as it was (docs/calibration.md, "perftest"). Server and client tables
// of one run count once (select_perftest_runs). InputError for logs without a usable table.
void add_perftest_file(Calibration& cal, const std::string& path);
void add_perftest_text(Calibration& cal, const std::string& path, const std::string& text);
// The same from tables already selected (select_perftest_runs, or the verbs probe's samples as
// perftest tables: calibrate/probe_import.h); `notes` are kept with the NIC's. False (the calibration
// unchanged) when no table has a bandwidth or latency value.
bool add_perftest_runs(Calibration& cal, const std::string& path, const std::vector<PerftestRun>& runs,
                       const std::vector<std::string>& notes);

// ---- Files ----

std::string calibration_to_json(const Calibration& cal);
// InputError("FILE", "/classes/nvlink/beta_Bps: must be a number > 0 ...") for bad files.
Calibration load_calibration(const std::string& path);
Calibration calibration_from_json(const nlohmann::json& doc, const std::string& source);

// ---- Using a calibration ----

// The efficiency of the bandwidth term at a message size: piecewise-linear in log(size) between the
// class's knots, flat outside; 1.0 when the class is absent or has no knots.
double calibration_efficiency(const Calibration& cal, const std::string& path_class, double size_bytes);

// The calibrated closed-form ring time of a class for a collective on n ranks (the closed form of
// algorithms/closed_form.h with beta scaled by the efficiency at that size).
double calibrated_ring_time_s(const ClassCalibration& c, const std::string& collective, int nranks,
                              double size_bytes);

struct CalibrationEffect {
  std::vector<std::string> spec_overrides;  // --set style, e.g. "node.nvlink.GBps_per_link=20.6"
  StepTiming timing;                        // per-step latencies and launch
  std::vector<std::string> notes;           // what could not be applied exactly, and why
  // Per class: the fitted ring bandwidth over what the described ring reaches with the overrides
  // applied, where a link other than the fitted one bounds it (a net fit above the ring's bound through
  // the NICs' PCIe: NCCL ran NVLSTree). The calibrated ring's bandwidth term is scaled by it
  // (scale_ring_efficiency), so that the equivalent ring gives back the measured rate; 1 elsewhere.
  std::map<std::string, double> ring_bandwidth_scale;
};

// The calibration with each class's efficiency curve multiplied by effect.ring_bandwidth_scale: what
// the replay of the calibrated ring uses.
Calibration scale_ring_efficiency(Calibration cal, const CalibrationEffect& effect);

// How a calibration changes a topology (spec as loaded, --set and --nodes applied) and the step
// timing (defaults: the timing in use without calibration). See docs/calibration.md.
CalibrationEffect calibration_effect(const Calibration& cal, const nlohmann::json& topology_spec,
                                     const StepTiming& defaults);

}  // namespace ccsim
