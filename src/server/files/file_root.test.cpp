#include "server/files/file_root.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "protocol/limits.hpp"

namespace ferry::server {
namespace {

// A root with a file, a directory, a FIFO and symbolic links in and out, beside a
// file outside it.
class file_root_test : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/ferry-file-root-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    top_ = pattern;
    root_ = top_ + "/root";
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((root_ + "/sub").c_str(), 0755), 0);
    std::ofstream(root_ + "/sub/data.bin") << "inside";
    std::ofstream(top_ + "/secret") << "outside";
    ASSERT_EQ(::mkfifo((root_ + "/fifo").c_str(), 0644), 0);
    ASSERT_EQ(::symlink("sub/data.bin", (root_ + "/link-in").c_str()), 0);
    ASSERT_EQ(::symlink("../secret", (root_ + "/link-out").c_str()), 0);
    ASSERT_EQ(::symlink((top_ + "/secret").c_str(), (root_ + "/link-absolute").c_str()), 0);
  }
  void TearDown() override {
    std::error_code ignored;
    if (!top_.empty()) std::filesystem::remove_all(top_, ignored);
  }

  std::string top_, root_;
};

TEST_F(file_root_test, opens_files_below_the_root_and_links_that_stay_there) {
  file_root files(root_);
  for (const char* path : {"sub/data.bin", "link-in", "./sub/../sub/data.bin"}) {
    SCOPED_TRACE(path);
    file_root::opened f = files.open(path, file_root::access::read);
    ASSERT_EQ(f.status, CL_SUCCESS) << f.cause;
    char text[16] = {};
    EXPECT_EQ(::read(f.fd.get(), text, sizeof text), 6);
    EXPECT_STREQ(text, "inside");
  }
}

TEST_F(file_root_test, nothing_leads_outside_the_root) {
  file_root files(root_);
  for (const char* path : {"../secret", "link-out", "link-absolute", "sub/../../secret", "/etc/passwd"}) {
    for (auto how : {file_root::access::read, file_root::access::write}) {
      SCOPED_TRACE(std::string(path) + (how == file_root::access::read ? " (read)" : " (write)"));
      file_root::opened f = files.open(path, how);
      EXPECT_EQ(f.status, CL_INVALID_VALUE);
      EXPECT_FALSE(f.fd.valid());
      EXPECT_NE(f.cause.find("outside the file root"), std::string::npos) << f.cause;
    }
  }
  std::ifstream secret(top_ + "/secret");
  std::string text;
  secret >> text;
  EXPECT_EQ(text, "outside");
}

TEST_F(file_root_test, missing_files_directories_and_fifos_are_refused_without_blocking) {
  file_root files(root_);
  struct refusal {
    const char* path;
    file_root::access how;
    const char* cause;
  };
  for (const refusal& r : {refusal{"nothing-here", file_root::access::read, "does not exist"},
                           refusal{"no-dir/new.bin", file_root::access::write, "does not exist"},
                           refusal{"sub", file_root::access::read, "no regular file"},
                           refusal{"sub", file_root::access::write, "no regular file"},
                           refusal{"fifo", file_root::access::read, "no regular file"},
                           refusal{"fifo", file_root::access::write, "no regular file"}}) {
    SCOPED_TRACE(r.path);
    file_root::opened f = files.open(r.path, r.how);
    EXPECT_EQ(f.status, CL_INVALID_VALUE);
    EXPECT_FALSE(f.fd.valid());
    EXPECT_NE(f.cause.find(r.cause), std::string::npos) << f.cause;
  }
}

TEST_F(file_root_test, writing_creates_a_missing_file_and_never_truncates) {
  file_root files(root_);
  {
    file_root::opened f = files.open("new.bin", file_root::access::write);
    ASSERT_EQ(f.status, CL_SUCCESS) << f.cause;
    EXPECT_EQ(::pwrite(f.fd.get(), "abc", 3, 0), 3);
  }
  {
    file_root::opened f = files.open("new.bin", file_root::access::write);
    ASSERT_EQ(f.status, CL_SUCCESS) << f.cause;
    EXPECT_EQ(::pwrite(f.fd.get(), "X", 1, 1), 1);
  }
  std::ifstream in(root_ + "/new.bin");
  std::string text;
  in >> text;
  EXPECT_EQ(text, "aXc");
  struct stat info {};
  ASSERT_EQ(::stat((root_ + "/new.bin").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0022, 0u) << "a new file is writable by its owner alone";
}

TEST_F(file_root_test, no_root_and_a_root_that_is_gone_are_refused) {
  EXPECT_FALSE(file_root("").configured());
  file_root::opened none = file_root("").open("sub/data.bin", file_root::access::read);
  EXPECT_EQ(none.status, CL_INVALID_OPERATION);
  file_root::opened gone = file_root(top_ + "/no-such-root").open("sub/data.bin", file_root::access::read);
  EXPECT_EQ(gone.status, CL_OUT_OF_RESOURCES);
  EXPECT_NE(gone.cause.find("no-such-root"), std::string::npos) << gone.cause;
}

TEST(file_root_paths, only_paths_a_root_could_hold_are_acceptable) {
  std::string why;
  EXPECT_TRUE(file_root::acceptable("a/b.bin", why));
  EXPECT_FALSE(file_root::acceptable("", why));
  EXPECT_FALSE(file_root::acceptable(std::string("a\0b", 3), why));
  EXPECT_NE(why.find("NUL"), std::string::npos);
  EXPECT_TRUE(file_root::acceptable(std::string(protocol::max_file_path, 'a'), why));
  EXPECT_FALSE(file_root::acceptable(std::string(protocol::max_file_path + 1, 'a'), why));
}

}  // namespace
}  // namespace ferry::server
