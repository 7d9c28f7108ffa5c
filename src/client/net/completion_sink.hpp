// What a connection needs of the rest of the client: the events it completes
// and the log of the failures servers report. Both belong to core/, which
// implements this interface (core/connection_sink.cpp); net/ never includes
// core/, so core/ may include net/ without a cycle, and a connection's parts
// can be tested with a fake sink.
#pragma once

#include <CL/cl.h>

#include <array>
#include <string>
#include <string_view>

#include "protocol/messages.hpp"

namespace ferry::client {

/// A client event. net/ never looks inside one: it only hands it back to the
/// sink (core/objects.hpp defines it).
using event = _cl_event;

/// Where a server-side failure happened: the server's address and the
/// session's label (protocol::session_label).
struct server_label {
  std::string_view server;
  std::string_view session;
};

class completion_sink {
 public:
  /// What the connection needs to know of an event it was given.
  struct event_facts {
    protocol::object_id command;  // the command it stands for
    protocol::object_id queue;    // its queue's id; 0 for none
    cl_command_type type;
  };
  virtual event_facts facts(event* e) = 0;
  /// Whether `e` is complete or failed (settle() waits for that).
  virtual bool finished(event* e) = 0;
  /// Takes and drops an internal reference: a connection holds each event
  /// it tracks until its outcome arrived.
  virtual void hold(event* e) = 0;
  virtual void release(event* e) = 0;
  /// One part of the outcome of `e` arrived (its data, or its status with
  /// the profiling timestamps; null for none).
  virtual void part_done(event* e, cl_int status, const std::array<cl_ulong, 4>* profiling) = 0;
  /// Completes `e` with `status` whatever parts are missing.
  virtual void complete(event* e, cl_int status) = 0;

  /// Records why the current call fails with `code`; returns `code`.
  virtual cl_int explain(cl_int code, const std::string& reason) = 0;
  /// A server answered `request` about `object_kind` `object` with `code`.
  virtual void failed_reply(const server_label& origin, cl_int code, std::string_view request,
                            std::string_view object_kind, protocol::object_id object) = 0;
  /// Command `command` of type `type` on queue `queue` failed on the server
  /// with `code` (type and queue 0: the client keeps no event for it).
  virtual void failed_command(const server_label& origin, cl_int code, cl_command_type type,
                              protocol::object_id command, protocol::object_id queue) = 0;

 protected:
  ~completion_sink() = default;
};

/// The client's own sink, which every connection opened with
/// connection::open uses (defined in core/).
completion_sink& client_completion_sink();

}  // namespace ferry::client
