#include "common/file.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_files.h"

namespace flamefleet {
namespace {

namespace fs = std::filesystem;
using ::flamefleet::testutil::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrCat("file_test.", ::getpid(), ".",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The names in dir_ (to check that no temp file is left behind).
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

  fs::path dir_;
};

TEST_F(FileTest, WriteFileAtomicallyCreatesAndReplacesWithoutTempFiles) {
  const std::string path = (dir_ / "state").string();
  ASSERT_OK(WriteFileAtomically(path, "first"));
  EXPECT_EQ(testutil::ReadFile(path), "first");
  ASSERT_OK(WriteFileAtomically(path, std::string("a\0b", 3)));
  EXPECT_EQ(testutil::ReadFile(path), std::string("a\0b", 3));
  ASSERT_OK(WriteFileAtomically(path, ""));
  EXPECT_EQ(testutil::ReadFile(path), "");
  EXPECT_THAT(Names(), ::testing::ElementsAre("state"));
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST_F(FileTest, WriteFileAtomicallyIntoMissingDirectoryNamesTheFile) {
  const std::string path = (dir_ / "no" / "such" / "dir" / "f").string();
  EXPECT_THAT(WriteFileAtomically(path, "x"),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("open " + path + ".tmp.")));
}

TEST_F(FileTest, FailedRenameLeavesTargetAndNoTempFile) {
  // A directory in the way: the rename fails, the directory stays, the temp file is removed.
  const fs::path target = dir_ / "busy";
  fs::create_directories(target / "child");
  EXPECT_THAT(WriteFileAtomically(target.string(), "x"),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("rename ")));
  EXPECT_TRUE(fs::is_directory(target / "child"));
  EXPECT_THAT(Names(), ::testing::ElementsAre("busy"));
}

TEST_F(FileTest, ConcurrentWritersEachLeaveAWholeFile) {
  const std::string path = (dir_ / "shared").string();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&path, t] {
      const std::string bytes(4096, static_cast<char>('a' + t));
      for (int i = 0; i < 20; ++i) EXPECT_OK(WriteFileAtomically(path, bytes));
    });
  }
  for (auto& thread : threads) thread.join();
  const std::string last = testutil::ReadFile(path);
  ASSERT_EQ(last.size(), 4096u);
  EXPECT_EQ(last, std::string(4096, last[0]));
  EXPECT_THAT(Names(), ::testing::ElementsAre("shared"));
}

TEST_F(FileTest, ReadFileReadsWholeFile) {
  const std::string path = (dir_ / "in").string();
  const std::string bytes = std::string(200000, 'z') + std::string("\0end", 4);
  testutil::WriteFile(path, bytes);
  ASSERT_OK_AND_ASSIGN(const std::string read, ReadFile(path, bytes.size()));
  EXPECT_EQ(read, bytes);
  testutil::WriteFile(path, "");
  ASSERT_OK_AND_ASSIGN(const std::string empty, ReadFile(path, 0));
  EXPECT_THAT(empty, IsEmpty());
}

TEST_F(FileTest, ReadFileMissingIsNotFoundNamingThePath) {
  const std::string path = (dir_ / "absent").string();
  EXPECT_THAT(ReadFile(path, 100), StatusIs(absl::StatusCode::kNotFound, path + ": no such file"));
}

TEST_F(FileTest, ReadFileOverTheLimitIsResourceExhaustedNamingPathAndLimit) {
  const std::string path = (dir_ / "big").string();
  testutil::WriteFile(path, std::string(101, 'x'));
  EXPECT_THAT(ReadFile(path, 100),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       path + ": the file is larger than the limit of 100 bytes"));
  EXPECT_OK(ReadFile(path, 101));
}

TEST_F(FileTest, ReadFileLimitHoldsForFilesWithoutASize) {
  // A FIFO has no size up front: the limit is checked while reading. The writer's end sees the
  // reader close early, so it must not die of SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  const std::string path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&path] { testutil::WriteFile(path, std::string(70000, 'y')); });
  EXPECT_THAT(ReadFile(path, 1000),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("limit of 1000 bytes")));
  writer.join();
}

TEST_F(FileTest, ReadFileOfADirectoryIsInvalidArgument) {
  EXPECT_THAT(ReadFile(dir_.string(), 100),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(dir_.string())));
}

TEST(GzipTest, RoundTripsAndIsDeterministic) {
  std::string data;
  for (int i = 0; i < 300000; ++i) absl::StrAppend(&data, i % 977, ";");
  ASSERT_OK_AND_ASSIGN(const std::string gz, Gzip(data));
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_LT(gz.size(), data.size());
  ASSERT_OK_AND_ASSIGN(const std::string again, Gzip(data));
  EXPECT_EQ(gz, again);
  ASSERT_OK_AND_ASSIGN(const std::string plain, Gunzip(gz, data.size()));
  EXPECT_EQ(plain, data);
  ASSERT_OK_AND_ASSIGN(const std::string empty_gz, Gzip(""));
  ASSERT_OK_AND_ASSIGN(const std::string empty, Gunzip(empty_gz, 0));
  EXPECT_THAT(empty, IsEmpty());
}

TEST(GzipTest, GunzipReadsConcatenatedMembers) {
  ASSERT_OK_AND_ASSIGN(const std::string a, Gzip("hello, "));
  ASSERT_OK_AND_ASSIGN(const std::string b, Gzip("world"));
  ASSERT_OK_AND_ASSIGN(const std::string both, Gunzip(a + b, 100));
  EXPECT_EQ(both, "hello, world");
}

TEST(GzipTest, GunzipRejectsTruncatedAndNonGzip) {
  ASSERT_OK_AND_ASSIGN(const std::string gz, Gzip(std::string(100000, 'q') + "tail"));
  EXPECT_THAT(Gunzip(gz.substr(0, gz.size() / 2), 1 << 20),
              StatusIs(absl::StatusCode::kInvalidArgument, "truncated gzip stream"));
  EXPECT_THAT(Gunzip("plain text", 1 << 20),
              StatusIs(absl::StatusCode::kInvalidArgument, "not a gzip stream"));
}

TEST(GzipTest, GunzipStopsAtTheLimit) {
  // 64 MiB of zeros compresses to ~64 KiB; a 1 MiB limit stops it early.
  ASSERT_OK_AND_ASSIGN(const std::string bomb, Gzip(std::string(size_t{64} << 20, '\0')));
  EXPECT_THAT(Gunzip(bomb, 1 << 20), StatusIs(absl::StatusCode::kResourceExhausted,
                                              HasSubstr("larger than the limit of 1048576 bytes")));
  ASSERT_OK_AND_ASSIGN(const std::string small, Gzip("12345"));
  EXPECT_THAT(Gunzip(small, 4), StatusIs(absl::StatusCode::kResourceExhausted));
  EXPECT_OK(Gunzip(small, 5));
}

}  // namespace
}  // namespace flamefleet
