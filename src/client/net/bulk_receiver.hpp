// The client's side of the bulk stream coming in: the reads waiting for
// their data, and the bulk reader thread that writes each chunk straight
// into its read's destination and completes the read's data part.
//
// On a plain Unix socket to a daemon of version 8, the first full-size chunk
// a stream brings makes the reader offer a read window (bulk_sender::
// offer_read_window): from then on the daemon may put large chunks into its
// slots and send read_window_chunk, which the reader checks like bulk_data,
// copies out of the slot and releases.
//
// A session with bulk lanes (protocol version 11) has one reader per lane
// besides the bulk stream's: the server sends each piece of a large read (and
// each piece of a CUDA copy back) on whichever connection is free, so the
// chunks of one read land from several threads, each in its own part of the
// destination.
//
// Locks: transfers_mutex_ guards transfers_ (and orders the count of bulk
// frames received with them). It never nests with another lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/net/link_state.hpp"
#include "common/bulk_window.hpp"
#include "protocol/frame.hpp"

namespace ferry::client {

class bulk_receiver {
 public:
  /// `request_ack`: asks for an ack soon (the server keeps the staging of a
  /// read until the client acknowledges its last chunk).
  /// `offer_read_window`: offers the server a read window on the bulk
  /// stream of the generation given (null: none offered); may be empty.
  bulk_receiver(link_state& link, std::function<void()> request_ack,
                std::function<std::unique_ptr<bulk_window>(uint64_t)> offer_read_window = {})
      : link_(link), request_ack_(std::move(request_ack)), offer_read_window_(std::move(offer_read_window)) {}

  /// Registers where the bulk data of a read goes (see connection).
  void expect_data(protocol::object_id transfer, void* destination, uint64_t size, event* e);
  /// What bytes that no OpenCL command awaits tell once they are all in
  /// (true), or once none will come (false: the session ended). Runs on the
  /// bulk reader or the thread that ends the session; it must not block.
  using bytes_done = std::function<void(bool landed)>;
  /// Registers where the `size` bytes of bulk transfer `transfer` go, for a
  /// waiter that is no OpenCL event (a CUDA copy back). False, without
  /// calling `done`, when the session has ended.
  bool expect_bytes(protocol::object_id transfer, void* destination, uint64_t size, bytes_done done);
  /// Forgets such a transfer (the server said no bytes come): true when it
  /// was still registered, and then its `done` never runs.
  bool forget_bytes(protocol::object_id transfer);
  /// Command `command` failed, so no data follows: forgets its read and
  /// returns the event it held (to release), or null.
  event* abandon(protocol::object_id command);
  /// Forgets every read (the session ended) and returns the events they held.
  std::vector<event*> abandon_all();

  /// Starts a reader on `from`, the bulk stream (`lane` 0) or bulk lane
  /// `lane` of `generation`.
  void start(stream* from, uint64_t generation, uint32_t lane = 0);
  /// Waits for every reader to return (their streams were shut down).
  void join();
  /// Waits until no reader holds a chunk in hand.
  void quiesce() const;

 private:
  void read_loop(stream* from, uint64_t generation, uint32_t lane);
  /// A bulk_data frame whose header `h` was read on `lane`; false when the
  /// stream ended (`why` set when the server broke the protocol, empty when
  /// the stream closed).
  bool receive_chunk(stream* from, const protocol::frame_header& h, uint32_t lane, std::string& why);
  /// A read_window_chunk frame whose header `h` was read; as receive_chunk.
  bool receive_window_chunk(stream* from, const protocol::frame_header& h, std::string& why);
  /// Bytes of a chunk are in place: counts them (and the frame, on `lane`),
  /// completes the read's data part after its last chunk.
  void landed(const protocol::bulk_data& prefix, uint64_t chunk, uint32_t lane);
  /// The most payload a read_window_chunk may have (its fields take 36 bytes).
  static constexpr size_t window_payload_limit = 64;
  /// Where the chunk of `prefix` with `chunk` bytes goes; null, with `why`,
  /// when the server sent what nobody asked for.
  uint8_t* destination_of(const protocol::bulk_data& prefix, uint64_t chunk, std::string& why);
  /// Counts a chunk that arrived whole; after the last, returns true with
  /// whoever waits for the transfer in `owner` or `done`.
  bool arrived(const protocol::bulk_data& prefix, uint64_t chunk, uint32_t lane, event*& owner, bytes_done& done);

  struct transfer {
    uint8_t* destination;
    uint64_t size;
    uint64_t received;
    event* owner;     // an OpenCL read's event, or null
    bytes_done done;  // else this
  };

  link_state& link_;
  const std::function<void()> request_ack_;
  const std::function<std::unique_ptr<bulk_window>(uint64_t)> offer_read_window_;
  // The bulk stream's read loop's own (only its thread touches them): the
  // current stream's read window, and whether it was offered one.
  std::unique_ptr<bulk_window> read_window_;
  bool read_window_decided_ = false;
  uint64_t generation_ = 0;
  std::mutex transfers_mutex_;  // guards transfers_
  std::unordered_map<protocol::object_id, transfer> transfers_;
  std::atomic<int> busy_{0};  // readers handling a chunk now
  std::vector<std::thread> readers_;  // of the current streams; started and joined by the control reader
};

}  // namespace ferry::client
