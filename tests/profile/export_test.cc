// Exports (profile/export.h): pprof decoded back with our own profile.proto, speedscope JSON parsed
// back, format-by-name dispatch, gzip, and the two-column folded diff.
#include "profile/export.h"

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/folded_gen.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pprof/profile.pb.h"
#include "profile/diff.h"
#include "profile/folded.h"
#include "profile/profile.h"
#include "tests/testing/profile_helpers.h"
#include "tests/testing/test_files.h"

namespace flamefleet::profile {
namespace {

using ::testing::ElementsAre;

using Stacks = testutil::FoldedCounts;
using testutil::FromFolded;
using testutil::ParseFoldedCounts;

// Folded text -> stack -> count (summing duplicate lines).
Stacks FoldedStacks(const Profile& p) {
  std::ostringstream out;
  EXPECT_TRUE(WriteFolded(p, out).ok());
  return ParseFoldedCounts(out.str());
}

// A profile with everything an export must handle: shared prefixes, a frame name used at several
// depths, cycles on the root, hidden (pruned) cycles and a name with a `;`.
Profile MixedProfile() {
  Profile p = FromFolded(
      "$exec::$main;std::math::u64::wrapping_add 12\n"
      "$exec::$main;lib::util::helper;std::math::u64::wrapping_add 30\n"
      "$exec::$main;lib::util::helper 5\n"
      "$exec::$main 7\n"
      "$exec::other;lib::util::helper 2\n");
  p.AddSelf(Profile::kRoot, 3);  // "[unknown]"
  const Profile::NodeId main = p.Child(Profile::kRoot, p.InternFrame("$exec::$main"));
  p.AddHidden(main, {4, 11});  // "$exec::$main;[hidden] 11"
  const Profile::NodeId odd = p.Child(main, p.InternFrame("odd;name"));
  p.AddSelf(odd, 1);
  return p;
}

struct DecodedPprof {
  perftools::profiles::Profile pb;
  Stacks stacks;  // samples rebuilt as folded stacks (root first, names sanitised)
  int64_t sum = 0;
};

DecodedPprof DecodePprof(const std::string& gz) {
  DecodedPprof d;
  absl::StatusOr<std::string> raw = GzipDecompress(gz);
  EXPECT_TRUE(raw.ok()) << raw.status();
  if (!raw.ok()) return d;
  EXPECT_TRUE(d.pb.ParseFromString(*raw));
  const auto& strings = d.pb.string_table();
  std::map<uint64_t, uint64_t> function_of_location;
  for (const auto& loc : d.pb.location()) {
    EXPECT_EQ(loc.line_size(), 1);
    function_of_location[loc.id()] = loc.line(0).function_id();
  }
  std::map<uint64_t, std::string> name_of_function;
  for (const auto& fn : d.pb.function()) name_of_function[fn.id()] = strings[fn.name()];
  for (const auto& sample : d.pb.sample()) {
    EXPECT_EQ(sample.value_size(), 1);
    std::vector<std::string> frames;
    for (auto it = sample.location_id().rbegin(); it != sample.location_id().rend(); ++it) {
      frames.push_back(SanitizeFrameName(name_of_function[function_of_location[*it]]));
    }
    const std::string stack = absl::StrJoin(frames, ";");
    EXPECT_FALSE(d.stacks.contains(stack)) << "two samples with stack " << stack;
    d.stacks[stack] += static_cast<uint64_t>(sample.value(0));
    d.sum += sample.value(0);
  }
  return d;
}

TEST(PprofExportTest, HasGzipHeaderAndDecodesWithOurProto) {
  const Profile p = MixedProfile();
  absl::StatusOr<std::string> gz = EncodePprof(p, {.name = "mixed"});
  ASSERT_TRUE(gz.ok()) << gz.status();
  ASSERT_GE(gz->size(), 10u);
  EXPECT_EQ(static_cast<unsigned char>((*gz)[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>((*gz)[1]), 0x8b);
  EXPECT_EQ((*gz)[2], 8);  // deflate
  const DecodedPprof d = DecodePprof(*gz);
  const auto& strings = d.pb.string_table();
  ASSERT_GT(strings.size(), 0);
  EXPECT_EQ(strings[0], "");
  ASSERT_EQ(d.pb.sample_type_size(), 1);
  EXPECT_EQ(strings[d.pb.sample_type(0).type()], "cycles");
  EXPECT_EQ(strings[d.pb.sample_type(0).unit()], "count");
  EXPECT_EQ(strings[d.pb.period_type().type()], "cycles");
  EXPECT_EQ(d.pb.period(), 1);
  EXPECT_EQ(strings[d.pb.default_sample_type()], "cycles");
  ASSERT_EQ(d.pb.comment_size(), 1);
  EXPECT_EQ(strings[d.pb.comment(0)], "mixed");
  EXPECT_EQ(d.pb.mapping_size(), 0);
  EXPECT_EQ(static_cast<uint64_t>(d.sum), p.total());
  EXPECT_EQ(d.stacks, FoldedStacks(p));
  EXPECT_TRUE(d.stacks.contains("[unknown]"));
  EXPECT_TRUE(d.stacks.contains("$exec::$main;[hidden]"));
}

TEST(PprofExportTest, OneFunctionAndLocationPerNameWithModuleAsFilename) {
  const DecodedPprof d = DecodePprof(*EncodePprof(MixedProfile()));
  const auto& strings = d.pb.string_table();
  absl::flat_hash_set<std::string> names;
  absl::flat_hash_set<uint64_t> ids;
  std::map<std::string, std::string> file_of;
  for (const auto& fn : d.pb.function()) {
    EXPECT_NE(fn.id(), 0u);
    EXPECT_TRUE(ids.insert(fn.id()).second);
    EXPECT_TRUE(names.insert(strings[fn.name()]).second) << strings[fn.name()];
    EXPECT_EQ(fn.system_name(), fn.name());
    file_of[strings[fn.name()]] = strings[fn.filename()];
  }
  // Distinct names: $exec::$main, std::math::u64::wrapping_add, lib::util::helper, $exec::other,
  // odd;name, [unknown], [hidden].
  EXPECT_EQ(d.pb.function_size(), 7);
  EXPECT_EQ(d.pb.location_size(), d.pb.function_size());
  EXPECT_EQ(file_of["std::math::u64::wrapping_add"], "std::math::u64");
  EXPECT_EQ(file_of["$exec::$main"], "$exec");
  EXPECT_EQ(file_of["[unknown]"], "");
  // The string table holds each string once.
  absl::flat_hash_set<std::string> unique(strings.begin(), strings.end());
  EXPECT_EQ(unique.size(), static_cast<size_t>(strings.size()));
}

TEST(PprofExportTest, SamplesAreLeafFirst) {
  const DecodedPprof d = DecodePprof(*EncodePprof(FromFolded("a::x;b::y;c::z 9\n")));
  ASSERT_EQ(d.pb.sample_size(), 1);
  const auto& strings = d.pb.string_table();
  std::map<uint64_t, std::string> name;
  for (const auto& fn : d.pb.function()) name[fn.id()] = strings[fn.name()];
  std::vector<std::string> frames;
  for (uint64_t loc : d.pb.sample(0).location_id()) frames.push_back(name[loc]);
  EXPECT_THAT(frames, ElementsAre("c::z", "b::y", "a::x"));
  EXPECT_EQ(d.pb.sample(0).value(0), 9);
}

TEST(PprofExportTest, GeneratedProfileRoundTripsExactly) {
  bench::FoldedGenOptions options;
  options.lines = 5000;
  options.names = 800;
  std::string text;
  bench::GenerateFolded(options,
                        [&](absl::string_view chunk) { text.append(chunk.data(), chunk.size()); });
  const Profile p = FromFolded(text);
  const DecodedPprof d = DecodePprof(*EncodePprof(p));
  EXPECT_EQ(static_cast<uint64_t>(d.sum), p.total());
  EXPECT_EQ(d.stacks, FoldedStacks(p));
  EXPECT_EQ(d.stacks, ParseFoldedCounts(text));
}

TEST(PprofExportTest, FlameChartStacksAreMergedIntoDistinctSamples) {
  const Profile p = FromFolded("a;b 1\na;c 2\na;b 3\n", Profile::ChildMatching::kAdjacent);
  ASSERT_GT(p.num_nodes(), 4u);  // `a;b` exists twice in the flame chart
  const DecodedPprof d = DecodePprof(*EncodePprof(p));
  EXPECT_EQ(d.stacks, (Stacks{{"a;b", 4}, {"a;c", 2}}));
  EXPECT_EQ(d.pb.sample_size(), 2);
}

TEST(PprofExportTest, EmptyProfileIsValid) {
  const DecodedPprof d = DecodePprof(*EncodePprof(Profile()));
  EXPECT_EQ(d.pb.sample_size(), 0);
  EXPECT_EQ(d.pb.string_table(0), "");
  EXPECT_EQ(d.pb.sample_type_size(), 1);
}

// Parses speedscope JSON and rebuilds its stacks (names sanitised, as folded).
Stacks SpeedscopeStacks(const nlohmann::json& j, uint64_t* sum) {
  Stacks out;
  *sum = 0;
  const auto& frames = j["shared"]["frames"];
  const auto& prof = j["profiles"][0];
  EXPECT_EQ(prof["samples"].size(), prof["weights"].size());
  for (size_t i = 0; i < prof["samples"].size(); ++i) {
    std::vector<std::string> names;
    for (const auto& f : prof["samples"][i]) {
      names.push_back(SanitizeFrameName(frames[f.get<size_t>()]["name"].get<std::string>()));
    }
    const uint64_t w = prof["weights"][i].get<uint64_t>();
    out[absl::StrJoin(names, ";")] += w;
    *sum += w;
  }
  return out;
}

TEST(SpeedscopeExportTest, SampledProfileWithCyclesAsWeights) {
  const Profile p = MixedProfile();
  const std::string text = EncodeSpeedscope(p, {.name = "mixed \"run\""});
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["$schema"], "https://www.speedscope.app/file-format-schema.json");
  EXPECT_EQ(j["exporter"], "flamefleet");
  EXPECT_EQ(j["name"], "mixed \"run\"");
  EXPECT_EQ(j["activeProfileIndex"], 0);
  ASSERT_EQ(j["profiles"].size(), 1u);
  const auto& prof = j["profiles"][0];
  EXPECT_EQ(prof["type"], "sampled");
  EXPECT_EQ(prof["unit"], "none");
  EXPECT_EQ(prof["name"], "mixed \"run\"");
  EXPECT_EQ(prof["startValue"], 0);
  EXPECT_EQ(prof["endValue"].get<uint64_t>(), p.total());
  uint64_t sum = 0;
  EXPECT_EQ(SpeedscopeStacks(j, &sum), FoldedStacks(p));
  EXPECT_EQ(sum, p.total());
  // Frames: each name once, `file` = module when there is one.
  std::map<std::string, nlohmann::json> frames;
  for (const auto& f : j["shared"]["frames"]) {
    EXPECT_TRUE(frames.emplace(f["name"].get<std::string>(), f).second) << f;
  }
  EXPECT_EQ(frames["std::math::u64::wrapping_add"]["file"], "std::math::u64");
  EXPECT_FALSE(frames["[unknown]"].contains("file"));
  EXPECT_TRUE(frames.contains("odd;name"));  // verbatim, not sanitised
}

TEST(SpeedscopeExportTest, GeneratedProfileRoundTripsExactly) {
  bench::FoldedGenOptions options;
  options.lines = 3000;
  options.names = 500;
  std::string text;
  bench::GenerateFolded(options,
                        [&](absl::string_view chunk) { text.append(chunk.data(), chunk.size()); });
  const Profile p = FromFolded(text);
  uint64_t sum = 0;
  EXPECT_EQ(SpeedscopeStacks(nlohmann::json::parse(EncodeSpeedscope(p)), &sum),
            ParseFoldedCounts(text));
  EXPECT_EQ(sum, p.total());
}

TEST(SpeedscopeExportTest, FlameChartKeepsInputOrder) {
  const Profile p = FromFolded("a;b 1\na;c 2\na;b 3\n", Profile::ChildMatching::kAdjacent);
  const nlohmann::json j = nlohmann::json::parse(EncodeSpeedscope(p));
  const auto& prof = j["profiles"][0];
  EXPECT_EQ(prof["weights"], nlohmann::json({1, 2, 3}));
}

TEST(SpeedscopeExportTest, InvalidUtf8AndControlCharactersStillGiveValidJson) {
  Profile p;
  const Profile::NodeId n =
      p.Child(Profile::kRoot, p.InternFrame(std::string("bad\xff\x01name\"\\", 11)));
  p.AddSelf(n, 5);
  const nlohmann::json j = nlohmann::json::parse(EncodeSpeedscope(p));  // throws if invalid
  EXPECT_EQ(j["shared"]["frames"].size(), 1u);
  EXPECT_EQ(j["profiles"][0]["weights"][0], 5);
}

TEST(OutputFormatTest, PicksFormatByName) {
  struct Case {
    const char* path;
    ProfileFormat format;
    bool gzip;
  };
  for (const Case& c : std::vector<Case>{
           {"out/a.svg", ProfileFormat::kSvg, false},
           {"A.SVG", ProfileFormat::kSvg, false},
           {"a.svgz", ProfileFormat::kSvg, true},
           {"a.svg.gz", ProfileFormat::kSvg, true},
           {"a.pb.gz", ProfileFormat::kPprof, true},
           {"a.speedscope.json", ProfileFormat::kSpeedscope, false},
           {"a.folded", ProfileFormat::kFolded, false},
           {"a.txt", ProfileFormat::kFolded, false},
           {"a.folded.gz", ProfileFormat::kFolded, true},
           {"a.json", ProfileFormat::kFolded, false},
           {"a", ProfileFormat::kFolded, false},
           {"a.gz", ProfileFormat::kFolded, true},
       }) {
    const OutputFormat f = OutputFormatForPath(c.path);
    EXPECT_EQ(f.format, c.format) << c.path;
    EXPECT_EQ(f.gzip, c.gzip) << c.path;
  }
  // The fallback decides only for names no rule claims.
  EXPECT_EQ(OutputFormatForPath("graph", ProfileFormat::kSvg).format, ProfileFormat::kSvg);
  EXPECT_TRUE(OutputFormatForPath("graph.gz", ProfileFormat::kSvg).gzip);
  EXPECT_EQ(OutputFormatForPath("a.folded", ProfileFormat::kSvg).format, ProfileFormat::kFolded);
  EXPECT_EQ(OutputFormatForPath("a.pb.gz", ProfileFormat::kSvg).format, ProfileFormat::kPprof);
}

TEST(OutputFormatTest, NamesAndSuffixesRoundTrip) {
  for (ProfileFormat f : {ProfileFormat::kFolded, ProfileFormat::kSvg, ProfileFormat::kPprof,
                          ProfileFormat::kSpeedscope}) {
    EXPECT_EQ(*ParseProfileFormat(ProfileFormatName(f)), f);
    EXPECT_EQ(OutputFormatForPath(absl::StrCat("x", ProfileFormatSuffix(f))).format, f);
  }
  EXPECT_TRUE(absl::IsInvalidArgument(ParseProfileFormat("png").status()));
}

TEST(GzipTest, RoundTripsLargeInputAndRejectsTruncated) {
  std::string data;
  for (int i = 0; i < 200000; ++i) absl::StrAppend(&data, i * 7919 % 1000, ";");
  absl::StatusOr<std::string> gz = GzipCompress(data);
  ASSERT_TRUE(gz.ok());
  EXPECT_LT(gz->size(), data.size());
  EXPECT_EQ(*GzipDecompress(*gz), data);
  EXPECT_FALSE(GzipDecompress(gz->substr(0, gz->size() / 2)).ok());
  EXPECT_FALSE(GzipDecompress("plain text").ok());
  EXPECT_EQ(*GzipDecompress(*GzipCompress("")), "");
}

TEST(ModuleOfFrameTest, IsThePathBeforeTheLastSeparator) {
  EXPECT_EQ(ModuleOfFrame("std::math::u64::wrapping_add"), "std::math::u64");
  EXPECT_EQ(ModuleOfFrame("$exec::$main"), "$exec");
  EXPECT_EQ(ModuleOfFrame("main"), "");
  EXPECT_EQ(ModuleOfFrame("[unknown]"), "");
}

TEST(FoldedDiffTest, TwoColumnOutputReadsBackAsBothProfiles) {
  Profile before = FromFolded("a;b 10\na;c 5\nd 1\n");
  Profile after = FromFolded("a;b 14\na;e 2\nd 1\n");
  after.AddSelf(Profile::kRoot, 2);
  const ProfileDiff diff = ProfileDiff::Compute(before, after);
  std::ostringstream out;
  ASSERT_TRUE(WriteFoldedDiff(diff, out).ok());
  EXPECT_EQ(out.str(), "[unknown] 0 2\na;b 10 14\na;c 5 0\na;e 0 2\nd 1 1\n");
  Profile before2, after2;
  FoldedReader reader(&after2, &before2);
  ASSERT_TRUE(reader.ReadString(out.str()).ok());
  EXPECT_EQ(reader.stats().two_column_lines, 5u);
  EXPECT_EQ(FoldedStacks(before2), FoldedStacks(before));
  EXPECT_EQ(before2.total(), before.total());
  EXPECT_EQ(after2.total(), after.total());
}

TEST(FoldedDiffTest, HiddenCyclesKeepTotalsExact) {
  Profile before = FromFolded("a;b 10\n");
  const Profile::NodeId a = before.Child(Profile::kRoot, before.InternFrame("a"));
  before.AddHidden(a, {2, 6});
  const Profile after = FromFolded("a;b 10\n");
  std::ostringstream out;
  ASSERT_TRUE(WriteFoldedDiff(ProfileDiff::Compute(before, after), out).ok());
  EXPECT_EQ(out.str(), "a;[hidden] 6 0\na;b 10 10\n");
}

}  // namespace
}  // namespace flamefleet::profile
