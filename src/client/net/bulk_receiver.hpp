// The client's side of the bulk stream coming in: the reads waiting for
// their data, and the bulk reader thread that writes each chunk straight
// into its read's destination and completes the read's data part.
//
// Locks: transfers_mutex_ guards transfers_ (and orders the count of bulk
// frames received with them). It never nests with another lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "client/net/link_state.hpp"

namespace ferry::client {

class bulk_receiver {
 public:
  /// `request_ack`: asks for an ack soon (the server keeps the staging of a
  /// read until the client acknowledges its last chunk).
  bulk_receiver(link_state& link, std::function<void()> request_ack)
      : link_(link), request_ack_(std::move(request_ack)) {}

  /// Registers where the bulk data of a read goes (see connection).
  void expect_data(protocol::object_id transfer, void* destination, uint64_t size, event* e);
  /// Command `command` failed, so no data follows: forgets its read and
  /// returns the event it held (to release), or null.
  event* abandon(protocol::object_id command);
  /// Forgets every read (the session ended) and returns the events they held.
  std::vector<event*> abandon_all();

  /// Starts the bulk reader on `from`, the bulk stream of `generation`.
  void start(stream* from, uint64_t generation);
  /// Waits for the bulk reader to return (its stream was shut down).
  void join();
  /// Waits until the bulk reader holds no chunk in hand.
  void quiesce() const;

 private:
  void read_loop(stream* from, uint64_t generation);
  /// Where the chunk of `prefix` with `chunk` bytes goes; null, with `why`,
  /// when the server sent what nobody asked for.
  uint8_t* destination_of(const protocol::bulk_data& prefix, uint64_t chunk, std::string& why);
  /// Counts a chunk that arrived whole; returns the read's event when it
  /// was the last.
  event* arrived(const protocol::bulk_data& prefix, uint64_t chunk);

  struct transfer {
    uint8_t* destination;
    uint64_t size;
    uint64_t received;
    event* owner;
  };

  link_state& link_;
  const std::function<void()> request_ack_;
  std::mutex transfers_mutex_;  // guards transfers_
  std::unordered_map<protocol::object_id, transfer> transfers_;
  std::atomic<int> busy_{0};  // 1 while the reader handles a chunk
  std::thread reader_;  // of the current streams; started and joined by the control reader
};

}  // namespace ferry::client
