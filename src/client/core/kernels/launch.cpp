#include "client/core/kernels/launch.hpp"

#include "client/core/command.hpp"

namespace ferry::client {

namespace {

// The launch message, reused by each thread so that steady-state launches
// do not allocate (argument bytes keep their capacity).
protocol::enqueue_ndrange& launch_message() {
  thread_local protocol::enqueue_ndrange message;
  return message;
}

}  // namespace

cl_int launch(queue* q, kernel* k, const ndrange& range, cl_uint count, const cl_event* list, cl_event* event_out,
              cl_command_type type) {
  auto& message = launch_message();
  message.args.resize(k->args.size());
  for (size_t i = 0; i < k->args.size(); ++i) message.args[i] = k->args[i].wire;
  message.kernel = k->id;
  message.work_dim = range.work_dim;
  for (size_t i = 0; i < 3; ++i) {
    message.offset[i] = range.offset[i];
    message.global[i] = range.global[i];
    message.local[i] = range.local[i];
  }
  message.has_local = range.group == group_size::given ? 1 : 0;
  command cmd(q, type, count, list, event_out, blocking::no);
  // A kernel may write any buffer it is given unless the buffer is read-only.
  for (const auto& arg : k->args) {
    if (!arg.mem) continue;
    access how = arg.mem->flags & CL_MEM_READ_ONLY ? access::read : access::write;
    if (cl_int code = cmd.uses(arg.mem, how); code != CL_SUCCESS) return cmd.abandon(code);
  }
  message.header = cmd.header;
  return cmd.submit(message);
}

}  // namespace ferry::client
