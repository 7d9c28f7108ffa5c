// The -I options of a build options string, as both sides find them.
#include "protocol/include_options.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace ferry::protocol {
namespace {

std::vector<std::string> dirs_of(std::string_view options) {
  std::vector<std::string> out;
  for (const include_option& o : find_include_options(options)) out.emplace_back(o.dir);
  return out;
}

TEST(include_options, finds_joined_and_separate_forms_in_order) {
  EXPECT_EQ(dirs_of("-Iinc -DX=1 -I /abs/dir -cl-fast-relaxed-math -I\t../up"),
            (std::vector<std::string>{"inc", "/abs/dir", "../up"}));
}

TEST(include_options, spans_cover_the_option_and_its_directory) {
  const std::string options = "-DA  -I  inc -Iother";
  auto found = find_include_options(options);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(options.substr(found[0].begin, found[0].end - found[0].begin), "-I  inc");
  EXPECT_EQ(options.substr(found[1].begin, found[1].end - found[1].begin), "-Iother");
}

TEST(include_options, a_trailing_bare_option_and_lookalikes_are_not_include_options) {
  EXPECT_TRUE(dirs_of("-DX -I").empty());
  EXPECT_TRUE(dirs_of("-I   ").empty());
  EXPECT_TRUE(dirs_of("").empty());
  // Only a token that starts with -I counts; -DI or x-I do not.
  EXPECT_TRUE(dirs_of("-DI=1 x-Ifoo").empty());
}

TEST(include_options, double_quotes_keep_white_space_and_are_not_part_of_the_directory) {
  const std::string options = "-I \"/a b/inc\" -I\"c d\" -DX";
  auto found = find_include_options(options);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].dir, "/a b/inc");
  EXPECT_EQ(found[1].dir, "c d");
  EXPECT_EQ(options.substr(found[1].begin, found[1].end - found[1].begin), "-I\"c d\"");
  EXPECT_EQ(quote_option_value("/a b"), "\"/a b\"");
  EXPECT_EQ(quote_option_value("/ab"), "/ab");
}

TEST(include_options, the_directory_of_a_separate_option_is_whatever_token_follows) {
  // As the compiler's own option parser reads it.
  EXPECT_EQ(dirs_of("-I -DX"), (std::vector<std::string>{"-DX"}));
}

}  // namespace
}  // namespace ferry::protocol
