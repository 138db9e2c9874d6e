#include "vm/assembler/internal/assertion_lowering.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/status_macros.h"
#include "vm/assembler/internal/lower_helpers.h"
#include "vm/assembler/opcodes.h"

namespace flamefleet::vm::lowering {

using enum Opcode;

absl::StatusOr<uint64_t> AssertionCode(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  return l.ErrorCode();
}

absl::Status LowerAssert(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t code, AssertionCode(l));
  l.emit().Op(kAssert, code);
  return absl::OkStatus();
}

absl::Status LowerAssertz(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t code, AssertionCode(l));
  l.emit().Op(kEqz);
  l.emit().Op(kAssert, code);
  return absl::OkStatus();
}

absl::Status LowerAssertEq(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t code, AssertionCode(l));
  l.emit().Op(kEq);
  l.emit().Op(kAssert, code);
  return absl::OkStatus();
}

absl::Status LowerAssertEqw(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t code, AssertionCode(l));
  l.emit().AssertW(code);
  return absl::OkStatus();
}

absl::Status LowerU32Assert(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t code, AssertionCode(l));
  l.emit().Op(kPad);
  l.emit().Op(kU32Assert2, code);
  l.emit().Op(kDrop);
  return absl::OkStatus();
}

absl::Status LowerU32Assert2(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t code, AssertionCode(l));
  l.emit().Op(kU32Assert2, code);
  return absl::OkStatus();
}

absl::Status LowerU32Assertw(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t code, AssertionCode(l));
  Emitter& e = l.emit();
  e.Op(kU32Assert2, code);
  e.Ops({kMovUp3, kMovUp3});
  e.Op(kU32Assert2, code);
  e.Ops({kMovUp3, kMovUp3});
  return absl::OkStatus();
}

}  // namespace flamefleet::vm::lowering
