#include "transfer/offer_rules.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <limits>

namespace ferry::transfer {
namespace {

// Every tag of the three ranges, for both bounds an MPI may have: user tags,
// offers and answers never share a tag, and each offer and answer names the
// user tag it was made for.
TEST(offer_rules, user_offer_and_answer_tags_never_meet) {
  for (int bound : {32767, 65535, INT_MAX}) {
    const offer_tags tags{bound};
    const int largest = tags.largest_user_tag();
    ASSERT_GT(largest, bound / 3 - 3);
    ASSERT_GT(tags.answer(largest), largest) << "bound " << bound;
    // The extremes and a spread between them.
    for (int t : {0, 1, 2, largest / 2, largest - 1, largest}) {
      int of = -1;
      EXPECT_EQ(tags.use_of(t, &of), offer_tags::use::user);
      EXPECT_EQ(of, t);
      EXPECT_EQ(tags.use_of(tags.offer(t), &of), offer_tags::use::offer) << "bound " << bound << " tag " << t;
      EXPECT_EQ(of, t);
      EXPECT_EQ(tags.use_of(tags.answer(t), &of), offer_tags::use::answer) << "bound " << bound << " tag " << t;
      EXPECT_EQ(of, t);
      EXPECT_LE(tags.offer(t), bound);
    }
  }
}

TEST(offer_rules, the_least_offered_size_reads_bytes_suffixes_zero_and_off) {
  size_t size = 1;
  std::string why;
  ASSERT_TRUE(parse_least_offered_size(nullptr, size, &why));
  EXPECT_EQ(size, default_least_offered);
  ASSERT_TRUE(parse_least_offered_size("", size, &why));
  EXPECT_EQ(size, default_least_offered);
  ASSERT_TRUE(parse_least_offered_size("0", size, &why));
  EXPECT_EQ(size, 0u);
  ASSERT_TRUE(parse_least_offered_size("4096", size, &why));
  EXPECT_EQ(size, 4096u);
  ASSERT_TRUE(parse_least_offered_size("1M", size, &why));
  EXPECT_EQ(size, size_t{1} << 20);
  ASSERT_TRUE(parse_least_offered_size("off", size, &why));
  EXPECT_EQ(size, std::numeric_limits<size_t>::max());
  for (const char* bad : {"-1", "12Q", "lots", "1MM", "99999999999999999999"}) {
    size = 7;
    why.clear();
    EXPECT_FALSE(parse_least_offered_size(bad, size, &why)) << bad;
    EXPECT_NE(why.find("FERRY_TRANSFER_PEER_MIN"), std::string::npos) << bad;
    EXPECT_EQ(size, 7u) << "a refused value must not change the size";
  }
}

}  // namespace
}  // namespace ferry::transfer
