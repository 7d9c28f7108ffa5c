#include "server/worker/ipc.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>
#include <unistd.h>

namespace ferry::server::ipc {
namespace {

class ipc_test : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(socket_pair(main_, worker_, error)) << error;
  }
  unique_fd main_, worker_;
};

TEST_F(ipc_test, a_message_and_its_socket_arrive_together) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  unique_fd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  adopt a;
  a.what = role::bulk;
  a.session[0] = 7;
  a.peer = "127.0.0.1:4242";
  a.tls = {1, 2, 3};
  ASSERT_TRUE(send(main_.get(), packet(kind::adopt, a), write_end.get()));
  received r;
  std::string why;
  ASSERT_EQ(receive(worker_.get(), r, why), receive_result::ok) << why;
  EXPECT_EQ(r.what, kind::adopt);
  adopt back;
  ASSERT_TRUE(decode(r, back, why)) << why;
  EXPECT_EQ(back.what, role::bulk);
  EXPECT_EQ(back.session[0], 7);
  EXPECT_EQ(back.peer, "127.0.0.1:4242");
  EXPECT_EQ(back.tls, (std::vector<uint8_t>{1, 2, 3}));
  // The descriptor received is the same pipe: what goes in comes out of ours.
  ASSERT_TRUE(r.fd.valid());
  ASSERT_EQ(::write(r.fd.get(), "x", 1), 1);
  char c = 0;
  ASSERT_EQ(::read(read_end.get(), &c, 1), 1);
  EXPECT_EQ(c, 'x');
  // Close-on-exec: a worker's received sockets never leak into programs it starts.
  EXPECT_NE(::fcntl(r.fd.get(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST_F(ipc_test, a_closed_peer_and_an_empty_socket_are_told_apart) {
  received r;
  std::string why;
  ::fcntl(worker_.get(), F_SETFL, O_NONBLOCK);
  EXPECT_EQ(receive(worker_.get(), r, why), receive_result::would_block);
  main_.reset();
  EXPECT_EQ(receive(worker_.get(), r, why), receive_result::closed);
}

TEST_F(ipc_test, packets_that_break_the_rules_fail_with_a_reason) {
  received r;
  std::string why;
  // Shorter than its kind.
  ASSERT_TRUE(send(main_.get(), std::vector<uint8_t>{1}));
  EXPECT_EQ(receive(worker_.get(), r, why), receive_result::failed);
  EXPECT_NE(why.find("kind"), std::string::npos) << why;

  // Two descriptors with one packet: both closed on receipt, the packet refused.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  std::vector<uint8_t> bytes = packet(kind::census, census{3});
  iovec piece{bytes.data(), bytes.size()};
  msghdr m{};
  m.msg_iov = &piece;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(2 * sizeof(int));
  std::memcpy(CMSG_DATA(c), pipe_fds, 2 * sizeof(int));
  ASSERT_GT(::sendmsg(main_.get(), &m, 0), 0);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  why.clear();
  EXPECT_EQ(receive(worker_.get(), r, why), receive_result::failed);
  EXPECT_NE(why.find("several descriptors"), std::string::npos) << why;
  EXPECT_FALSE(r.fd.valid());

  // A payload that does not decode as its kind says.
  ASSERT_TRUE(send(main_.get(), packet(kind::ready, census{3})));
  ASSERT_EQ(receive(worker_.get(), r, why), receive_result::ok);
  ready wrong;
  EXPECT_FALSE(decode(r, wrong, why));
  EXPECT_NE(why.find("malformed worker message"), std::string::npos) << why;
}

TEST_F(ipc_test, a_packet_over_the_limit_is_refused) {
  // The socket buffer may not take a packet over the limit at all; when it does,
  // the receiver refuses it as cut short.
  int size = static_cast<int>(max_packet) * 2;
  ::setsockopt(main_.get(), SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  ::setsockopt(worker_.get(), SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  std::vector<uint8_t> huge(max_packet + 16, 0);
  if (!send(main_.get(), huge)) GTEST_SKIP() << "the kernel refuses such a packet itself";
  received r;
  std::string why;
  EXPECT_EQ(receive(worker_.get(), r, why), receive_result::failed);
  EXPECT_NE(why.find("size limit"), std::string::npos) << why;
}

}  // namespace
}  // namespace ferry::server::ipc
