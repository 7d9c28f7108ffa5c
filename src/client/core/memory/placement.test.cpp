// Placement: which object carries a buffer's placement, how a write uses
// it, where a new buffer's contents are, and which servers hold them after
// a command that needs no migration.
#include "client/core/memory/placement.hpp"

#include <gtest/gtest.h>

#include <array>
#include <memory>

namespace ferry::client {
namespace {

/// A context over three servers (without connections: nothing here may
/// migrate), and the objects a test makes in it, released at the end.
class placement_test : public ::testing::Test {
 protected:
  placement_test() {
    for (uint32_t slot = 0; slot < servers_.size(); ++slot) {
      servers_[slot].slot = slot;
      servers_[slot].address_text = "server" + std::to_string(slot);
      context_->servers.push_back(&servers_[slot]);
    }
    queue_->context = context_;
    retain_internal(context_);
  }
  ~placement_test() override {
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) release_internal(*it);
    release_internal(queue_);
    release_internal(context_);
  }

  server& at(uint32_t slot) { return servers_[slot]; }
  queue& the_queue() { return *queue_; }

  memory* buffer(size_t size) {
    auto* m = new memory;
    m->context = context_;
    m->size = size;
    retain_internal(context_);
    made_.push_back(m);
    return m;
  }
  memory* sub_buffer(memory* parent, size_t origin, size_t size) {
    memory* m = buffer(size);
    m->parent = parent;
    m->origin = origin;
    retain_internal(parent);
    return m;
  }
  memory* image_of(memory* from) {
    memory* m = buffer(from->size);
    m->type = CL_MEM_OBJECT_IMAGE1D_BUFFER;
    m->image.mem_object = from;
    retain_internal(from);
    return m;
  }
  memory* image(size_t size) {
    memory* m = buffer(size);
    m->type = CL_MEM_OBJECT_IMAGE2D;
    return m;
  }

  /// What bring_contents did: its status, the write the command waits
  /// for (0: none, nothing moved), and the root's holders afterwards.
  struct outcome {
    cl_int status;
    protocol::object_id arrival;
    uint64_t holders;
    bool operator==(const outcome&) const = default;
  };
  /// bring_contents without waits or a dependent event, for `m` whose root
  /// is held by `held_by` (a set of bits).
  outcome bring(memory* m, uint64_t held_by, access how, uint32_t to) {
    memory* root = root_of(m);
    root->holders = held_by;
    protocol::object_id arrival = 99;
    const cl_int status = bring_contents(m, how, at(to), the_queue(), {}, nullptr, arrival);
    return {status, arrival, root->holders};
  }

 private:
  std::array<server, 3> servers_;
  context* context_ = new context;
  queue* queue_ = new queue;
  std::vector<memory*> made_;
};

TEST_F(placement_test, a_sub_buffer_and_an_image_from_a_buffer_are_placed_with_that_buffer) {
  memory* root = buffer(64);
  memory* part = sub_buffer(root, 16, 16);
  memory* picture = image_of(root);
  EXPECT_EQ(root_of(root), root);
  EXPECT_EQ(root_of(part), root);
  EXPECT_EQ(root_of(picture), root);
}

TEST_F(placement_test, only_a_write_of_every_byte_of_a_root_replaces_its_contents) {
  memory* root = buffer(64);
  memory* part = sub_buffer(root, 0, 64);
  EXPECT_EQ(access_for_write(root, 0, 64), access::replace);
  EXPECT_EQ(access_for_write(root, 0, 63), access::write);
  EXPECT_EQ(access_for_write(root, 1, 63), access::write);
  EXPECT_EQ(access_for_write(part, 0, 64), access::write);  // a sub-buffer is never the root
}

TEST_F(placement_test, a_new_buffer_is_current_where_its_contents_went_or_everywhere_without_any) {
  memory* with_data = buffer(8);
  place_new(with_data, &at(1));
  EXPECT_EQ(with_data->holders, at(1).bit());
  memory* without = buffer(8);
  place_new(without, nullptr);
  EXPECT_EQ(without->holders, at(0).bit() | at(1).bit() | at(2).bit());
}

TEST_F(placement_test, a_read_where_the_contents_are_moves_nothing_and_keeps_every_holder) {
  const uint64_t both = at(0).bit() | at(2).bit();
  EXPECT_EQ(bring(buffer(8), both, access::read, 2), (outcome{CL_SUCCESS, 0, both}));
}

TEST_F(placement_test, a_write_leaves_its_server_the_only_holder) {
  EXPECT_EQ(bring(buffer(8), at(0).bit() | at(2).bit(), access::write, 2), (outcome{CL_SUCCESS, 0, at(2).bit()}));
}

TEST_F(placement_test, replacing_the_contents_moves_nothing_even_from_another_server) {
  // Through a sub-buffer as wide as its parent: the root's placement changes.
  memory* part = sub_buffer(buffer(8), 0, 8);
  EXPECT_EQ(bring(part, at(0).bit(), access::replace, 1), (outcome{CL_SUCCESS, 0, at(1).bit()}));
}

TEST_F(placement_test, contents_no_server_holds_are_undefined_and_current_where_used) {
  // A failed migration lost them.
  EXPECT_EQ(bring(buffer(8), 0, access::read, 1), (outcome{CL_SUCCESS, 0, at(1).bit()}));
}

TEST_F(placement_test, an_image_on_another_server_does_not_migrate) {
  EXPECT_EQ(bring(image(8), at(0).bit(), access::read, 1), (outcome{CL_INVALID_OPERATION, 0, at(0).bit()}));
}

}  // namespace
}  // namespace ferry::client
