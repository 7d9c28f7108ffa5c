// The server's tree of a build's client headers: which client paths it
// takes, where the files land, how the options and the log are rewritten,
// and that nothing is left behind.
#include "server/commands/build_headers.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ferry::server {
namespace {

namespace fs = std::filesystem;
namespace p = ferry::protocol;

TEST(mirror_relative, drops_empty_and_dot_components_and_reroots_absolute_paths) {
  EXPECT_EQ(mirror_relative("/home/u/inc/axpy.h"), "home/u/inc/axpy.h");
  EXPECT_EQ(mirror_relative("//a/./b//c.h"), "a/b/c.h");
  EXPECT_EQ(mirror_relative("relative/x.h"), "relative/x.h");
  EXPECT_EQ(mirror_relative("/"), "");
  EXPECT_EQ(mirror_relative(""), "");
}

TEST(mirror_relative, refuses_dot_dot_components_and_nul_bytes) {
  EXPECT_EQ(mirror_relative("/a/../../etc/passwd"), std::nullopt);
  EXPECT_EQ(mirror_relative(".."), std::nullopt);
  EXPECT_EQ(mirror_relative("a/.."), std::nullopt);
  EXPECT_EQ(mirror_relative(std::string_view("a/b\0c", 5)), std::nullopt);
  // Names that merely contain dots are fine.
  EXPECT_EQ(mirror_relative("/a/..b/c../...h"), "a/..b/c../...h");
}

TEST(client_log, replaces_the_server_spellings_in_order) {
  client_paths paths;
  paths.log_rewrites = {{"/tmp/ferry-build-1/root/", "/"}, {"/tmp/ferry-build-1/root", "/"},
                        {"/tmp/ferry-build-1", "(build directory)"}};
  EXPECT_EQ(client_log("/tmp/ferry-build-1/root/home/u/a.h:1:10: 'x.h' file not found\n"
                       "in /tmp/ferry-build-1/root and /tmp/ferry-build-1/unnamed",
                       paths),
            "/home/u/a.h:1:10: 'x.h' file not found\nin / and (build directory)/unnamed");
  EXPECT_EQ(client_log("nothing to change", paths), "nothing to change");
}

class build_tree_test : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ferry-tree-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    base_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  bool base_is_empty() const { return fs::is_empty(base_); }
  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static p::client_header header(std::string path, std::string text) {
    return {std::move(path), p::bytes(text.begin(), text.end())};
  }

  std::string base_;
};

TEST_F(build_tree_test, writes_headers_at_their_client_paths_and_rewrites_every_include_option) {
  p::build_files files;
  files.working_dir = "/home/u/work";
  files.include_dirs = {"/home/u/inc", "/home/u/missing"};
  files.headers = {header("/home/u/inc/axpy.h", "#include \"sub/scale.h\"\n"), header("/home/u/inc/sub/scale.h", "s"),
                   header("/home/u/work/local.h", "l")};
  tree_error error = tree_error::none;
  std::string why;
  auto tree = build_tree::make(files, "-DX=1 -I /home/u/inc -cl-mad-enable -Imissing", base_, error, why);
  ASSERT_TRUE(tree) << why;
  const std::string& dir = tree->dir();
  EXPECT_TRUE(dir.starts_with(base_ + "/ferry-build-")) << dir;
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(read(dir + "/root/home/u/inc/axpy.h"), "#include \"sub/scale.h\"\n");
  EXPECT_EQ(read(dir + "/root/home/u/inc/sub/scale.h"), "s");
  EXPECT_EQ(read(dir + "/root/home/u/work/local.h"), "l");
  // The client's missing -I directory is an empty one in the tree, never the server's own.
  EXPECT_TRUE(fs::is_directory(dir + "/root/home/u/missing"));
  EXPECT_TRUE(fs::is_empty(dir + "/root/home/u/missing"));
  EXPECT_EQ(tree->options(), "-I" + dir + "/root/home/u/work -DX=1 -I" + dir + "/root/home/u/inc -cl-mad-enable -I" +
                                 dir + "/root/home/u/missing");
  EXPECT_EQ(tree->paths().client_options, "-DX=1 -I /home/u/inc -cl-mad-enable -Imissing");
  EXPECT_EQ(client_log("error: " + dir + "/root/home/u/inc/axpy.h:1:10: 'sub/scale.h' file not found", tree->paths()),
            "error: /home/u/inc/axpy.h:1:10: 'sub/scale.h' file not found");
  tree.reset();
  EXPECT_TRUE(base_is_empty());
}

TEST_F(build_tree_test, directories_with_white_space_are_quoted_and_unnamed_ones_are_empty) {
  p::build_files files;
  files.working_dir = "";
  files.include_dirs = {"", "/my dir/inc"};
  tree_error error = tree_error::none;
  std::string why;
  auto tree = build_tree::make(files, "-I rel -I\"/my dir/inc\"", base_, error, why);
  ASSERT_TRUE(tree) << why;
  const std::string& dir = tree->dir();
  EXPECT_EQ(tree->options(), "-I" + dir + "/unnamed -I" + dir + "/unnamed -I\"" + dir + "/root/my dir/inc\"");
  EXPECT_TRUE(fs::is_empty(dir + "/unnamed"));
  EXPECT_TRUE(fs::is_directory(dir + "/root/my dir/inc"));
}

TEST_F(build_tree_test, refuses_bad_paths_and_leaves_nothing_behind) {
  struct bad_case {
    const char* what;
    p::build_files files;
    std::string options;
  };
  std::vector<bad_case> cases;
  {
    p::build_files f;
    f.headers = {header("/a/../../../etc/cron.d/x", "evil")};
    cases.push_back({"dot-dot header", f, ""});
  }
  {
    p::build_files f;
    f.include_dirs = {"/inc/../.."};
    cases.push_back({"dot-dot directory", f, "-I/inc/../.."});
  }
  {
    p::build_files f;
    f.working_dir = "../up";
    f.headers = {header("/a.h", "a")};
    cases.push_back({"dot-dot working directory", f, ""});
  }
  {
    p::build_files f;
    f.headers = {header("/", "root")};
    cases.push_back({"header naming no file", f, ""});
  }
  {
    p::build_files f;
    f.headers = {header("/a/b.h", "1"), header("/a//b.h", "2")};
    cases.push_back({"the same header twice", f, ""});
  }
  {
    p::build_files f;
    f.headers = {header("/a/b.h", "1"), header("/a/b.h/c.h", "2")};
    cases.push_back({"a header where a directory must be", f, ""});
  }
  {
    p::build_files f;
    f.include_dirs = {"/a/b.h"};
    f.headers = {header("/a/b.h", "1")};
    cases.push_back({"an include directory that is a header", f, "-I/a/b.h"});
  }
  {
    p::build_files f;
    f.include_dirs = {"/one"};
    f.headers = {header("/one/x.h", "1")};
    cases.push_back({"more directories than options", f, "-DX"});
  }
  for (const bad_case& c : cases) {
    SCOPED_TRACE(c.what);
    tree_error error = tree_error::none;
    std::string why;
    auto tree = build_tree::make(c.files, c.options, base_, error, why);
    EXPECT_EQ(tree, nullptr);
    EXPECT_EQ(error, tree_error::bad_path) << why;
    EXPECT_FALSE(why.empty());
    EXPECT_TRUE(base_is_empty());
  }
  // Nothing was written outside the base either.
  EXPECT_FALSE(fs::exists(fs::path(base_).parent_path() / "etc/cron.d/x"));
}

TEST_F(build_tree_test, an_unusable_base_is_an_io_error) {
  p::build_files files;
  files.headers = {header("/a.h", "a")};
  tree_error error = tree_error::none;
  std::string why;
  EXPECT_EQ(build_tree::make(files, "", base_ + "/does/not/exist", error, why), nullptr);
  EXPECT_EQ(error, tree_error::io);
  EXPECT_NE(why.find(base_ + "/does/not/exist"), std::string::npos) << why;
}

TEST_F(build_tree_test, the_tree_goes_away_even_when_its_files_were_made_read_only) {
  p::build_files files;
  files.headers = {header("/deep/er/h.h", "h")};
  tree_error error = tree_error::none;
  std::string why;
  auto tree = build_tree::make(files, "", base_, error, why);
  ASSERT_TRUE(tree) << why;
  // The compiler may leave files of its own; a read-only file goes too.
  ASSERT_EQ(::chmod((tree->dir() + "/root/deep/er/h.h").c_str(), 0400), 0);
  std::ofstream(tree->dir() + "/root/deep/left_by_compiler") << "x";
  tree.reset();
  EXPECT_TRUE(base_is_empty());
}

// A build with one -I directory holding one header, a.h ("a").
p::build_files one_include_request() {
  p::build_files files;
  files.working_dir = "/w";
  files.include_dirs = {"/inc"};
  files.headers = {{"/inc/a.h", p::bytes{'a'}}};
  return files;
}

TEST_F(build_tree_test, the_same_request_gets_the_same_directory_each_time_and_another_one_while_it_is_taken) {
  // The driver's kernel cache finds an earlier build only when the paths the
  // compiler sees are the same.
  const p::build_files files = one_include_request();
  tree_error error = tree_error::none;
  std::string why;
  std::string first_options;
  {
    auto tree = build_tree::make(files, "-I/inc", base_, error, why);
    ASSERT_TRUE(tree) << why;
    EXPECT_EQ(tree->dir(), base_ + "/" + tree_name(files, "-I/inc"));
    first_options = tree->options();
  }
  EXPECT_TRUE(base_is_empty());
  auto again = build_tree::make(files, "-I/inc", base_, error, why);
  ASSERT_TRUE(again) << why;
  EXPECT_EQ(again->options(), first_options);
  // The same request building beside it gets a directory of its own, whole.
  auto beside = build_tree::make(files, "-I/inc", base_, error, why);
  ASSERT_TRUE(beside) << why;
  EXPECT_NE(beside->dir(), again->dir());
  EXPECT_TRUE(beside->dir().starts_with(base_ + "/ferry-build-")) << beside->dir();
  EXPECT_EQ(read(beside->dir() + "/root/inc/a.h"), "a");
  EXPECT_EQ(read(again->dir() + "/root/inc/a.h"), "a");
  beside.reset();
  EXPECT_EQ(read(again->dir() + "/root/inc/a.h"), "a");
  again.reset();
  EXPECT_TRUE(base_is_empty());
}

TEST(tree_name, depends_on_the_options_and_every_field_of_the_files) {
  const p::build_files files = one_include_request();
  const std::string name = tree_name(files, "-I/inc");
  EXPECT_EQ(name.size(), std::string("ferry-build-").size() + 16);
  EXPECT_TRUE(name.starts_with("ferry-build-"));
  EXPECT_EQ(name.find_first_not_of("0123456789abcdef", 12), std::string::npos) << name;
  EXPECT_EQ(tree_name(files, "-I/inc"), name);
  EXPECT_NE(tree_name(files, "-I/inc -DX"), name);
  auto changed = [&](auto&& change) {
    p::build_files other = files;
    change(other);
    return tree_name(other, "-I/inc");
  };
  EXPECT_NE(changed([](p::build_files& f) { f.working_dir = "/v"; }), name);
  EXPECT_NE(changed([](p::build_files& f) { f.include_dirs[0] = "/inc2"; }), name);
  EXPECT_NE(changed([](p::build_files& f) { f.headers[0].path = "/inc/b.h"; }), name);
  EXPECT_NE(changed([](p::build_files& f) { f.headers[0].content = p::bytes{'b'}; }), name);
  // Lengths go in too: the same bytes split differently are another request.
  p::build_files split_one, split_two;
  split_one.working_dir = "/w";
  split_one.include_dirs = {"/inc"};
  split_two.working_dir = "/w/";
  split_two.include_dirs = {"inc"};
  EXPECT_NE(tree_name(split_one, ""), tree_name(split_two, ""));
}

TEST(build_base, is_a_private_directory_in_the_kernel_cache_or_the_temp_base) {
  const char* saved = std::getenv("POCL_CACHE_DIR");
  const std::string restore = saved ? saved : "";
  std::string cache = temp_base() + "/ferry-base-test-XXXXXX";
  ASSERT_NE(::mkdtemp(cache.data()), nullptr);
  ::setenv("POCL_CACHE_DIR", cache.c_str(), 1);
  EXPECT_EQ(build_base(), cache + "/ferry-builds");
  struct stat st {};
  ASSERT_EQ(::stat((cache + "/ferry-builds").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(build_base(), cache + "/ferry-builds");  // made once, then found
  // One that others may write is not taken, nor a file of that name.
  ASSERT_EQ(::chmod((cache + "/ferry-builds").c_str(), 0777), 0);
  EXPECT_EQ(build_base(), temp_base());
  fs::remove(cache + "/ferry-builds");
  std::ofstream(cache + "/ferry-builds") << "x";
  EXPECT_EQ(build_base(), temp_base());
  ::unsetenv("POCL_CACHE_DIR");
  EXPECT_EQ(build_base(), temp_base());
  ::setenv("POCL_CACHE_DIR", "", 1);
  EXPECT_EQ(build_base(), temp_base());
  if (saved) ::setenv("POCL_CACHE_DIR", restore.c_str(), 1);
  else ::unsetenv("POCL_CACHE_DIR");
  fs::remove_all(cache);
}

TEST(temp_base, is_tmpdir_or_tmp) {
  const char* saved = std::getenv("TMPDIR");
  std::string restore = saved ? saved : "";
  ::setenv("TMPDIR", "/some/where", 1);
  EXPECT_EQ(temp_base(), "/some/where");
  ::setenv("TMPDIR", "", 1);
  EXPECT_EQ(temp_base(), "/tmp");
  ::unsetenv("TMPDIR");
  EXPECT_EQ(temp_base(), "/tmp");
  if (saved) ::setenv("TMPDIR", restore.c_str(), 1);
}

}  // namespace
}  // namespace ferry::server
