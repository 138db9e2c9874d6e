#include "profile/folded.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profile/profile.h"

namespace flamefleet::profile {
namespace {

using ::testing::HasSubstr;

std::string ToFolded(const Profile& p) {
  std::ostringstream out;
  EXPECT_TRUE(WriteFolded(p, out).ok());
  return out.str();
}

Profile Read(const std::string& text, FoldedReadOptions options = {},
             FoldedReadStats* stats = nullptr) {
  Profile p;
  FoldedReader reader(&p, nullptr, options);
  EXPECT_TRUE(reader.ReadString(text).ok());
  if (stats != nullptr) *stats = reader.stats();
  return p;
}

TEST(FoldedTest, WritesSortedDeterministicLines) {
  Profile p;
  FoldedReader reader(&p);
  ASSERT_TRUE(reader.ReadString("b;c 3\na;b 5\na 2\na;b;c 1\na;bc 4\n").ok());
  EXPECT_EQ(ToFolded(p), "a 2\na;b 5\na;b;c 1\na;bc 4\nb;c 3\n");
}

TEST(FoldedTest, RoundTripsAndSumsDuplicates) {
  const std::string text = "x;y 1\nx;y 2\nx 4\n";
  const Profile p = Read(text);
  EXPECT_EQ(p.total(), 7u);
  const std::string once = ToFolded(p);
  EXPECT_EQ(once, "x 4\nx;y 3\n");
  EXPECT_EQ(ToFolded(Read(once)), once);
}

TEST(FoldedTest, SanitisesNamesOnOutput) {
  Profile p;
  const auto f = p.InternFrame("weird;name\nwith\rbreaks");
  p.AddSelf(p.Child(Profile::kRoot, f), 3);
  p.AddSelf(Profile::kRoot, 2);
  EXPECT_EQ(ToFolded(p), "[unknown] 2\nweird:name with breaks 3\n");
  EXPECT_EQ(SanitizeFrameName("a;b"), "a:b");
}

TEST(FoldedTest, ToleratesBlankLinesCrlfAndSpacesInNames) {
  FoldedReadStats stats;
  const Profile p =
      Read("\r\n a frame;with spaces 10\r\n\n\t\nmain;f  2 \r\n", {}, &stats);
  EXPECT_EQ(stats.lines, 2u);
  EXPECT_EQ(stats.malformed_lines, 0u);
  EXPECT_EQ(ToFolded(p), " a frame;with spaces 10\nmain;f 2\n");
}

TEST(FoldedTest, CountsAndReportsMalformedLines) {
  FoldedReadStats stats;
  const Profile p = Read(
      "good 1\nno count here\nbad 1.2.3\n\nalso;good 2\n123\nx "
      "99999999999999999999999\n",
      {}, &stats);
  EXPECT_EQ(p.total(), 3u);
  EXPECT_EQ(stats.malformed_lines, 4u);
  ASSERT_EQ(stats.errors.size(), 4u);
  EXPECT_EQ(stats.errors[0].line, 2u);
  EXPECT_EQ(stats.errors[1].line, 3u);
  EXPECT_EQ(stats.errors[2].line, 6u);
  EXPECT_EQ(stats.errors[3].line, 7u);
  EXPECT_THAT(stats.Summary(), HasSubstr("<string>:2: no trailing count"));
}

TEST(FoldedTest, ReportsOnlyTheFirstFewErrors) {
  FoldedReadOptions options;
  options.max_reported_errors = 2;
  FoldedReadStats stats;
  Read("a\nb\nc\nd\n", options, &stats);
  EXPECT_EQ(stats.malformed_lines, 4u);
  EXPECT_EQ(stats.errors.size(), 2u);
  EXPECT_THAT(stats.Summary(), HasSubstr("and 2 more"));
}

TEST(FoldedTest, RoundsDecimalCountsHalfAwayFromZero) {
  FoldedReadStats stats;
  const Profile p = Read("a 1.5\nb 0.4\nc 2.\nd 3.0\n", {}, &stats);
  EXPECT_EQ(ToFolded(p), "a 2\nc 2\nd 3\n");  // b rounds to 0: nothing to write
  EXPECT_EQ(stats.fractional_lines, 2u);
}

TEST(FoldedTest, ScaleKeepsDecimalPrecision) {
  FoldedReadOptions options;
  options.scale = 1000;
  const Profile p = Read("a 1.2345\n", options);
  EXPECT_EQ(p.total(), 1235u);
}

TEST(FoldedTest, ReadsTwoColumnDiffInput) {
  Profile before, after;
  FoldedReader reader(&after, &before);
  ASSERT_TRUE(reader.ReadString("main;f 10 15\nmain;g 5 0\nmain;h 7\n").ok());
  EXPECT_EQ(reader.stats().two_column_lines, 2u);
  EXPECT_EQ(before.total(), 15u);
  EXPECT_EQ(after.total(), 22u);
  EXPECT_EQ(ToFolded(before), "main;f 10\nmain;g 5\n");
}

TEST(FoldedTest, AddsSeveralInputsIntoOneProfile) {
  Profile p;
  FoldedReader reader(&p);
  ASSERT_TRUE(reader.ReadString("a;b 1\n", "one").ok());
  ASSERT_TRUE(reader.ReadString("a;b 2\nbad\n", "two").ok());
  EXPECT_EQ(ToFolded(p), "a;b 3\n");
  ASSERT_EQ(reader.stats().errors.size(), 1u);
  EXPECT_EQ(reader.stats().errors[0].source, "two");
  EXPECT_EQ(reader.stats().errors[0].line, 2u);
}

TEST(FoldedTest, StreamsAcrossTinyChunks) {
  std::string text;
  for (int i = 0; i < 300; ++i) {
    text += "root;mid_" + std::to_string(i % 7) + ";leaf_" +
            std::to_string(i % 13) + " " + std::to_string(i) +
            (i % 3 == 0 ? "\r\n" : "\n");
  }
  text += "last;line 5";  // no final newline
  const std::string expected = ToFolded(Read(text));
  for (size_t chunk : {1u, 2u, 3u, 7u, 64u}) {
    FoldedReadOptions options;
    options.chunk_size = chunk;
    Profile p;
    FoldedReader reader(&p, nullptr, options);
    std::istringstream in(text);
    ASSERT_TRUE(reader.ReadStream(in, "stream").ok());
    EXPECT_EQ(ToFolded(p), expected) << "chunk " << chunk;
    EXPECT_EQ(reader.stats().lines, 301u);
    EXPECT_EQ(reader.stats().bytes, text.size());
  }
}

TEST(FoldedTest, ReadFileReportsMissingFile) {
  Profile p;
  FoldedReader reader(&p);
  const absl::Status st = reader.ReadFile("/nonexistent/dir/x.folded");
  EXPECT_TRUE(absl::IsNotFound(st)) << st;
}

TEST(FoldedTest, ReadFileReadsLikeString) {
  const std::string path = ::testing::TempDir() + "/folded_test_input.folded";
  {
    std::ofstream f(path, std::ios::binary);
    f << "a;b 2\r\nc 1\n";
  }
  FoldedReadOptions options;
  options.chunk_size = 3;
  Profile p;
  FoldedReader reader(&p, nullptr, options);
  ASSERT_TRUE(reader.ReadFile(path).ok());
  EXPECT_EQ(ToFolded(p), "a;b 2\nc 1\n");
  std::remove(path.c_str());
}

TEST(FoldedTest, HiddenCyclesAreWrittenAsHiddenFrame) {
  const Profile p = Read("main;big 100\nmain;small 1\n").Pruned(10);
  EXPECT_EQ(ToFolded(p), "main;[hidden] 1\nmain;big 100\n");
}

TEST(FoldedTest, FlameChartPruningWhileReadingKeepsTotals) {
  std::string text;
  for (int i = 0; i < 5000; ++i)
    text += "a;b" + std::to_string(i % 2) + ";c 1\n";
  FoldedReadOptions options;
  options.prune_fraction = 0.01;
  Profile p(Profile::ChildMatching::kAdjacent);
  FoldedReader reader(&p, nullptr, options);
  ASSERT_TRUE(reader.ReadString(text).ok());
  EXPECT_EQ(p.total(), 5000u);
}

}  // namespace
}  // namespace flamefleet::profile
