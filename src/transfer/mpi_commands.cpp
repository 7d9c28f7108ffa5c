// The MPI transfer commands: a buffer's bytes to or from another rank, as
// commands with events (clEnqueueSendBuffer, clEnqueueRecvBuffer,
// clEnqueueSendrecvBuffer), a host's receive of what they send
// (clHostRecvFromBuffer), and events of non-blocking MPI requests
// (mpi_request_events.cpp).
//
// A send goes in blocks (block_pipeline), one MPI message each, so that the
// network overlaps the device copies. A receive takes whatever messages come
// until its size is reached: a matched probe (MPI_Improbe) says how large the
// next one is, so a host's single MPI_Send of the whole size is received as
// well as a transfer command's blocks. MPI keeps messages between two ranks
// with one tag and communicator in order, so the blocks arrive in order.
//
// Between two ranks whose buffers are on Ferry servers the bytes go server to
// server instead (mpi_offers.hpp): the send offers, the receive answers with
// a ticket of the Ferry driver, and each side's command becomes that driver's
// migration.
#include <mpi.h>

#include <CL/cl_ext_ferry.h>

#include <climits>
#include <cstdlib>
#include <functional>
#include <future>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "ferry/cl_data_transfer.h"
#include "transfer/block_pipeline.hpp"
#include "transfer/command_event.hpp"
#include "transfer/ferry_functions.hpp"
#include "transfer/mpi_checks.hpp"
#include "transfer/mpi_offers.hpp"
#include "transfer/mpi_waits.hpp"
#include "transfer/transfer_command.hpp"
#include "transfer/worker_pool.hpp"

namespace ferry::transfer {
namespace {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

transfer_outcome mpi_failure(const char* call, int code) {
  return {CL_OUT_OF_RESOURCES, std::string(call) + ": " + mpi_error_text(code)};
}

/// Whether a transfer may look for its messages and offer its bytes before
/// its wait list has ended (its device work still waits for it). Only
/// without an explicit wait list: one may name a receive on another queue
/// that must take its message first, as the program ordered.
bool starts_early(const transfer_call& call) { return call.num_events == 0; }

/// Whether a transfer of `size` bytes on `queue` may go server to server:
/// the queue is Ferry's, and the size is one that is offered.
bool may_go_between_servers(cl_command_queue queue, size_t size) {
  return size > 0 && size >= least_offered_size() &&
         ferry_function<clEnqueueSendToPeerFERRY_fn>(queue, "clEnqueueSendToPeerFERRY") != nullptr;
}

/// The end of a migration the Ferry driver runs for a transfer.
transfer_outcome migration_outcome(cl_int enqueued, cl_event event, const char* what) {
  if (enqueued != CL_SUCCESS) return {enqueued, std::string("enqueueing the ") + what};
  const cl_int ended = wait_until_ended(event);
  clReleaseEvent(event);
  if (ended != CL_SUCCESS) return {ended, std::string("the ") + what + " failed on the server"};
  return {};
}

/// Offers the range to (dest, tag); sends it server to server when the
/// receiver takes it. `sent` says whether it did (else it sends data).
transfer_outcome offer_range(const transfer_setting& setting, cl_mem buffer, size_t offset, size_t size, int dest,
                             int tag, MPI_Comm comm, bool& sent) {
  sent = false;
  auto send_to_peer = ferry_function<clEnqueueSendToPeerFERRY_fn>(setting.copies, "clEnqueueSendToPeerFERRY");
  if (!send_to_peer) return {};
  offer_answer answer;
  std::string why;
  if (int rc = offer_and_wait(size, dest, tag, comm, answer, why); rc != MPI_SUCCESS) {
    transfer_outcome o = mpi_failure("the offer", rc);
    o.cause += " (" + why + ")";
    return o;
  }
  if (!answer.accepted) return {};
  sent = true;
  // The receiver now waits for the migration alone: a failure here leaves it
  // waiting until its session ends (docs/transfer.md says so).
  // The server reads the range once the wait list has ended.
  cl_event event = nullptr;
  const cl_uint waits = setting.start ? 1 : 0;
  const cl_int rc = send_to_peer(setting.copies, buffer, offset, &answer.ticket, waits,
                                 waits ? &setting.start : nullptr, &event);
  return migration_outcome(rc, event, "send to the receiver's server");
}

transfer_outcome send_range(const transfer_setting& setting, cl_mem buffer, size_t offset, size_t size, int dest,
                            int tag, MPI_Comm comm) {
  if (dest == MPI_PROC_NULL) return {};
  // The offer goes before the wait list has ended: the answer comes back
  // while the commands before the send still run.
  if (may_go_between_servers(setting.copies, size)) {
    bool between_servers = false;
    transfer_outcome o = offer_range(setting, buffer, offset, size, dest, tag, comm, between_servers);
    if (between_servers || o.status != CL_SUCCESS) return o;
  }
  if (cl_int rc = wait_for_start(setting); rc != CL_SUCCESS) return {rc, "an event of its wait list failed"};
  if (size == 0) {
    // One empty message: the receiver of 0 bytes matches it.
    if (int rc = send_patiently(nullptr, 0, dest, tag, comm); rc != MPI_SUCCESS) return mpi_failure("MPI_Isend", rc);
    return {};
  }
  device_reader reader(setting.copies, buffer, offset, size, std::min<size_t>(block_size_for(size), INT_MAX));
  device_reader::piece piece;
  while (reader.next(piece)) {
    if (int rc = send_patiently(piece.data, static_cast<int>(piece.size), dest, tag, comm); rc != MPI_SUCCESS)
      return mpi_failure("MPI_Isend", rc);
  }
  if (reader.error() != CL_SUCCESS) return {reader.error(), "reading the buffer"};
  return {};
}

/// What a receive into a Ferry buffer does with an offer of its size: enqueues
/// the driver's receive and fills the ticket (true), or refuses (false).
using offer_taker = std::function<bool(const received_offer&, cl_ferry_peer_ticket&)>;

/// Receives messages from (source, tag) until `size` bytes have come, each
/// into the memory `place(bytes)` gives and then handed to `landed(bytes)`.
/// The first message fixes the source and tag (MPI_ANY_SOURCE, MPI_ANY_TAG).
/// An offer comes instead of data from a send on a Ferry queue: `take`
/// may take it (then `*taken` is set and no data comes), else it is refused
/// and the data follows.
template <typename Place, typename Landed>
transfer_outcome receive_messages(size_t size, int source, int tag, MPI_Comm comm, Place&& place, Landed&& landed,
                                  MPI_Status* last = nullptr, const offer_taker& take = nullptr,
                                  bool* taken = nullptr) {
  size_t received = 0;
  bool first = true;
  do {
    MPI_Message message;
    MPI_Status status;
    if (first) {
      arrival came;
      if (int rc = probe_arrival(source, tag, comm, came); rc != MPI_SUCCESS) return mpi_failure("MPI_Improbe", rc);
      source = came.status.MPI_SOURCE;
      tag = came.user_tag;
      if (came.is_offer) {
        received_offer offer;
        std::string why;
        if (!receive_offer(came, offer, why)) return {CL_INVALID_VALUE, why};
        cl_ferry_peer_ticket ticket{};
        const bool takes = take && offer.size == size && take(offer, ticket);
        if (int rc = answer_offer(offer, comm, takes ? &ticket : nullptr); rc != MPI_SUCCESS)
          return mpi_failure("answering an offer", rc);
        if (takes) {
          if (taken) *taken = true;
          return {};
        }
        // Refused: the sender sends the bytes as data now.
        if (int rc = probe_patiently(source, tag, comm, &message, &status); rc != MPI_SUCCESS)
          return mpi_failure("MPI_Improbe", rc);
      } else {
        message = came.message;
        status = came.status;
      }
      first = false;
    } else if (int rc = probe_patiently(source, tag, comm, &message, &status); rc != MPI_SUCCESS) {
      return mpi_failure("MPI_Improbe", rc);
    }
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    const size_t bytes = count < 0 ? 0 : static_cast<size_t>(count);
    const size_t left = size - received;
    if (bytes > left || (bytes == 0 && left > 0)) {
      discard_message(message, count);
      return {CL_INVALID_VALUE, "a message of " + std::to_string(bytes) + " bytes came from rank " +
                                    std::to_string(source) + " (tag " + std::to_string(tag) + ") where " +
                                    std::to_string(left) + " of " + std::to_string(size) + " were expected"};
    }
    void* into = place(bytes);
    if (into == nullptr && bytes > 0) {
      discard_message(message, count);
      return {CL_OUT_OF_HOST_MEMORY, "no memory for a message of " + std::to_string(bytes) + " bytes"};
    }
    if (int rc = MPI_Mrecv(into, count, MPI_BYTE, &message, last ? last : MPI_STATUS_IGNORE); rc != MPI_SUCCESS)
      return mpi_failure("MPI_Mrecv", rc);
    if (transfer_outcome o = landed(bytes); o.status != CL_SUCCESS) return o;
    received += bytes;
  } while (received < size);
  return {};
}

transfer_outcome receive_range(const transfer_setting& setting, cl_mem buffer, size_t offset, size_t size,
                               int source, int tag, MPI_Comm comm) {
  if (source == MPI_PROC_NULL) return {};
  // A receive into a Ferry buffer takes a Ferry sender's offer: the bytes
  // then migrate from the sender's server.
  auto receive_from_peer =
      ferry_function<clEnqueueReceiveFromPeerFERRY_fn>(setting.copies, "clEnqueueReceiveFromPeerFERRY");
  // It looks for the first message before the wait list has ended: the
  // migration waits for it on the server, data on this host.
  cl_event migration = nullptr;
  cl_int enqueued = CL_SUCCESS;
  offer_taker take;
  if (receive_from_peer) {
    take = [&](const received_offer&, cl_ferry_peer_ticket& ticket) {
      const cl_uint waits = setting.start ? 1 : 0;
      enqueued = receive_from_peer(setting.copies, buffer, offset, size, waits, waits ? &setting.start : nullptr,
                                   &migration, &ticket);
      // Refused when the driver cannot: the sender then sends data.
      return enqueued == CL_SUCCESS;
    };
  }
  // The writer is made for data only: a migration needs none of its blocks.
  std::optional<device_writer> writer;
  cl_int started = CL_SUCCESS;
  uint8_t* slot = nullptr;
  bool migrated = false;
  transfer_outcome o = receive_messages(
      size, source, tag, comm,
      [&](size_t bytes) -> void* {
        if (!writer) {
          if ((started = wait_for_start(setting)) != CL_SUCCESS) return nullptr;  // (the message is dropped)
          writer.emplace(setting.copies, buffer, offset, size, std::max<size_t>(block_size_for(size), 1));
        }
        slot = writer->next_slot(bytes);
        return static_cast<void*>(slot);
      },
      [&](size_t bytes) -> transfer_outcome {
        if (!writer->commit(bytes)) return {writer->error(), "writing the buffer"};
        return {};
      },
      nullptr, take, &migrated);
  if (migrated) return migration_outcome(enqueued, migration, "receive from the sender's server");
  if (started != CL_SUCCESS) return {started, "an event of its wait list failed"};
  if (enqueued != CL_SUCCESS)
    FERRY_WARN("transfer", "the driver refused a receive from a peer (%d); the bytes come as data", enqueued);
  const cl_int written = writer ? writer->finish() : CL_SUCCESS;
  if (o.status != CL_SUCCESS) return o;
  if (written != CL_SUCCESS) return {written, "writing the buffer"};
  return o;
}

// ---------------------------------------------------------------------------
// One block: fewer hand-offs between threads
//
// A halo plane is one block, and what a transfer of it costs is mostly
// hand-offs between the platform's threads and the transfer's (each 50-100 us
// on a small VM). A general transfer (transfer_events) waits on the host for
// a marker behind its wait list, copies on a queue of its own and waits
// again, passes the send to a second thread, and opens a gate: Himeno's
// exchanges took twice as long as the host's own MPI_Sendrecv. A one-block
// transfer instead
//   - reads the bytes to send in the application's queue itself, behind the
//     wait list, so that the read is the transfer's start (no marker to wait
//     for) and the send follows it on the same thread (MPI_Isend);
//   - receives before its wait list has ended (into host memory, which orders
//     nothing), then writes the block on a queue of its own behind the read or
//     a marker behind the wait list: the device, not the host, waits for them;
//   - holds later commands of an in-order queue behind a gate only when they
//     must wait for more than the read: a receive's write, or the event the
//     call asked for (a later command must not start before the transfer's
//     event says it has ended).
// A write of the received bytes cannot be enqueued in the application's
// queue before they have come: a platform may read a non-blocking write's
// memory at the call (Ferry does).

/// Whether a transfer of `size` bytes goes as one block.
bool one_block(size_t size) { return size > 0 && size <= block_size_for(size) && size <= INT_MAX; }

class queued_exchange {
 public:
  queued_exchange() = default;
  ~queued_exchange() {
    if (gate_ && !gate_open_) clSetUserEventStatus(gate_, CL_COMPLETE);  // never left waiting
    // The copies read and write the blocks: they end before the blocks go;
    // and the markers end before they go (PoCL 3.1, see transfer_events.cpp),
    // unless enqueue() stopped halfway.
    for (cl_event e : {read_, written_})
      if (e) clWaitForEvents(1, &e);
    if (enqueued_)
      for (cl_event e : {before_, hold_})
        if (e) clWaitForEvents(1, &e);
    for (cl_event e : {read_, before_, written_, gate_, hold_})
      if (e) clReleaseEvent(e);
    if (copies_) clReleaseCommandQueue(copies_);
    if (buffer_) clReleaseMemObject(buffer_);
    std::free(send_block_);
    std::free(recv_block_);
  }
  queued_exchange(const queued_exchange&) = delete;
  queued_exchange& operator=(const queued_exchange&) = delete;

  /// Enqueues what goes in the application's queue: the read of
  /// [send_offset, +size) when `sends`; for a receive into [recv_offset,
  /// +size), a marker behind the wait list (unless the read is one); the gate.
  cl_int enqueue(const transfer_call& call, const transfer_setting& setting, size_t size, bool sends,
                 size_t send_offset, bool receives, size_t recv_offset) {
    size_ = size;
    recv_offset_ = recv_offset;
    if (clRetainMemObject(call.buffer) == CL_SUCCESS) buffer_ = call.buffer;
    cl_int rc = CL_SUCCESS;
    if (call.event) {
      returned_ = std::make_unique<command_event>();
      if ((rc = returned_->create(setting.context, setting.device)) != CL_SUCCESS) return rc;
    }
    if (sends) {
      if (posix_memalign(reinterpret_cast<void**>(&send_block_), 4096, size) != 0) return CL_OUT_OF_HOST_MEMORY;
      rc = clEnqueueReadBuffer(call.queue, call.buffer, CL_FALSE, send_offset, size, send_block_, call.num_events,
                               call.wait_list, &read_);
      if (rc != CL_SUCCESS) return rc;
    }
    if (receives) {
      if (posix_memalign(reinterpret_cast<void**>(&recv_block_), 4096, size) != 0) return CL_OUT_OF_HOST_MEMORY;
      copies_ = clCreateCommandQueueWithProperties(setting.context, setting.device, nullptr, &rc);
      if (rc != CL_SUCCESS) return rc;
      if (!sends && (setting.in_order || call.num_events > 0)) {
        rc = clEnqueueMarkerWithWaitList(call.queue, call.num_events, call.wait_list, &before_);
        if (rc != CL_SUCCESS) return rc;
      }
    }
    if (setting.in_order && (receives || returned_)) {
      gate_ = clCreateUserEvent(setting.context, &rc);
      if (rc != CL_SUCCESS) return rc;
      if ((rc = clEnqueueMarkerWithWaitList(call.queue, 1, &gate_, &hold_)) != CL_SUCCESS) return rc;
    }
    clFlush(call.queue);
    if (call.event) *call.event = returned_->reference();
    enqueued_ = true;
    return CL_SUCCESS;
  }

  /// The host's part: sends once the read has ended, receives, writes.
  transfer_outcome run(int dest, int send_tag, int source, int recv_tag, MPI_Comm comm) {
    transfer_outcome outcome;
    MPI_Request sent = MPI_REQUEST_NULL;
    if (read_) {
      if (cl_int rc = ended(read_); rc != CL_SUCCESS) {
        outcome = {rc, "reading the buffer (or an event of the wait list failed)"};
      } else if (int e = MPI_Isend(send_block_, static_cast<int>(size_), MPI_BYTE, dest, send_tag, comm, &sent);
                 e != MPI_SUCCESS) {
        outcome = mpi_failure("MPI_Isend", e);
      }
    }
    if (recv_block_) {
      size_t at = 0;
      transfer_outcome received = receive_messages(
          size_, source, recv_tag, comm, [&](size_t) { return static_cast<void*>(recv_block_ + at); },
          [&](size_t n) -> transfer_outcome {
            at += n;
            return {};
          });
      if (outcome.status == CL_SUCCESS) outcome = received;
      // Written only when all came and the wait list has not failed (the
      // device checks: the write waits for the read or the marker).
      if (received.status == CL_SUCCESS) {
        cl_event after = read_ ? read_ : before_;
        cl_int rc = clEnqueueWriteBuffer(copies_, buffer_, CL_FALSE, recv_offset_, size_, recv_block_, after ? 1 : 0,
                                         after ? &after : nullptr, &written_);
        if (rc == CL_SUCCESS) rc = ended(written_);
        if (rc != CL_SUCCESS && outcome.status == CL_SUCCESS)
          outcome = {rc, "writing the buffer (or an event of the wait list failed)"};
      }
    }
    if (sent != MPI_REQUEST_NULL) {
      if (int e = wait_patiently(&sent, MPI_STATUS_IGNORE); e != MPI_SUCCESS && outcome.status == CL_SUCCESS)
        outcome = mpi_failure("MPI_Test", e);
    }
    return outcome;
  }

  void finish(const transfer_outcome& outcome) {
    if (returned_) {
      returned_->finish(outcome.status == CL_SUCCESS ? CL_COMPLETE : outcome.status);
      returned_->wait();
    }
    if (gate_) {
      clSetUserEventStatus(gate_, CL_COMPLETE);
      gate_open_ = true;
    }
  }

 private:
  /// CL_SUCCESS once `e` has ended well, else the code to report (it
  /// fails when an event of the wait list did).
  static cl_int ended(cl_event e) {
    return wait_until_ended(e) == CL_SUCCESS ? CL_SUCCESS : CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  }

  size_t size_ = 0, recv_offset_ = 0;
  cl_mem buffer_ = nullptr;
  uint8_t* send_block_ = nullptr;
  uint8_t* recv_block_ = nullptr;
  cl_command_queue copies_ = nullptr;
  cl_event read_ = nullptr;    // in the application's queue
  cl_event before_ = nullptr;  // in the application's queue: a receive's start
  cl_event written_ = nullptr;  // on copies_
  cl_event gate_ = nullptr;
  cl_event hold_ = nullptr;
  bool gate_open_ = false;
  bool enqueued_ = false;  // enqueue() enqueued everything
  std::unique_ptr<command_event> returned_;
};

/// Enqueues a one-block transfer (see above) and runs its host part.
cl_int exchange_one_block(const transfer_call& call, const transfer_setting& setting, size_t size, bool sends,
                          size_t send_offset, int dest, int send_tag, bool receives, size_t recv_offset, int source,
                          int recv_tag, MPI_Comm comm) {
  auto exchange = std::make_shared<queued_exchange>();
  if (cl_int rc = exchange->enqueue(call, setting, size, sends, send_offset, receives, recv_offset); rc != CL_SUCCESS)
    return rc;
  const char* name = call.name;
  auto task = [=] {
    transfer_outcome outcome = exchange->run(dest, send_tag, source, recv_tag, comm);
    if (outcome.status != CL_SUCCESS)
      FERRY_WARN("transfer", "%s failed (%d): %s", name, outcome.status, outcome.cause.c_str());
    exchange->finish(outcome);
    return outcome.status;
  };
  if (call.blocking) return task();
  // On an in-order queue one after another, as its copies run
  // (transfer_command.cpp); an out-of-order queue's may go in any order.
  if (setting.in_order) run_after(call.queue, [task] { task(); });
  else if (!run_in_background([task] { task(); })) task();
  return CL_SUCCESS;
}

}  // namespace
}  // namespace ferry::transfer

using namespace ferry::transfer;

extern "C" cl_int clEnqueueSendBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset,
                                      size_t size, int dest, int tag, MPI_Comm comm, cl_uint num_events,
                                      const cl_event* wait_list, cl_event* event) {
  transfer_call call{"clEnqueueSendBuffer", queue, buffer, direction::from_device, {{offset, size}, {0, 0}}, 1,
                     blocking, num_events, wait_list, event};
  transfer_setting setting;
  if (cl_int rc = check_call(call, setting); rc != CL_SUCCESS) return rc;
  if (cl_int rc = check_mpi(call.name, comm, {{peer_role::send, dest, tag}}); rc != CL_SUCCESS) return rc;
  if (one_block(size) && dest != MPI_PROC_NULL && !may_go_between_servers(queue, size))
    return exchange_one_block(call, setting, size, true, offset, dest, tag, false, 0, MPI_PROC_NULL, 0, comm);
  return enqueue_transfer(
      call, setting, [=](const transfer_setting& s) { return send_range(s, buffer, offset, size, dest, tag, comm); },
      starts_early(call));
}

extern "C" cl_int clEnqueueRecvBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset,
                                      size_t size, int source, int tag, MPI_Comm comm, cl_uint num_events,
                                      const cl_event* wait_list, cl_event* event) {
  transfer_call call{"clEnqueueRecvBuffer", queue, buffer, direction::to_device, {{offset, size}, {0, 0}}, 1,
                     blocking, num_events, wait_list, event};
  transfer_setting setting;
  if (cl_int rc = check_call(call, setting); rc != CL_SUCCESS) return rc;
  if (cl_int rc = check_mpi(call.name, comm, {{peer_role::receive, source, tag}}); rc != CL_SUCCESS) return rc;
  if (one_block(size) && source != MPI_PROC_NULL && !may_go_between_servers(queue, size))
    return exchange_one_block(call, setting, size, false, 0, MPI_PROC_NULL, 0, true, offset, source, tag, comm);
  return enqueue_transfer(
      call, setting,
      [=](const transfer_setting& s) { return receive_range(s, buffer, offset, size, source, tag, comm); },
      starts_early(call));
}

extern "C" cl_int clEnqueueSendrecvBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                          size_t send_offset, size_t recv_offset, size_t size, int dest,
                                          int send_tag, int source, int recv_tag, MPI_Comm comm, cl_uint num_events,
                                          const cl_event* wait_list, cl_event* event) {
  transfer_call call{"clEnqueueSendrecvBuffer", queue, buffer, direction::both,
                     {{send_offset, size}, {recv_offset, size}}, 2, blocking, num_events, wait_list, event};
  transfer_setting setting;
  if (cl_int rc = check_call(call, setting); rc != CL_SUCCESS) return rc;
  // The received bytes must not land in the range being sent.
  if (size > 0 && send_offset < recv_offset + size && recv_offset < send_offset + size) return CL_MEM_COPY_OVERLAP;
  if (cl_int rc = check_mpi(call.name, comm, {{peer_role::send, dest, send_tag}, {peer_role::receive, source, recv_tag}});
      rc != CL_SUCCESS)
    return rc;
  // A side with MPI_PROC_NULL moves nothing: no copy for it (a write would
  // put the block's undefined bytes into the buffer).
  if (one_block(size) && (dest != MPI_PROC_NULL || source != MPI_PROC_NULL) && !may_go_between_servers(queue, size))
    return exchange_one_block(call, setting, size, dest != MPI_PROC_NULL, send_offset, dest, send_tag,
                              source != MPI_PROC_NULL, recv_offset, source, recv_tag, comm);
  return enqueue_transfer(call, setting, [=](const transfer_setting& s) {
    // Both at once, as MPI_Sendrecv: each side may send before it receives.
    // Between servers each half is a migration that ends only when the
    // other rank's does; the send's then takes a queue of its own, since on
    // the one in-order queue it would wait behind this rank's receive.
    transfer_setting send_setting = s;
    cl_command_queue send_queue = nullptr;
    if (may_go_between_servers(s.copies, size)) {
      cl_int rc = CL_SUCCESS;
      send_queue = clCreateCommandQueueWithProperties(s.context, s.device, nullptr, &rc);
      if (rc != CL_SUCCESS) return transfer_outcome{rc, "creating a queue for the send"};
      send_setting.copies = send_queue;
    }
    auto sent = std::make_shared<std::promise<transfer_outcome>>();
    std::future<transfer_outcome> send_done = sent->get_future();
    auto send = [=] { sent->set_value(send_range(send_setting, buffer, send_offset, size, dest, send_tag, comm)); };
    if (!run_in_background(send)) send();  // (then sequential: fine unless both ranks cannot start a thread)
    transfer_outcome received = receive_range(s, buffer, recv_offset, size, source, recv_tag, comm);
    transfer_outcome sent_outcome = send_done.get();
    if (send_queue) clReleaseCommandQueue(send_queue);
    return sent_outcome.status != CL_SUCCESS ? sent_outcome : received;
  }, starts_early(call));
}

extern "C" int clHostRecvFromBuffer(void* host, size_t size, int source, int tag, MPI_Comm comm,
                                    MPI_Status* status) {
  if (host == nullptr && size > 0) return MPI_ERR_BUFFER;
  auto* bytes = static_cast<uint8_t*>(host);
  size_t at = 0;
  MPI_Status last;
  transfer_outcome o = receive_messages(
      size, source, tag, comm, [&](size_t) { return static_cast<void*>(bytes + at); },
      [&](size_t n) -> transfer_outcome {
        at += n;
        return {};
      },
      &last);
  if (o.status != CL_SUCCESS) {
    FERRY_WARN("transfer", "clHostRecvFromBuffer failed: %s", o.cause.c_str());
    return o.status == CL_INVALID_VALUE ? MPI_ERR_TRUNCATE : MPI_ERR_OTHER;
  }
  if (status != MPI_STATUS_IGNORE) {
    *status = last;
    MPI_Status_set_elements_x(status, MPI_BYTE, static_cast<MPI_Count>(size));
  }
  return MPI_SUCCESS;
}
