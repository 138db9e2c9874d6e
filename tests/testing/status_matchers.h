// GoogleTest helpers for absl::Status and absl::StatusOr<T>, with the shape of abseil's later
// absl/status/status_matchers.h (not in the Debian 12 abseil 20220623), so moving over later is a
// rename. On failure each one prints the status (code and message), never a bare "false".
//
//   ASSERT_OK_AND_ASSIGN(Profile p, ReadFoldedString("main;f 3\n"));
//   ASSERT_OK(WriteFolded(p, out));
//   EXPECT_THAT(ReadFoldedString("bad\n"),
//               StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 1")));
#ifndef FLAMEFLEET_TESTS_TESTING_STATUS_MATCHERS_H_
#define FLAMEFLEET_TESTS_TESTING_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace flamefleet::testutil {
namespace internal_status {

// Returns the status of a Status (itself) or of a StatusOr<T>.
inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

// The matcher behind StatusIs, polymorphic over Status and StatusOr<T>.
class StatusIsMatcherImpl {
 public:
  StatusIsMatcherImpl(absl::StatusCode code, ::testing::Matcher<const std::string&> message)
      : code_(code), message_(std::move(message)) {}

  void DescribeTo(std::ostream* os) const {
    *os << "has status code " << absl::StatusCodeToString(code_) << " and a message that ";
    message_.DescribeTo(os);
  }

  void DescribeNegationTo(std::ostream* os) const {
    *os << "has a status code other than " << absl::StatusCodeToString(code_)
        << " or a message that ";
    message_.DescribeNegationTo(os);
  }

  template <typename StatusType>
  bool MatchAndExplain(const StatusType& value, ::testing::MatchResultListener* listener) const {
    const absl::Status& status = GetStatus(value);
    *listener << "whose status is " << status;
    if (status.code() != code_) return false;
    const std::string message(status.message());
    ::testing::StringMatchResultListener inner;
    if (!message_.MatchAndExplain(message, &inner)) {
      if (!inner.str().empty()) *listener << ", and the message " << inner.str();
      return false;
    }
    return true;
  }

 private:
  absl::StatusCode code_;
  ::testing::Matcher<const std::string&> message_;
};

// Formats a status for the failure message of ASSERT_OK / EXPECT_OK / ASSERT_OK_AND_ASSIGN.
inline ::testing::AssertionResult IsOkResult(const char* expr, const absl::Status& status) {
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << expr << " is not OK: " << status;
}
template <typename T>
::testing::AssertionResult IsOkResult(const char* expr, const absl::StatusOr<T>& status_or) {
  return IsOkResult(expr, status_or.status());
}

}  // namespace internal_status

// Returns a matcher that accepts an absl::Status or absl::StatusOr<T> whose code is `code` (any
// message).
inline ::testing::PolymorphicMatcher<internal_status::StatusIsMatcherImpl> StatusIs(
    absl::StatusCode code) {
  return ::testing::MakePolymorphicMatcher(
      internal_status::StatusIsMatcherImpl(code, ::testing::A<const std::string&>()));
}

// Returns a matcher that accepts an absl::Status or absl::StatusOr<T> whose code is `code` and
// whose message matches `message` (a string, or a matcher such as HasSubstr("line 3")).
template <typename MessageMatcher>
::testing::PolymorphicMatcher<internal_status::StatusIsMatcherImpl> StatusIs(
    absl::StatusCode code, MessageMatcher&& message) {
  return ::testing::MakePolymorphicMatcher(internal_status::StatusIsMatcherImpl(
      code, ::testing::SafeMatcherCast<const std::string&>(std::forward<MessageMatcher>(message))));
}

// Returns a matcher that accepts an OK absl::Status or absl::StatusOr<T>.
inline ::testing::PolymorphicMatcher<internal_status::StatusIsMatcherImpl> IsOk() {
  return StatusIs(absl::StatusCode::kOk);
}

}  // namespace flamefleet::testutil

// Fails the test (fatally / non-fatally) unless `expr` (a Status or StatusOr<T>) is OK, printing
// the status.
#define ASSERT_OK(expr) \
  ASSERT_PRED_FORMAT1(::flamefleet::testutil::internal_status::IsOkResult, expr)
#define EXPECT_OK(expr) \
  EXPECT_PRED_FORMAT1(::flamefleet::testutil::internal_status::IsOkResult, expr)

#define FLAMEFLEET_TESTUTIL_CONCAT_INNER_(x, y) x##y
#define FLAMEFLEET_TESTUTIL_CONCAT_(x, y) FLAMEFLEET_TESTUTIL_CONCAT_INNER_(x, y)

// Evaluates `rexpr` (an absl::StatusOr<T>); fails the test fatally if it is not OK (printing the
// status and the expression), otherwise moves the value into `lhs`, which may be a declaration
// (`Profile p`, `auto x`) or an lvalue. Usable only where ASSERT_* is (functions returning void).
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                                                       \
  ASSERT_OK_AND_ASSIGN_IMPL_(FLAMEFLEET_TESTUTIL_CONCAT_(flamefleet_statusor_, __LINE__), lhs, \
                             rexpr)

#define ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, rexpr)                       \
  auto statusor = (rexpr);                                                     \
  ASSERT_TRUE(statusor.ok()) << #rexpr << " is not OK: " << statusor.status(); \
  lhs = std::move(statusor).value()

#endif  // FLAMEFLEET_TESTS_TESTING_STATUS_MATCHERS_H_
