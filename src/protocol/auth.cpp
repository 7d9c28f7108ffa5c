#include "protocol/auth.hpp"

#include "common/tls.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace ferry::protocol {

bool load_token(const std::string& path, std::string& token, std::string& warning, std::string& error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot read the token file " + path + ": " + std::strerror(errno);
    return false;
  }
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '\t'))
    text.pop_back();
  if (text.size() < min_token_size) {
    error = "the token in " + path + " is " + std::to_string(text.size()) + " bytes; at least " +
            std::to_string(min_token_size) + " are needed (make one with: head -c 32 /dev/urandom | base64 > " + path +
            ")";
    return false;
  }
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && (info.st_mode & (S_IRWXG | S_IRWXO)))
    warning = "the token file " + path + " may be read by others than its owner (chmod 600 " + path + ")";
  token = std::move(text);
  return true;
}

bool random_bytes(uint8_t* out, size_t size) {
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::getrandom(out + got, size - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    got += static_cast<size_t>(n);
  }
  return true;
}

bool random_nonce(nonce& out) { return random_bytes(out.data(), out.size()); }

mac auth_mac(const std::string& token, auth_role role, const nonce& server_nonce, const nonce& client_nonce,
             const channel_binding& binding) {
  tls::init_openssl();
  static constexpr char client_label[] = "ferry client";
  static constexpr char server_label[] = "ferry server";
  const char* label = role == auth_role::client ? client_label : server_label;
  std::vector<uint8_t> message(label, label + sizeof client_label);  // both labels have the same length, with the NUL
  message.insert(message.end(), server_nonce.begin(), server_nonce.end());
  message.insert(message.end(), client_nonce.begin(), client_nonce.end());
  message.insert(message.end(), binding.begin(), binding.end());
  mac out{};
  unsigned int size = 0;
  HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()), message.data(), message.size(), out.data(), &size);
  return out;
}

bool macs_equal(const mac& a, const mac& b) { return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0; }

}  // namespace ferry::protocol
