// ferry-faultproxy: the fault proxy driven from a terminal or a script. It prints the
// address it listens on, then takes one command per line on stdin and answers each with
// exactly one line on stdout, so a script can read an answer after every command.

#include <arpa/inet.h>

#include <charconv>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.hpp"
#include "common/socket.hpp"
#include "faultproxy/fault_proxy.hpp"

namespace {

using ferry::tools::direction;
using ferry::tools::fault_proxy;

constexpr int exit_usage = 2;

constexpr std::string_view usage_text =
    "usage: ferry-faultproxy --target HOST:PORT [--listen-port N]\n"
    "\n"
    "Relays every TCP connection made to 127.0.0.1:PORT on to HOST:PORT and breaks the\n"
    "connections on command, for resilience tests. Prints \"listening on 127.0.0.1:PORT\"\n"
    "first, then reads commands from stdin, one per line, and answers each with one line,\n"
    "\"ok ...\" or \"error: <reason>\":\n"
    "\n"
    "  cut                                  reset every relayed connection now\n"
    "  cut-after BYTES to-target|to-client  reset them all once BYTES more bytes went that way\n"
    "  stall on|off                         hold all forwarding / release it\n"
    "  refuse on|off                        reset new connections at once / accept them again\n"
    "  source IP|default                    connect to the target from IP (the client roams)\n"
    "  stats                                ok accepted=N cuts=N to-target=N to-client=N\n"
    "  quit                                 stop and exit (so does the end of stdin)\n"
    "\n"
    "Options:\n"
    "  --target HOST:PORT   where connections are relayed to (required)\n"
    "  --listen-port N      listen on port N instead of one the system picks\n"
    "  --help               show this text\n";

struct options {
  ferry::endpoint target;
  uint16_t listen_port = 0;
};

bool parse_port(std::string_view text, uint16_t& out) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value > 65535) return false;
  out = static_cast<uint16_t>(value);
  return true;
}

enum class parse_outcome { run, help, usage_error };

// Accepts "--name value" and "--name=value".
parse_outcome parse_options(int argc, char** argv, options& out, std::string& error) {
  bool have_target = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return parse_outcome::help;
    std::string_view name = arg;
    std::optional<std::string_view> value;
    if (auto equals = arg.find('='); arg.rfind("--", 0) == 0 && equals != std::string_view::npos) {
      name = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    }
    if (name != "--target" && name != "--listen-port") {
      error = "unknown option '" + std::string(arg) + "'";
      return parse_outcome::usage_error;
    }
    if (!value) {
      if (i + 1 >= argc) {
        error = std::string(name) + " needs a value";
        return parse_outcome::usage_error;
      }
      value = argv[++i];
    }
    if (name == "--target") {
      if (!ferry::parse_endpoint(std::string(*value), 0, out.target, error)) return parse_outcome::usage_error;
      if (out.target.type != ferry::endpoint::kind::tcp || out.target.port == 0) {
        error = "--target needs HOST:PORT, got '" + std::string(*value) + "'";
        return parse_outcome::usage_error;
      }
      have_target = true;
    } else if (!parse_port(*value, out.listen_port)) {
      error = "--listen-port needs a port number (0-65535), got '" + std::string(*value) + "'";
      return parse_outcome::usage_error;
    }
  }
  if (!have_target) {
    error = "--target HOST:PORT is required";
    return parse_outcome::usage_error;
  }
  return parse_outcome::run;
}

bool is_ip_address(const std::string& text) {
  unsigned char buffer[sizeof(in6_addr)];
  return ::inet_pton(AF_INET, text.c_str(), buffer) == 1 || ::inet_pton(AF_INET6, text.c_str(), buffer) == 1;
}

std::optional<bool> parse_on_off(const std::string& word) {
  if (word == "on") return true;
  if (word == "off") return false;
  return std::nullopt;
}

// Carries out one command line; the answer is one line without its newline.
std::string execute(const std::string& line, fault_proxy& proxy, bool& quit) {
  std::istringstream words(line);
  std::vector<std::string> args;
  for (std::string word; words >> word;) args.push_back(word);
  if (args.empty()) return "error: empty command";
  const std::string& command = args[0];
  auto arity = [&](size_t count) { return args.size() == count + 1; };

  if (command == "cut" && arity(0)) {
    proxy.cut();
    return "ok";
  }
  if (command == "cut-after" && arity(2)) {
    uint64_t bytes = 0;
    auto [end, ec] = std::from_chars(args[1].data(), args[1].data() + args[1].size(), bytes);
    if (ec != std::errc{} || end != args[1].data() + args[1].size()) return "error: bad byte count '" + args[1] + "'";
    if (args[2] == "to-target") {
      proxy.cut_after(bytes, direction::to_target);
    } else if (args[2] == "to-client") {
      proxy.cut_after(bytes, direction::to_client);
    } else {
      return "error: direction must be to-target or to-client, got '" + args[2] + "'";
    }
    return "ok";
  }
  if ((command == "stall" || command == "refuse") && arity(1)) {
    std::optional<bool> on = parse_on_off(args[1]);
    if (!on) return "error: " + command + " takes on or off, got '" + args[1] + "'";
    if (command == "stall") {
      proxy.stall(*on);
    } else {
      proxy.refuse(*on);
    }
    return "ok";
  }
  if (command == "source" && arity(1)) {
    if (args[1] == "default") {
      proxy.set_source_address("");
      return "ok";
    }
    if (!is_ip_address(args[1])) return "error: '" + args[1] + "' is not an IP address";
    proxy.set_source_address(args[1]);
    return "ok";
  }
  if (command == "stats" && arity(0)) {
    return "ok accepted=" + std::to_string(proxy.connections_accepted()) + " cuts=" + std::to_string(proxy.cuts()) +
           " to-target=" + std::to_string(proxy.bytes_forwarded(direction::to_target)) +
           " to-client=" + std::to_string(proxy.bytes_forwarded(direction::to_client));
  }
  if (command == "quit" && arity(0)) {
    quit = true;
    return "ok";
  }
  const char* known[] = {"cut", "cut-after", "stall", "refuse", "source", "stats", "quit"};
  for (const char* name : known)
    if (command == name) return "error: wrong arguments for '" + command + "' (see --help)";
  return "error: unknown command '" + command + "' (see --help)";
}

}  // namespace

int main(int argc, char** argv) {
  ferry::set_log_component("ferry-faultproxy");
  options opts;
  std::string error;
  switch (parse_options(argc, argv, opts, error)) {
    case parse_outcome::help:
      std::cout << usage_text;
      return 0;
    case parse_outcome::usage_error:
      std::cerr << "ferry-faultproxy: " << error << " (see --help)\n";
      return exit_usage;
    case parse_outcome::run:
      break;
  }

  fault_proxy proxy(opts.target.host, opts.target.port);
  if (!proxy.start(opts.listen_port, error)) {
    std::cerr << "ferry-faultproxy: " << error << "\n";
    return 1;
  }
  std::cout << "listening on 127.0.0.1:" << proxy.port() << std::endl;

  bool quit = false;
  for (std::string line; !quit && std::getline(std::cin, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank lines are no commands
    std::cout << execute(line, proxy, quit) << std::endl;
  }
  proxy.stop();
  return 0;
}
