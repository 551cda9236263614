// Reader for NCCL topology XML files (NCCL_TOPO_FILE inputs and NCCL_TOPO_DUMP_FILE dumps):
//   <system version="1">
//     <cpu numaid="0" affinity="..." arch="x86_64" vendor="AuthenticAMD" familyid="23" modelid="49">
//       <pci busid="0000:0a:00.0" class="0x060400" link_speed="16.0 GT/s" link_width="16">
//         <pci busid="0000:0b:00.0" class="0x030200" link_speed="16.0 GT/s" link_width="16">
//           <gpu dev="0" sm="80" rank="0" gdr="1"><nvlink target="0000:c0:00.0" count="2" tclass="0x068000"/></gpu>
//         </pci>
//         <pci busid="..." class="0x020700" ...><nic><net name="mlx5_0" dev="0" speed="200000" port="1" gdr="1" .../></nic></pci>
//       </pci>
//     </cpu>
//   </system>
// and their conversion to a ccsim-topology/1 node template. The XML reader is a small strict one for this
// format: elements with attributes (quoted with " or '), nesting, self-closing tags, comments, an optional
// <?xml ...?> declaration; no text content, DTDs or CDATA. Every syntax error names the file and line.
#pragma once
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ccsim {

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // in file order, entities decoded
  std::vector<XmlElement> children;
  int line = 0;  // line of the start tag

  bool has(const std::string& attr) const;
  const std::string& attr(const std::string& attr, const std::string& fallback = empty()) const;
  // All descendants (not this element) named `name`, depth first in document order.
  std::vector<const XmlElement*> descendants(const std::string& name) const;

 private:
  static const std::string& empty();
};

struct NcclTopoXml {
  XmlElement system;  // the root element, always named "system"
  std::string filename;
};

// Throws InputError(filename, "line N: ...") for malformed XML (unclosed or mismatched tags, bad attribute
// syntax, duplicate attributes, text content, a second root) and for a root other than <system>.
NcclTopoXml parse_nccl_topo_xml(std::istream& in, const std::string& filename);
NcclTopoXml parse_nccl_topo_xml_file(const std::string& path);

// A ccsim-topology/1 spec (nodes = 1) approximating the node: GPUs (<gpu> elements, or PCI leaves of class
// 0x03xxxx in input files without them) with arch from `sm`, NVLink links per GPU (sum of <nvlink count>) and
// NVSwitch (tclass 0x068000), NICs (<net> elements, or PCI class 0x02xxxx leaves) with speed (Mb/s -> Gb/s)
// and GDR, PCIe generation from link_speed ("16.0 GT/s" -> 4) and width, sockets from <cpu> elements (NUMA
// nodes as NCCL sees them), PCIe switch layout from the bridges (class 0x0604xx) above the GPUs. What the XML
// does not say is guessed and listed in the spec's "description". Throws InputError(source ...) when the file
// has no GPU.
nlohmann::json node_spec_from_nccl_xml(const NcclTopoXml& xml, const std::string& source);

}  // namespace ccsim
