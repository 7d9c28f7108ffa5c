// Objects that belong to a context (queues, memory, programs, samplers):
// each holds an internal reference to its context for as long as it lives
// (objects.cpp destroy() gives it back).
#pragma once

#include "client/core/objects.hpp"

namespace ferry::client {

/// A new object of type T in context `c` under `id` (API count 1).
template <class T>
T* make_in_context(cl_context c, protocol::object_id id) {
  auto* object = new T();
  object->id = id;
  object->context = c;
  retain_internal(c);
  return object;
}

}  // namespace ferry::client
