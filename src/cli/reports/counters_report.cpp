#include "cli/reports/counters_report.hpp"

#include <CL/cl_ext_ferry.h>

#include <algorithm>
#include <array>

#include "cli/reports/format.hpp"

namespace ferry::cli {

namespace {

enum class align { left, right };

struct column {
  const char* header;
  align alignment;
};

constexpr std::array<column, 6> columns = {{{"kind", align::left},
                                            {"remote", align::left},
                                            {"messages in", align::right},
                                            {"messages out", align::right},
                                            {"bytes in", align::right},
                                            {"bytes out", align::right}}};

using row = std::array<std::string, columns.size()>;

// Two spaces of indent, two between columns, no trailing blanks.
std::string render_table(const std::vector<row>& rows) {
  std::array<std::size_t, columns.size()> width{};
  for (std::size_t c = 0; c < columns.size(); ++c) {
    width[c] = std::string(columns[c].header).size();
    for (const row& r : rows) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const row& cells) {
    std::string out = "  ";
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      out += columns[c].alignment == align::right ? pad + cells[c] : cells[c] + pad;
      if (c + 1 < columns.size()) out += "  ";
    }
    while (out.back() == ' ') out.pop_back();
    return out + '\n';
  };
  row header;
  for (std::size_t c = 0; c < columns.size(); ++c) header[c] = columns[c].header;
  std::string out = line(header);
  for (const row& r : rows) out += line(r);
  return out;
}

}  // namespace

std::string link_kind_name(cl_uint kind) {
  switch (kind) {
    case CL_FERRY_LINK_CLIENT_CONTROL:
      return "client-control";
    case CL_FERRY_LINK_CLIENT_BULK:
      return "client-bulk";
    case CL_FERRY_LINK_PEER_OUT:
      return "peer-out";
    case CL_FERRY_LINK_PEER_IN:
      return "peer-in";
    default:
      return "kind " + std::to_string(kind);
  }
}

std::string format_bytes_exact(std::uint64_t bytes) {
  if (bytes < 1024) return format_bytes(bytes);
  return format_bytes(bytes) + " (" + std::to_string(bytes) + ")";
}

std::string render_counters_report(const std::vector<server_counters>& servers) {
  std::string out;
  std::size_t answered = 0, link_count = 0;
  for (const server_counters& server : servers) {
    out += "server " + server.address;
    if (!server.links) {
      out += "  counters unavailable (" + server.problem + ")\n";
      continue;
    }
    ++answered;
    out += '\n';
    std::vector<link_entry> links = *server.links;
    std::stable_sort(links.begin(), links.end(), [](const link_entry& a, const link_entry& b) {
      return a.kind != b.kind ? a.kind < b.kind : a.remote < b.remote;
    });
    link_count += links.size();
    if (links.empty()) {
      out += "  (no links yet)\n";
      continue;
    }
    std::vector<row> rows;
    for (const link_entry& link : links) {
      rows.push_back({link_kind_name(link.kind), link.remote, std::to_string(link.messages_in),
                      std::to_string(link.messages_out), format_bytes_exact(link.bytes_in),
                      format_bytes_exact(link.bytes_out)});
    }
    out += render_table(rows);
  }
  out += std::to_string(answered) + " of " + std::to_string(servers.size()) +
         (servers.size() == 1 ? " server" : " servers") + " answered, " + std::to_string(link_count) +
         (link_count == 1 ? " link\n" : " links\n");
  return out;
}

}  // namespace ferry::cli
