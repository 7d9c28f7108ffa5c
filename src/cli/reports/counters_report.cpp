#include "cli/reports/counters_report.hpp"

#include <CL/cl_ext_ferry.h>

#include <algorithm>
#include <array>
#include <map>

#include "cli/reports/format.hpp"

namespace ferry::cli {

namespace {

enum class align { left, right };

struct column {
  const char* header;
  align alignment;
};

constexpr std::array<column, 6> link_columns = {{{"kind", align::left},
                                                 {"remote", align::left},
                                                 {"messages in", align::right},
                                                 {"messages out", align::right},
                                                 {"bytes in", align::right},
                                                 {"bytes out", align::right}}};

constexpr std::array<column, 6> worker_columns = {{{"pid", align::right},
                                                   {"state", align::left},
                                                   {"session", align::left},
                                                   {"client", align::left},
                                                   {"memory", align::right},
                                                   {"age", align::right}}};

template <std::size_t N>
using row = std::array<std::string, N>;

// Two spaces of indent, two between columns, no trailing blanks.
template <std::size_t N>
std::string render_table(const std::array<column, N>& columns, const std::vector<row<N>>& rows) {
  std::array<std::size_t, N> width{};
  for (std::size_t c = 0; c < N; ++c) {
    width[c] = std::string(columns[c].header).size();
    for (const row<N>& r : rows) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const row<N>& cells) {
    std::string out = "  ";
    for (std::size_t c = 0; c < N; ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      out += columns[c].alignment == align::right ? pad + cells[c] : cells[c] + pad;
      if (c + 1 < N) out += "  ";
    }
    while (out.back() == ' ') out.pop_back();
    return out + '\n';
  };
  row<N> header;
  for (std::size_t c = 0; c < N; ++c) header[c] = columns[c].header;
  std::string out = line(header);
  for (const row<N>& r : rows) out += line(r);
  return out;
}

// The links of one server: a table, or a line saying there are none.
std::string render_links(std::vector<link_entry> links) {
  if (links.empty()) return "  (no links yet)\n";
  std::stable_sort(links.begin(), links.end(), [](const link_entry& a, const link_entry& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.remote < b.remote;
  });
  std::vector<row<link_columns.size()>> rows;
  for (const link_entry& link : links) {
    rows.push_back({link_kind_name(link.kind), link.remote, std::to_string(link.messages_in),
                    std::to_string(link.messages_out), format_bytes_exact(link.bytes_in),
                    format_bytes_exact(link.bytes_out)});
  }
  return render_table(link_columns, rows);
}

// The workers of one server: a table by pid and the summary; a spare has no session
// and no client, shown as "-".
std::string render_workers(std::vector<worker_info> workers) {
  if (workers.empty()) return "  " + workers_summary(workers) + "\n";
  std::stable_sort(workers.begin(), workers.end(),
                   [](const worker_info& a, const worker_info& b) { return a.pid < b.pid; });
  auto or_dash = [](const std::string& text) { return text.empty() ? std::string("-") : text; };
  std::vector<row<worker_columns.size()>> rows;
  for (const worker_info& w : workers) {
    rows.push_back({std::to_string(w.pid), worker_state_name(w.state), or_dash(w.session), or_dash(w.client),
                    format_bytes(w.memory_bytes), format_duration_ms(w.age_ms)});
  }
  return render_table(worker_columns, rows) + "  " + workers_summary(workers) + "\n";
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

std::string worker_state_name(cl_uint state) {
  switch (state) {
    case CL_FERRY_WORKER_STARTING:
      return "starting";
    case CL_FERRY_WORKER_SPARE:
      return "spare";
    case CL_FERRY_WORKER_SERVING:
      return "serving";
    case CL_FERRY_WORKER_DETACHED:
      return "detached";
    case CL_FERRY_WORKER_ENDING:
      return "ending";
    default:
      return "state " + std::to_string(state);
  }
}

std::string workers_summary(const std::vector<worker_info>& workers) {
  std::string out = std::to_string(workers.size()) + (workers.size() == 1 ? " worker" : " workers");
  // Those with a session first, then the pool, then those on their way out; states
  // this build does not know last, by number.
  static constexpr std::array<cl_uint, 5> order = {CL_FERRY_WORKER_SERVING, CL_FERRY_WORKER_DETACHED,
                                                   CL_FERRY_WORKER_SPARE, CL_FERRY_WORKER_STARTING,
                                                   CL_FERRY_WORKER_ENDING};
  std::map<cl_uint, std::size_t> by_state;
  for (const worker_info& w : workers) ++by_state[w.state];
  const char* separator = ": ";
  auto add = [&](cl_uint state, std::size_t count) {
    out += separator + std::to_string(count) + " " + worker_state_name(state);
    separator = ", ";
  };
  for (cl_uint state : order)
    if (auto it = by_state.find(state); it != by_state.end()) add(state, it->second);
  for (const auto& [state, count] : by_state)
    if (std::find(order.begin(), order.end(), state) == order.end()) add(state, count);
  return out;
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
    link_count += server.links->size();
    out += render_links(*server.links);
    if (server.workers)
      out += render_workers(*server.workers);
    else
      out += "  workers unavailable (" + server.workers_problem + ")\n";
  }
  out += std::to_string(answered) + " of " + std::to_string(servers.size()) +
         (servers.size() == 1 ? " server" : " servers") + " answered, " + std::to_string(link_count) +
         (link_count == 1 ? " link\n" : " links\n");
  return out;
}

}  // namespace ferry::cli
