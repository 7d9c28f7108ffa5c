// Availability callbacks (clFerrySetAvailabilityCallback): the application
// hears when a server's devices go offline and come back, so it can fall
// back to a local device meanwhile (PoCL-R paper, Fig. 4).
#pragma once

#include <CL/cl_ext_ferry.h>

namespace ferry::client {

struct server;

/// Adds a listener; every listener hears every later change.
void add_availability_callback(cl_ferry_availability_notify notify, void* user_data);

/// Tells the listeners, on the callback thread and in order, that each of
/// `s`'s devices is now `available` or not.
void announce_availability(const server& s, bool available);

}  // namespace ferry::client
