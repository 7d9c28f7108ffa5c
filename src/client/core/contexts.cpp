#include "client/core/contexts.hpp"

#include "client/core/device_list.hpp"
#include "client/core/servers/server.hpp"

namespace ferry::client {

cl_context create_context_on_servers(cl_uint count, const cl_device_id* devices,
                                     std::vector<cl_context_properties> properties, context_notify notify,
                                     void* user_data) {
  auto* c = new context();
  c->id = next_object_id();
  c->properties = std::move(properties);
  c->notify = notify;
  c->notify_data = user_data;
  for (cl_uint i = 0; i < count; ++i)
    if (!contains(c->devices, devices[i])) c->devices.push_back(devices[i]);
  // The context exists on each server of its devices, with that server's
  // devices, under one id.
  c->servers = servers_of(c->devices);
  for (server* s : c->servers) {
    c->epochs.push_back(s->link->epoch());
    protocol::create_context message;
    message.id = c->id;
    message.devices = device_indices_on(*s, c->devices);
    s->link->post(message);
  }
  return c;
}

}  // namespace ferry::client
