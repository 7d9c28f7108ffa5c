// What a session hands its outgoing peer links to send (peer_link.hpp):
// event statuses for export_event and mapped ranges for migrate_out.
#pragma once

#include <CL/cl.h>

#include <cstdint>

#include "protocol/messages.hpp"
#include "server/native/mapping.hpp"
#include "server/transport/staging.hpp"

namespace ferry::server {

/// export_event: `event`'s status, for the peer.
struct peer_status {
  protocol::object_id event = 0;
  protocol::object_id command = 0;  // the export_event's command, for failures
  cl_int status = CL_COMPLETE;
  cl_event native = nullptr;  // owned, may be null: its true status is read before sending
  bool verify = false;        // the callback may have said CL_COMPLETE for a failure
};

/// migrate_out: a mapped range of a buffer, for the peer.
struct peer_migration {
  protocol::object_id command = 0;
  uint64_t transfer = 0;
  staging_ptr content_size;  // the buffer's content size (8 bytes), or null
  native::mapping source;    // `size` bytes (empty when size is 0); unmapped once acknowledged
  uint64_t size = 0;    // bytes mapped
  uint64_t offset = 0;  // where they start in the buffer
  cl_int status = CL_COMPLETE;  // negative: the map failed, send nothing
  cl_event event = nullptr;     // owned, may be null
  bool verify = false;
  bool notify = false;
  /// Bytes to send: with a content size, those below it.
  uint64_t payload_size() const;
  const uint8_t* payload() const { return source.bytes(); }
};

}  // namespace ferry::server
