#include "client/core/samplers.hpp"

#include "client/core/context_objects.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client {

result<cl_sampler> create_sampler_on_servers(cl_context c, sampler_settings settings) {
  protocol::create_sampler request;
  request.properties = std::vector<uint64_t>{CL_SAMPLER_NORMALIZED_COORDS, settings.normalized_coords,
                                             CL_SAMPLER_ADDRESSING_MODE,   settings.addressing_mode,
                                             CL_SAMPLER_FILTER_MODE,       settings.filter_mode,
                                             0};
  request.id = next_object_id();
  request.context = c->id;
  auto reply = call_each<protocol::status_reply>(c->servers, request);
  if (!reply || reply->status != CL_SUCCESS) {
    post_each(c->servers, protocol::release_object{request.id});
    return fail(reply ? reply->status : reply.error());
  }
  auto* created = make_in_context<sampler>(c, request.id);
  created->normalized_coords = settings.normalized_coords;
  created->addressing_mode = settings.addressing_mode;
  created->filter_mode = settings.filter_mode;
  created->properties = std::move(settings.properties);
  return static_cast<cl_sampler>(created);
}

}  // namespace ferry::client
