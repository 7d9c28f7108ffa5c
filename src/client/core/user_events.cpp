#include "client/core/user_events.hpp"

#include "client/core/command.hpp"
#include "client/core/event_state.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client {

cl_event create_user_event_on_servers(cl_context c) {
  event* e = make_event(c, nullptr, CL_COMMAND_USER, next_object_id());
  e->status = CL_SUBMITTED;
  e->on_server = true;
  post_each(c->servers, protocol::create_user_event{e->id, c->id});
  return e;
}

void set_user_event_status(event* e, cl_int status) {
  for (server* s : e->context->servers) {
    s->link->post(protocol::set_user_event_status{e->id, status});
    s->link->flush();
  }
  complete_event(e, status);
}

}  // namespace ferry::client
