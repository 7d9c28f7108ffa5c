#include "client/net/connection.hpp"

#include <chrono>

namespace ferry::client {

connection::connection(const endpoint& where, const protocol::credentials& who, completion_sink& sink)
    : link_(where, who, sink),
      sender_(link_),
      receiver_(
          link_, [this] { channel_.request_ack(); },
          [this](uint64_t generation) { return sender_.offer_read_window(generation); }),
      tracker_(link_, sender_, receiver_),
      channel_(link_, tracker_, sender_),
      resumer_(link_, channel_, sender_, receiver_, tracker_) {}

std::unique_ptr<connection> connection::open(const endpoint& where, const protocol::credentials& who,
                                             std::string& error) {
  return open(where, who, error, client_completion_sink());
}

std::unique_ptr<connection> connection::open(const endpoint& where, const protocol::credentials& who,
                                             std::string& error, completion_sink& sink) {
  std::unique_ptr<connection> c(new connection(where, who, sink));
  if (!c->resumer_.connect(error)) return nullptr;
  c->resumer_.start();
  return c;
}

connection::~connection() { resumer_.stop(); }

void connection::say_goodbye() {
  link_.stopping = true;  // the server closes the streams next: no resumption
  if (!alive()) return;
  post(protocol::goodbye{});
  flush();
}

result<uint64_t> connection::ping() {
  auto start = std::chrono::steady_clock::now();
  protocol::ping p;
  auto reply = call<protocol::pong>(p);
  if (!reply) return fail(reply.error());
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace ferry::client
