/* Ferry's OpenCL extension API (C).
 *
 * Functions are reached through clGetExtensionFunctionAddressForPlatform on the
 * Ferry platform (or clGetExtensionFunctionAddress); nothing here is exported
 * directly, so programs keep working on any other OpenCL implementation. */
#ifndef CL_EXT_FERRY_H
#define CL_EXT_FERRY_H

#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define cl_ferry_remote 1
#define CL_FERRY_REMOTE_EXTENSION_NAME "cl_ferry_remote"

/* Name of Ferry's platform (CL_PLATFORM_NAME). */
#define CL_FERRY_PLATFORM_NAME "Ferry"

/* clGetDeviceInfo: the address of the server that hosts the device, as the
 * client reached it ("host:port" or "unix:/path"). Type: char[]. */
#define CL_DEVICE_FERRY_SERVER_ADDRESS 0x4F00
/* clGetDeviceInfo: the index of the device among the server's devices. Type: cl_uint. */
#define CL_DEVICE_FERRY_SERVER_DEVICE_INDEX 0x4F01

/* Measures one empty request/response round trip to the server that hosts
 * `device` and stores it in nanoseconds. Returns CL_INVALID_DEVICE for a
 * device that is not Ferry's, CL_INVALID_VALUE for a NULL result pointer,
 * CL_DEVICE_NOT_AVAILABLE when the server cannot be reached. */
typedef cl_int(CL_API_CALL *clFerryPingServer_fn)(cl_device_id device, cl_ulong *round_trip_ns);

/* Counts of live objects, for leak checks in tests and tools. */
typedef struct cl_ferry_object_counts {
  cl_ulong client_objects; /* Ferry objects alive in this process (all servers) */
  cl_ulong server_objects; /* native objects alive in this process's session on the device's server */
} cl_ferry_object_counts;

/* Fills `counts` for the server that hosts `device`. The server figure is
 * measured after every command sent before the call has been processed. */
typedef cl_int(CL_API_CALL *clFerryGetObjectCounts_fn)(cl_device_id device,
                                                       cl_ferry_object_counts *counts);

/* Proof that no control message was lost or run twice across reconnections:
 * stores how many control messages this process has sent in its current
 * session with the server that hosts `device`, this query's own included, and
 * how many of those the server has run. The two are equal unless a message
 * was lost or ran twice. Either pointer may be NULL, not both.
 * CL_INVALID_DEVICE for a device that is not Ferry's, CL_INVALID_VALUE when
 * both are NULL, CL_DEVICE_NOT_AVAILABLE when the server cannot be reached. */
typedef cl_int(CL_API_CALL *clFerryGetMessageCounts_fn)(cl_device_id device, cl_ulong *messages_sent,
                                                        cl_ulong *messages_run);
/* Traffic counters of one kind of link of a server with one remote host,
 * summed over sessions since the daemon started. A message is one frame;
 * bytes include frame headers. */
#define CL_FERRY_LINK_CLIENT_CONTROL 0 /* clients' control streams */
#define CL_FERRY_LINK_CLIENT_BULK 1    /* clients' bulk streams (buffer contents) */
#define CL_FERRY_LINK_PEER_OUT 2       /* links this server opened to other servers */
#define CL_FERRY_LINK_PEER_IN 3        /* links other servers opened to this one */

typedef struct cl_ferry_link_counters {
  cl_uint kind;      /* CL_FERRY_LINK_* */
  char remote[112];  /* PEER_OUT: the address dialled; otherwise the remote host */
  cl_ulong bytes_in;
  cl_ulong bytes_out;
  cl_ulong messages_in;
  cl_ulong messages_out;
} cl_ferry_link_counters;

/* Reads the link counters of the server that hosts `device`: up to
 * `capacity` entries into `counters` (may be NULL when `capacity` is 0) and
 * the number the server has into `*count` (may be NULL). Every command sent
 * before the call has been processed by the server when it answers (the
 * traffic of transfers still under way may be partly counted).
 * CL_INVALID_DEVICE for a device that is not Ferry's, CL_INVALID_VALUE when
 * `counters` is NULL with a non-zero `capacity` or both outputs are NULL,
 * CL_DEVICE_NOT_AVAILABLE when the server cannot be reached. */
typedef cl_int(CL_API_CALL *clFerryGetLinkCounters_fn)(cl_device_id device, cl_uint capacity,
                                                       cl_ferry_link_counters *counters, cl_uint *count);

/* What one worker process of a server is doing: the daemon runs each client
 * session in a worker process of its own, and keeps spares ready. */
#define CL_FERRY_WORKER_STARTING 0 /* spawned; loading the native platforms */
#define CL_FERRY_WORKER_SPARE 1    /* ready, waiting for a session */
#define CL_FERRY_WORKER_SERVING 2  /* serving a session whose client is connected */
#define CL_FERRY_WORKER_DETACHED 3 /* serving a session whose client's connection is lost (grace period) */
#define CL_FERRY_WORKER_ENDING 4   /* its session ended; the process is exiting */

typedef struct cl_ferry_worker {
  cl_uint pid;           /* the process id on the server's host */
  cl_uint state;         /* CL_FERRY_WORKER_* */
  char session[40];      /* the session's label, as the daemon logs it; empty for a spare */
  char client[112];      /* the client's address; empty for a spare */
  cl_ulong memory_bytes; /* resident set size */
  cl_ulong age_ms;       /* since the process started */
} cl_ferry_worker;

/* Reads the worker processes of the server that hosts `device`, spares
 * included, as the daemon sees them when asked: up to `capacity` entries
 * into `workers` (may be NULL when `capacity` is 0) and the number the
 * server has into `*count` (may be NULL). Strings longer than their field
 * are cut and always end with a NUL. CL_INVALID_DEVICE for a device that is
 * not Ferry's, CL_INVALID_VALUE when `workers` is NULL with a non-zero
 * `capacity` or both outputs are NULL, CL_INVALID_OPERATION when the server
 * does not report workers (a ferryd older than protocol version 7),
 * CL_DEVICE_NOT_AVAILABLE when the server cannot be reached. */
typedef cl_int(CL_API_CALL *clFerryGetWorkers_fn)(cl_device_id device, cl_uint capacity, cl_ferry_worker *workers,
                                                  cl_uint *count);

/* clGetDeviceInfo: where other servers reach this device's server for peer
 * links (ferryd --peer-address, else the client's own address for it).
 * Type: char[]. */
#define CL_DEVICE_FERRY_PEER_ADDRESS 0x4F02

/* Availability of a server's devices (the session outlives lost connections,
 * docs/resilience.md). `notify(device, available, user_data)` runs, on
 * Ferry's callback thread and in order, for each device of a server whose
 * connection was lost (CL_FALSE: CL_DEVICE_AVAILABLE is false; commands
 * already enqueued and new ones wait for the resumption, or new ones fail
 * with CL_DEVICE_NOT_AVAILABLE when the environment has
 * FERRY_OUTAGE=fail-fast) and again when it is back (CL_TRUE: its session resumed, or, after a
 * server restart, a new session opened for new contexts). Every callback
 * registered hears every later change; none can be removed. The callback may
 * call OpenCL functions. Returns CL_INVALID_PLATFORM when `platform` is
 * neither NULL nor Ferry's, CL_INVALID_VALUE when `notify` is NULL. */
typedef void(CL_CALLBACK *cl_ferry_availability_notify)(cl_device_id device, cl_bool available,
                                                        void *user_data);
typedef cl_int(CL_API_CALL *clFerrySetAvailabilityCallback_fn)(cl_platform_id platform,
                                                               cl_ferry_availability_notify notify,
                                                               void *user_data);

/* cl_pocl_content_size, with PoCL's name and semantics: `content_size_buffer`
 * (at least 8 bytes, not a sub-buffer, same context) holds in its first
 * cl_ulong how many leading bytes of `buffer` are meaningful; migrations
 * between servers and reads to the host move only those. Errors:
 * CL_INVALID_MEM_OBJECT (either is not a valid buffer, or the size buffer is
 * a sub-buffer), CL_INVALID_CONTEXT (different contexts),
 * CL_INVALID_BUFFER_SIZE (size buffer under 8 bytes). Reached through
 * clGetExtensionFunctionAddressForPlatform("clSetContentSizeBufferPoCL"). */
#ifndef cl_pocl_content_size
#define cl_pocl_content_size 1
#define CL_POCL_CONTENT_SIZE_EXTENSION_NAME "cl_pocl_content_size"
#endif
typedef cl_int(CL_API_CALL *clSetContentSizeBufferPoCL_fn)(cl_mem buffer, cl_mem content_size_buffer);

/* Files on the server that holds a buffer (protocol version 9; the transfer
 * library's clEnqueueWriteBufferFromFileFERRY and clEnqueueReadBufferToFileFERRY
 * use these with CL_FERRY_FILE_ON_SERVER). `path` is relative to the directory
 * the server was started with (ferryd --file-root DIR), which no path leaves
 * ("..", absolute paths and symbolic links out of it are refused); the file's
 * bytes move between the server's disk and the device and never cross the
 * client's link. FromServerFile reads `size` bytes of the file from
 * `file_offset` into `buffer` at `offset`, in the order of `queue` like
 * clEnqueueWriteBuffer; ToServerFile writes `size` bytes of `buffer` from
 * `offset` into the file at `file_offset`, creating it (mode 0644 less the
 * umask) when missing and never truncating it. The file is opened when the
 * command's wait list has ended, by the server's session worker under its
 * user. Errors at the call: those of clEnqueueReadBuffer/WriteBuffer for the
 * queue, buffer, range and wait list; CL_INVALID_VALUE when `path` is NULL,
 * empty or longer than 4095 bytes; CL_INVALID_OPERATION when the server is
 * older than protocol version 9. The command's event ends with: CL_COMPLETE;
 * CL_INVALID_OPERATION (the server serves no files); CL_INVALID_VALUE (the path
 * leads outside the root, the file is missing or no regular file, its user may
 * not open it, or it ends before `size` bytes, whose bytes up to there are
 * written); CL_OUT_OF_RESOURCES (an I/O error); the device copy's error; the
 * server's log names the cause. A failed command fails alone: the commands
 * behind it in its queue run. A blocking call returns the command's own
 * error. Reached through clGetExtensionFunctionAddressForPlatform. */
typedef cl_int(CL_API_CALL *clEnqueueWriteBufferFromServerFileFERRY_fn)(
    cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size, const char *path,
    cl_ulong file_offset, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event);
typedef cl_int(CL_API_CALL *clEnqueueReadBufferToServerFileFERRY_fn)(
    cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size, const char *path,
    cl_ulong file_offset, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event);

/* Buffer ranges between the sessions of two programs (the transfer library's
 * server-to-server halo exchange between MPI ranks): the bytes go from one
 * Ferry server to the other over the peer mesh, never through either client.
 * The receiving program enqueues the receive and gets a ticket, which it hands
 * to the sending program by any means (a small MPI message); the sending
 * program enqueues the send with it. The ticket holds the secret that lets a
 * server open a peer link into the receiver's session (its peer key): give it
 * only to a program that may write into that session's buffers. */
typedef struct {
  char address[256];   /* where peers reach the receiver's server (server_info.peer_address) */
  char unix_path[108]; /* its Unix socket for a sender on the same host ("": none) */
  char host[256];      /* the identity of its host (same_host); "": unknown */
  cl_uchar session[16];
  cl_uchar peer_key[16];
  cl_ulong transfer;   /* the receive's transfer id in its session */
  cl_ulong size;       /* bytes the receive takes */
} cl_ferry_peer_ticket;

/* Enqueues the receive of `size` bytes into `buffer` at `offset`, in the order
 * of `queue` like a write, and fills `*ticket`. The command ends once the
 * sender's bytes have landed (or fails if the sender's server aborts the
 * transfer). Errors: those of clEnqueueWriteBuffer for the queue, buffer,
 * range and wait list; CL_INVALID_VALUE when `ticket` is NULL. */
typedef cl_int(CL_API_CALL *clEnqueueReceiveFromPeerFERRY_fn)(cl_command_queue queue, cl_mem buffer, size_t offset,
                                                             size_t size, cl_uint num_events_in_wait_list,
                                                             const cl_event *event_wait_list, cl_event *event,
                                                             cl_ferry_peer_ticket *ticket);
/* Enqueues the send of `ticket->size` bytes of `buffer` from `offset` to the
 * receive the ticket names, in the order of `queue` like a read (commands
 * enqueued after it on an in-order queue wait for its bytes to have been read).
 * The command ends once the bytes are on their way to the receiver's server.
 * Errors: those of clEnqueueReadBuffer; CL_INVALID_VALUE when `ticket` is NULL
 * or malformed (no address, strings without their NUL). */
typedef cl_int(CL_API_CALL *clEnqueueSendToPeerFERRY_fn)(cl_command_queue queue, cl_mem buffer, size_t offset,
                                                        const cl_ferry_peer_ticket *ticket,
                                                        cl_uint num_events_in_wait_list,
                                                        const cl_event *event_wait_list, cl_event *event);

#ifdef __cplusplus
}
#endif

#endif /* CL_EXT_FERRY_H */
