// Topology presets shipped as JSON under topologies/presets/ and compiled into the binary.
#pragma once
#include <map>
#include <string>

namespace ccsim {

// name (file stem, e.g. "dgx-h100") -> JSON text. Generated at build time by cmake/EmbedPresets.cmake.
const std::map<std::string, std::string>& embedded_presets();

}  // namespace ccsim
