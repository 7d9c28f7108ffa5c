#include "client/core/remote_query.hpp"

#include "client/core/servers/server.hpp"

namespace ferry::client {

result<protocol::bytes> ask_server(connection* home, remote_question question) {
  connection* link = question.on_device ? question.on_device->host->link.get() : home;
  if (link == nullptr) return fail(CL_DEVICE_NOT_AVAILABLE);
  protocol::query request;
  request.kind = question.kind;
  request.object = question.about->id;
  request.device = question.on_device ? question.on_device->index : 0;
  request.param = question.param;
  request.index = question.index;
  request.input = std::move(question.input);
  auto reply = link->call<protocol::query_reply>(request);
  if (!reply) return fail(reply.error());
  if (reply->status != CL_SUCCESS) return fail(reply->status);
  return std::move(reply->value);
}

}  // namespace ferry::client
