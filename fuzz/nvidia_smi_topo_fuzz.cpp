// libFuzzer target: the `nvidia-smi topo -m` matrix parser (calibrate/nvidia_smi_topo.h) and the
// node spec `ccsim topo --from-nvidia-smi` derives from it. Contract (fuzz_input.h): a spec, or
// InputError.
#include <sstream>

#include "calibrate/nvidia_smi_topo.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ccsim::fuzz::check_contract([&] {
    std::istringstream in(ccsim::fuzz::input_text(data, size));
    const auto topo = ccsim::parse_nvidia_smi_topo(in, "fuzz.txt");
    ccsim::node_spec_from_nvidia_smi(topo, "fuzz.txt");
  });
}
