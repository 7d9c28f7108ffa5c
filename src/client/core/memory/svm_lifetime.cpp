#include "client/core/memory/svm_lifetime.hpp"

#include <cstdlib>
#include <cstring>
#include <vector>

#include "client/core/memory/svm_registry.hpp"
#include "client/core/memory/svm_same_address.hpp"
#include "client/core/servers/server.hpp"
#include "common/log.hpp"

namespace ferry::client {

namespace {

// Native allocations tried for one clSVMAlloc until one's address is free
// here too (svm_same_address.hpp).
constexpr int max_placement_attempts = 3;

// FERRY_SVM_SAME_ADDRESS=0: host blocks anywhere (kernels then cannot follow
// pointers stored inside SVM memory); read once.
bool same_address_wanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("FERRY_SVM_SAME_ADDRESS");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return wanted;
}

}  // namespace

void* allocate_svm(cl_context c, cl_svm_mem_flags flags, size_t size) {
  connection* link = link_of(c);
  if (link == nullptr || !link->accepting()) return nullptr;

  // The server allocates first: its answer names the native address, and the
  // host block goes there when this process has it free, so that pointers
  // stored inside the allocation mean the same on both sides. An address
  // taken here is tried again with a new native allocation, a few times,
  // before the allocation settles for an ordinary host block.
  protocol::svm_alloc request;
  request.context = c->id;
  request.flags = flags;
  request.size = size;
  request.alignment = static_cast<uint32_t>(largest_type_size);
  std::vector<protocol::object_id> unplaced;  // native allocations whose address is taken here
  svm_ref allocation;
  for (int attempt = 0; attempt < max_placement_attempts && !allocation; ++attempt) {
    request.id = next_object_id();
    auto reply = link->call<protocol::status_reply>(request);
    if (!reply || reply->status != CL_SUCCESS) break;
    uint8_t* host = nullptr;
    if (reply->details.size() == 2 && same_address_wanted()) {
      const uint64_t address = static_cast<uint64_t>(static_cast<uint32_t>(reply->details[0])) |
                               static_cast<uint64_t>(static_cast<uint32_t>(reply->details[1])) << 32;
      host = map_at_server_address(address, size, link);
    }
    if (host != nullptr) {
      allocation = std::make_shared<svm_allocation>(host, size, largest_type_size, request.id, c,
                                                    svm_placement::server_address);
    } else {
      unplaced.push_back(request.id);
      if (reply->details.size() != 2 || !same_address_wanted()) break;  // no address to take
    }
  }
  if (!allocation && !unplaced.empty()) {
    if (uint8_t* host = allocate_svm_block(size, largest_type_size)) {
      allocation = std::make_shared<svm_allocation>(host, size, largest_type_size, unplaced.back(), c,
                                                    svm_placement::own_block);
      unplaced.pop_back();
      FERRY_DEBUG("svm",
                  "SVM allocation %llu: the server's address is in use here; kernels cannot follow pointers "
                  "stored inside it",
                  static_cast<unsigned long long>(allocation->id));
    }
  }
  for (protocol::object_id id : unplaced) link->post(protocol::release_object{id});
  if (!allocation) return nullptr;
  register_svm(allocation);
  return allocation->host;
}

void free_svm(cl_context c, void* pointer) {
  if (pointer == nullptr) return;
  svm_ref allocation = unregister_svm(pointer, c);
  if (!allocation) return;
  if (connection* link = link_of(allocation->owner)) link->post(protocol::release_object{allocation->id});
}

}  // namespace ferry::client
