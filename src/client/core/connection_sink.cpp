// The client's completion_sink: what its connections do to its events and
// where they report server-side failures.
#include "client/core/diagnostics.hpp"
#include "client/core/event_state.hpp"
#include "client/core/objects.hpp"
#include "client/net/completion_sink.hpp"

namespace ferry::client {

namespace {

class event_sink final : public completion_sink {
 public:
  event_facts facts(event* e) override { return {e->id, e->queue ? e->queue->id : 0, e->command_type}; }
  bool finished(event* e) override { return e->status.load() <= CL_COMPLETE; }
  void hold(event* e) override { retain_internal(e); }
  void release(event* e) override { release_internal(e); }
  void part_done(event* e, cl_int status, const std::array<cl_ulong, 4>* profiling) override {
    event_part_done(e, status, profiling);
  }
  void complete(event* e, cl_int status) override { complete_event(e, status); }
  cl_int explain(cl_int code, const std::string& reason) override {
    return ferry::client::explain(code, "%s", reason.c_str());
  }
  void failed_reply(const server_label& origin, cl_int code, std::string_view request, std::string_view object_kind,
                    protocol::object_id object) override {
    report_failed_reply({origin.server, origin.session}, code, request, object_kind, object);
  }
  void failed_command(const server_label& origin, cl_int code, cl_command_type type, protocol::object_id command,
                      protocol::object_id queue) override {
    report_failed_command({origin.server, origin.session}, code, type, command, queue);
  }
};

}  // namespace

completion_sink& client_completion_sink() {
  static event_sink sink;
  return sink;
}

}  // namespace ferry::client
