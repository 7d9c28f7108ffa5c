#include "client/net/link_state.hpp"

#include "common/cl_errors.hpp"
#include "common/log.hpp"

namespace ferry::client {

namespace {

/// Shuts a stream down, if there is one: every thread blocked on it returns.
void shut(const stream_ptr& s) {
  if (s) s->shutdown();
}

}  // namespace

outage_policy outage_policy_from_environment() {
  static const outage_policy value = [] {
    const char* text = std::getenv("FERRY_OUTAGE");
    if (text == nullptr || *text == 0 || std::string(text) == "wait") return outage_policy::wait;
    if (std::string(text) == "fail-fast") return outage_policy::fail_fast;
    FERRY_WARN("net", "FERRY_OUTAGE=%s is neither 'wait' nor 'fail-fast'; new work waits during outages", text);
    return outage_policy::wait;
  }();
  return value;
}

link_state::link_state(const endpoint& where, const protocol::credentials& who, completion_sink& sink)
    : name_(where.to_string()), where_(where), credentials_(who), sink_(sink) {}

void link_state::replace_streams(stream_ptr control, stream_ptr bulk, std::vector<stream_ptr> lanes) {
  std::lock_guard lock(fd_mutex_);
  control_ = std::move(control);  // closes the broken streams
  bulk_ = std::move(bulk);
  lanes_ = std::move(lanes);
  lane_count_.store(static_cast<uint32_t>(1 + lanes_.size()), std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

void link_state::shut_all_locked() {
  shut(control_);
  shut(bulk_);
  for (const stream_ptr& lane : lanes_) shut(lane);
}

void link_state::broken(uint64_t generation, const char* why) {
  std::lock_guard lock(fd_mutex_);
  if (generation != generation_.load(std::memory_order_acquire)) return;  // those streams are gone already
  FERRY_DEBUG("net", "%s: %s", name_.c_str(), why);
  // Wakes the control reader, which takes the server offline and resumes.
  shut_all_locked();
}

void link_state::shut_streams(generation_change change) {
  std::lock_guard lock(fd_mutex_);
  if (change == generation_change::next) generation_.fetch_add(1, std::memory_order_acq_rel);
  shut_all_locked();
}

void link_state::shut_bulk() {
  std::lock_guard lock(fd_mutex_);
  shut(bulk_);
  for (const stream_ptr& lane : lanes_) shut(lane);
}

void link_state::name_failures(std::function<std::string(cl_int)> namer) {
  std::lock_guard lock(failures_mutex_);
  failure_namer_ = std::move(namer);
}

void link_state::end_session(const std::string& why, cl_int failure) {
  bool first;
  std::string failure_name;
  {
    std::lock_guard lock(failures_mutex_);
    first = !ended.exchange(true);
    if (first) failures_[epoch.load(std::memory_order_acquire)] = failure;
    if (first) failure_name = failure_namer_ ? failure_namer_(failure) : cl_error_name(failure);
  }
  if (first)
    FERRY_WARN("net", "session with %s ends: %s; its work fails with %s", name_.c_str(), why.c_str(),
               failure_name.c_str());
  shut_streams(generation_change::keep);
  for (const auto& wake : wakers_) wake();
}

cl_int link_state::failure_of(uint64_t session_epoch) const {
  std::lock_guard lock(failures_mutex_);
  auto it = failures_.find(session_epoch);
  return it == failures_.end() ? CL_DEVICE_NOT_AVAILABLE : it->second;
}

void link_state::set_session(const protocol::session_token& session, const protocol::session_token& secret,
                             const protocol::session_token& peer_key) {
  std::lock_guard lock(session_mutex_);
  session_ = session;
  secret_ = secret;
  peer_key_ = peer_key;
}

void link_state::forget_session() {
  std::lock_guard lock(session_mutex_);
  session_ = {};
  secret_ = {};
}

}  // namespace ferry::client
