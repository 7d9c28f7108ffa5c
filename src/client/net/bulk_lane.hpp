// One bulk lane of a session (docs/protocol.md, "Bulk lanes"): a connection
// beside the bulk stream that carries some chunks of large transfers, so that
// several TCP connections, each written by a thread of its own, move them
// faster than one can. Each lane numbers its own frames and keeps them in its
// own replay log until the server acknowledges them (lane_ack), and a resumed
// session sends each lane's missing frames again on that lane.
//
// A transfer striped over the lanes is a `stripe`: the bulk sender's caller
// and every lane's thread take its chunks one at a time, whoever is free
// next, so a slow connection carries fewer of them.
//
// Locks: send_mutex_ serialises writes to the lane's socket (held for a
// lane's whole share of a stripe), then the log's own (sent_chunks);
// job_mutex_ guards the handing over of stripes. The resumer takes every
// lane's send_mutex_ and log mutex, lane by lane in order, after the bulk
// sender's.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "client/net/bulk_log.hpp"
#include "client/net/sent_chunks.hpp"
#include "client/net/link_state.hpp"
#include "protocol/messages.hpp"

namespace ferry::client {

/// One transfer cut into chunks for the bulk stream and the lanes.
struct stripe {
  protocol::object_id transfer = 0;
  const uint8_t* bytes = nullptr;
  uint64_t size = 0;
  bulk_log::hold how = bulk_log::hold::copy;
  std::shared_ptr<const void> keeper;  // hold::keep
  protocol::object_id queue = 0;       // hold::borrow: the command's queue
  uint64_t generation = 0;             // of the streams the chunks are written to

  /// Takes the next chunk not taken yet: its place in the transfer. False
  /// when every chunk is taken.
  bool take(uint64_t& offset, uint64_t& chunk);

 private:
  std::atomic<uint64_t> next_{0};  // index of the next chunk
};

class bulk_lane {
 public:
  bulk_lane(link_state& link, uint32_t index) : link_(link), index_(index) {}
  ~bulk_lane();
  bulk_lane(const bulk_lane&) = delete;
  bulk_lane& operator=(const bulk_lane&) = delete;

  /// Has the lane's thread take chunks of `s` (written to the lane when it
  /// is current, else only kept for the resumption) until none is left.
  /// `s` lives until finish() returns.
  void start(stripe& s);
  /// Waits until the lane is done with the stripe it started; returns the
  /// number of the last frame it kept for it (0: it took none).
  uint64_t finish();

  /// This lane's replay log: what the server has not acknowledged yet.
  sent_chunks& log() { return log_; }

 private:
  friend class resumer;  // takes send_mutex_ to swap the streams
  /// The thread's body: takes stripes until the lane is destroyed.
  void run();
  /// Keeps one chunk of `s` and writes it when `writing`; false once a
  /// write failed.
  bool send_chunk(stripe& s, uint64_t offset, uint64_t chunk, bool writing, uint64_t& last);

  link_state& link_;
  const uint32_t index_;  // this lane's number, from 1

  std::mutex send_mutex_;  // serialises writes to the lane's socket
  sent_chunks log_;

  std::mutex job_mutex_;  // guards job_, last_, busy_, stop_, thread_
  std::condition_variable job_cv_;
  stripe* job_ = nullptr;  // the stripe to work on, until finished
  uint64_t last_ = 0;      // the last frame kept for it
  bool busy_ = false;      // job_ is being worked on
  bool stop_ = false;
  std::thread thread_;  // started with the first stripe
};

}  // namespace ferry::client
