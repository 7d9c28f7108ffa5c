// User events: they exist on every server of their context, where commands
// may wait for them, and the application sets their status.
#pragma once

#include "client/core/objects.hpp"

namespace ferry::client {

/// A user event of `c` (CL_SUBMITTED), posted to every server of the context.
cl_event create_user_event_on_servers(cl_context c);

/// Sets the status of user event `e` on every server (sent at once: commands
/// wait for it there) and here.
void set_user_event_status(event* e, cl_int status);

}  // namespace ferry::client
