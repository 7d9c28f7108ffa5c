#include "server/daemon/options.hpp"

#include <gtest/gtest.h>

namespace ferry::server {
namespace {

parse_outcome parse(std::vector<std::string> args, options& out, std::string& message) {
  return parse_options(args, out, message);
}

TEST(options, defaults_follow_the_contract) {
  options o;
  std::string message;
  ASSERT_EQ(parse({}, o, message), parse_outcome::run);
  EXPECT_EQ(o.port, 7780);
  EXPECT_EQ(o.listen, "127.0.0.1");
  EXPECT_EQ(o.unix_path, "");
  EXPECT_EQ(o.platform, "");
  EXPECT_EQ(o.device_type, static_cast<cl_device_type>(CL_DEVICE_TYPE_ALL));
  EXPECT_FALSE(o.level_given);
  EXPECT_DOUBLE_EQ(o.handshake_timeout_s, 5.0);
  EXPECT_EQ(o.file_root, "") << "no files are served unless asked";
}

TEST(options, every_flag_takes_separate_or_inline_values) {
  options o;
  std::string message;
  ASSERT_EQ(parse({"--port", "0", "--listen=0.0.0.0", "--unix", "/tmp/f.sock", "--platform=Portable", "--device-type",
                   "gpu", "--log-level=debug", "--handshake-timeout", "0.5", "--token-file", "/etc/ferry/token",
                   "--tls-cert=/etc/ferry/cert.pem", "--tls-key", "/etc/ferry/key.pem", "--tls-ca", "/etc/ferry/ca.pem",
                   "--file-root", "/srv/data"},
                  o, message),
            parse_outcome::run)
      << message;
  EXPECT_EQ(o.port, 0);
  EXPECT_EQ(o.listen, "0.0.0.0");
  EXPECT_EQ(o.unix_path, "/tmp/f.sock");
  EXPECT_EQ(o.platform, "Portable");
  EXPECT_EQ(o.device_type, static_cast<cl_device_type>(CL_DEVICE_TYPE_GPU));
  EXPECT_TRUE(o.level_given);
  EXPECT_EQ(o.level, log_level::debug);
  EXPECT_DOUBLE_EQ(o.handshake_timeout_s, 0.5);
  EXPECT_EQ(o.token_file, "/etc/ferry/token");
  EXPECT_EQ(o.tls_cert, "/etc/ferry/cert.pem");
  EXPECT_EQ(o.tls_key, "/etc/ferry/key.pem");
  EXPECT_EQ(o.tls_ca, "/etc/ferry/ca.pem");
  EXPECT_EQ(o.file_root, "/srv/data");
  EXPECT_FALSE(o.insecure_listen);
}

TEST(options, the_network_without_a_token_needs_insecure_listen) {
  options o;
  std::string message;
  ASSERT_EQ(parse({"--listen", "0.0.0.0"}, o, message), parse_outcome::error);
  EXPECT_NE(message.find("--token-file"), std::string::npos) << message;
  EXPECT_NE(message.find("--insecure-listen 0.0.0.0"), std::string::npos) << message;
  o = {};
  ASSERT_EQ(parse({"--insecure-listen", "0.0.0.0"}, o, message), parse_outcome::run) << message;
  EXPECT_EQ(o.listen, "0.0.0.0");
  EXPECT_TRUE(o.insecure_listen);
  o = {};
  ASSERT_EQ(parse({"--listen", "::1"}, o, message), parse_outcome::run) << message;
  o = {};
  ASSERT_EQ(parse({"--listen", "127.0.0.2"}, o, message), parse_outcome::run) << message;
}

TEST(options, tls_needs_both_certificate_and_key) {
  options o;
  std::string message;
  ASSERT_EQ(parse({"--tls-cert", "c.pem"}, o, message), parse_outcome::error);
  EXPECT_EQ(message, "--tls-cert needs --tls-key");
  ASSERT_EQ(parse({"--tls-key", "k.pem"}, o, message), parse_outcome::error);
  EXPECT_EQ(message, "--tls-key needs --tls-cert");
  ASSERT_EQ(parse({"--token-file", ""}, o, message), parse_outcome::error);
}

TEST(options, loopback_addresses_are_recognised) {
  EXPECT_TRUE(is_loopback("127.0.0.1"));
  EXPECT_TRUE(is_loopback("127.10.0.1"));
  EXPECT_TRUE(is_loopback("::1"));
  EXPECT_TRUE(is_loopback("localhost"));
  EXPECT_FALSE(is_loopback("0.0.0.0"));
  EXPECT_FALSE(is_loopback("10.0.0.1"));
  EXPECT_FALSE(is_loopback("::"));
  EXPECT_FALSE(is_loopback("example.org"));
}

TEST(options, device_types_map_to_opencl_bits) {
  options o;
  std::string message;
  ASSERT_EQ(parse({"--device-type", "cpu"}, o, message), parse_outcome::run);
  EXPECT_EQ(o.device_type, static_cast<cl_device_type>(CL_DEVICE_TYPE_CPU));
  ASSERT_EQ(parse({"--device-type", "accelerator"}, o, message), parse_outcome::run);
  EXPECT_EQ(o.device_type, static_cast<cl_device_type>(CL_DEVICE_TYPE_ACCELERATOR));
  ASSERT_EQ(parse({"--device-type", "all"}, o, message), parse_outcome::run);
  EXPECT_EQ(o.device_type, static_cast<cl_device_type>(CL_DEVICE_TYPE_ALL));
}

TEST(options, device_list_names_positions_once_each) {
  options o;
  std::string message;
  ASSERT_EQ(parse({"--device", "1"}, o, message), parse_outcome::run);
  EXPECT_EQ(o.devices, (std::vector<uint32_t>{1}));
  ASSERT_EQ(parse({"--device=2,0"}, o, message), parse_outcome::run);
  EXPECT_EQ(o.devices, (std::vector<uint32_t>{2, 0}));
  ASSERT_EQ(parse({"--port", "0"}, o, message), parse_outcome::run);
  EXPECT_TRUE(o.devices.empty());
  for (const char* bad : {"", "-1", "a", "1,", ",1", "1,,2", "1,1", "99999999999"}) {
    EXPECT_EQ(parse({"--device", bad}, o, message), parse_outcome::error) << bad;
    EXPECT_NE(message.find("--device"), std::string::npos) << message;
  }
}

TEST(options, completions_choose_callbacks_or_polling_and_default_to_auto) {
  options o;
  std::string message;
  ASSERT_EQ(parse({"--port", "0"}, o, message), parse_outcome::run);
  EXPECT_EQ(o.completions, native::completion_mode::automatic);
  ASSERT_EQ(parse({"--completions", "polling"}, o, message), parse_outcome::run);
  EXPECT_EQ(o.completions, native::completion_mode::polling);
  ASSERT_EQ(parse({"--completions=callbacks"}, o, message), parse_outcome::run);
  EXPECT_EQ(o.completions, native::completion_mode::callbacks);
  ASSERT_EQ(parse({"--completions", "auto"}, o, message), parse_outcome::run);
  EXPECT_EQ(o.completions, native::completion_mode::automatic);
  for (const char* bad : {"", "poll", "Polling", "both"}) {
    EXPECT_EQ(parse({"--completions", bad}, o, message), parse_outcome::error) << bad;
    EXPECT_NE(message.find("auto, callbacks or polling"), std::string::npos) << message;
  }
}

TEST(options, list_devices_is_a_flag_that_ends_in_a_listing) {
  options o;
  std::string message;
  ASSERT_EQ(parse({"--device-type", "gpu", "--list-devices"}, o, message), parse_outcome::list);
  EXPECT_TRUE(o.list_devices);
  EXPECT_EQ(o.device_type, static_cast<cl_device_type>(CL_DEVICE_TYPE_GPU));
  EXPECT_EQ(parse({"--list-devices=yes"}, o, message), parse_outcome::error);
  EXPECT_NE(message.find("--list-devices"), std::string::npos) << message;
  EXPECT_EQ(parse({"--list-devices", "--help"}, o, message), parse_outcome::help);
}

TEST(options, help_wins) {
  options o;
  std::string message;
  EXPECT_EQ(parse({"--port", "1", "--help"}, o, message), parse_outcome::help);
  EXPECT_NE(usage_text().find("--handshake-timeout"), std::string::npos);
}

TEST(options, bad_flags_and_values_are_errors_that_name_them) {
  struct bad_case {
    std::vector<std::string> args;
    const char* mentions;
  };
  const bad_case cases[] = {
      {{"--bogus"}, "--bogus"},
      {{"--port"}, "--port"},
      {{"--port", "65536"}, "65536"},
      {{"--port", "-1"}, "-1"},
      {{"--port", "12x"}, "12x"},
      {{"--device-type", "fpga"}, "fpga"},
      {{"--log-level", "loud"}, "loud"},
      {{"--handshake-timeout", "0"}, "--handshake-timeout"},
      {{"--handshake-timeout", "soon"}, "soon"},
      {{"--listen="}, "--listen"},
      {{"--file-root="}, "--file-root"},
      {{"--bulk-lanes", "0"}, "--bulk-lanes"},
      {{"--bulk-lanes", "17"}, "17"},
      {{"--bulk-lanes", "two"}, "two"},
      {{"--help=yes"}, "--help"},
      {{"stray"}, "stray"},
  };
  for (const bad_case& c : cases) {
    options o;
    std::string message;
    EXPECT_EQ(parse(c.args, o, message), parse_outcome::error) << c.mentions;
    EXPECT_NE(message.find(c.mentions), std::string::npos) << message;
  }
}

TEST(options, bulk_lanes_default_to_four_and_take_one_to_sixteen) {
  options o;
  std::string message;
  ASSERT_EQ(parse({}, o, message), parse_outcome::run) << message;
  EXPECT_EQ(o.bulk_lanes, 4u);
  for (uint32_t lanes : {1u, 16u}) {
    ASSERT_EQ(parse({"--bulk-lanes", std::to_string(lanes)}, o, message), parse_outcome::run) << message;
    EXPECT_EQ(o.bulk_lanes, lanes);
  }
}

TEST(options, peer_address_is_checked_and_kept_as_given) {
  options o;
  std::string message;
  EXPECT_EQ(o.peer_address, "");
  ASSERT_EQ(parse({"--peer-address", "node7.cluster"}, o, message), parse_outcome::run) << message;
  EXPECT_EQ(o.peer_address, "node7.cluster");
  ASSERT_EQ(parse({"--peer-address=[fd00::1]:7781"}, o, message), parse_outcome::run) << message;
  EXPECT_EQ(o.peer_address, "[fd00::1]:7781");
  ASSERT_EQ(parse({"--peer-address", "unix:/run/ferry.sock"}, o, message), parse_outcome::run) << message;
  for (const char* bad : {"", ":7781", "host:0", "host:99999", "host:port", "[fd00::1"}) {
    EXPECT_EQ(parse({"--peer-address", bad}, o, message), parse_outcome::error) << bad;
    EXPECT_NE(message.find("--peer-address"), std::string::npos) << message;
  }
  EXPECT_NE(usage_text().find("--peer-address"), std::string::npos);
}

}  // namespace
}  // namespace ferry::server

namespace ferry::server {
namespace {

TEST(options, limits_have_generous_defaults_and_take_counts_and_byte_suffixes) {
  options o;
  std::string message;
  ASSERT_EQ(parse_options({}, o, message), parse_outcome::run);
  EXPECT_EQ(o.max_sessions, 256u);
  EXPECT_EQ(o.max_connections, 1024u);
  EXPECT_EQ(o.limits.memory, 0u);
  EXPECT_EQ(o.limits.objects, 1'000'000u);
  EXPECT_EQ(o.limits.queued, 1'000'000u);
  EXPECT_EQ(o.limits.in_flight, uint64_t{4} << 30);
  ASSERT_EQ(parse_options({"--max-sessions", "3", "--max-connections=0", "--session-memory", "512M",
                           "--session-objects", "10", "--session-queued=0", "--session-in-flight", "2k"},
                          o, message),
            parse_outcome::run)
      << message;
  EXPECT_EQ(o.max_sessions, 3u);
  EXPECT_EQ(o.max_connections, 0u);
  EXPECT_EQ(o.limits.memory, uint64_t{512} << 20);
  EXPECT_EQ(o.limits.objects, 10u);
  EXPECT_EQ(o.limits.queued, 0u);
  EXPECT_EQ(o.limits.in_flight, 2048u);
  ASSERT_EQ(parse_options({"--session-memory", "3T"}, o, message), parse_outcome::run);
  EXPECT_EQ(o.limits.memory, uint64_t{3} << 40);
  ASSERT_EQ(parse_options({"--session-memory", "4096"}, o, message), parse_outcome::run);
  EXPECT_EQ(o.limits.memory, 4096u);
  for (const char* flag : {"--max-sessions", "--max-connections", "--session-objects", "--session-queued"}) {
    for (const char* bad : {"", "-1", "1k", "ten", "1.5", " 3", "99999999999999999999"}) {
      EXPECT_EQ(parse_options({flag, bad}, o, message), parse_outcome::error) << flag << " " << bad;
      EXPECT_NE(message.find(flag), std::string::npos) << message;
    }
    EXPECT_NE(usage_text().find(flag), std::string::npos) << flag;
  }
  for (const char* flag : {"--session-memory", "--session-in-flight"}) {
    for (const char* bad : {"", "k", "-1", "1.5G", "1KB", "1P", "17179869184G", "G1"}) {
      EXPECT_EQ(parse_options({flag, bad}, o, message), parse_outcome::error) << flag << " " << bad;
      EXPECT_NE(message.find(flag), std::string::npos) << message;
    }
    EXPECT_NE(usage_text().find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace ferry::server
