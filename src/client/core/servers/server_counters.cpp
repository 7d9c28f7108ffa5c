#include "client/core/servers/server_counters.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "client/core/diagnostics.hpp"
#include "client/core/event_state.hpp"
#include "client/core/memory/svm_registry.hpp"
#include "client/core/servers/platform.hpp"
#include "client/core/text_fields.hpp"
#include "protocol/version.hpp"

namespace ferry::client {

result<cl_ulong> ping_server(const device* d) {
  auto r = d->host->link->ping();
  if (!r) return fail(r.error());
  return static_cast<cl_ulong>(*r);
}

result<cl_ferry_object_counts> object_counts(const device* d) {
  protocol::get_object_counts request;
  // A request travels behind every command sent before it, and its reply
  // is handled after every earlier completion, releases included. The
  // count is the whole process's, so every server gets one, not only d's:
  // a server's reader drops a finished command's event (and with it a
  // queue and a context the application released) only after it has woken
  // the command's waiters, and the reports of commands that the
  // application knows ended through another server (a wait list that
  // crossed servers) may still be on their way.
  for (const auto& s : connected_servers()) {
    if (s.get() == d->host) continue;
    // An offline server answers once its session resumes (it may report
    // completions before that); one whose session is over answers nothing
    // and reports nothing either.
    (void)s->link->call<protocol::object_counts>(request);
  }
  auto first = d->host->link->call<protocol::object_counts>(request);
  if (!first) return fail(first.error());
  // The bulk reader and the callback thread may still hold the last
  // references of objects the application released, for a moment, and
  // migrations between servers still on their way hold the buffers and
  // events they serve until their outcome is known. Letting go of those
  // sends their releases; the second request counts behind them.
  for (const auto& s : connected_servers()) s->link->settle();
  for (const auto& s : connected_servers()) s->link->quiesce_bulk();
  wait_for_callbacks();
  auto r = d->host->link->call<protocol::object_counts>(request);
  if (!r) return fail(r.error());
  cl_ferry_object_counts counts{};
  counts.client_objects = live_object_count() + svm_allocation_count();
  if (live_object_count() != 0) log_live_objects();
  counts.server_objects = r->objects;
  return counts;
}

result<message_counts> control_message_counts(const device* d) {
  // The reply carries the server's count of the session's control frames
  // run, this request included; the request's own number is the count sent.
  protocol::get_object_counts request;
  uint64_t frame = 0;
  auto r = d->host->link->call<protocol::object_counts>(request, [] {}, frame);
  if (!r) return fail(r.error());
  return message_counts{frame, r->control_frames};
}

result<std::vector<cl_ferry_link_counters>> link_counters(const device* d) {
  protocol::get_link_counters request;
  auto r = d->host->link->call<protocol::link_counters>(request);
  if (!r) return fail(r.error());
  std::vector<cl_ferry_link_counters> out(r->links.size());
  for (size_t i = 0; i < r->links.size(); ++i) {
    const auto& from = r->links[i];
    cl_ferry_link_counters& to = out[i];
    to = {};
    to.kind = static_cast<cl_uint>(from.kind);
    copy_truncated(to.remote, from.remote);
    to.bytes_in = from.bytes_in;
    to.bytes_out = from.bytes_out;
    to.messages_in = from.messages_in;
    to.messages_out = from.messages_out;
  }
  return out;
}

cl_ferry_worker c_worker(const protocol::worker_entry& from) {
  cl_ferry_worker to{};
  to.pid = from.pid;
  to.state = static_cast<cl_uint>(from.state);
  copy_truncated(to.session, from.session);
  copy_truncated(to.client, from.client);
  to.memory_bytes = from.memory_bytes;
  to.age_ms = from.age_ms;
  return to;
}

result<std::vector<cl_ferry_worker>> server_workers(const device* d) {
  connection& link = *d->host->link;
  if (const uint16_t version = link.version(); version < protocol::workers_version)
    return fail(explain(CL_INVALID_OPERATION,
                        "server %s speaks protocol version %u; servers report their workers from version %u on",
                        d->host->address_text.c_str(), static_cast<unsigned>(version),
                        static_cast<unsigned>(protocol::workers_version)));
  protocol::get_workers request;
  auto r = link.call<protocol::workers>(request);
  if (!r) return fail(r.error());
  std::vector<cl_ferry_worker> out;
  out.reserve(r->entries.size());
  for (const protocol::worker_entry& entry : r->entries) out.push_back(c_worker(entry));
  return out;
}

}  // namespace ferry::client
