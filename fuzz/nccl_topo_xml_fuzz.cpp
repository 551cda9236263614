// libFuzzer target: the NCCL topology XML parser (calibrate/nccl_topo_xml.h, NCCL_TOPO_DUMP_FILE
// output) and the node spec `ccsim topo --from-nccl-xml` derives from it. Contract
// (fuzz_input.h): a spec, or InputError.
#include <sstream>

#include "calibrate/nccl_topo_xml.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ccsim::fuzz::check_contract([&] {
    std::istringstream in(ccsim::fuzz::input_text(data, size));
    const auto xml = ccsim::parse_nccl_topo_xml(in, "fuzz.xml");
    ccsim::node_spec_from_nccl_xml(xml, "fuzz.xml");
  });
}
