#include "client/core/event_state.hpp"


#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "client/core/diagnostics.hpp"
#include "client/core/memory/host_ptr_coherence.hpp"
#include "client/core/servers/server.hpp"
#include "client/net/connection.hpp"
#include "common/cl_errors.hpp"
#include "common/thread_name.hpp"

namespace ferry::client {
namespace {

// One signal for all events: completions are rare enough relative to the
// cost of a wake-up that per-event condition variables buy nothing.
std::mutex signal_mutex;  // guards the transition of any event to a final status
std::condition_variable signal_cv;

class callback_thread {
 public:
  void wait_idle() {
    std::unique_lock lock(mutex_);
    idle_cv_.wait(lock, [&] { return queue_.empty() && !running_; });
  }

  void post(std::function<void()> work) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(work));
      if (!started_) {
        started_ = true;
        // Detached: the library has no shutdown hook in an arbitrary process;
        // the thread only ever waits on its queue.
        std::thread([this] { loop(); }).detach();
      }
    }
    cv_.notify_one();
  }

 private:
  void loop() {
    name_this_thread("ferry-callbacks");
    std::unique_lock lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return !queue_.empty(); });
      auto work = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
      lock.unlock();
      work();
      work = nullptr;
      lock.lock();
      running_ = false;
      if (queue_.empty()) idle_cv_.notify_all();
    }
  }
  std::mutex mutex_;  // guards queue_, started_, running_
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  bool running_ = false;
  std::deque<std::function<void()>> queue_;
  bool started_ = false;
};

callback_thread& callbacks() {
  static auto* instance = new callback_thread;  // never destroyed: see loop()
  return *instance;
}

void fire(event* e, const _cl_event::callback& c, cl_int status) {
  retain_internal(e);
  run_on_callback_thread([e, c, status] {
    // Callbacks registered for SUBMITTED or RUNNING fire with that status
    // when the command got there successfully; errors are passed as they are.
    c.function(e, status < 0 ? status : c.trigger, c.data);
    release_internal(e);
  });
}

// Records why waiting for `e` fails: what it ended with, and where. A
// blocking command answers CL_DEVICE_NOT_AVAILABLE for an event its server
// could not complete, so that code gets the reason too.
void explain_failed_event(const event* e) {
  const cl_int status = e->status.load();
  const std::string name = cl_error_name(status);
  if (e->queue == nullptr) {
    explain(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "user event %llu was set to %s",
            static_cast<unsigned long long>(e->id), name.c_str());
    return;
  }
  const char* where = e->home ? e->home->address_text.c_str() : "?";
  if (status == CL_DEVICE_NOT_AVAILABLE)
    explain(CL_DEVICE_NOT_AVAILABLE, "server %s unreachable: command %llu (%s) could not complete", where,
            static_cast<unsigned long long>(e->id), command_type_name(e->command_type));
  // A blocking command returns this code only when its session ended so
  // (command::complete): the server stopped the session's worker for
  // exceeding a limit.
  if (status == CL_OUT_OF_RESOURCES)
    explain(CL_OUT_OF_RESOURCES, "command %llu (%s) failed with CL_OUT_OF_RESOURCES on server %s",
            static_cast<unsigned long long>(e->id), command_type_name(e->command_type), where);
  explain(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "command %llu (%s) failed with %s on server %s",
          static_cast<unsigned long long>(e->id), command_type_name(e->command_type), name.c_str(), where);
}

}  // namespace

cl_int wait_for_events(const cl_event* events, cl_uint count) {
  const auto& servers = events[0]->context->servers;
  for (server* s : servers) s->link->flush();
  if (servers.empty()) return wait_for(events, count);
  cl_int code;
  {
    // As long as the longest of the devices waited for asks.
    std::chrono::microseconds spin = spin_duration();
    for (cl_uint i = 0; i < count; ++i)
      if (events[i]->queue != nullptr) spin = std::max(spin, events[i]->queue->device->wait_spin());
    connection::waiting scope(events[0]->home ? *events[0]->home->link : *servers.front()->link, spin);
    code = wait_for(events, count);
  }
  settle_coherent_buffers(events[0]->context);
  return code;
}

void watch_event(event* e, cl_int trigger, void(CL_CALLBACK* function)(cl_event, cl_int, void*), void* user_data) {
  add_event_callback(e, trigger, function, user_data);
  for (server* s : e->context->servers) s->link->flush();
}

void run_on_callback_thread(std::function<void()> work) { callbacks().post(std::move(work)); }

void wait_for_callbacks() { callbacks().wait_idle(); }

void complete_event(event* e, cl_int status) {
  std::vector<_cl_event::callback> to_fire;
  {
    std::lock_guard lock(signal_mutex);
    if (e->status.load() <= CL_COMPLETE) return;
    e->status.store(status, std::memory_order_release);
  }
  signal_cv.notify_all();
  {
    std::lock_guard lock(e->callbacks_mutex);
    to_fire.swap(e->callbacks);
  }
  // Fire in the order the states are reached: SUBMITTED, RUNNING, COMPLETE.
  for (cl_int trigger : {CL_SUBMITTED, CL_RUNNING, CL_COMPLETE})
    for (auto& c : to_fire)
      if (c.trigger == trigger) fire(e, c, status);
}

void event_part_done(event* e, cl_int status, const std::array<cl_ulong, 4>* profiling) {
  if (profiling) e->profiling = *profiling;
  if (status < 0) {
    complete_event(e, status);
    return;
  }
  if (e->parts.fetch_sub(1) == 1) {
    if (e->before_complete) e->before_complete();
    if (e->complete_after) {
      // Application code: never on a reader thread.
      retain_internal(e);
      run_on_callback_thread([e] {
        e->complete_after();
        complete_event(e, CL_COMPLETE);
        release_internal(e);
      });
      return;
    }
    complete_event(e, CL_COMPLETE);
  }
}

cl_int polled_status(event* e) {
  if (e->status.load() > CL_COMPLETE)
    for (server* s : e->context->servers) s->link->flush();
  return e->status.load();
}

cl_int wait_for(const cl_event* events, cl_uint count) {
  // Completions usually arrive within microseconds: look for them a little
  // while before sleeping, which costs a wake-up of its own.
  auto deadline = std::chrono::steady_clock::now() + spin_duration();
  for (cl_uint i = 0; i < count; ++i)
    while (events[i]->status.load(std::memory_order_acquire) > CL_COMPLETE &&
           std::chrono::steady_clock::now() < deadline) {
    }
  event* failed = nullptr;
  std::unique_lock lock(signal_mutex);
  auto wait_one = [&](event* e) {
    signal_cv.wait(lock, [&] { return e->status.load(std::memory_order_acquire) <= CL_COMPLETE; });
  };
  for (cl_uint i = 0; i < count; ++i) {
    event* e = events[i];
    wait_one(e);
    if (e->status.load() < 0 && failed == nullptr) failed = e;
    for (event* read : e->implied) wait_one(read);  // see _cl_event::implied
  }
  if (failed == nullptr) return CL_SUCCESS;
  lock.unlock();
  explain_failed_event(failed);
  return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
}

void add_event_callback(event* e, cl_int trigger, void(CL_CALLBACK* function)(cl_event, cl_int, void*),
                        void* data) {
  _cl_event::callback c{trigger, function, data};
  {
    std::lock_guard signal(signal_mutex);
    std::lock_guard lock(e->callbacks_mutex);
    cl_int status = e->status.load();
    // Statuses count down: QUEUED 3, SUBMITTED 2, RUNNING 1, COMPLETE 0, errors < 0.
    if (status > trigger) {
      e->callbacks.push_back(c);
      return;
    }
  }
  fire(e, c, e->status.load());
}

}  // namespace ferry::client
