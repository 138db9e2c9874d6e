#include "profile/folded.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/folded_gen.h"
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

// Returns every node as "id parent frame-name self", so two profiles compare
// equal only if they have the same nodes with the same ids.
std::string DumpNodes(const Profile& p) {
  std::string out;
  for (size_t i = 1; i < p.num_nodes(); ++i) {
    const auto node = static_cast<Profile::NodeId>(i);
    absl::StrAppend(&out, i, " ", p.parent(node), " '", p.frame_name(p.frame(node)), "' ",
                    p.self(node), "\n");
  }
  return out;
}

// Builds the profile for well-formed one-column `text` the plain way: intern
// every non-empty frame and walk Child() from the root.
Profile ReadByChildWalk(const std::string& text, Profile::ChildMatching matching) {
  Profile p(matching);
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty()) continue;
    const size_t space = line.rfind(' ');
    uint64_t count = 0;
    EXPECT_TRUE(absl::SimpleAtoi(line.substr(space + 1), &count)) << line;
    const absl::string_view stack = line.substr(0, space);
    Profile::NodeId node = Profile::kRoot;
    if (!stack.empty()) {
      for (absl::string_view frame : absl::StrSplit(stack, ';', absl::SkipEmpty()))
        node = p.Child(node, p.InternFrame(frame));
    }
    p.AddSelf(node, count);
  }
  return p;
}

// Random folded text (fixed seed): names whose lengths straddle the 8- and
// 16-byte blocks the reader hashes, empty frames, repeated and extended
// prefixes, no final newline.
std::string RandomFolded(uint64_t seed, int lines) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> names;
  for (size_t len : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 32u, 33u, 40u}) {
    for (char c : {'a', 'b', 'c'}) {
      std::string name(len, c);
      if (len > 2) name[len / 2] = 'x';
      names.push_back(name);
    }
  }
  std::vector<std::vector<int>> stacks;
  std::string text;
  for (int i = 0; i < lines; ++i) {
    std::vector<int> stack;
    if (!stacks.empty() && rng() % 4 != 0) {
      stack = stacks[rng() % stacks.size()];
      stack.resize(rng() % (stack.size() + 1));
    }
    for (uint64_t push = rng() % 4; push > 0; --push)
      stack.push_back(static_cast<int>(rng() % names.size()));
    stacks.push_back(stack);
    for (size_t k = 0; k < stack.size(); ++k)
      absl::StrAppend(&text, k == 0 ? "" : ";", names[stack[k]]);
    absl::StrAppend(&text, " ", rng() % 9 + 1, i + 1 < lines ? "\n" : "");
  }
  return text;
}

TEST(FoldedTest, MatchesChildWalkOnRandomStacks) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    const std::string text = RandomFolded(seed, 400);
    for (auto matching : {Profile::ChildMatching::kByName, Profile::ChildMatching::kAdjacent}) {
      const std::string expected = DumpNodes(ReadByChildWalk(text, matching));
      {
        Profile p(matching);
        FoldedReader reader(&p);
        ASSERT_TRUE(reader.ReadString(text).ok());
        EXPECT_EQ(DumpNodes(p), expected) << "seed " << seed;
      }
      for (size_t chunk : {1u, 5u, 17u, 100u}) {
        FoldedReadOptions options;
        options.chunk_size = chunk;
        Profile p(matching);
        FoldedReader reader(&p, nullptr, options);
        std::istringstream in(text);
        ASSERT_TRUE(reader.ReadStream(in, "stream").ok());
        EXPECT_EQ(DumpNodes(p), expected) << "seed " << seed << " chunk " << chunk;
      }
    }
  }
}

TEST(FoldedTest, FlameChartReusesLastChildOnlyWhenAdjacent) {
  Profile p(Profile::ChildMatching::kAdjacent);
  FoldedReader reader(&p);
  ASSERT_TRUE(reader.ReadString("a;b 1\na 2\na;b 4\na;c 8\na;b 16\n").ok());
  // "a;b" after "a" still extends the last child b; after "a;c" it is new.
  EXPECT_EQ(ToFolded(p), "a 2\na;b 5\na;c 8\na;b 16\n");
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
  const Profile p = Read("\r\n a frame;with spaces 10\r\n\n\t\nmain;f  2 \r\n", {}, &stats);
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
    text += "root;mid_" + std::to_string(i % 7) + ";leaf_" + std::to_string(i % 13) + " " +
            std::to_string(i) + (i % 3 == 0 ? "\r\n" : "\n");
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

// Returns every stat as text, so two readers compare equal only if they saw
// the same lines, bytes and errors.
std::string DumpStats(const FoldedReadStats& s) {
  std::string out = absl::StrCat(s.lines, " ", s.malformed_lines, " ", s.two_column_lines, " ",
                                 s.fractional_lines, " ", s.bytes, "\n");
  for (const FoldedReadStats::Error& e : s.errors)
    absl::StrAppend(&out, e.source, ":", e.line, ": ", e.message, "\n");
  return out;
}

// Generated stacks plus the awkward cases: malformed, two-column, decimal and
// CRLF lines, a line longer than the small chunk sizes, no final newline.
std::string AwkwardInput() {
  std::string text = "bad line\n\n";
  bench::FoldedGenOptions gen;
  gen.lines = 2000;
  bench::GenerateFolded(gen,
                        [&](absl::string_view chunk) { text.append(chunk.data(), chunk.size()); });
  text += "a;b 1 2\r\nc;d 1.5\n" + std::string(5000, 'x') + ";y 7\nno count\n";
  text += "a;b 9";
  return text;
}

TEST(FoldedTest, ReadFileMappedOrThreadedMatchesStream) {
  const std::string text = AwkwardInput();
  const std::string path = ::testing::TempDir() + "/folded_test_mapped.folded";
  {
    std::ofstream f(path, std::ios::binary);
    f << text;
  }
  for (const auto matching : {Profile::ChildMatching::kByName, Profile::ChildMatching::kAdjacent}) {
    for (const size_t chunk : {size_t{100}, size_t{4096}, size_t{64} << 10}) {
      FoldedReadOptions options;
      options.chunk_size = chunk;
      Profile want(matching), want_before(matching);
      FoldedReader stream_reader(&want, &want_before, options);
      std::istringstream in(text);
      ASSERT_TRUE(stream_reader.ReadStream(in, path).ok());
      for (const int threads : {0, 1, 2}) {
        options.threads = threads;
        Profile got(matching), got_before(matching);
        FoldedReader reader(&got, &got_before, options);
        ASSERT_TRUE(reader.ReadFile(path).ok());
        const std::string label = absl::StrCat("chunk ", chunk, " threads ", threads);
        EXPECT_EQ(DumpNodes(got), DumpNodes(want)) << label;
        EXPECT_EQ(DumpNodes(got_before), DumpNodes(want_before)) << label;
        EXPECT_EQ(DumpStats(reader.stats()), DumpStats(stream_reader.stats())) << label;
      }
    }
  }
  std::remove(path.c_str());
}

TEST(FoldedTest, ReadFileReadsPipes) {
  const std::string text = AwkwardInput();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::thread writer([&] {
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
  });
  const std::string path = absl::StrCat("/dev/fd/", fds[0]);
  FoldedReadOptions options;
  options.chunk_size = 4096;
  Profile got;
  FoldedReader reader(&got, nullptr, options);
  const absl::Status st = reader.ReadFile(path);
  writer.join();
  close(fds[0]);
  ASSERT_TRUE(st.ok()) << st;
  Profile want;
  FoldedReader stream_reader(&want, nullptr, options);
  std::istringstream in(text);
  ASSERT_TRUE(stream_reader.ReadStream(in, path).ok());
  EXPECT_EQ(DumpNodes(got), DumpNodes(want));
  EXPECT_EQ(DumpStats(reader.stats()), DumpStats(stream_reader.stats()));
}

TEST(FoldedTest, HiddenCyclesAreWrittenAsHiddenFrame) {
  const Profile p = Read("main;big 100\nmain;small 1\n").Pruned(10);
  EXPECT_EQ(ToFolded(p), "main;[hidden] 1\nmain;big 100\n");
}

TEST(FoldedTest, FlameChartPruningWhileReadingKeepsTotals) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "a;b" + std::to_string(i % 2) + ";c 1\n";
  FoldedReadOptions options;
  options.prune_fraction = 0.01;
  Profile p(Profile::ChildMatching::kAdjacent);
  FoldedReader reader(&p, nullptr, options);
  ASSERT_TRUE(reader.ReadString(text).ok());
  EXPECT_EQ(p.total(), 5000u);
}

// Issue #12: `; 5` and `;;;; 5` crashed (an empty first frame name).
TEST(FoldedTest, EmptyFramesAreSkipped) {
  FoldedReadStats stats;
  const Profile p = Read("; 5\n;;;; 3\na;;b 2\n;a; 1\n;;x;;;y;; 4\n", {}, &stats);
  EXPECT_EQ(stats.malformed_lines, 0u);
  EXPECT_EQ(p.total(), 15u);
  EXPECT_EQ(p.self(Profile::kRoot), 8u);
  EXPECT_EQ(ToFolded(p), "[unknown] 8\na 1\na;b 2\nx;y 4\n");
  for (size_t f = 0; f < p.num_frames(); ++f) {
    EXPECT_FALSE(p.frame_name(static_cast<Profile::FrameId>(f)).empty());
  }
  // The same through the other two ways of adding (flame chart, non-empty
  // profile) and the before column of a diff.
  Profile chart(Profile::ChildMatching::kAdjacent);
  Profile before;
  before.AddSelf(before.Child(Profile::kRoot, before.InternFrame("z")), 1);
  Profile after;
  after.AddSelf(after.Child(Profile::kRoot, after.InternFrame("z")), 1);
  FoldedReader chart_reader(&chart);
  ASSERT_TRUE(chart_reader.ReadString("; 5\n;a;;b 2\n").ok());
  EXPECT_EQ(ToFolded(chart), "[unknown] 5\na;b 2\n");
  FoldedReader diff_reader(&after, &before);
  ASSERT_TRUE(diff_reader.ReadString(";; 1 2\n;a;;b 3 4\n").ok());
  EXPECT_EQ(ToFolded(before), "[unknown] 1\na;b 3\nz 1\n");
  EXPECT_EQ(ToFolded(after), "[unknown] 2\na;b 4\nz 1\n");
}

// Issue #12: counts summing past 2^64 wrapped ("all (0 samples)").
TEST(FoldedTest, CountsThatOverflowTheTotalAreAnError) {
  Profile p;
  FoldedReader reader(&p);
  // 2^63 + 2^63 - 1 fits; one more is 2^64.
  const absl::Status status =
      reader.ReadString("a 9223372036854775808\nb 9223372036854775807\nc 1\nd 0\n", "big.folded");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr("big.folded:3:"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("2^64"));
  EXPECT_EQ(p.total(), UINT64_MAX);  // the overflowing line was not added
  // The next read reports only its own problems.
  EXPECT_TRUE(reader.ReadString("c 0\n").ok());

  // Integer counts are exact up to 2^64 - 1, so a written total reads back
  // (found by folded_reader_fuzz: 20-digit counts went through a double).
  Profile exact;
  FoldedReader exact_reader(&exact);
  ASSERT_TRUE(exact_reader
                  .ReadString("a 18446744073709551615\nb 0\n"
                              "c 18446744073709551616\nd 99999999999999999999\n")
                  .ok());
  EXPECT_EQ(exact.total(), UINT64_MAX);
  EXPECT_EQ(exact_reader.stats().malformed_lines, 2u);  // c and d do not fit
  Profile big;
  FoldedReader big_reader(&big);
  ASSERT_TRUE(big_reader.ReadString("x 10145709240402533824\n").ok());
  EXPECT_EQ(big.total(), UINT64_C(10145709240402533824));

  // The same from a file (memory-mapped) and in the before column.
  const std::string path = ::testing::TempDir() + "/folded_test_overflow.folded";
  {
    std::ofstream f(path, std::ios::binary);
    f << "x 9223372036854775808 1\ny 9223372036854775808 1\n";
  }
  Profile after, before;
  FoldedReader file_reader(&after, &before);
  const absl::Status file_status = file_reader.ReadFile(path);
  EXPECT_EQ(file_status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(file_status.message()), HasSubstr(path + ":2:"));
  EXPECT_EQ(after.total(), 2u);
  std::remove(path.c_str());
}

// Builds the two profiles a reader makes of well-formed `text` (one- or two-column lines) the plain
// way, adding to `before` first as the reader does; `before` may be `after`.
void ReadTwoColumnByChildWalk(const std::string& text, Profile* after, Profile* before) {
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::EndsWith(line, "\r")) line.remove_suffix(1);
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ');
    ASSERT_GE(fields.size(), 2u) << line;
    std::vector<uint64_t> counts;
    for (size_t i = 1; i < fields.size(); ++i) {
      uint64_t c = 0;
      ASSERT_TRUE(absl::SimpleAtoi(fields[i], &c)) << line;
      counts.push_back(c);
    }
    auto add = [&](Profile* p, uint64_t count) {
      Profile::NodeId node = Profile::kRoot;
      for (absl::string_view frame : absl::StrSplit(fields[0], ';', absl::SkipEmpty()))
        node = p->Child(node, p->InternFrame(frame));
      p->AddSelf(node, count);
    };
    if (counts.size() == 2) add(before, counts[0]);
    add(after, counts.back());
  }
}

// The fast path for empty kByName profiles finds each line's deepest existing prefix while parsing
// and numbers the nodes still to come; the node ids must be those of a plain walk for unsorted
// lines, lines that are prefixes or extensions of earlier ones, CRLF, two-column lines (two
// targets, each numbered on its own) and every way of reading (chunks splitting lines, mapped,
// parsed on a second thread).
TEST(FoldedTest, FastPathNumbersNodesAsChildWalk) {
  std::string text =
      "a;b;c 1\na;b 2\r\nx;b;c 3 4\na;b;c;d 5\na 6 7\r\nx;b 8\na;b;c 9\n;;a;;b;e 10 11\n";
  size_t i = 0;
  for (absl::string_view line : absl::StrSplit(RandomFolded(7, 300), '\n')) {
    // Every third line two-column, every fifth CRLF.
    ++i;
    const size_t space = line.rfind(' ');
    absl::StrAppend(&text, line.substr(0, space), i % 3 == 0 ? " 3" : "", line.substr(space),
                    i % 5 == 0 ? "\r\n" : "\n");
  }
  Profile want_after, want_before;
  ReadTwoColumnByChildWalk(text, &want_after, &want_before);
  const std::string path = ::testing::TempDir() + "/folded_test_fast_path.folded";
  {
    std::ofstream f(path, std::ios::binary);
    f << text;
  }
  for (const size_t chunk : {size_t{1}, size_t{7}, size_t{64}, size_t{4} << 20}) {
    for (const int how : {0, 1, 2, 3}) {  // string, stream, file on one thread, on two
      FoldedReadOptions options;
      options.chunk_size = chunk;
      options.threads = how == 3 ? 2 : 1;
      Profile after, before;
      FoldedReader reader(&after, &before, options);
      std::istringstream in(text);
      const absl::Status status = how == 0   ? reader.ReadString(text)
                                  : how == 1 ? reader.ReadStream(in, "stream")
                                             : reader.ReadFile(path);
      ASSERT_TRUE(status.ok()) << status;
      const std::string label = absl::StrCat("chunk ", chunk, " how ", how);
      EXPECT_EQ(DumpNodes(after), DumpNodes(want_after)) << label;
      EXPECT_EQ(DumpNodes(before), DumpNodes(want_before)) << label;
      EXPECT_EQ(reader.stats().malformed_lines, 0u) << label;
    }
  }
  std::remove(path.c_str());
}

// One profile given as both targets gets both counts of a two-column line (the fast path, which
// numbers each target's nodes on its own, is not taken).
TEST(FoldedTest, OneProfileAsBothTargetsGetsBothCounts) {
  const std::string text = "a;b 1 2\na;c 4\nd 8 16\na;b;e 32 64\n";
  Profile want;
  ReadTwoColumnByChildWalk(text, &want, &want);
  Profile p;
  FoldedReader reader(&p, &p);
  ASSERT_TRUE(reader.ReadString(text).ok());
  EXPECT_EQ(DumpNodes(p), DumpNodes(want));
  EXPECT_EQ(p.total(), 127u);
}

// A profile that already has frames (but no nodes) keeps their ids, and a name it has is not added
// twice.
TEST(FoldedTest, ProfileWithFramesKeepsTheirIds) {
  Profile p;
  const Profile::FrameId b = p.InternFrame("b");
  FoldedReader reader(&p);
  ASSERT_TRUE(reader.ReadString("a;b 1\nb;c 2\n").ok());
  EXPECT_EQ(p.num_frames(), 3u);
  EXPECT_EQ(p.InternFrame("b"), b);
  EXPECT_EQ(p.frame_name(p.InternFrame("a")), "a");
  EXPECT_EQ(p.num_frames(), 3u);
  EXPECT_EQ(ToFolded(p), "a;b 1\nb;c 2\n");
}

// Issue #12: names of a deep stack were found again by rescanning the line
// from its start for every new frame (quadratic: 100k distinct frames took
// 25 s). Timed by BM_ReadDeepDistinctStack in bench/render_benchmark.cc.
TEST(FoldedTest, DeepStackOfDistinctNamesReadsEveryName) {
  constexpr int kDepth = 100000;
  std::string line;
  line.reserve(kDepth * 8);
  for (int i = 0; i < kDepth; ++i) {
    if (i > 0) line += (i % 1000 == 0) ? ";;" : ";";  // some empty frames
    absl::StrAppend(&line, "f", i);
  }
  const std::string text = line + " 7\n" + line + ";leaf 1\n";
  Profile by_name;
  Profile chart(Profile::ChildMatching::kAdjacent);
  Profile non_empty;
  non_empty.InternFrame("other");  // not empty: the plain Child() path
  non_empty.AddSelf(non_empty.Child(Profile::kRoot, 0), 1);
  for (Profile* p : {&by_name, &chart, &non_empty}) {
    FoldedReader reader(p);
    ASSERT_TRUE(reader.ReadString(text).ok());
    EXPECT_EQ(reader.stats().malformed_lines, 0u);
    const size_t extra = p == &non_empty ? 1 : 0;
    ASSERT_EQ(p->num_nodes(), kDepth + 2 + extra);
    ASSERT_EQ(p->num_frames(), kDepth + 1 + extra);
    // Walk the chain: node i+1 is frame "f<i>" at depth i + 1.
    Profile::NodeId node = Profile::kRoot;
    for (int i = 0; i < kDepth; ++i) {
      Profile::NodeId child = Profile::kNoNode;
      for (Profile::NodeId n = node + 1; n < p->num_nodes(); ++n) {
        if (p->parent(n) == node && p->frame_name(p->frame(n)) != "other") {
          child = n;
          break;
        }
      }
      ASSERT_NE(child, Profile::kNoNode) << i;
      ASSERT_EQ(p->frame_name(p->frame(child)), absl::StrCat("f", i)) << i;
      node = child;
    }
    EXPECT_EQ(p->self(node), 7u);
    EXPECT_EQ(p->total(), 8u + extra);
  }
}

}  // namespace
}  // namespace flamefleet::profile
