// Test helpers for profiles, shared by the test suites: build a profile from folded text
// (profile/folded.h) and write one back as folded text. Each check failure fails the calling
// test with the reader's or writer's status, instead of returning an error.
//
//   profile::Profile p = testutil::FromFolded("main;a 10\nmain;b 5\n");
//   EXPECT_EQ(p.total(), 15u);
//   EXPECT_EQ(testutil::ToFolded(p), "main;a 10\nmain;b 5\n");
//   profile::Profile chart = testutil::FromFolded("z 1\na 1\n", Profile::ChildMatching::kAdjacent);
#ifndef FLAMEFLEET_TESTS_TESTING_PROFILE_HELPERS_H_
#define FLAMEFLEET_TESTS_TESTING_PROFILE_HELPERS_H_

#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "profile/folded.h"
#include "profile/profile.h"

namespace flamefleet::testutil {

// Returns the profile read from folded `text` (profile::FoldedReader::ReadString) into a fresh
// profile with child matching `matching`. Fails the current test (non-fatally) if reading
// returns an error or any line of `text` is malformed.
inline profile::Profile FromFolded(
    absl::string_view text,
    profile::Profile::ChildMatching matching = profile::Profile::ChildMatching::kByName) {
  profile::Profile profile(matching);
  profile::FoldedReader reader(&profile);
  const absl::Status status = reader.ReadString(text);
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(reader.stats().malformed_lines, 0u) << reader.stats().Summary();
  return profile;
}

// Returns `profile` as folded text (profile::WriteFolded). Fails the current test
// (non-fatally) if writing returns an error.
inline std::string ToFolded(const profile::Profile& profile) {
  std::ostringstream out;
  const absl::Status status = profile::WriteFolded(profile, out);
  EXPECT_TRUE(status.ok()) << status;
  return out.str();
}

}  // namespace flamefleet::testutil

#endif  // FLAMEFLEET_TESTS_TESTING_PROFILE_HELPERS_H_
