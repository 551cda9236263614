#include "calibrate/nccl_topo_xml.h"

#include <algorithm>
#include <filesystem>
#include <cctype>
#include <cmath>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/input_file.h"
#include "common/text.h"

namespace ccsim {

const std::string& XmlElement::empty() {
  static const std::string e;
  return e;
}
bool XmlElement::has(const std::string& a) const {
  for (const auto& [k, v] : attributes)
    if (k == a) return true;
  return false;
}
const std::string& XmlElement::attr(const std::string& a, const std::string& fallback) const {
  for (const auto& [k, v] : attributes)
    if (k == a) return v;
  return fallback;
}
std::vector<const XmlElement*> XmlElement::descendants(const std::string& n) const {
  std::vector<const XmlElement*> out;
  std::function<void(const XmlElement&)> walk = [&](const XmlElement& e) {
    for (const auto& c : e.children) {
      if (c.name == n) out.push_back(&c);
      walk(c);
    }
  };
  walk(*this);
  return out;
}

namespace {

constexpr int kMaxXmlDepth = 64;

class XmlReader {
 public:
  XmlReader(std::string text, std::string filename) : s_(std::move(text)), file_(std::move(filename)) {}

  XmlElement parse_document() {
    skip_misc(true);
    if (pos_ >= s_.size()) fail("no XML element found (empty file?)");
    if (s_[pos_] != '<') fail_text();
    XmlElement root = parse_element();
    skip_misc(false);
    if (pos_ < s_.size()) {
      if (s_[pos_] == '<') fail("a second top-level element after </" + root.name + "> (closed on an earlier line)");
      fail_text();
    }
    return root;
  }

 private:
  std::string s_, file_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  int line_ = 1;

  [[noreturn]] void fail(const std::string& msg) const { throw InputError(file_, "line " + std::to_string(line_) + ": " + msg); }
  [[noreturn]] void fail_text() const {
    std::size_t e = s_.find_first_of("<\n", pos_);
    fail("unexpected text '" + s_.substr(pos_, std::min<std::size_t>(e == std::string::npos ? 40 : e - pos_, 40)) +
         "' (NCCL topology XML has only elements and attributes)");
  }
  bool at(const char* p) const { return s_.compare(pos_, std::char_traits<char>::length(p), p) == 0; }
  void advance(std::size_t n = 1) {
    for (std::size_t i = 0; i < n && pos_ < s_.size(); ++i, ++pos_)
      if (s_[pos_] == '\n') ++line_;
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) advance();
  }
  void skip_comment() {
    int start = line_;
    advance(4);
    std::size_t e = s_.find("-->", pos_);
    if (e == std::string::npos) {
      line_ = start;
      fail("comment '<!--' is not closed (end of file reached)");
    }
    advance(e + 3 - pos_);
  }
  // Whitespace, comments, and (in the prolog) <?xml ...?> declarations.
  void skip_misc(bool prolog) {
    for (;;) {
      skip_ws();
      if (at("<!--")) skip_comment();
      else if (at("<?")) {
        if (!prolog) fail("processing instruction '<?' after the root element");
        std::size_t e = s_.find("?>", pos_);
        if (e == std::string::npos) fail("'<?' is not closed by '?>'");
        advance(e + 2 - pos_);
      } else if (at("<!")) {
        fail("DTD/CDATA sections are not supported in NCCL topology XML");
      } else {
        return;
      }
    }
  }
  static bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
  static bool name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '-' || c == '.';
  }
  std::string read_name(const char* what) {
    if (pos_ >= s_.size()) fail("end of file while reading " + std::string(what));
    if (!name_start(s_[pos_])) fail(std::string("expected ") + what + ", got '" + s_[pos_] + "'");
    std::size_t b = pos_;
    while (pos_ < s_.size() && name_char(s_[pos_])) advance();
    return s_.substr(b, pos_ - b);
  }
  std::string decode(const std::string& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] != '&') {
        out += v[i];
        continue;
      }
      std::size_t e = v.find(';', i);
      if (e == std::string::npos) fail("unterminated entity in attribute value '" + v + "'");
      std::string ent = v.substr(i + 1, e - i - 1);
      if (ent == "amp") out += '&';
      else if (ent == "lt") out += '<';
      else if (ent == "gt") out += '>';
      else if (ent == "quot") out += '"';
      else if (ent == "apos") out += '\'';
      else if (!ent.empty() && ent[0] == '#') {
        long code = ent.size() > 1 && (ent[1] == 'x' || ent[1] == 'X') ? std::strtol(ent.c_str() + 2, nullptr, 16)
                                                                        : std::strtol(ent.c_str() + 1, nullptr, 10);
        if (code <= 0 || code > 127) fail("unsupported character reference '&" + ent + ";'");
        out += static_cast<char>(code);
      } else {
        fail("unknown entity '&" + ent + ";'");
      }
      i = e;
    }
    return out;
  }

  XmlElement parse_element() {
    // NCCL's topology is a few levels deep (system, cpu, pci switches, gpu/nic): refuse runaway
    // nesting before the recursion exhausts the stack.
    if (++depth_ > kMaxXmlDepth) fail("elements nested deeper than " + std::to_string(kMaxXmlDepth) + " levels");
    struct Leave {
      int& d;
      ~Leave() { --d; }
    } leave{depth_};
    XmlElement e;
    e.line = line_;
    advance();  // '<'
    e.name = read_name("an element name after '<'");
    for (;;) {
      std::size_t before = pos_;
      skip_ws();
      if (pos_ >= s_.size()) fail("end of file inside the start tag <" + e.name + "> (line " + std::to_string(e.line) + ")");
      if (at("/>")) {
        advance(2);
        return e;
      }
      if (s_[pos_] == '>') {
        advance();
        break;
      }
      if (pos_ == before) fail("expected whitespace, '>' or '/>' in <" + e.name + ">, got '" + s_[pos_] + "'");
      std::string key = read_name("an attribute name");
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '=') fail("attribute '" + key + "' of <" + e.name + "> has no '=value'");
      advance();
      skip_ws();
      if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\''))
        fail("value of attribute '" + key + "' of <" + e.name + "> must be quoted");
      char q = s_[pos_];
      int vline = line_;
      advance();
      std::size_t end = s_.find(q, pos_);
      if (end == std::string::npos) {
        line_ = vline;
        fail("value of attribute '" + key + "' is not closed (end of file reached)");
      }
      std::string raw = s_.substr(pos_, end - pos_);
      if (raw.find('<') != std::string::npos) fail("'<' in the value of attribute '" + key + "' (missing closing quote?)");
      advance(end + 1 - pos_);
      if (e.has(key)) fail("duplicate attribute '" + key + "' in <" + e.name + ">");
      e.attributes.emplace_back(key, decode(raw));
    }
    // Content: child elements, comments, whitespace, then </name>.
    for (;;) {
      skip_ws();
      if (pos_ >= s_.size())
        fail("end of file: <" + e.name + "> opened on line " + std::to_string(e.line) + " is not closed (truncated file?)");
      if (at("<!--")) {
        skip_comment();
        continue;
      }
      if (at("</")) {
        advance(2);
        std::string n = read_name("an element name after '</'");
        skip_ws();
        if (pos_ >= s_.size() || s_[pos_] != '>') fail("expected '>' after '</" + n + "'");
        if (n != e.name)
          fail("closing tag </" + n + "> does not match <" + e.name + "> opened on line " + std::to_string(e.line));
        advance();
        return e;
      }
      if (s_[pos_] == '<') {
        if (at("<?") || at("<!")) fail("unexpected '" + s_.substr(pos_, 2) + "' inside <" + e.name + ">");
        e.children.push_back(parse_element());
        continue;
      }
      fail_text();
    }
  }
};

// "0x030200" -> 0x030200; -1 if absent or malformed.
long pci_class(const XmlElement& e) {
  const std::string& c = e.attr("class");
  if (c.empty()) return -1;
  char* end = nullptr;
  long v = std::strtol(c.c_str(), &end, 16);
  return end && *end == '\0' ? v : -1;
}

// "16.0 GT/s", "16 GT/s" -> 4; 0 if unknown.
int pcie_gen_from_speed(const std::string& s) {
  char* end = nullptr;
  double gts = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return 0;
  const double table[] = {2.5, 5, 8, 16, 32, 64};
  for (int i = 0; i < 6; ++i)
    if (std::fabs(gts - table[i]) < 0.3) return i + 1;
  return 0;
}

struct PciInfo {
  const XmlElement* pci = nullptr;  // the <pci> element of the device
  const XmlElement* cpu = nullptr;  // its <cpu>
  int bridges_above = 0;            // number of <pci> bridges between the CPU and the device
  const XmlElement* top_bridge = nullptr;
};

int most_common(const std::vector<int>& v, int fallback) {
  std::map<int, int> c;
  for (int x : v)
    if (x > 0) c[x]++;
  int best = fallback, n = 0;
  for (auto [k, m] : c)
    if (m > n) best = k, n = m;
  return best;
}

}  // namespace

NcclTopoXml parse_nccl_topo_xml(std::istream& in, const std::string& filename) {
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  XmlReader r(std::move(text), filename);
  NcclTopoXml x;
  x.filename = filename;
  x.system = r.parse_document();
  if (x.system.name != "system")
    throw InputError(filename, "line " + std::to_string(x.system.line) + ": root element is <" + x.system.name +
                                   ">, an NCCL topology file has <system>");
  return x;
}

NcclTopoXml parse_nccl_topo_xml_file(const std::string& path) {
  std::istringstream f(read_input_file(path, "NCCL topology XML"));
  return parse_nccl_topo_xml(f, path);
}

nlohmann::json node_spec_from_nccl_xml(const NcclTopoXml& xml, const std::string& source) {
  auto fail_at = [&](const XmlElement& e, const std::string& msg) -> void {
    throw InputError(source, "line " + std::to_string(e.line) + ": " + msg);
  };
  std::vector<std::string> notes, guesses;

  // Walk the tree once, collecting GPUs and NICs with their PCI context.
  struct Gpu {
    const XmlElement* gpu = nullptr;  // <gpu> or null for a bare PCI leaf
    PciInfo pci;
  };
  struct Net {
    const XmlElement* net = nullptr;  // <net> or null for a bare PCI leaf
    PciInfo pci;
  };
  std::vector<Gpu> gpus;
  std::vector<Net> nets;
  std::vector<const XmlElement*> cpus;
  std::function<void(const XmlElement&, const XmlElement*, int, const XmlElement*, const XmlElement*)> walk =
      [&](const XmlElement& e, const XmlElement* cpu, int bridges, const XmlElement* top, const XmlElement* pci) {
        if (e.name == "cpu") {
          cpus.push_back(&e);
          cpu = &e;
          bridges = 0;
          top = nullptr;
        }
        if (e.name == "gpu") gpus.push_back({&e, {pci, cpu, bridges, top}});
        if (e.name == "net") nets.push_back({&e, {pci, cpu, bridges, top}});
        if (e.name == "pci") {
          long cls = pci_class(e);
          if (e.attr("class").empty() || cls < 0) fail_at(e, "<pci> without a valid class attribute (e.g. class=\"0x030200\")");
          bool has_gpu = !e.descendants("gpu").empty(), has_net = !e.descendants("net").empty();
          bool is_bridge = (cls >> 8) == 0x0604;
          if (e.children.empty() || (!is_bridge && !has_gpu && !has_net)) {
            // A leaf device without NCCL's child elements (NCCL_TOPO_FILE inputs).
            if ((cls >> 16) == 0x03) gpus.push_back({nullptr, {&e, cpu, bridges, top}});
            else if ((cls >> 16) == 0x02) nets.push_back({nullptr, {&e, cpu, bridges, top}});
          }
          for (const auto& c : e.children) walk(c, cpu, bridges + (is_bridge ? 1 : 0), is_bridge && !top ? &e : top, &e);
          return;
        }
        for (const auto& c : e.children) walk(c, cpu, bridges, top, pci);
      };
  walk(xml.system, nullptr, 0, nullptr, nullptr);
  if (gpus.empty()) throw InputError(source, "no GPU in the NCCL topology (no <gpu> element and no <pci> of class 0x03xxxx)");
  const int G = static_cast<int>(gpus.size());

  // --- GPU arch ---
  std::set<std::string> sms;
  for (const auto& g : gpus)
    if (g.gpu && g.gpu->has("sm")) sms.insert(g.gpu->attr("sm"));
  int sm = 0;
  std::string arch = "unknown";
  if (!sms.empty()) {
    const std::string& s = *sms.begin();
    char* end = nullptr;
    sm = static_cast<int>(std::strtol(s.c_str(), &end, 10));
    if (end == s.c_str() || *end != '\0') fail_at(*gpus[0].gpu, "<gpu sm=\"" + s + "\">: sm must be an integer such as 90");
    arch = "sm" + s;
    if (sms.size() > 1) notes.push_back("GPUs of several architectures; sm" + s + " used");
  } else {
    guesses.push_back("GPU architecture (no <gpu sm=...>)");
  }

  // --- NVLink ---
  nlohmann::json nvlink = nullptr;
  std::vector<int> links;
  bool to_switch = false, any_nvlink = false;
  for (const auto& g : gpus) {
    int n = 0;
    if (g.gpu)
      for (const auto& c : g.gpu->children)
        if (c.name == "nvlink") {
          char* end = nullptr;
          const std::string cnt = c.has("count") ? c.attr("count") : std::string("1");
          long k = std::strtol(cnt.c_str(), &end, 10);
          if (end == cnt.c_str() || *end != '\0' || k < 1) fail_at(c, "<nvlink count=\"" + cnt + "\">: expected a positive integer");
          n += static_cast<int>(k);
          any_nvlink = true;
          if (c.attr("tclass") == "0x068000") to_switch = true;
        }
    links.push_back(n);
  }
  int nvlink_gen = 0;
  if (any_nvlink) {
    int lmin = *std::min_element(links.begin(), links.end());
    int lmax = *std::max_element(links.begin(), links.end());
    if (lmin == 0) {
      notes.push_back("some GPUs have no NVLink: NVLink not modelled");
    } else {
      if (lmin != lmax) notes.push_back("GPUs have " + std::to_string(lmin) + " to " + std::to_string(lmax) + " NVLinks; " + std::to_string(lmin) + " used");
      bool nvswitch = to_switch || G > 2;
      if (!to_switch && G > 2) notes.push_back("GPU-to-GPU NVLink mesh modelled as an NVSwitch");
      double per_link = 25.0;
      if (sm >= 100) nvlink_gen = 5, per_link = 50.0;
      else if (sm >= 90) nvlink_gen = 4;
      else if (sm >= 80) nvlink_gen = 3;
      else if (sm >= 70) nvlink_gen = 2;
      else if (sm >= 60) nvlink_gen = 1, per_link = 20.0;
      bool nvls = nvswitch && to_switch && sm >= 90;
      nvlink = {{"generation", nvlink_gen}, {"links_per_gpu", lmin}, {"GBps_per_link", per_link}, {"nvswitch", nvswitch}, {"nvls", nvls}};
      guesses.push_back("NVLink " + std::to_string(per_link).substr(0, 4) + " GB/s per link (from sm)");
    }
  } else {
    notes.push_back("no <nvlink> elements: NVLink unknown, not modelled (add it with --set node.nvlink.links_per_gpu=... if present)");
  }

  // --- sockets / CPU ---
  int sockets = std::max<int>(1, static_cast<int>(cpus.size()));
  if (sockets > 8) {
    notes.push_back(std::to_string(sockets) + " <cpu> elements; capped at 8 sockets");
    sockets = 8;
  }
  std::string vendor = "unknown";
  if (!cpus.empty()) {
    const std::string& v = cpus[0]->attr("vendor");
    const std::string& a = cpus[0]->attr("arch");
    if (v == "AuthenticAMD") vendor = "amd";
    else if (v == "GenuineIntel") vendor = "intel";
    else if (a == "arm64" || a == "aarch64") vendor = "arm";
    else if (!v.empty()) vendor = v;
  }
  // NCCL's tuner reads the Intel model (family 6) for its inter-socket bandwidth (ncclTopoGetInterCpuBw);
  // the dump carries it as familyid/modelid. Anything else leaves node.cpu.model_id unset.
  int cpu_model_id = 0, cpu_family_id = 0;
  if (vendor == "amd") {
    // AMD's family (23 Zen 1/2, 25 Zen 3/4, 26 Zen 5: NCCL 2.30.5+'s inter-socket figure). NCCL before
    // 2.30.5 wrote it as base 15 + extended family << 4 (Zen 3/4: 175), 2.30.5 on as the x86 spec has it
    // (15 + extended: 25; commit 2f1c174, NVIDIA/nccl#2441's two dumps): both are read.
    int family = 0;
    if (parse_int(cpus[0]->attr("familyid"), family) && family >= 15 && family <= 255)
      cpu_family_id = family >= 0x80 ? 15 + ((family - 15) >> 4) : family;
  }
  if (vendor == "intel") {
    int family = 0, model = 0;
    if (parse_int(cpus[0]->attr("familyid"), family) && parse_int(cpus[0]->attr("modelid"), model) && family == 6 &&
        model >= 1 && model <= 255)
      cpu_model_id = model;
    else
      notes.push_back("Intel CPU without a family-6 modelid: cpu.model_id not set");
  }

  // --- PCIe ---
  std::vector<int> gens, widths, up_widths;
  std::set<const XmlElement*> switches;
  bool two_levels = false;
  for (const auto& g : gpus) {
    if (g.pci.pci) {
      gens.push_back(pcie_gen_from_speed(g.pci.pci->attr("link_speed")));
      widths.push_back(std::atoi(g.pci.pci->attr("link_width").c_str()));
    }
    if (g.pci.top_bridge) {
      switches.insert(g.pci.top_bridge);
      up_widths.push_back(std::atoi(g.pci.top_bridge->attr("link_width").c_str()));
    }
    if (g.pci.bridges_above >= 2) two_levels = true;
  }
  int gen = most_common(gens, 0);
  if (gen < 3) {
    gen = sm >= 90 ? 5 : 4;
    guesses.push_back("PCIe Gen" + std::to_string(gen) + " (no usable link_speed)");
  }
  if (gen > 6) gen = 6;
  auto lanes_ok = [](int w) { return w == 1 || w == 2 || w == 4 || w == 8 || w == 16; };
  int lanes = most_common(widths, 16);
  if (!lanes_ok(lanes)) lanes = 16;
  int uplink = most_common(up_widths, lanes);
  if (!lanes_ok(uplink)) uplink = lanes;
  const int sw = static_cast<int>(switches.size());
  const int per_socket = sw == 0 ? 0 : std::max(1, (sw + sockets / 2) / sockets);
  bool gpus_share_switch = false;
  {
    std::map<const XmlElement*, int> per;
    for (const auto& g : gpus)
      if (g.pci.top_bridge && ++per[g.pci.top_bridge] >= 2) gpus_share_switch = true;
  }
  nlohmann::json pcie = {{"generation", gen}, {"lanes", lanes}, {"uplink_lanes", uplink}, {"switches_per_socket", per_socket},
                         {"switch_levels", two_levels && per_socket > 0 ? 2 : 1},
                         {"p2p", gpus_share_switch || any_nvlink ? "switch" : "host"}};

  // --- NICs ---
  nlohmann::json nic = nullptr;
  if (!nets.empty()) {
    std::vector<int> speeds, nic_gens, nic_widths;
    int gdr_on = 0, gdr_known = 0;
    bool ethernet = false, ib = false;
    std::string names;
    for (const auto& n : nets) {
      if (n.net) {
        const std::string& sp = n.net->attr("speed");
        if (!sp.empty()) {
          char* end = nullptr;
          long v = std::strtol(sp.c_str(), &end, 10);
          if (end == sp.c_str() || *end != '\0' || v <= 0) fail_at(*n.net, "<net speed=\"" + sp + "\">: expected a positive integer (Mb/s)");
          speeds.push_back(static_cast<int>(v));
        }
        if (n.net->has("gdr")) {
          ++gdr_known;
          if (n.net->attr("gdr") == "1") ++gdr_on;
        }
        names += (names.empty() ? "" : ", ") + n.net->attr("name", "?");
      }
      if (n.pci.pci) {
        long cls = pci_class(*n.pci.pci);
        if ((cls >> 8) == 0x0207) ib = true;
        if ((cls >> 8) == 0x0200) ethernet = true;
        nic_gens.push_back(pcie_gen_from_speed(n.pci.pci->attr("link_speed")));
        nic_widths.push_back(std::atoi(n.pci.pci->attr("link_width").c_str()));
      }
    }
    double gbps = 0;
    if (!speeds.empty()) {
      gbps = most_common(speeds, speeds[0]) / 1000.0;
    } else {
      gbps = gen >= 5 ? 400 : gen == 4 ? 200 : 100;
      guesses.push_back("NIC " + std::to_string(static_cast<int>(gbps)) + " Gb/s (no <net speed>)");
    }
    std::string transport = ethernet && !ib ? "roce" : "ib";
    if (!ethernet && !ib) guesses.push_back("NIC transport InfiniBand");
    nic = {{"count", static_cast<int>(nets.size())}, {"Gbps", gbps}, {"transport", transport}};
    if (gdr_known > 0) nic["gpudirect_rdma"] = gdr_on > 0;
    int ng = most_common(nic_gens, 0);
    if (ng >= 3 && ng <= 6) nic["pcie_generation"] = ng;
    int nw = most_common(nic_widths, 0);
    if (lanes_ok(nw)) nic["pcie_lanes"] = nw;
    if (!names.empty()) notes.push_back("NICs " + names);
  }

  std::string model = sm > 0 ? "unknown-sm" + std::to_string(sm) : "unknown";
  std::string desc = "Imported from " + source + " (NCCL topology XML) by ccsim: " + std::to_string(G) + " GPUs" +
                     (sm > 0 ? " (sm" + std::to_string(sm) + ")" : "") + ", " + std::to_string(nets.size()) + " NICs, " +
                     std::to_string(cpus.size()) + " <cpu> (NUMA) element(s), " + std::to_string(sw) +
                     " PCIe switch(es) above GPUs. Not in the XML: GPU model, CPU memory/inter-socket bandwidth";
  for (const auto& g : guesses) desc += "; guessed " + g;
  desc += " (override with --set).";
  for (const auto& m : notes) desc += " " + m + ".";

  nlohmann::json cpu = {{"sockets", sockets}, {"vendor", vendor}};
  if (cpu_model_id > 0) cpu["model_id"] = cpu_model_id;
  if (cpu_family_id > 0) cpu["family_id"] = cpu_family_id;
  nlohmann::json node = {{"gpu", {{"model", model}, {"arch", arch}, {"count", G}}},
                         {"nvlink", nvlink},
                         {"cpu", cpu},
                         {"pcie", pcie},
                         {"nic", nic}};
  return {{"format", "ccsim-topology/1"},
          {"name", "nccl-topo-" + std::filesystem::path(source).stem().string()},
          {"description", desc},
          {"nodes", 1},
          {"node", node}};
}

}  // namespace ccsim
