#include "client/core/objects.hpp"

#include <mutex>
#include <unordered_set>

#include "client/core/memory/host_ptr_coherence.hpp"
#include "client/core/memory/placement.hpp"
#include "client/net/control_channel.hpp"
#include "client/core/servers/server.hpp"
#include "common/log.hpp"

namespace ferry::client {
namespace {

std::atomic<uint64_t> live_objects{0};

// Every counted object alive in this process (see is_live_memory).
std::mutex object_registry_mutex;  // guards object_registry()
std::unordered_set<const void*>& object_registry() {
  static auto* set = new std::unordered_set<const void*>;  // lives as long as the process
  return *set;
}
std::atomic<protocol::object_id> id_counter{1};

const char* tag_name(object_tag tag) {
  switch (tag) {
    case object_tag::context: return "context";
    case object_tag::queue: return "queue";
    case object_tag::mem: return "memory object";
    case object_tag::program: return "program";
    case object_tag::kernel: return "kernel";
    case object_tag::event: return "event";
    case object_tag::sampler: return "sampler";
    default: return "object";
  }
}

bool is_counted(object_tag tag) { return tag != object_tag::platform && tag != object_tag::device; }

void destroy(object_base* o) {
  object_tag tag = o->tag;
  if (is_counted(tag)) {
    std::lock_guard lock(object_registry_mutex);
    object_registry().erase(o);
  }
  o->tag = object_tag::released;
  switch (tag) {
    case object_tag::context: {
      auto* c = static_cast<context*>(o);
      std::vector<_cl_context::destructor> destructors;
      {
        std::lock_guard lock(c->destructors_mutex);
        destructors.swap(c->destructors);
      }
      for (auto it = destructors.rbegin(); it != destructors.rend(); ++it) it->first(c, it->second);
      delete c;
      break;
    }
    case object_tag::queue: {
      auto* q = static_cast<queue*>(o);
      for (event* e : q->pending_reads) release_internal(e);
      release_internal(q->context);
      delete q;
      break;
    }
    case object_tag::mem: {
      auto* m = static_cast<memory*>(o);
      stop_coherence(m);
      std::vector<_cl_mem::destructor> destructors;
      {
        std::lock_guard lock(m->destructors_mutex);
        destructors.swap(m->destructors);
      }
      // Destructor callbacks run in reverse order of registration, once the
      // memory object is gone (spec: clSetMemObjectDestructorCallback).
      for (auto it = destructors.rbegin(); it != destructors.rend(); ++it) it->first(m, it->second);
      for (auto& mapping : m->mappings)
        if (mapping.owned) ::operator delete(mapping.pointer, std::align_val_t{64});
      if (m->content_size) release_internal(m->content_size);
      if (m->last_writer) release_api(m->last_writer);
      if (m->parent) release_internal(m->parent);
      if (m->image.mem_object) release_internal(m->image.mem_object);
      release_internal(m->context);
      delete m;
      break;
    }
    case object_tag::program: {
      auto* p = static_cast<program*>(o);
      release_internal(p->context);
      delete p;
      break;
    }
    case object_tag::kernel: {
      auto* k = static_cast<kernel*>(o);
      k->program->attached_kernels.fetch_sub(1);
      release_internal(k->program);
      delete k;
      break;
    }
    case object_tag::sampler: {
      auto* s = static_cast<sampler*>(o);
      release_internal(s->context);
      delete s;
      break;
    }
    case object_tag::event: {
      auto* e = static_cast<event*>(o);
      for (event* read : e->implied) release_internal(read);
      if (e->queue) release_internal(e->queue);
      release_internal(e->context);
      delete e;
      break;
    }
    default:
      FERRY_ERROR("objects", "destroying object with unexpected tag %u", static_cast<unsigned>(tag));
      return;
  }
  live_objects.fetch_sub(1);
}

}  // namespace

object_base::object_base(object_tag t) : tag(t) {
  if (is_counted(t)) {
    live_objects.fetch_add(1);
    std::lock_guard lock(object_registry_mutex);
    object_registry().insert(this);
  }
}

bool is_live_object(const void* address) {
  std::lock_guard lock(object_registry_mutex);
  return object_registry().count(address) != 0 &&
         static_cast<const object_base*>(address)->api_refs.load() > 0;
}

bool is_live_memory(const void* address) {
  return is_live_object(address) && static_cast<const object_base*>(address)->tag == object_tag::mem;
}

bool is_live_sampler(const void* address) {
  return is_live_object(address) && static_cast<const object_base*>(address)->tag == object_tag::sampler;
}

uint64_t live_object_count() { return live_objects.load(); }

void log_live_objects() {
  std::lock_guard lock(object_registry_mutex);
  for (const void* address : object_registry()) {
    const auto* o = static_cast<const object_base*>(address);
    const auto id = static_cast<unsigned long long>(o->id);
    if (o->tag == object_tag::event)
      FERRY_DEBUG("objects", "alive: event %llu, %u API and %u internal references, status %d", id,
                  o->api_refs.load(), o->internal_refs.load(), static_cast<const event*>(o)->status.load());
    else
      FERRY_DEBUG("objects", "alive: %s %llu, %u API and %u internal references", tag_name(o->tag), id,
                  o->api_refs.load(), o->internal_refs.load());
  }
}

protocol::object_id next_object_id() { return id_counter.fetch_add(1, std::memory_order_relaxed); }

void retain_internal(object_base* o) { o->internal_refs.fetch_add(1, std::memory_order_relaxed); }

void release_internal(object_base* o) {
  if (o->internal_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(o);
}

void retain_api(object_base* o) { o->api_refs.fetch_add(1, std::memory_order_relaxed); }

void release_api(object_base* o) {
  if (o->api_refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (o->id != 0) {
    for (connection* link : links_holding(o)) {
      link->post(protocol::release_object{o->id});
      // A released queue is flushed implicitly (spec: clReleaseCommandQueue).
      if (o->tag == object_tag::queue) link->flush();
    }
  }
  if (o->tag == object_tag::queue) {
    // Pending reads hold the queue through their events; let go of them so
    // the queue can be freed once they complete.
    auto* q = static_cast<queue*>(o);
    std::vector<event*> reads;
    {
      std::lock_guard lock(q->reads_mutex);
      reads.swap(q->pending_reads);
    }
    for (event* e : reads) release_internal(e);
  }
  release_internal(o);
}

bool _cl_device_id_available(const device* d) { return d->host && d->host->link && d->host->link->alive(); }
bool _cl_device_id_accepts_work(const device* d) { return d->host && accepting(*d->host); }

}  // namespace ferry::client

void _cl_command_queue::completed_up_to(uint64_t sequence) {
  uint64_t known = complete_through.load(std::memory_order_relaxed);
  while (known < sequence && !complete_through.compare_exchange_weak(known, sequence, std::memory_order_acq_rel)) {
  }
}

bool _cl_device_id::available() const { return ferry::client::_cl_device_id_available(this); }

std::chrono::microseconds _cl_device_id::wait_spin() const {
  return (type & (CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR)) ? ferry::client::gpu_wait_spin()
                                                                   : ferry::client::spin_duration();
}
bool _cl_device_id::accepts_work() const { return ferry::client::_cl_device_id_accepts_work(this); }

bool _cl_context::has_device(cl_device_id d) const {
  for (auto* x : devices)
    if (x == d) return true;
  return false;
}
