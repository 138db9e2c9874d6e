// renderer::WriteProfileFile: one output name, one format, for every extension.
#include "renderer/profile_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pprof/profile.pb.h"
#include "profile/export.h"
#include "profile/folded.h"
#include "tests/testing/test_files.h"

namespace flamefleet::renderer {
namespace {

namespace fs = std::filesystem;
using profile::Profile;
using profile::ProfileFormat;
using testutil::ReadFile;

bool IsGzip(const std::string& bytes) {
  return bytes.size() > 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

class ProfileFileTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::path(testing::TempDir()) /
        absl::StrCat("profile_file_", testing::UnitTest::GetInstance()->current_test_info()->name(),
                     "_", getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    profile::FoldedReader reader(&profile_);
    ASSERT_TRUE(reader.ReadString("$exec::$main;std::sys::truncate 40\n$exec::$main 2\n").ok());
    std::ostringstream folded;
    ASSERT_TRUE(profile::WriteFolded(profile_, folded).ok());
    folded_ = folded.str();
    options_.title = "Test Title";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, ProfileFormat fallback = ProfileFormat::kFolded) {
    const fs::path path = dir_ / name;
    absl::Status st = WriteProfileFile(profile_, path.string(), options_, fallback);
    EXPECT_TRUE(st.ok()) << name << ": " << st;
    return ReadFile(path);
  }

  fs::path dir_;
  Profile profile_;
  std::string folded_;
  RenderOptions options_;
};

TEST_F(ProfileFileTest, SvgAndSvgzAreFlameGraphs) {
  const std::string svg = Write("a.svg");
  EXPECT_TRUE(absl::StrContains(svg, "<svg")) << svg.substr(0, 200);
  EXPECT_TRUE(absl::StrContains(svg, "Test Title"));
  for (const char* name : {"a.svgz", "a.svg.gz"}) {
    const std::string gz = Write(name);
    ASSERT_TRUE(IsGzip(gz)) << name;
    EXPECT_EQ(*profile::GzipDecompress(gz), svg) << name;
  }
}

TEST_F(ProfileFileTest, FoldedForFoldedNamesAndByDefault) {
  EXPECT_EQ(Write("a.folded"), folded_);
  EXPECT_EQ(Write("a.txt"), folded_);
  EXPECT_EQ(Write("a.out"), folded_);
  EXPECT_EQ(*profile::GzipDecompress(Write("a.folded.gz")), folded_);
}

TEST_F(ProfileFileTest, FallbackDecidesUnclaimedNamesOnly) {
  EXPECT_TRUE(absl::StrContains(Write("graph", ProfileFormat::kSvg), "<svg"));
  EXPECT_EQ(Write("b.folded", ProfileFormat::kSvg), folded_);
}

TEST_F(ProfileFileTest, PprofIsGzippedProtobufWithTheTotal) {
  const std::string gz = Write("a.pb.gz");
  ASSERT_TRUE(IsGzip(gz));
  perftools::profiles::Profile pb;
  ASSERT_TRUE(pb.ParseFromString(*profile::GzipDecompress(gz)));
  int64_t sum = 0;
  for (const auto& s : pb.sample()) sum += s.value(0);
  EXPECT_EQ(sum, 42);
  EXPECT_EQ(pb.string_table(pb.comment(0)), "Test Title");
}

TEST_F(ProfileFileTest, SpeedscopeIsJson) {
  const nlohmann::json j = nlohmann::json::parse(Write("a.speedscope.json"));
  EXPECT_EQ(j["profiles"][0]["endValue"], 42);
  EXPECT_EQ(j["name"], "Test Title");
}

TEST_F(ProfileFileTest, EmptyProfileSvgIsWrittenAndReported) {
  const fs::path path = dir_ / "empty.svg";
  absl::Status st = WriteProfileFile(Profile(), path.string(), options_);
  EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;
  EXPECT_TRUE(absl::StrContains(ReadFile(path), "No valid input"));
  EXPECT_TRUE(WriteProfileFile(Profile(), (dir_ / "empty.pb.gz").string(), options_).ok());
}

TEST_F(ProfileFileTest, MissingDirectoryIsNotFoundAndLeavesNoTempFile) {
  absl::Status st =
      WriteProfileFile(profile_, (dir_ / "no" / "such" / "a.pb.gz").string(), options_);
  EXPECT_TRUE(absl::IsNotFound(st)) << st;
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(ProfileFileTest, SpecialFilesAreWrittenInPlace) {
  // A FIFO (like /dev/stdout) must stay what it is: no temporary file renamed over it.
  const fs::path fifo = dir_ / "pipe.folded";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(WriteProfileFile(profile_, fifo.string(), options_).ok());
  struct stat st;
  ASSERT_EQ(stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  std::string got(4096, '\0');
  const ssize_t n = read(reader, got.data(), got.size());
  close(reader);
  ASSERT_GT(n, 0);
  got.resize(static_cast<size_t>(n));
  EXPECT_EQ(got, folded_);
}

TEST_F(ProfileFileTest, WriteProfileToStreamMatchesTheFile) {
  std::ostringstream out;
  ASSERT_TRUE(WriteProfile(profile_, {ProfileFormat::kSpeedscope, false}, options_, out).ok());
  EXPECT_EQ(out.str(), Write("b.speedscope.json"));
}

}  // namespace
}  // namespace flamefleet::renderer
