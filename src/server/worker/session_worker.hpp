// A session worker: the process that serves one client session
// (docs/workers.md).
//
// ferryd's main process starts it as `ferryd --session-worker FD` (FD: its end
// of a SOCK_SEQPACKET pair) before any client asks for it. The worker takes
// its settings from the first message, confines itself, loads the native
// OpenCL platforms (after the exec, never inherited), says it is ready, and
// waits. The main process then hands it the sockets of one session (the
// control connection first; later its bulk stream, its resumptions and the
// peer links of other servers into it), and the worker serves that session
// exactly as an in-process session is served (server/session/session.hpp),
// straight from the sockets: no byte of the session passes through the main
// process. When the session ends, the worker sends its final link counters
// and exits; it never serves a second session, so nothing of one client's
// can be left in memory for the next.
//
// What the worker may not hold, it asks for: the proofs of the daemon's token
// for its outgoing peer links, the daemon-wide link counters and the list of
// workers come from the main process over the same socket.
#pragma once

namespace ferry::server {

/// The body of `ferryd --session-worker FD`: the process's exit code.
int run_session_worker(int ipc_fd);

}  // namespace ferry::server
