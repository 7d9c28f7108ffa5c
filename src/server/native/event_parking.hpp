// Releasing native events without tripping PoCL 3.1.
//
// When one event of a command's wait list fails, PoCL 3.1 fails the command
// at once but leaves it on the notify lists of the wait-list events that
// have not finished. If the command's last reference then goes, the event is
// freed while still listed, and when one of those events finishes, PoCL's
// worker locks the freed one and aborts the daemon ("PTHREAD ERROR in
// pocl_lock_events_inorder"). Later PoCL releases take the failed event off
// those lists; 3.1, which Debian 12 ships, does not.
//
// So the daemon drops the last reference of an event only once it has
// completed: a completed event is on no list. An event released before it
// completes is parked, holding that reference; parked events that completed
// are released a few at a time as more are parked. Failed events stay parked
// until the session's teardown has ended everything that could still notify
// them (every user event set, every queue finished), when the executor calls
// release_parked_events for each of its contexts. A session's contexts are
// its own, so a teardown never touches another session's events; the
// executor keeps a context that holds parked events until then, so that its
// address cannot name another session's context in the meantime.
#pragma once

#include <CL/cl.h>

#include <cstddef>

namespace ferry::server::native {

/// clReleaseEvent for the real API: releases a completed event, parks any other.
cl_int CL_API_CALL release_event_when_safe(cl_event event);

/// Releases every event parked in `context` (teardown only: nothing may be
/// left that could still notify them).
void release_parked_events(cl_context context);

/// Whether an event of `context` is parked.
bool holds_parked_events(cl_context context);

/// Events parked now, for tests and the debug log.
size_t parked_event_count();

}  // namespace ferry::server::native
