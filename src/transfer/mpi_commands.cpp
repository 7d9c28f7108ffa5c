// The MPI transfer commands: a buffer's bytes to or from another rank, as
// commands with events (clEnqueueSendBuffer, clEnqueueRecvBuffer,
// clEnqueueSendrecvBuffer), a host's receive of what they send
// (clHostRecvFromBuffer), and events of non-blocking MPI requests
// (mpi_request_events.cpp).
//
// A send goes in blocks (block_pipeline), one MPI message each, so that the
// network overlaps the device copies. A receive takes whatever messages come
// until its size is reached: a matched probe (MPI_Mprobe) says how large the
// next one is, so a host's single MPI_Send of the whole size is received as
// well as a transfer command's blocks. MPI keeps messages between two ranks
// with one tag and communicator in order, so the blocks arrive in order.
#include <mpi.h>

#include <climits>
#include <future>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "ferry/cl_data_transfer.h"
#include "transfer/block_pipeline.hpp"
#include "transfer/mpi_checks.hpp"
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

transfer_outcome send_range(const transfer_setting& setting, cl_mem buffer, size_t offset, size_t size, int dest,
                            int tag, MPI_Comm comm) {
  if (dest == MPI_PROC_NULL) return {};
  if (size == 0) {
    // One empty message: the receiver of 0 bytes matches it.
    if (int rc = MPI_Send(nullptr, 0, MPI_BYTE, dest, tag, comm); rc != MPI_SUCCESS)
      return mpi_failure("MPI_Send", rc);
    return {};
  }
  device_reader reader(setting.copies, buffer, offset, size, std::min<size_t>(block_size_for(size), INT_MAX));
  device_reader::piece piece;
  while (reader.next(piece)) {
    if (int rc = MPI_Send(piece.data, static_cast<int>(piece.size), MPI_BYTE, dest, tag, comm); rc != MPI_SUCCESS)
      return mpi_failure("MPI_Send", rc);
  }
  if (reader.error() != CL_SUCCESS) return {reader.error(), "reading the buffer"};
  return {};
}

/// Receives messages from (source, tag) until `size` bytes have come, each
/// into the memory `place(bytes)` gives and then handed to `landed(bytes)`.
/// The first message fixes the source and tag (MPI_ANY_SOURCE, MPI_ANY_TAG).
template <typename Place, typename Landed>
transfer_outcome receive_messages(size_t size, int source, int tag, MPI_Comm comm, Place&& place, Landed&& landed,
                                  MPI_Status* last = nullptr) {
  size_t received = 0;
  bool first = true;
  do {
    MPI_Message message;
    MPI_Status status;
    if (int rc = MPI_Mprobe(source, tag, comm, &message, &status); rc != MPI_SUCCESS)
      return mpi_failure("MPI_Mprobe", rc);
    if (first) {
      source = status.MPI_SOURCE;
      tag = status.MPI_TAG;
      first = false;
    }
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    const size_t bytes = count < 0 ? 0 : static_cast<size_t>(count);
    const size_t left = size - received;
    if (bytes > left || (bytes == 0 && left > 0)) {
      // Taken off the queue all the same, so that it cannot meet a later receive.
      std::vector<char> discard(bytes);
      MPI_Mrecv(discard.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
      return {CL_INVALID_VALUE, "a message of " + std::to_string(bytes) + " bytes came from rank " +
                                    std::to_string(source) + " (tag " + std::to_string(tag) + ") where " +
                                    std::to_string(left) + " of " + std::to_string(size) + " were expected"};
    }
    void* into = place(bytes);
    if (into == nullptr && bytes > 0) {
      std::vector<char> discard(bytes);
      MPI_Mrecv(discard.data(), count, MPI_BYTE, &message, MPI_STATUS_IGNORE);
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
  device_writer writer(setting.copies, buffer, offset, size, std::max<size_t>(block_size_for(size), 1));
  uint8_t* slot = nullptr;
  transfer_outcome o = receive_messages(
      size, source, tag, comm,
      [&](size_t bytes) {
        slot = writer.next_slot(bytes);
        return static_cast<void*>(slot);
      },
      [&](size_t bytes) -> transfer_outcome {
        if (!writer.commit(bytes)) return {writer.error(), "writing the buffer"};
        return {};
      });
  const cl_int written = writer.finish();
  if (o.status != CL_SUCCESS) return o;
  if (written != CL_SUCCESS) return {written, "writing the buffer"};
  return o;
}

struct mpi_call {
  transfer_call call;
  transfer_setting setting;
};

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
  return enqueue_transfer(call, setting, [=](const transfer_setting& s) {
    return send_range(s, buffer, offset, size, dest, tag, comm);
  });
}

extern "C" cl_int clEnqueueRecvBuffer(cl_command_queue queue, cl_mem buffer, cl_bool blocking, size_t offset,
                                      size_t size, int source, int tag, MPI_Comm comm, cl_uint num_events,
                                      const cl_event* wait_list, cl_event* event) {
  transfer_call call{"clEnqueueRecvBuffer", queue, buffer, direction::to_device, {{offset, size}, {0, 0}}, 1,
                     blocking, num_events, wait_list, event};
  transfer_setting setting;
  if (cl_int rc = check_call(call, setting); rc != CL_SUCCESS) return rc;
  if (cl_int rc = check_mpi(call.name, comm, {{peer_role::receive, source, tag}}); rc != CL_SUCCESS) return rc;
  return enqueue_transfer(call, setting, [=](const transfer_setting& s) {
    return receive_range(s, buffer, offset, size, source, tag, comm);
  });
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
  return enqueue_transfer(call, setting, [=](const transfer_setting& s) {
    // Both at once, as MPI_Sendrecv: each side may send before it receives.
    auto sent = std::make_shared<std::promise<transfer_outcome>>();
    std::future<transfer_outcome> send_done = sent->get_future();
    auto send = [=] { sent->set_value(send_range(s, buffer, send_offset, size, dest, send_tag, comm)); };
    if (!run_in_background(send)) send();  // (then sequential: fine unless both ranks cannot start a thread)
    transfer_outcome received = receive_range(s, buffer, recv_offset, size, source, recv_tag, comm);
    transfer_outcome sent_outcome = send_done.get();
    return sent_outcome.status != CL_SUCCESS ? sent_outcome : received;
  });
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
