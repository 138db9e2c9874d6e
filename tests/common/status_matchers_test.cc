// Tests for tests/testing/status_matchers.h: each helper accepts what it should, rejects what it
// should, and its failure message names the status.
#include "tests/testing/status_matchers.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

namespace flamefleet::testutil {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<int> Half(int n) {
  if (n % 2 != 0) return absl::InvalidArgumentError("odd number " + std::to_string(n));
  return n / 2;
}

absl::StatusOr<std::unique_ptr<int>> Boxed(int n) { return std::make_unique<int>(n); }

TEST(StatusMatchersTest, StatusIsMatchesCodeOfStatusAndStatusOr) {
  EXPECT_THAT(absl::NotFoundError("job 7"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(Half(3), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Half(4), StatusIs(absl::StatusCode::kOk));
  EXPECT_THAT(Half(3), Not(StatusIs(absl::StatusCode::kNotFound)));
  EXPECT_THAT(absl::OkStatus(), Not(StatusIs(absl::StatusCode::kInternal)));
}

TEST(StatusMatchersTest, StatusIsMatchesMessageWithStringOrMatcher) {
  EXPECT_THAT(Half(3), StatusIs(absl::StatusCode::kInvalidArgument, "odd number 3"));
  EXPECT_THAT(Half(3), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("odd")));
  EXPECT_THAT(Half(3), Not(StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("even"))));
  EXPECT_THAT(absl::InternalError("x"), Not(StatusIs(absl::StatusCode::kNotFound, "x")));
}

TEST(StatusMatchersTest, StatusIsFailureNamesTheActualStatus) {
  EXPECT_NONFATAL_FAILURE(
      EXPECT_THAT(Half(5), StatusIs(absl::StatusCode::kNotFound, HasSubstr("odd"))),
      "odd number 5");
}

TEST(StatusMatchersTest, IsOkAcceptsOnlyOk) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(Half(2), IsOk());
  EXPECT_THAT(Half(1), Not(IsOk()));
}

TEST(StatusMatchersTest, ExpectOkPassesOnOkAndPrintsTheStatusOtherwise) {
  EXPECT_OK(absl::OkStatus());
  EXPECT_OK(Half(2));
  EXPECT_NONFATAL_FAILURE(EXPECT_OK(Half(7)), "odd number 7");
  EXPECT_NONFATAL_FAILURE(EXPECT_OK(absl::UnavailableError("worker down")), "worker down");
}

TEST(StatusMatchersTest, AssertOkFailsFatallyWithTheStatus) {
  ASSERT_OK(Half(8));
  EXPECT_FATAL_FAILURE(ASSERT_OK(absl::DataLossError("torn write")), "torn write");
}

TEST(StatusMatchersTest, AssertOkAndAssignDeclaresOrAssigns) {
  ASSERT_OK_AND_ASSIGN(int half, Half(10));
  EXPECT_EQ(half, 5);
  ASSERT_OK_AND_ASSIGN(half, Half(4));
  EXPECT_EQ(half, 2);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<int> box, Boxed(3));  // move-only values work
  ASSERT_NE(box, nullptr);
  EXPECT_EQ(*box, 3);
}

// A helper for the fatal-failure check below: EXPECT_FATAL_FAILURE needs a statement without
// local variables of the enclosing test.
void AssignHalfOf9() {
  ASSERT_OK_AND_ASSIGN(int half, Half(9));
  (void)half;
  ADD_FAILURE() << "not reached";
}

TEST(StatusMatchersTest, AssertOkAndAssignFailsFatallyNamingExpressionAndStatus) {
  EXPECT_FATAL_FAILURE(AssignHalfOf9(), "Half(9) is not OK: INVALID_ARGUMENT: odd number 9");
}

}  // namespace
}  // namespace flamefleet::testutil
