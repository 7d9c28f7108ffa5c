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
  // Here before the servers: once a server has the status, a command waiting for the event
  // can complete there and its completion reach the application (another thread) before
  // this thread would get to set it after posting, and the application would see the
  // command complete while the event it waited for had not (found by the MPI tests: a
  // marker behind clCreateEventFromMPIRequest's event). An API reference of this call's
  // own: the application may release the event as soon as it sees it complete, and its
  // release must reach the servers after the status, not before.
  retain_api(e);
  complete_event(e, status);
  for (server* s : e->context->servers) {
    s->link->post(protocol::set_user_event_status{e->id, status});
    s->link->flush();
  }
  release_api(e);
}

}  // namespace ferry::client
