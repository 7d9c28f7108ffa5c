#include "transfer/offer_rules.hpp"

#include <cstring>
#include <limits>

#include "transfer/block_pipeline.hpp"

namespace ferry::transfer {

offer_tags::use offer_tags::use_of(int tag, int* user_tag) const {
  if (tag <= largest_user_tag()) {
    *user_tag = tag;
    return use::user;
  }
  const int below = bound - tag;
  *user_tag = below / 2;
  return below % 2 == 0 ? use::offer : use::answer;
}

bool parse_least_offered_size(const char* text, size_t& out, std::string* why) {
  if (text == nullptr || *text == '\0') {
    out = default_least_offered;
    return true;
  }
  if (std::strcmp(text, "off") == 0) {
    out = std::numeric_limits<size_t>::max();
    return true;
  }
  if (std::strcmp(text, "0") == 0) {
    out = 0;
    return true;
  }
  const size_t size = forced_block_size(text, nullptr);
  if (size == 0) {
    if (why) *why = "FERRY_TRANSFER_PEER_MIN is not a size in bytes (e.g. 0, 65536, 64K, 1M) or \"off\"";
    return false;
  }
  out = size;
  return true;
}

}  // namespace ferry::transfer
