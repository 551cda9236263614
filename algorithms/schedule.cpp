#include "algorithms/schedule.h"

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace ccsim {

std::uint32_t Schedule::add(Transfer t, const std::vector<std::uint32_t>& depends_on) {
  return add(t, depends_on.data(), static_cast<std::uint32_t>(depends_on.size()));
}

std::uint32_t Schedule::add(Transfer t, const std::uint32_t* depends_on, std::uint32_t count) {
  const auto id = static_cast<std::uint32_t>(transfers.size());
  t.dep_begin = static_cast<std::uint32_t>(deps.size());
  t.dep_count = count;
  for (std::uint32_t k = 0; k < count; ++k) {
    if (depends_on[k] >= id) throw std::logic_error("schedule dependency must point to an earlier transfer");
    deps.push_back(depends_on[k]);
  }
  transfers.push_back(t);
  return id;
}

Schedule Schedule::scaled_to(double new_size_bytes) const {
  Schedule s = *this;
  const double factor = size_bytes > 0 ? new_size_bytes / size_bytes : 0.0;
  for (auto& t : s.transfers) t.bytes *= factor;
  s.size_bytes = new_size_bytes;
  return s;
}

std::vector<double> Schedule::bytes_sent_per_rank() const {
  std::vector<double> sent(static_cast<std::size_t>(num_endpoints()), 0.0);
  for (const auto& t : transfers) sent.at(static_cast<std::size_t>(t.src)) += t.bytes;
  return sent;
}

std::vector<double> Schedule::bytes_received_per_rank() const {
  std::vector<double> received(static_cast<std::size_t>(num_endpoints()), 0.0);
  for (const auto& t : transfers) received.at(static_cast<std::size_t>(t.dst)) += t.bytes;
  return received;
}

std::string Schedule::dump() const {
  std::ostringstream out;
  out << "# schedule " << collective << " " << algorithm << " nranks=" << nranks
      << " size_bytes=" << static_cast<unsigned long long>(size_bytes) << " transfers=" << transfers.size() << "\n";
  if (!switches.empty()) {
    out << "# switch endpoints:";
    for (std::size_t k = 0; k < switches.size(); ++k) out << " " << nranks + static_cast<int>(k) << "=" << switches[k];
    out << "\n";
  }
  char buf[256];
  for (std::size_t i = 0; i < transfers.size(); ++i) {
    const auto& t = transfers[i];
    std::snprintf(buf, sizeof buf, "#%zu step=%d family=%d %d->%d rail=%d bytes=%.17g delay_us=%.6g ch=%dx%d deps=[",
                  i, t.step, t.family, t.src, t.dst, t.rail, t.bytes, t.delay_s * 1e6, t.channels, t.chunks);
    out << buf;
    for (std::uint32_t k = 0; k < t.dep_count; ++k) out << (k ? "," : "") << deps[t.dep_begin + k];
    out << "]\n";
  }
  return out.str();
}

}  // namespace ccsim
