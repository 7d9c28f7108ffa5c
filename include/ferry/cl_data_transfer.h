/* Transfer commands: file reads and writes and MPI sends and receives of
 * OpenCL buffers as ordinary commands with events (the clDataTransfer
 * extension of Takizawa et al., "Optimized Data Transfers Based on the OpenCL
 * Event Management Mechanism", Scientific Programming 2015, with the paper's
 * names). Library: libferry_transfer (docs/transfer.md).
 *
 * Each function enqueues one command on `queue` and returns at once unless
 * `blocking` is CL_TRUE. The command starts once the commands of
 * `wait_list` (and, on an in-order queue, every command enqueued on `queue`
 * before it) have completed; commands enqueued on an in-order queue after it
 * start once it has completed, and any command may wait for `*event`. The
 * host thread never blocks to order them.
 *
 * Works over any OpenCL platform reached through the ICD loader (PoCL,
 * NVIDIA, Ferry).
 *
 * Errors: the exact OpenCL code at the call for a bad argument (the codes of
 * clEnqueueReadBuffer / clEnqueueWriteBuffer, and CL_INVALID_VALUE for a NULL
 * or wrongly opened FILE, a bad rank or tag); a transfer that fails while it
 * runs ends its event with a negative status and logs a line that names the
 * cause (a blocking call returns the cause's code). Nothing else in the queue
 * is affected: commands enqueued after a failed transfer still run.
 *
 * The MPI functions are declared when <mpi.h> is included before this header
 * (or through <ferry/cl_data_transfer_mpi.h>), so that a program without MPI
 * can use the file functions. MPI must be initialized with
 * MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...): transfers call MPI from the
 * library's own threads. */
#ifndef FERRY_CL_DATA_TRANSFER_H
#define FERRY_CL_DATA_TRANSFER_H

#include <stdio.h>

#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Reads `size` bytes at `offset` of `buffer` and writes them to `file` at its
 * current position; the position is left after the bytes written. `file`
 * must be open for writing (CL_INVALID_VALUE otherwise). */
cl_int clEnqueueReadBufferToStdioFile(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset,
                                      size_t size, FILE *file, cl_uint num_events, const cl_event *wait_list,
                                      cl_event *event);

/* Reads `size` bytes from `file` at its current position and writes them to
 * `buffer` at `offset`; the position is left after the bytes read. `file`
 * must be open for reading (CL_INVALID_VALUE otherwise). A file that ends
 * before `size` bytes fails the command (CL_INVALID_VALUE); the bytes before
 * the end have been written. */
cl_int clEnqueueWriteBufferFromStdioFile(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset,
                                         size_t size, FILE *file, cl_uint num_events, const cl_event *wait_list,
                                         cl_event *event);

/* Where the file of a path variant below is. */
#define CL_FERRY_FILE_ON_CLIENT 0 /* on this host, opened by the library */
#define CL_FERRY_FILE_ON_SERVER 1 /* on the server that holds the buffer */

/* Path variants (Ferry's, beyond the paper): `size` bytes of `buffer` at
 * `offset` into the file `path` at `file_offset` (ReadBufferToFile), or the
 * file's bytes from `file_offset` into the buffer (WriteBufferFromFile). The
 * file is opened when the command starts: for writing, created when missing
 * and never truncated; a file that ends early fails the command
 * (CL_INVALID_VALUE) after the bytes before its end were written.
 * `location` CL_FERRY_FILE_ON_SERVER on a queue of Ferry's platform names a
 * file below the directory that server was started with (ferryd --file-root):
 * the command is the server's own (cl_ext_ferry.h,
 * clEnqueueReadBufferToServerFileFERRY), and the bytes never cross the
 * client's link. On any other platform the server that holds the buffer is
 * this host, and both locations open `path` here. Errors at the call: those
 * of clEnqueueReadBuffer / clEnqueueWriteBuffer, and CL_INVALID_VALUE for a
 * NULL or empty `path` or another `location`; CL_INVALID_OPERATION for a file
 * on a Ferry server older than protocol version 9. While it runs: a missing
 * file, one that may not be opened or that leads outside a server's root
 * ends the event with CL_INVALID_VALUE, an I/O error with
 * CL_OUT_OF_RESOURCES, a server without --file-root with
 * CL_INVALID_OPERATION. */
cl_int clEnqueueReadBufferToFileFERRY(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset,
                                      size_t size, const char *path, cl_ulong file_offset, cl_uint location,
                                      cl_uint num_events, const cl_event *wait_list, cl_event *event);
cl_int clEnqueueWriteBufferFromFileFERRY(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset,
                                         size_t size, const char *path, cl_ulong file_offset, cl_uint location,
                                         cl_uint num_events, const cl_event *wait_list, cl_event *event);

#ifdef __cplusplus
}
#endif

#endif /* FERRY_CL_DATA_TRANSFER_H */

/* Outside the include guard: a second inclusion after <mpi.h> adds them. */
#if (defined(MPI_VERSION) || defined(FERRY_CL_DATA_TRANSFER_MPI)) && !defined(FERRY_CL_DATA_TRANSFER_MPI_DECLARED)
#define FERRY_CL_DATA_TRANSFER_MPI_DECLARED

#ifdef __cplusplus
extern "C" {
#endif

/* Sends `size` bytes at `offset` of `buffer` to rank `dest` of `comm` with
 * `tag`. A receiving transfer command (clEnqueueRecvBuffer) takes them in
 * whatever pieces they travel in; a host receives them with
 * clHostRecvFromBuffer below, not with a plain MPI_Recv.
 *
 * Tags: 0 to a third of MPI_TAG_UB ((MPI_TAG_UB - 1) / 3 - 1); the tags
 * above carry the library's own messages. Between two ranks whose buffers
 * are on Ferry servers the bytes go from one server to the other, never
 * through either host: the send offers them to the receive, which answers
 * with a ticket of the Ferry driver (docs/transfer.md, "Halo exchanges
 * between servers"). Such a send then ends only once its receive has begun,
 * as MPI_Ssend: two ranks that each send and then receive on one in-order
 * queue must use clEnqueueSendrecvBuffer (as with MPI_Send of large
 * messages). FERRY_TRANSFER_PEER_MIN sets the least size offered (default
 * 64K; "off" for none). */
cl_int clEnqueueSendBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size,
                           int dest, int tag, MPI_Comm comm, cl_uint num_events, const cl_event *wait_list,
                           cl_event *event);

/* Receives `size` bytes from rank `source` (or MPI_ANY_SOURCE) of `comm`
 * with `tag` (or MPI_ANY_TAG) into `buffer` at `offset`. The sender may be a
 * transfer command (clEnqueueSendBuffer, clEnqueueSendrecvBuffer) or a host
 * thread that sends the `size` bytes in one plain MPI_Send. */
cl_int clEnqueueRecvBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset, size_t size,
                           int source, int tag, MPI_Comm comm, cl_uint num_events, const cl_event *wait_list,
                           cl_event *event);

/* One buffer, two regions: sends [send_offset, +size) to `dest` and receives
 * into [recv_offset, +size) from `source` (a halo exchange), like
 * MPI_Sendrecv. The regions must not overlap. */
cl_int clEnqueueSendrecvBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t send_offset,
                               size_t recv_offset, size_t size, int dest, int send_tag, int source, int recv_tag,
                               MPI_Comm comm, cl_uint num_events, const cl_event *wait_list, cl_event *event);

/* An event of `context` that completes when the non-blocking MPI operation
 * `*request` completes (with a negative status if it fails). The event takes
 * the request over: *request is set to MPI_REQUEST_NULL, and the program no
 * longer waits on or tests it. */
cl_event clCreateEventFromMPIRequest(cl_context context, MPI_Request *request, cl_int *errcode_ret);

/* The host's side of a transfer command's send (the role of the paper's
 * MPI_CL_MEM datatype): receives the `size` bytes that clEnqueueSendBuffer or
 * clEnqueueSendrecvBuffer sent from rank `source` with `tag`, whatever pieces
 * they travel in, into `host`. Blocking; returns an MPI error code
 * (MPI_SUCCESS, or MPI_ERR_TRUNCATE when more than `size` bytes come). */
int clHostRecvFromBuffer(void *host, size_t size, int source, int tag, MPI_Comm comm, MPI_Status *status);

#ifdef __cplusplus
}
#endif

#endif /* MPI */
