#include "client/core/programs/specialization.hpp"

#include "client/core/servers/server.hpp"

namespace ferry::client {

namespace {

// Specialization constants are scalars (at most 8 bytes); a value larger than
// this is no constant's and travels as none (see below).
constexpr size_t max_spec_constant_size = 256;

}  // namespace

cl_int set_specialization_constant(program* p, cl_uint spec_id, size_t spec_size, const void* spec_value) {
  protocol::set_program_specialization_constant request;
  request.program = p->id;
  request.spec_id = spec_id;
  request.size = spec_size;
  // A NULL value, or one no constant has the size of, travels as none: the
  // native call then gets NULL with spec_size and answers in its own order.
  if (spec_value != nullptr && spec_size <= max_spec_constant_size) {
    const auto* first = static_cast<const uint8_t*>(spec_value);
    request.value.assign(first, first + spec_size);
  }
  auto reply = call_each<protocol::status_reply>(p->servers, request);
  if (!reply) return reply.error();
  return reply->status;
}

}  // namespace ferry::client
