#include "coordinator/profile_merger.h"

#include <string>

#include "gtest/gtest.h"
#include "profile/profile_proto.h"
#include "tests/testing/profile_helpers.h"

namespace flamefleet::coordinator {
namespace {

using testutil::FromFolded;
using testutil::ToFolded;

TEST(ProfileMergerTest, SumsProfilesExactly) {
  ProfileMerger merger;
  EXPECT_TRUE(*merger.Add("1/0", FromFolded("main;a 10\nmain;b 5\n")));
  EXPECT_TRUE(*merger.Add("1/1", FromFolded("main;a 7\nmain;c;d 18446744073709551\n")));
  EXPECT_EQ(merger.count(), 2u);
  EXPECT_EQ(ToFolded(merger.aggregate()), "main;a 17\nmain;b 5\nmain;c;d 18446744073709551\n");
  EXPECT_EQ(merger.aggregate().total(), 17u + 5u + 18446744073709551u);
}

TEST(ProfileMergerTest, CountsEachTaskOnce) {
  ProfileMerger merger;
  profile::Profile p = FromFolded("main;a 10\n");
  EXPECT_TRUE(*merger.Add("1/0", p));
  EXPECT_FALSE(*merger.Add("1/0", p));
  EXPECT_TRUE(merger.AddSerialized("1/0", profile::SerializeProfile(p)).ok());
  EXPECT_EQ(merger.aggregate().total(), 10u);
  EXPECT_EQ(merger.count(), 1u);
}

TEST(ProfileMergerTest, ByJobPutsEachJobUnderItsNameAndCountsItOnce) {
  ProfileMerger merger;
  merger.KeepByJob({{"1/0", "a.masm"}, {"1/1", "suite/b.masm"}});
  profile::Profile a = FromFolded("main;f;f 6\nmain 1\n");
  EXPECT_TRUE(*merger.Add("1/0", a));
  EXPECT_FALSE(*merger.Add("1/0", a));  // a retry's second delivery
  EXPECT_TRUE(merger.AddSerialized("1/0", profile::SerializeProfile(a)).ok());
  EXPECT_TRUE(*merger.Add("1/1", FromFolded("main;f 4\n")));
  EXPECT_TRUE(*merger.Add("1/2", FromFolded("main 2\n")));  // no name: its key
  EXPECT_EQ(ToFolded(merger.by_job()),
            "1/2;main 2\na.masm;main 1\na.masm;main;f;f 6\nsuite/b.masm;main;f 4\n");
  EXPECT_EQ(merger.by_job().total(), merger.aggregate().total());
  EXPECT_EQ(ToFolded(merger.aggregate()), "main 3\nmain;f 4\nmain;f;f 6\n");
}

TEST(ProfileMergerTest, ByJobStaysEmptyUnlessAsked) {
  ProfileMerger merger;
  EXPECT_TRUE(*merger.Add("1/0", FromFolded("main 2\n")));
  EXPECT_EQ(merger.by_job().total(), 0u);
}

TEST(ProfileMergerTest, AddsSerializedProfiles) {
  ProfileMerger merger;
  ASSERT_TRUE(merger.AddSerialized("1/0", profile::SerializeProfile(FromFolded("x;y 3\n"))).ok());
  ASSERT_TRUE(
      merger.AddSerialized("1/1", profile::SerializeProfile(FromFolded("x;y 4\nx 1\n"))).ok());
  EXPECT_EQ(ToFolded(std::move(merger).TakeAggregate()), "x 1\nx;y 7\n");
}

// Issue #12: totals past 2^64 wrapped in the aggregate.
TEST(ProfileMergerTest, RefusesASumPastTwoToTheSixtyFourAndNamesTheTask) {
  ProfileMerger merger;
  ASSERT_TRUE(merger.Add("1/0", FromFolded("main 9223372036854775808\n")).ok());
  const absl::StatusOr<bool> added = merger.Add("1/1", FromFolded("main;a 9223372036854775808\n"));
  EXPECT_EQ(added.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(added.status().message().find("1/1: "), absl::string_view::npos) << added.status();
  EXPECT_EQ(merger.count(), 1u);  // not counted, so a retry may still add it
  EXPECT_EQ(merger.aggregate().total(), 9223372036854775808u);
  const absl::Status serialized =
      merger.AddSerialized("1/2", profile::SerializeProfile(FromFolded("b 9223372036854775808\n")));
  EXPECT_EQ(serialized.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(merger.count(), 1u);
}

TEST(ProfileMergerTest, RejectsCorruptProfileAndNamesTheTask) {
  ProfileMerger merger;
  absl::Status status = merger.AddSerialized("1/3", "\xff\xff not a profile");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_NE(status.message().find("1/3"), absl::string_view::npos);
  EXPECT_EQ(merger.count(), 0u);
}

}  // namespace
}  // namespace flamefleet::coordinator
