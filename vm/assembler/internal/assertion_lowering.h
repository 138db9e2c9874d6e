// Internal to vm/: the lowering of the assertions (assert, assertz, assert_eq, assert_eqw,
// u32assert, u32assert2, u32assertw), which every dialect so far lowers alike (v0.16.4 and
// v0.25.7 emit the same native operations, each ASSERT carrying the `.err=` code). A dialect's
// instruction table names these functions in its rows.
//
//   {"assert", Form::kErr, 0, 0, lowering::LowerAssert},
#ifndef FLAMEFLEET_VM_ASSEMBLER_INTERNAL_ASSERTION_LOWERING_H_
#define FLAMEFLEET_VM_ASSEMBLER_INTERNAL_ASSERTION_LOWERING_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vm/assembler/internal/lower_helpers.h"

namespace flamefleet::vm::lowering {

// The error code of an assertion-like instruction in `l` (0 without `.err=`); InvalidArgument
// if it has any other immediate. Also for dialect-specific assertions (mtree_verify).
absl::StatusOr<uint64_t> AssertionCode(Lowering& l);

// Each lowers the assertion in `l` and appends the operations.
absl::Status LowerAssert(Lowering& l);
absl::Status LowerAssertz(Lowering& l);
absl::Status LowerAssertEq(Lowering& l);
absl::Status LowerAssertEqw(Lowering& l);
absl::Status LowerU32Assert(Lowering& l);
absl::Status LowerU32Assert2(Lowering& l);
absl::Status LowerU32Assertw(Lowering& l);

}  // namespace flamefleet::vm::lowering

#endif  // FLAMEFLEET_VM_ASSEMBLER_INTERNAL_ASSERTION_LOWERING_H_
