// Internal to vm/: the lowering of the stack-manipulation instructions (dup, dupw, swap,
// swapw, movup, movdn, movupw, movdnw), which every dialect so far lowers alike (v0.16.4 and
// v0.25.7 emit the same native operations). A dialect's instruction table names these
// functions in its rows.
//
//   {"dup", Form::kStackIndex, 0, 15, lowering::LowerDup},
#ifndef FLAMEFLEET_VM_ASSEMBLER_INTERNAL_STACK_LOWERING_H_
#define FLAMEFLEET_VM_ASSEMBLER_INTERNAL_STACK_LOWERING_H_

#include "absl/status/status.h"
#include "vm/assembler/internal/lower_helpers.h"

namespace flamefleet::vm::lowering {

// Each lowers the instruction in `l` (its optional or required stack index, range-checked)
// and appends the operations; InvalidArgument for an immediate out of range.
absl::Status LowerDup(Lowering& l);
absl::Status LowerDupw(Lowering& l);
absl::Status LowerSwap(Lowering& l);
absl::Status LowerSwapw(Lowering& l);
absl::Status LowerMovup(Lowering& l);
absl::Status LowerMovdn(Lowering& l);
absl::Status LowerMovupw(Lowering& l);
absl::Status LowerMovdnw(Lowering& l);

}  // namespace flamefleet::vm::lowering

#endif  // FLAMEFLEET_VM_ASSEMBLER_INTERNAL_STACK_LOWERING_H_
