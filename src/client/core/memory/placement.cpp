#include "client/core/memory/placement.hpp"

#include <memory>

#include "client/core/event_state.hpp"
#include "common/log.hpp"

namespace ferry::client {
namespace {

/// Holds an internal reference for as long as a hook that names the object
/// lives (hooks may outlive the API's references).
template <class T>
std::shared_ptr<T> hold(T* object) {
  if (object == nullptr) return nullptr;
  retain_internal(object);
  return std::shared_ptr<T>(object, [](T* o) { release_internal(o); });
}

server* server_in_slot(const context& c, uint64_t holders, uint64_t prefer) {
  // A holder that also holds `prefer` (the content-size buffer) first, then any.
  for (uint64_t mask : {holders & prefer, holders}) {
    for (server* s : c.servers)
      if (mask & s->bit()) return s;
  }
  return nullptr;
}

uint64_t context_bits(const context& c) {
  uint64_t bits = 0;
  for (const server* s : c.servers) bits |= s->bit();
  return bits;
}

}  // namespace

memory* root_of(memory* m) {
  while (m->parent || m->image.mem_object) m = m->parent ? m->parent : m->image.mem_object;
  return m;
}

access access_for_write(const memory* m, size_t offset, size_t size) {
  bool root = m->parent == nullptr && m->image.mem_object == nullptr;
  return root && offset == 0 && size == m->size ? access::replace : access::write;
}

void place_new(memory* root, server* with_data) {
  std::lock_guard lock(root->placement_mutex);
  root->holders = with_data ? with_data->bit() : context_bits(*root->context);
}

void import_events(server& target, std::span<const cl_event> events) {
  for (event* e : events) {
    server* home = e->home;
    // User events exist on every server of their context; events of the
    // target are its own.
    if (home == nullptr || home == &target || !e->on_server) continue;
    // The lock is held while both messages are posted, so that a command of
    // another thread cannot reach the target before its import does.
    std::lock_guard lock(e->imports_mutex);
    if (e->imported & target.bit()) continue;
    introduce(*home, target);
    protocol::export_event out{e->id, target.slot, next_object_id()};
    // Should the home server fail to deliver the status, the imported copy
    // would wait forever: fail it from here instead.
    home->link->on_failure(out.command, [to = &target, id = e->id](cl_int) {
      to->link->post(protocol::set_user_event_status{id, CL_DEVICE_NOT_AVAILABLE});
      to->link->flush();
    });
    target.link->post(protocol::import_event{e->id, e->context->id});
    home->link->post(out);
    e->imported |= target.bit();
    e->exports.push_back(out.command);
  }
}

void note_writer(memory* root, event* writer) {
  retain_api(writer);
  event* previous = nullptr;
  {
    std::lock_guard lock(root->placement_mutex);
    previous = std::exchange(root->last_writer, writer);
  }
  if (previous) release_api(previous);
}

cl_int bring_contents(memory* m, access how, server& to, queue& q, std::span<const cl_event> waits,
                      event* dependent, protocol::object_id& arrival) {
  arrival = 0;
  memory* root = root_of(m);
  context& c = *root->context;
  std::lock_guard lock(root->placement_mutex);
  const uint64_t before = root->holders;
  if (how == access::replace || (before & to.bit())) {
    if (how != access::read) root->holders = to.bit();
    else root->holders |= to.bit();
    return CL_SUCCESS;
  }
  uint64_t prefer = 0;
  if (root->content_size) {
    std::lock_guard size_lock(root->content_size->placement_mutex);
    prefer = root->content_size->holders;
  }
  server* from = server_in_slot(c, before, prefer);
  if (from == nullptr) {
    // No holder left (a failed migration): the contents are undefined.
    root->holders = to.bit();
    return CL_SUCCESS;
  }
  if (root->is_image()) {
    FERRY_WARN("placement", "image %llu is on server %s and would have to move to %s: images do not migrate "
               "between servers yet", static_cast<unsigned long long>(root->id), from->address_text.c_str(),
               to.address_text.c_str());
    return CL_INVALID_OPERATION;
  }
  if (!from->link->accepting()) return CL_DEVICE_NOT_AVAILABLE;

  introduce(*from, to);
  import_events(*from, waits);
  const uint64_t transfer = next_object_id();
  protocol::migrate_out out;
  out.header.command = next_object_id();
  out.header.queue = 0;  // the source reads on a queue of its own
  out.header.wait_list.reserve(waits.size() + 1);
  for (event* e : waits) out.header.wait_list.push_back(e->id);
  // The source's last writer, which the application may not have ordered.
  if (root->last_writer && root->last_writer->home == from) out.header.wait_list.push_back(root->last_writer->id);
  out.header.flags = protocol::notify;  // the success report retires the failure hook
  out.buffer = root->id;
  out.offset = 0;
  out.size = root->size;
  out.peer = peer_number(to);
  out.transfer = transfer;
  // The size buffer is only of use where its own contents are current.
  if (root->content_size && (prefer & from->bit())) out.content_size = root->content_size->id;

  protocol::migrate_in in;
  in.header.command = next_object_id();
  in.header.queue = q.id;
  in.header.flags = protocol::keep_event;  // the command waits for it
  in.buffer = root->id;
  in.offset = 0;
  in.size = root->size;
  in.transfer = transfer;

  // A source that cannot deliver fails the destination's write (which would
  // otherwise wait forever) and the command that needed the contents.
  from->link->on_failure(out.header.command,
                         [to = &to, transfer, waiting = hold(dependent), held = hold(root), before](cl_int) {
                           // First the waiting command's own status, then the
                           // abort: the destination's report of the failure it
                           // causes comes later and does not override it.
                           if (waiting) complete_event(waiting.get(), CL_DEVICE_NOT_AVAILABLE);
                           to->link->post(protocol::abort_transfer{transfer, CL_DEVICE_NOT_AVAILABLE});
                           to->link->flush();
                           std::lock_guard relock(held->placement_mutex);
                           held->holders = before;
                         });
  to.link->post(in);
  from->link->post(out);
  from->link->flush();
  arrival = in.header.command;
  root->holders = how == access::read ? (before | to.bit()) : to.bit();
  FERRY_DEBUG("placement", "buffer %llu: %s -> %s (%llu bytes)", static_cast<unsigned long long>(root->id),
              from->address_text.c_str(), to.address_text.c_str(), static_cast<unsigned long long>(root->size));
  return CL_SUCCESS;
}

std::vector<connection*> event_links(event* e) {
  std::vector<connection*> links;
  if (!e->on_server) return links;
  if (e->home) {
    links.push_back(e->home->link.get());
  } else {
    for (server* s : e->context->servers) links.push_back(s->link.get());
  }
  std::lock_guard lock(e->imports_mutex);
  for (server* s : e->context->servers)
    if (e->imported & s->bit()) links.push_back(s->link.get());
  // The exports' failure hooks are no longer needed once the event is gone.
  if (e->home)
    for (protocol::object_id id : e->exports) e->home->link->forget_failure(id);
  return links;
}

std::vector<connection*> links_holding(object_base* o) {
  std::vector<connection*> links;
  auto all_of = [&](const std::vector<server*>& servers) {
    for (server* s : servers) links.push_back(s->link.get());
  };
  switch (o->tag) {
    case object_tag::context: all_of(static_cast<context*>(o)->servers); break;
    case object_tag::queue: links.push_back(static_cast<queue*>(o)->device->host->link.get()); break;
    case object_tag::mem: all_of(static_cast<memory*>(o)->context->servers); break;
    case object_tag::program: all_of(static_cast<program*>(o)->servers); break;
    case object_tag::kernel: all_of(static_cast<kernel*>(o)->servers); break;
    case object_tag::sampler: all_of(static_cast<sampler*>(o)->context->servers); break;
    case object_tag::event: return event_links(static_cast<event*>(o));
    default: break;
  }
  return links;
}

}  // namespace ferry::client
