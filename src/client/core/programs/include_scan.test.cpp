// Finding the headers a program source includes on the client: the #include
// lines of a text, the search order (includer's directory for quoted
// includes, the working directory, the -I directories), nesting, cycles,
// missing headers and the limits.
#include "client/core/programs/include_scan.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace ferry::client {
namespace {

namespace fs = std::filesystem;

TEST(include_directives, finds_quoted_and_angle_includes_with_any_spacing) {
  const auto found = include_directives(
      "#include \"a.h\"\n"
      "  #  include\t<b/c.h>\n"
      "#include<d.h>\n"
      "kernel void k() {}\n");
  EXPECT_EQ(found, (std::vector<include_directive>{{"a.h", include_form::quoted},
                                                   {"b/c.h", include_form::angle},
                                                   {"d.h", include_form::angle}}));
}

TEST(include_directives, comments_hide_includes_and_continued_lines_join) {
  const auto found = include_directives(
      "// #include \"line_comment.h\"\n"
      "/* #include \"block.h\"\n"
      "   #include \"still_block.h\" */\n"
      "#include /* between */ \"after_comment.h\"\n"
      "#inc\\\n"
      "lude \"continued.h\"\n"
      "const char* s = \"/* not a comment\";\n"
      "#include \"after_string.h\"\n");
  EXPECT_EQ(found, (std::vector<include_directive>{{"after_comment.h", include_form::quoted},
                                                   {"continued.h", include_form::quoted},
                                                   {"after_string.h", include_form::quoted}}));
}

TEST(include_directives, other_directives_and_macro_includes_are_not_header_names) {
  EXPECT_TRUE(include_directives("#include_next <x.h>\n#define include \"y.h\"\n#include HEADER\n"
                                 "x = 1; # include \"z.h\"\n#include \"\"\n")
                  .empty());
}

TEST(absolute_normal, resolves_against_the_base_and_drops_dots_and_trailing_slashes) {
  EXPECT_EQ(absolute_normal("inc/", "/w"), "/w/inc");
  EXPECT_EQ(absolute_normal("../x/./y.h", "/w/sub"), "/w/x/y.h");
  EXPECT_EQ(absolute_normal("/abs//dir/../h.h", "/w"), "/abs/h.h");
  EXPECT_EQ(absolute_normal("/..", "/w"), "/");
  EXPECT_EQ(absolute_normal("rel", ""), "");
}

// A directory tree of headers, removed at the end of the test.
class include_scan : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ferry-scan-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = fs::path(pattern).lexically_normal().string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void write(const std::string& relative, const std::string& text) {
    fs::path p = fs::path(root_) / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  std::string at(const std::string& relative) const { return root_ + "/" + relative; }

  // Path -> content of what a scan of `source` with `options` ships.
  std::map<std::string, std::string> shipped(const std::string& source, const std::string& options,
                                            const std::string& working_dir = {}) {
    include_scan_input input;
    input.options = options;
    input.sources = {source};
    input.working_dir = working_dir.empty() ? root_ : working_dir;
    std::string why;
    auto files = scan_includes(input, why);
    EXPECT_TRUE(files) << why;
    std::map<std::string, std::string> out;
    if (!files) return out;
    for (const auto& h : files->headers) out[h.path] = std::string(h.content.begin(), h.content.end());
    return out;
  }

  std::string root_;
};

TEST_F(include_scan, include_directories_count_with_and_without_a_space) {
  write("inc/axpy.h", "#define AXPY 1\n");
  write("other/scale.h", "#define SCALE 2\n");
  const std::map<std::string, std::string> expected{{at("inc/axpy.h"), "#define AXPY 1\n"},
                                                    {at("other/scale.h"), "#define SCALE 2\n"}};
  const std::string source = "#include \"axpy.h\"\n#include <scale.h>\n";
  EXPECT_EQ(shipped(source, "-I " + at("inc") + " -I" + at("other"), "/"), expected);
  EXPECT_EQ(shipped(source, "-I" + at("inc") + " -DX -I  " + at("other"), "/"), expected);
}

TEST_F(include_scan, relative_directories_resolve_against_the_working_directory) {
  write("work/inc/axpy.h", "a");
  include_scan_input input;
  input.options = "-I inc -I ../elsewhere -Isub/";
  input.working_dir = at("work");
  std::string why;
  auto files = scan_includes(input, why);
  ASSERT_TRUE(files) << why;
  EXPECT_EQ(files->working_dir, at("work"));
  // Every -I option gets its absolute directory, found or not, in order.
  EXPECT_EQ(std::vector<std::string>(files->include_dirs.begin(), files->include_dirs.end()),
            (std::vector<std::string>{at("work/inc"), at("elsewhere"), at("work/sub")}));
  EXPECT_EQ(shipped("#include \"axpy.h\"", "-I inc", at("work")),
            (std::map<std::string, std::string>{{at("work/inc/axpy.h"), "a"}}));
}

TEST_F(include_scan, the_working_directory_holds_the_sources_own_headers) {
  write("work/local.h", "l");
  EXPECT_EQ(shipped("#include \"local.h\"", "", at("work")),
            (std::map<std::string, std::string>{{at("work/local.h"), "l"}}));
}

TEST_F(include_scan, nested_quoted_includes_look_beside_their_header_first_and_angle_ones_do_not) {
  write("inc/axpy.h", "#include \"sub/scale.h\"\n");
  write("inc/sub/scale.h", "#include \"../common.h\"\n#include \"near.h\"\n#include <beside.h>\n");
  write("inc/common.h", "c");
  write("inc/sub/near.h", "n");
  // Beside scale.h, but an angle include does not look there.
  write("inc/sub/beside.h", "b");
  EXPECT_EQ(shipped("#include <axpy.h>\n", "-I " + at("inc"), "/"),
            (std::map<std::string, std::string>{
                {at("inc/axpy.h"), "#include \"sub/scale.h\"\n"},
                {at("inc/sub/scale.h"), "#include \"../common.h\"\n#include \"near.h\"\n#include <beside.h>\n"},
                {at("inc/common.h"), "c"},
                {at("inc/sub/near.h"), "n"}}));
}

TEST_F(include_scan, the_first_directory_in_the_search_order_wins) {
  write("a/same.h", "from a");
  write("b/same.h", "from b");
  write("b/only_b.h", "#include \"same.h\"\n");
  // only_b.h's quoted include finds same.h beside it, before the -I order.
  EXPECT_EQ(shipped("#include \"same.h\"\n#include \"only_b.h\"\n", "-I" + at("a") + " -I" + at("b"), "/"),
            (std::map<std::string, std::string>{{at("a/same.h"), "from a"},
                                                {at("b/only_b.h"), "#include \"same.h\"\n"},
                                                {at("b/same.h"), "from b"}}));
}

TEST_F(include_scan, cycles_ship_each_header_once) {
  write("inc/a.h", "#include \"b.h\"\n");
  write("inc/b.h", "#include \"a.h\"\n#include \"b.h\"\n");
  include_scan_input input;
  input.options = "-I" + at("inc");
  const std::string source = "#include \"a.h\"\n#include <a.h>\n";
  input.sources = {source};
  input.working_dir = "/";
  std::string why;
  auto files = scan_includes(input, why);
  ASSERT_TRUE(files) << why;
  ASSERT_EQ(files->headers.size(), 2u);
  EXPECT_EQ(files->headers[0].path, at("inc/a.h"));
  EXPECT_EQ(files->headers[1].path, at("inc/b.h"));
}

TEST_F(include_scan, missing_headers_and_other_kinds_of_file_are_not_shipped) {
  write("inc/present.h", "p");
  // A directory named like a header is no header: the search goes on to the next directory.
  fs::create_directories(at("first/present.h"));
  ASSERT_EQ(::mkfifo(at("inc/fifo.h").c_str(), 0600), 0);
  EXPECT_EQ(shipped("#include <missing.h>\n#include \"fifo.h\"\n#include <present.h>\n#include <CL/opencl-c.h>\n",
                    "-I" + at("first") + " -I" + at("inc") + " -I" + at("nonexistent"), "/"),
            (std::map<std::string, std::string>{{at("inc/present.h"), "p"}}));
}

TEST_F(include_scan, absolute_include_names_are_shipped_as_they_are) {
  write("abs/h.h", "h");
  EXPECT_EQ(shipped("#include \"" + at("abs/./h.h") + "\"\n", ""),
            (std::map<std::string, std::string>{{at("abs/h.h"), "h"}}));
}

TEST_F(include_scan, names_that_header_programs_provide_are_not_looked_up) {
  write("work/helpers.h", "on disk");
  write("work/used.h", "u");
  include_scan_input input;
  const std::string source = "#include \"helpers.h\"\n";
  const std::string header_program = "#include \"used.h\"\n";
  input.sources = {source, header_program};
  input.provided = {"helpers.h"};
  input.working_dir = at("work");
  std::string why;
  auto files = scan_includes(input, why);
  ASSERT_TRUE(files) << why;
  ASSERT_EQ(files->headers.size(), 1u);
  EXPECT_EQ(files->headers[0].path, at("work/used.h"));
}

TEST_F(include_scan, without_a_working_directory_nothing_relative_resolves) {
  write("inc/h.h", "h");
  include_scan_input input;
  input.options = "-I inc -I" + at("inc");
  const std::string source = "#include \"h.h\"\n";
  input.sources = {source};
  std::string why;
  auto files = scan_includes(input, why);
  ASSERT_TRUE(files) << why;
  EXPECT_EQ(std::vector<std::string>(files->include_dirs.begin(), files->include_dirs.end()),
            (std::vector<std::string>{"", at("inc")}));
  ASSERT_EQ(files->headers.size(), 1u);
  EXPECT_EQ(files->headers[0].path, at("inc/h.h"));
}

TEST_F(include_scan, more_files_than_the_limit_fail_with_out_of_resources) {
  write("inc/a.h", "#include \"b.h\"\n");
  write("inc/b.h", "#include \"c.h\"\n");
  write("inc/c.h", "c");
  include_scan_input input;
  input.options = "-I" + at("inc");
  const std::string source = "#include \"a.h\"\n";
  input.sources = {source};
  input.working_dir = "/";
  input.limits.max_files = 2;
  std::string why;
  auto files = scan_includes(input, why);
  EXPECT_EQ(files.error(), CL_OUT_OF_RESOURCES);
  EXPECT_NE(why.find("more than 2 files"), std::string::npos) << why;
  input.limits.max_files = 3;
  EXPECT_TRUE(scan_includes(input, why)) << why;
}

TEST_F(include_scan, more_bytes_than_the_limit_fail_with_out_of_resources) {
  write("inc/big.h", std::string(1000, 'x'));
  include_scan_input input;
  input.options = "-I" + at("inc");
  const std::string source = "#include \"big.h\"\n";
  input.sources = {source};
  input.working_dir = "/";
  // Path and content count together.
  const size_t needed = at("inc/big.h").size() + 1000;
  input.limits.max_bytes = needed - 1;
  std::string why;
  auto files = scan_includes(input, why);
  EXPECT_EQ(files.error(), CL_OUT_OF_RESOURCES);
  EXPECT_NE(why.find("bytes"), std::string::npos) << why;
  input.limits.max_bytes = needed;
  auto fitting = scan_includes(input, why);
  ASSERT_TRUE(fitting) << why;
  EXPECT_EQ(fitting->headers.size(), 1u);
}

}  // namespace
}  // namespace ferry::client
