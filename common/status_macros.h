// Status propagation macros with the shape of abseil's later ABSL_RETURN_IF_ERROR /
// ABSL_ASSIGN_OR_RETURN (absl/status/status_macros.h, LTS 20260526), which the Debian 12 abseil
// lacks. Moving to abseil's versions later is a rename.
//
//   absl::StatusOr<Program> Build(absl::string_view path) {
//     FLAMEFLEET_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
//     FLAMEFLEET_RETURN_IF_ERROR(Validate(text));
//     return Compile(text);
//   }
#ifndef FLAMEFLEET_COMMON_STATUS_MACROS_H_
#define FLAMEFLEET_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr` (an absl::Status) and returns it from the enclosing function if not OK.
#define FLAMEFLEET_RETURN_IF_ERROR(expr)                     \
  do {                                                       \
    ::absl::Status flamefleet_status_ = (expr);              \
    if (!flamefleet_status_.ok()) return flamefleet_status_; \
  } while (false)

#define FLAMEFLEET_STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define FLAMEFLEET_STATUS_MACROS_CONCAT_(x, y) FLAMEFLEET_STATUS_MACROS_CONCAT_INNER_(x, y)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status, otherwise moves the
// value into `lhs`, which may be a declaration (`auto x`, `std::string s`) or an lvalue.
#define FLAMEFLEET_ASSIGN_OR_RETURN(lhs, rexpr) \
  FLAMEFLEET_ASSIGN_OR_RETURN_IMPL_(            \
      FLAMEFLEET_STATUS_MACROS_CONCAT_(flamefleet_statusor_, __LINE__), lhs, rexpr)

#define FLAMEFLEET_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                      \
  if (!statusor.ok()) return std::move(statusor).status();      \
  lhs = std::move(statusor).value()

#endif  // FLAMEFLEET_COMMON_STATUS_MACROS_H_
