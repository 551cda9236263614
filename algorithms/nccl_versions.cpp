#include "algorithms/nccl_versions.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

#include "algorithms/nccl_model.h"
#include "common/error.h"
#include "common/text.h"

namespace ccsim {

namespace {

static_assert(kNumAlgos == 7 && kNumProtos == 3, "NcclTunerConstants is laid out for 7 algorithms x 3 protocols");

// --- NCCL 2.19-2.21: src/graph/tuning.cc of NVIDIA/nccl at b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2
// (makefiles/version.mk there: 2.20.3). 2.19.x and 2.21.x are taken to be equal (not read).
namespace v2_19 {
const double baseLat[7][3] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
const double hwLat[3][7][3] = {
    {{.6, 1.25, 28}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 23}, {0, 0, 23}, {0, 0, 0}},
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
    {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}, {0, 0, 0}}};
// Three rows in the source (Volta, Ampere, Hopper); sm100 reads Hopper's (blackwell_rows = false),
// so the fourth row only repeats Hopper's.
const double llMaxBws[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}};
const double perChMaxRingLL128Bws[4][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}};
const double perChMaxTreeLL128Bws[4][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}};
const double perChMaxTreeBws[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}};
}  // namespace v2_19

// --- NCCL 2.22: 2.20.3's tables but NVLS and NVLSTree's NVLink latency 25 us (2.23's) instead of 23.
// Source: NCCL 2.22.3's own cost-model times, printed per size by its tuner on 3 nodes of 8 H100
// (NVIDIA/nccl#1453, tests/data/nccl-tests/h100x24-3node-tuner-debug-nccl2.22.3.txt): NVLSTree/Simple
// 59.55, 66.11 and 79.21 us at 512 KiB, 1 and 2 MiB, 2.00 us above 2.20.3's constants at each, while
// its Tree and Ring times equal them to 0.01 us. NVLS's entry is taken with NVLSTree's (the two are
// equal in every table read).
namespace v2_22 {
struct HwLat {
  double v[3][7][3];
};
const HwLat hwLat = [] {
  HwLat t{};
  std::memcpy(t.v, v2_19::hwLat, sizeof t.v);
  t.v[nccl230::kHwNvlink][static_cast<int>(Algo::NVLS)][static_cast<int>(Proto::Simple)] = 25;
  t.v[nccl230::kHwNvlink][static_cast<int>(Algo::NVLSTree)][static_cast<int>(Proto::Simple)] = 25;
  return t;
}();
}  // namespace v2_22

// --- NCCL 2.23-2.26: src/graph/tuning.cc of that line as stored in the code index (repository and tag
// not identified): it has PAT and NCCL_MAX_DEV_WORK_BATCH_COLLS (both new in 2.23) and sm100 rows at
// twice Hopper's, and lacks 2.27's ncclTunerConstants (nvlsEfficiency, perChMaxNVLSTreeBws).
namespace v2_23 {
// PAT's latency is "8 + ..." in the source (assigned, not added to a baseLat), hence 8.0 here.
const double baseLat[7][3] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0, 8.0, 8.0}};
// PAT has no hwLat column in the source: its only latency term is the network's at one GPU per
// node, which is Tree's (one_ppn_tree_net_latency).
const double hwLat[3][7][3] = {
    {{.6, 1.25, 4.0}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 0}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}, {0, 0, 0}}};
// llMaxBws equals 2.30's (Blackwell 2 x 141, 2 x 45, 2 x 35); the Blackwell rows below are 2 x Hopper's.
const double perChMaxRingLL128Bws[4][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {73.4, 73.4, 73.4}};
const double perChMaxTreeLL128Bws[4][3] = {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {73.4, 73.4, 58.0}};
const double perChMaxTreeBws[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {77.4, 82.8, 72.0}};
}  // namespace v2_23

using Row3 = const double (*)[3];

// A range's tables: the six every release has (perChMaxNVLSTreeBws and nvlsEfficiency only from 2.27).
NcclTunerConstants range_with_tables(int first_minor, int last_minor, const char* source, Row3 baseLat,
                                     const double (*hwLat)[7][3], Row3 llMaxBws, Row3 ringLL128, Row3 treeLL128,
                                     Row3 tree) {
  NcclTunerConstants c;
  c.first_minor = first_minor;
  c.last_minor = last_minor;
  c.source = source;
  c.baseLat = baseLat;
  c.hwLat = hwLat;
  c.llMaxBws = llMaxBws;
  c.perChMaxRingLL128Bws = ringLL128;
  c.perChMaxTreeLL128Bws = treeLL128;
  c.perChMaxTreeBws = tree;
  return c;
}

// The rules 2.19-2.22 share (2.20.3's).
void set_2_19_rules(NcclTunerConstants& c) {
  c.blackwell_rows = false;
  c.pat = false;
  c.ring_ll_half = false;
  c.ring_ll128_one_ppn_discount = true;
  c.allreduce_inter_steps_2n = true;
  c.one_ppn_tree_net_latency = false;
  c.ll128_listed_archs_only = true;
  c.nvls_agrs_min_intra_share = false;
  c.non_ring_agrs_keep_busbw = false;
  c.nvlstree_correction_sm100 = false;
  c.ll128_over_p2c = false;
}

NcclTunerConstants make_2_19() {
  NcclTunerConstants c = range_with_tables(19, 21, "NVIDIA/nccl src/graph/tuning.cc at b6475625 (v2.20.3)", v2_19::baseLat,
                                           v2_19::hwLat, v2_19::llMaxBws, v2_19::perChMaxRingLL128Bws,
                                           v2_19::perChMaxTreeLL128Bws, v2_19::perChMaxTreeBws);
  set_2_19_rules(c);
  return c;
}

NcclTunerConstants make_2_22() {
  NcclTunerConstants c = range_with_tables(
      22, 22, "v2.20.3's src/graph/tuning.cc with NVLS/NVLSTree NVLink latency 25 us (NCCL 2.22.3's printed model times, NVIDIA/nccl#1453)",
      v2_19::baseLat, v2_22::hwLat.v, v2_19::llMaxBws, v2_19::perChMaxRingLL128Bws, v2_19::perChMaxTreeLL128Bws,
      v2_19::perChMaxTreeBws);
  set_2_19_rules(c);
  return c;
}

NcclTunerConstants make_2_23() {
  NcclTunerConstants c = range_with_tables(
      23, 26, "src/graph/tuning.cc of the 2.23-2.26 line (PAT, NCCL_MAX_DEV_WORK_BATCH_COLLS, sm100 = 2 x Hopper)",
      v2_23::baseLat, v2_23::hwLat, nccl230::llMaxBws, v2_23::perChMaxRingLL128Bws, v2_23::perChMaxTreeLL128Bws,
      v2_23::perChMaxTreeBws);
  c.nvlstree_correction_sm100 = false;
  c.ll128_over_p2c = false;
  return c;
}

NcclTunerConstants make_2_27() {
  NcclTunerConstants c = range_with_tables(
      27, 30, "NCCL 2.30.7 src/graph/tuning.cc ncclTunerConstantsDefaults (2.28.7's table is the same)", nccl230::baseLat,
      nccl230::hwLat, nccl230::llMaxBws, nccl230::perChMaxRingLL128Bws, nccl230::perChMaxTreeLL128Bws,
      nccl230::perChMaxTreeBws);
  c.perChMaxNVLSTreeBws = nccl230::perChMaxNVLSTreeBws;
  c.nvlsEfficiency = nccl230::nvlsEfficiency;
  return c;
}

// Oldest first; contiguous minors from the first range's to the last's.
const NcclTunerConstants kRanges[] = {make_2_19(), make_2_22(), make_2_23(), make_2_27()};

const NcclTunerConstants* range_of(int minor) {
  for (const auto& r : kRanges)
    if (minor >= r.first_minor && minor <= r.last_minor) return &r;
  return nullptr;
}

// Digits at text[*i..]; -1 when there are none (or too many to be a version).
int read_number(const std::string& text, std::size_t* i) {
  std::size_t j = *i;
  while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) && j - *i < 6) ++j;
  if (j == *i || (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])))) return -1;
  const int v = std::atoi(text.substr(*i, j - *i).c_str());
  *i = j;
  return v;
}

}  // namespace

std::string NcclVersion::label() const {
  std::string s = std::string("NCCL ").append(std::to_string(major)).append(".").append(std::to_string(minor));
  if (patch_given) s.append(".").append(std::to_string(patch));
  return s;
}

std::string NcclVersion::range() const {
  if (!tuner) return "";
  const std::string first = "2." + std::to_string(tuner->first_minor);
  return tuner->first_minor == tuner->last_minor ? first : first + "-2." + std::to_string(tuner->last_minor);
}

std::string supported_nccl_versions() {
  const auto& first = kRanges[0];
  const auto& last = kRanges[sizeof kRanges / sizeof kRanges[0] - 1];
  return "2." + std::to_string(first.first_minor) + "-2." + std::to_string(last.last_minor);
}

const NcclVersion& default_nccl_version() {
  static const NcclVersion v = [] {
    NcclVersion d;
    d.tuner = range_of(d.minor);
    return d;
  }();
  return v;
}

bool nccl_p2p_net_channels_by_bandwidth(const NcclVersion& v) { return v.major > 2 || (v.major == 2 && v.minor >= 29); }

NcclVersion parse_nccl_version(const std::string& text, const std::string& where) {
  const std::string expect = "expected X.Y or X.Y.Z, e.g. 2.19 or 2.19.4";
  const std::string not_a_version =
      std::string("'").append(cut_for_message(text)).append("' is not a NCCL version (").append(expect).append(")");
  NcclVersion v;
  std::size_t i = 0;
  v.major = read_number(text, &i);
  if (v.major < 0 || i >= text.size() || text[i] != '.') throw InputError(where, not_a_version);
  ++i;
  v.minor = read_number(text, &i);
  if (v.minor < 0) throw InputError(where, not_a_version);
  v.patch_given = i < text.size() && text[i] == '.';
  v.patch = 0;
  if (v.patch_given) {
    ++i;
    v.patch = read_number(text, &i);
    if (v.patch < 0) throw InputError(where, not_a_version);
  }
  // NCCL prints "2.19.4+cuda12.2"; the build suffix says nothing about the tuner.
  if (i < text.size() && text[i] != '+') throw InputError(where, not_a_version);
  v.tuner = v.major == 2 ? range_of(v.minor) : nullptr;
  if (!v.tuner)
    throw InputError(where, "NCCL " + text.substr(0, i) + " is outside the tuner versions ccsim models (" +
                                supported_nccl_versions() + "; docs/nccl-model.md \"NCCL versions\")");
  return v;
}

}  // namespace ccsim
