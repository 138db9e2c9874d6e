// The v0.25 instruction table: every mnemonic of Miden Assembly v0.25.7, with the immediates the
// parser accepts and the exact native operation sequence the v0.25.7 assembler appends for it
// (crates/assembly/src/instruction/*.rs, lib.rs push_value_ops, fmp.rs and
// basic_block_builder.rs at tag v0.25.7).
//
// Rules that hold throughout, and where they differ from v0.16:
// * No parse-time folding: a literal immediate lowers exactly as a named constant of the same
//   value does (`add.0` is a NOOP, `u32wrapping_add.0` is PAD U32ADD SWAP DROP).
// * Constants are pushed as PAD (0), PAD INCR (1) or PUSH(v) (Emitter::P); a few rows always
//   PUSH (the comparisons' `.b`, event ids, local offsets).
// * Events have no immediate: every system event, and `emit.E`, is PUSH(id) EMIT DROP, EMIT
//   reading the id from the top of the stack (kEmitTop). Ids are the dialect's (events.cc).
// * Little-endian u32 results (U32SPLIT, U32ADD, U32ADD3, U32MUL, U32MADD put the low limb on
//   top: the *Le opcodes), ext2 over x^2 - 7, word memory with mem[a] on top (`_le`; `_be` adds
//   REVW), Poseidon2 HPERM with the digest in the first rate word.
// * Procedure locals live in memory above the frame pointer stored at FMP_ADDR = 2^32 - 2: the
//   address of local i of a procedure with N locals is fmp - (R - i), R = N rounded up to a
//   multiple of 4 (the MAST rules add R to fmp on entry and subtract it on exit).
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "vm/assembler/instruction_table.h"
#include "vm/assembler/internal/assertion_lowering.h"
#include "vm/assembler/internal/lower_helpers.h"
#include "vm/assembler/internal/stack_lowering.h"
#include "vm/assembler/opcodes.h"
#include "vm/dialects/v0_25/v0_25.h"
#include "vm/executor/system_events.h"
#include "vm/parser/ast.h"

namespace flamefleet::vm::v0_25 {
namespace {

using enum Opcode;
using lowering::Emitter;
using lowering::Imm;
using lowering::ImmType;
using lowering::kModulus;
using lowering::kU32Max;
using lowering::Lowering;
using lowering::Negate;

// FMP_ADDR (core/src/lib.rs at v0.25.7): the element address holding the frame pointer.
constexpr uint64_t kFmpAddr = 4294967294ULL;

// ---- helper sequences (masm-lowering-v0.25.md §0.1) -----------------------------------------

// [a] -> [2^a] for a < 64 (unchanged from v0.16).
void Pow2(Emitter& e) { e.Pow2(); }

// [a, b, c, d] -> [d, c, b, a].
void RevW(Emitter& e) { e.Ops({kMovDn3, kSwap, kMovUp2}); }

// [b, a] -> [b_lo, b_hi, a_lo, a_hi] (field_ops.rs split_elements).
void Split2(Emitter& e) { e.Ops({kSwap, kU32SplitLe, kMovUp2, kU32SplitLe}); }

// The field comparisons [b, a] -> [a < b] (and <=, >, >=) over the u32 limbs (field_ops.rs
// check_lt_high_bits / check_gt_high_bits, check_lt / check_lte, set_result).
void CmpLt(Emitter& e) {
  Split2(e);
  e.Ops({kMovUp3, kMovUp2, kU32Sub, kSwap, kEqz, kMovUp2, kMovUp3, kSwap, kU32Sub, kSwap, kDrop,
         kAnd, kOr});
}
void CmpLte(Emitter& e) {
  Split2(e);
  e.Ops({kMovUp3, kMovUp2, kU32Sub, kSwap, kEqz, kMovUp2, kMovUp3, kSwap, kU32Sub, kSwap, kEqz, kOr,
         kAnd, kOr});
}
void CmpGt(Emitter& e) {
  Split2(e);
  e.Ops({kSwap, kMovUp3, kU32Sub, kSwap, kEqz, kMovUp2, kMovUp3, kU32Sub, kSwap, kDrop, kAnd, kOr});
}
void CmpGte(Emitter& e) {
  Split2(e);
  e.Ops({kSwap, kMovUp3, kU32Sub, kSwap, kEqz, kMovUp2, kMovUp3, kU32Sub, kSwap, kEqz, kOr, kAnd,
         kOr});
}

// [B, A] -> [hash(A || B)] with one Poseidon2 permutation (crypto_ops.rs hmerge).
void HMerge(Emitter& e) {
  e.Ops({kPad, kPad, kPad, kPad, kSwapW2, kSwapW, kHPermP2, kSwapW2});
  e.Times(kDrop, 8);
}

// PUSH(id) EMIT DROP of the system event `handler` runs (basic_block_builder.rs
// push_system_event): always a PUSH, even for small ids.
absl::Status EmitEvent(Lowering& l, SystemEventHandler handler) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t id, l.EventId(handler));
  l.emit().Push(id);
  l.emit().Ops({kEmitTop, kDrop});
  return absl::OkStatus();
}

// ---- generic shapes --------------------------------------------------------------------------

// No immediates; appends kOps.
template <Opcode... kOps>
absl::Status Plain(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  (l.emit().Op(kOps), ...);
  return absl::OkStatus();
}

// No immediates; appends the helper sequence kSeq.
template <void (*kSeq)(Emitter&)>
absl::Status Sequence(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  kSeq(l.emit());
  return absl::OkStatus();
}

// An optional immediate of `kType`, pushed first when given (P); then kOps.
template <ImmType kType, Opcode... kOps>
absl::Status PushedImm(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(kType));
  if (b) l.emit().P(b->value);
  (l.emit().Op(kOps), ...);
  return absl::OkStatus();
}

// An optional u32 immediate pushed with P; then kOps; then REVW (the `_be` word loads).
template <Opcode... kOps>
absl::Status PushedU32ThenRevW(Lowering& l) {
  const absl::Status status = PushedImm<ImmType::kU32, kOps...>(l);
  if (!status.ok()) return status;
  RevW(l.emit());
  return absl::OkStatus();
}

// lt/lte/gt/gte: an optional felt immediate, always PUSHed (the `.b` forms are dedicated AST
// instructions since v0.24, not a parser expansion), then the comparison.
template <void (*kCmp)(Emitter&)>
absl::Status LowerCmp(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kFelt));
  if (b) l.emit().Push(b->value);
  kCmp(l.emit());
  return absl::OkStatus();
}

// ---- assertions: the shared lowering (vm/assembler/internal/assertion_lowering.h) ---

absl::Status LowerMtreeVerify(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t code, lowering::AssertionCode(l));
  l.emit().Op(kMpVerifyLe, code);
  return absl::OkStatus();
}

// ---- field arithmetic, comparisons and the extension field ----------------------------------

absl::Status LowerAdd(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kFelt));
  Emitter& e = l.emit();
  if (!b) {
    e.Op(kAdd);
  } else if (b->value == 0) {
    e.Op(kNoop);
  } else if (b->value == 1) {
    e.Op(kIncr);
  } else if (b->value == 2) {
    e.Ops({kIncr, kIncr});
  } else {
    e.Push(b->value);
    e.Op(kAdd);
  }
  return absl::OkStatus();
}

absl::Status LowerSub(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kFelt));
  Emitter& e = l.emit();
  if (!b) {
    e.Ops({kNeg, kAdd});
  } else if (b->value == 0) {
    e.Op(kNoop);
  } else {
    e.Push(Negate(b->value));
    e.Op(kAdd);
  }
  return absl::OkStatus();
}

absl::Status LowerMul(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kFelt));
  Emitter& e = l.emit();
  if (!b) {
    e.Op(kMul);
  } else if (b->value == 0) {
    e.Ops({kDrop, kPad});
  } else if (b->value == 1) {
    e.Op(kNoop);
  } else {
    e.Push(b->value);
    e.Op(kMul);
  }
  return absl::OkStatus();
}

absl::Status LowerDiv(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kFelt));
  Emitter& e = l.emit();
  if (!b) {
    e.Ops({kInv, kMul});
  } else if (b->value == 0) {
    return l.Error("division by zero");
  } else if (b->value == 1) {
    e.Op(kNoop);
  } else {
    e.Push(lowering::Inverse(b->value));
    e.Op(kMul);
  }
  return absl::OkStatus();
}

// ilog2: the hint pow2 <= n < 2 * pow2 checked with full 64-bit comparisons (the upper bound is
// waived when ilog2 = 63).
absl::Status LowerIlog2(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  FLAMEFLEET_RETURN_IF_ERROR(EmitEvent(l, SystemEventHandler::kIlog2));
  Emitter& e = l.emit();
  e.Ops({kAdvPop, kDup0});
  e.Pow2();
  e.Ops({kMovUp2, kDup1, kDup1, kSwap});
  CmpGte(e);
  e.Op(kAssert, 0);
  e.Ops({kMovDn2, kMovUp2, kSwap});
  e.Push(2);
  e.Op(kMul);
  CmpLt(e);
  e.Op(kDup1);
  e.Push(63);
  e.Ops({kEq, kOr});
  e.Op(kAssert, 0);
  return absl::OkStatus();
}

// ext2inv, and ext2div (= ext2inv then ext2mul).
template <bool kDiv>
absl::Status LowerExt2Inv(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  FLAMEFLEET_RETURN_IF_ERROR(EmitEvent(l, SystemEventHandler::kExt2Inv));
  Emitter& e = l.emit();
  e.Ops({kAdvPop, kAdvPop, kExt2MulX7, kMovUp3, kEqz});
  e.Op(kAssert, 0);
  e.Op(kMovUp2);
  e.Op(kAssert, 0);
  if (kDiv) e.Ops({kExt2MulX7, kDrop, kDrop});
  return absl::OkStatus();
}

// exp (64-bit exponent from the stack), exp.<felt> and exp.uN (N-bit exponent, N <= 63).
absl::Status LowerExp(Lowering& l) {
  const ast::Instruction& inst = l.inst();
  Emitter& e = l.emit();
  if (l.name() == "exp") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kFelt));
    if (!b) {
      e.Exp(64);
    } else if (b->value == 0) {
      e.Ops({kDrop, kPad, kIncr});
    } else if (b->value == 1) {
      e.Op(kNoop);
    } else if (b->value <= 7) {
      e.Times(kDup0, static_cast<int>(b->value - 1));
      e.Times(kMul, static_cast<int>(b->value - 1));
    } else {
      e.Push(b->value);
      e.Exp(lowering::BitLength(b->value));
    }
    return absl::OkStatus();
  }
  if (l.name() != "exp.u") return l.UnknownInstruction();
  if (inst.args.size() != 1 || inst.args[0].kind != ast::Immediate::Kind::kLiteral) {
    return l.Error("'exp.u' requires a literal bit count");
  }
  const uint64_t bits = inst.args[0].value;
  if (bits > 63) {
    return l.Error(
        absl::StrCat("invalid bit count for 'exp.u': ", bits, " is not in the range 0..=63"));
  }
  e.Exp(static_cast<int>(bits));
  return absl::OkStatus();
}

// eq and neq (= eq then NOT): eq.0 is EQZ, any other immediate is PUSHed.
template <bool kNeq>
absl::Status LowerEq(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kFelt));
  Emitter& e = l.emit();
  if (!b) {
    e.Op(kEq);
  } else if (b->value == 0) {
    e.Op(kEqz);
  } else {
    e.Push(b->value);
    e.Op(kEq);
  }
  if (kNeq) e.Op(kNot);
  return absl::OkStatus();
}

// ---- u32 operations --------------------------------------------------------------------------

// What a u32 arithmetic row keeps of its operation's two limbs [lo, hi] (or U32SUB's
// [borrow, diff]).
enum class Keep {
  kBoth,       // widening: as the operation leaves them
  kSwapped,    // overflowing add: [carry, sum]
  kLowOnly,    // wrapping add/mul: SWAP DROP
  kTopDropped  // wrapping sub: DROP
};

// u32widening_*, u32overflowing_* and u32wrapping_* of add, sub, mul (optional immediate,
// pushed with P; no folding), add3 and madd (no immediate).
template <Opcode kOp, Keep kKeep, bool kTakesImmediate>
absl::Status LowerU32Arith(Lowering& l) {
  if (kTakesImmediate) {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kU32));
    if (b) l.emit().P(b->value);
  } else {
    FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  }
  Emitter& e = l.emit();
  e.Op(kOp);
  switch (kKeep) {
    case Keep::kBoth:
      break;
    case Keep::kSwapped:
      e.Op(kSwap);
      break;
    case Keep::kLowOnly:
      e.Ops({kSwap, kDrop});
      break;
    case Keep::kTopDropped:
      e.Op(kDrop);
      break;
  }
  return absl::OkStatus();
}

// What u32div, u32mod and u32divmod keep of U32DIV's [remainder, quotient].
enum class U32DivKeeps { kQuotient, kRemainder, kBoth };

template <U32DivKeeps kKeeps>
absl::Status LowerU32Div(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kU32));
  Emitter& e = l.emit();
  if (b) {
    if (b->value == 0) return l.Error("division by zero");
    e.P(b->value);
  }
  e.Op(kU32Div);
  if (kKeeps == U32DivKeeps::kQuotient) {
    e.Op(kDrop);
  } else if (kKeeps == U32DivKeeps::kRemainder) {
    e.Ops({kSwap, kDrop});
  }
  return absl::OkStatus();
}

// u32or and u32not: an optional immediate pushed with P, then the helper sequence.
template <void (Emitter::*kSeq)()>
absl::Status PushedU32Then(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kU32));
  if (b) l.emit().P(b->value);
  (l.emit().*kSeq)();
  return absl::OkStatus();
}

// u32shl, u32shr, u32rotl, u32rotr: an immediate 0 is a NOOP, one over 31 an error; without an
// immediate the amount comes from the stack (via pow2).
enum class U32Shift { kShl, kShr, kRotl, kRotr };

template <U32Shift kShift>
absl::Status LowerU32Shift(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kU8));
  Emitter& e = l.emit();
  if (!b) {
    if (kShift == U32Shift::kRotr) {
      e.Push(32);
      e.Ops({kSwap, kU32Sub, kDrop});
      e.Pow2();
      e.Ops({kMul, kU32SplitLe, kAdd});
      return absl::OkStatus();
    }
    e.Pow2();
  } else if (b->value == 0) {
    e.Op(kNoop);
    return absl::OkStatus();
  } else if (b->value > 31) {
    return l.Error(absl::StrCat("invalid shift amount for '", l.name(), "': ", b->value,
                                " (value must be in the range 0..=31)"));
  } else if (kShift == U32Shift::kRotr) {
    e.Push(uint64_t{1} << (32 - b->value));
    e.Ops({kU32MulLe, kAdd});
    return absl::OkStatus();
  } else {
    e.Push(uint64_t{1} << b->value);
  }
  if (kShift == U32Shift::kShl) {
    e.Ops({kU32MulLe, kSwap, kDrop});
  } else if (kShift == U32Shift::kShr) {
    e.Ops({kU32Div, kDrop});
  } else {  // u32rotl
    e.Ops({kU32MulLe, kAdd});
  }
  return absl::OkStatus();
}

absl::Status LowerU32Popcnt(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  Emitter& e = l.emit();
  e.Op(kDup0);
  e.Push(2);
  e.Ops({kU32Div, kDrop});
  e.Push(0x55555555);
  e.Ops({kU32And, kU32Sub, kDrop, kDup0});
  e.Push(4);
  e.Ops({kU32Div, kDrop});
  e.Push(0x33333333);
  e.Ops({kU32And, kSwap});
  e.Push(0x33333333);
  e.Ops({kU32And, kU32AddLe, kSwap, kDrop, kDup0});
  e.Push(16);
  e.Ops({kU32Div, kDrop, kU32AddLe, kSwap, kDrop});
  e.Push(0x0F0F0F0F);
  e.Op(kU32And);
  e.Push(0x01010101);
  e.Ops({kU32MulLe, kSwap, kDrop});
  e.Push(1u << 24);
  e.Ops({kU32Div, kDrop});
  return absl::OkStatus();
}

// The start of u32clz and u32clo: the hint, then 2^(32 - n) - 1.
absl::Status CountLeadingPrefix(Lowering& l, SystemEventHandler handler) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  FLAMEFLEET_RETURN_IF_ERROR(EmitEvent(l, handler));
  Emitter& e = l.emit();
  e.Op(kAdvPop);
  e.Push(32);
  e.Ops({kDup1, kNeg, kAdd});
  e.Pow2();
  e.Push(1);
  e.Ops({kNeg, kAdd});
  return absl::OkStatus();
}

absl::Status LowerU32Clz(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(CountLeadingPrefix(l, SystemEventHandler::kU32Clz));
  Emitter& e = l.emit();
  e.Push(2);
  e.Ops({kU32Div, kDrop, kDup0, kIncr});
  e.Push(kU32Max);
  e.Ops({kMovUp2, kNeg, kAdd, kDup3, kEqz, kMovDn3, kMovUp4, kU32And, kDup2});
  e.Push(32);
  e.Ops({kEq, kMovUp4, kDup1, kEq});
  e.Op(kAssert, 0);
  e.Ops({kMovDn2, kEq, kOr});
  e.Op(kAssert, 0);
  return absl::OkStatus();
}

absl::Status LowerU32Clo(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(CountLeadingPrefix(l, SystemEventHandler::kU32Clo));
  Emitter& e = l.emit();
  e.Op(kDup0);
  e.Push(2);
  e.Ops({kU32Div, kDrop});
  e.Push(kU32Max);
  e.Ops({kSwap, kNeg, kAdd, kMovUp3, kU32And});
  e.Push(kU32Max);
  e.Ops({kMovUp2, kNeg, kAdd, kEq});
  e.Op(kAssert, 0);
  return absl::OkStatus();
}

// u32ctz (kCtz) and u32cto.
template <bool kCtz>
absl::Status LowerU32CountTrailing(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  FLAMEFLEET_RETURN_IF_ERROR(
      EmitEvent(l, kCtz ? SystemEventHandler::kU32Ctz : SystemEventHandler::kU32Cto));
  Emitter& e = l.emit();
  e.Ops({kAdvPop, kSwap, kDup1});
  e.Pow2();
  e.Ops({kDup0, kPad, kIncr, kNeg, kAdd, kSwap, kU32SplitLe, kSwap, kDrop});
  if (kCtz) {
    e.Ops({kDup0, kMovUp2, kAdd});
  } else {
    e.Ops({kDup1, kAdd});
  }
  e.Ops({kMovUp2, kU32And, kEq});
  e.Op(kAssert, 0);
  return absl::OkStatus();
}

// ---- stack manipulation (unchanged from v0.16) -----------------------------------------------

// Stack manipulation: the shared lowering (vm/assembler/internal/stack_lowering.h).
using lowering::LowerDup;
using lowering::LowerDupw;
using lowering::LowerMovdn;
using lowering::LowerMovdnw;
using lowering::LowerMovup;
using lowering::LowerMovupw;
using lowering::LowerSwap;
using lowering::LowerSwapw;

absl::Status LowerReversedw(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  RevW(l.emit());
  l.emit().Op(kSwapW);
  RevW(l.emit());
  return absl::OkStatus();
}

// ---- push, memory, locals, advice, environment -----------------------------------------------

// Checks a word slice [begin, end) and returns it, or the whole word when `imm` has none.
absl::StatusOr<std::pair<int, int>> SliceOf(const Lowering& l, const ast::Immediate& imm) {
  if (!imm.slice) return std::pair<int, int>{0, 4};
  const auto [begin, end] = *imm.slice;
  if (begin >= end) {
    return l.Error(absl::StrCat("invalid word slice [", begin, "..", end, "]: the range is empty"));
  }
  if (end > 4) {
    return l.Error(absl::StrCat("invalid word slice [", begin, "..", end,
                                "]: out of range for a word of 4 elements"));
  }
  return std::pair<int, int>{begin, end};
}

// Pushes w[begin..end) of a word so that w[begin] ends on top: P(w[end-1]) ... P(w[begin]).
absl::Status PushWord(Lowering& l, const ast::WordValue& word, const ast::Immediate& imm) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const auto range, SliceOf(l, imm));
  for (int i = range.second - 1; i >= range.first; --i) {
    if (word[i] >= kModulus) {
      return l.Error(absl::StrCat("invalid value for 'push': word element ", word[i],
                                  " exceeds the field modulus"));
    }
    l.emit().P(word[i]);
  }
  return absl::OkStatus();
}

// push.a.b...: 1 to 16 values, each a felt, an event constant or a word (element 0 ends on
// top); a word literal or a sliced word (`push.W[1..3]`) must be the only value
// (crates/assembly-syntax/src/parser/cst/instructions.rs lower_push_instruction).
absl::Status LowerPush(Lowering& l) {
  const ast::Instruction& inst = l.inst();
  Emitter& e = l.emit();
  if (inst.args.empty()) return l.Error("'push' requires at least one value");
  if (inst.args.size() > 16) {
    return l.Error(absl::StrCat("too many values for 'push': ", inst.args.size(),
                                " (at most 16 per instruction)"));
  }
  for (const ast::Immediate& imm : inst.args) {
    if (imm.slice && inst.args.size() > 1) {
      return l.Error("invalid value for 'push': a sliced word must be the only value");
    }
    switch (imm.kind) {
      case ast::Immediate::Kind::kLiteral:
        if (imm.slice) return l.Error("invalid value for 'push': only a word can be sliced");
        if (imm.value >= kModulus) {
          return l.Error(
              absl::StrCat("invalid value for 'push': ", imm.value, " exceeds the field modulus"));
        }
        e.P(imm.value);
        break;
      case ast::Immediate::Kind::kWord:
        if (inst.args.size() > 1) {
          return l.Error(
              "invalid value for 'push': a word literal cannot be mixed into a dotted push list");
        }
        FLAMEFLEET_RETURN_IF_ERROR(PushWord(l, imm.word, imm));
        break;
      case ast::Immediate::Kind::kEvent:
        if (imm.slice) return l.Error("invalid value for 'push': only a word can be sliced");
        e.P(imm.value);
        break;
      case ast::Immediate::Kind::kConstant: {
        FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstantValue value, l.Resolve(imm.text));
        if (value.kind == ast::ConstantValue::Kind::kWord) {
          FLAMEFLEET_RETURN_IF_ERROR(PushWord(l, value.word, imm));
        } else if (value.kind == ast::ConstantValue::Kind::kString) {
          return l.Error(
              absl::StrCat("invalid value for 'push': constant '", imm.text, "' is a string"));
        } else if (imm.slice) {
          return l.Error(absl::StrCat("invalid value for 'push': constant '", imm.text,
                                      "' is not a word and cannot be sliced"));
        } else {
          e.P(value.felt);  // a felt or an event("...") id
        }
        break;
      }
      case ast::Immediate::Kind::kString:
        return l.Error("invalid value for 'push': expected a field element or a word");
    }
  }
  return absl::OkStatus();
}

// mem_storew_be: the word is stored reversed and the stack keeps its order.
absl::Status LowerMemStorewBe(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> a, l.OptionalImm(ImmType::kU32));
  Emitter& e = l.emit();
  if (a) {
    RevW(e);
    e.P(a->value);
  } else {
    e.Op(kMovDn4);
    RevW(e);
    e.Op(kMovUp4);
  }
  e.Op(kMStoreWLe);
  RevW(e);
  return absl::OkStatus();
}

// How a local access uses the address of its local.
enum class LocalAccess {
  kAddress,   // locaddr
  kLoad,      // loc_load: MLOAD
  kStore,     // loc_store: MSTORE DROP
  kLoadWLe,   // loc_loadw_le: MLOADW
  kLoadWBe,   // loc_loadw_be: MLOADW REVW
  kStoreWLe,  // loc_storew_le: MSTOREW
  kStoreWBe,  // loc_storew_be: REVW, then MSTOREW REVW
};

// locaddr / loc_*: pushes the address of local i, fmp - (R - i) (R = N rounded up to a multiple
// of 4), with PUSH(-(R - i)) PUSH(FMP_ADDR) MLOAD ADD, then the access. A word access needs an
// index that is a multiple of 4 (checked first) and four locals from it on; the ranges use the
// declared N (mem_ops.rs local_to_absolute_addr).
template <LocalAccess kAccess>
absl::Status LowerLocal(Lowering& l) {
  constexpr bool kWord = kAccess == LocalAccess::kLoadWLe || kAccess == LocalAccess::kLoadWBe ||
                         kAccess == LocalAccess::kStoreWLe || kAccess == LocalAccess::kStoreWBe;
  FLAMEFLEET_ASSIGN_OR_RETURN(Imm imm, l.RequiredImm(ImmType::kU16));
  const uint64_t index = imm.value;
  const uint64_t n = l.ctx().num_locals;
  if (kWord && index % 4 != 0) {
    return l.Error(absl::StrCat("invalid local word index: ", index,
                                " (the index of a local word must be a multiple of 4)"));
  }
  if (n == 0) {
    return l.Error(
        "invalid procedure local reference: this procedure does not allocate any locals");
  }
  if (kWord && n < 4) {
    return l.Error(
        absl::StrCat("invalid procedure local reference: word access needs at least 4 locals, "
                     "the procedure has ",
                     n));
  }
  const uint64_t max = kWord ? n - 4 : n - 1;
  if (index > max) {
    return l.Error(absl::StrCat("invalid procedure local reference: index ", index,
                                " is out of range (valid range: 0..=", max, ")"));
  }
  const uint64_t rounded = (n + 3) / 4 * 4;
  Emitter& e = l.emit();
  if (kAccess == LocalAccess::kStoreWBe) RevW(e);
  e.Push(Negate(rounded - index));
  e.Push(kFmpAddr);
  e.Ops({kMLoad, kAdd});
  switch (kAccess) {
    case LocalAccess::kAddress:
      break;
    case LocalAccess::kLoad:
      e.Op(kMLoad);
      break;
    case LocalAccess::kStore:
      e.Ops({kMStore, kDrop});
      break;
    case LocalAccess::kLoadWLe:
      e.Op(kMLoadWLe);
      break;
    case LocalAccess::kLoadWBe:
      e.Op(kMLoadWLe);
      RevW(e);
      break;
    case LocalAccess::kStoreWLe:
      e.Op(kMStoreWLe);
      break;
    case LocalAccess::kStoreWBe:
      e.Op(kMStoreWLe);
      RevW(e);
      break;
  }
  return absl::OkStatus();
}

// mem_loadw, mem_storew, loc_loadw, loc_storew: removed in v0.25 in favour of explicit word
// orientations.
absl::Status LowerDeprecatedWordAccess(Lowering& l) {
  return l.Error(absl::StrCat("deprecated instruction, use `", l.name(), "_be` (or `", l.name(),
                              "_le` for the little-endian word order)"));
}

// emit (the id on top of the stack, not popped) and emit.E (E an event("...") constant or an
// inline event("..."): PUSH(id) EMIT DROP). An integer immediate is rejected.
absl::Status LowerEmit(Lowering& l) {
  const ast::Instruction& inst = l.inst();
  Emitter& e = l.emit();
  if (inst.args.empty()) {
    e.Op(kEmitTop);
    return absl::OkStatus();
  }
  if (inst.args.size() > 1) return l.TooManyImmediates();
  const ast::Immediate& imm = inst.args[0];
  uint64_t id = 0;
  switch (imm.kind) {
    case ast::Immediate::Kind::kEvent:
      id = imm.value;
      break;
    case ast::Immediate::Kind::kConstant: {
      FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstantValue value, l.Resolve(imm.text));
      if (value.kind != ast::ConstantValue::Kind::kEvent) {
        return l.Error(absl::StrCat("invalid immediate for 'emit': constant '", imm.text,
                                    "' must be defined with event(\"...\")"));
      }
      id = value.felt;
      break;
    }
    case ast::Immediate::Kind::kLiteral:
    case ast::Immediate::Kind::kWord:
    case ast::Immediate::Kind::kString:
      return l.Error(
          "invalid immediate for 'emit': expected an event constant or event(\"name\"); "
          "integer event ids are not accepted since v0.18");
  }
  e.Push(id);
  e.Ops({kEmitTop, kDrop});
  return absl::OkStatus();
}

// adv.<event>: PUSH(id) EMIT DROP of the named system event. adv.push_mapvaln takes an
// optional padding `.0`, `.4` or `.8` (the events "push_mapvaln", "push_mapvaln.4", ...).
absl::Status LowerAdv(Lowering& l) {
  const ast::Instruction& inst = l.inst();
  absl::string_view event = l.name();
  if (!absl::ConsumePrefix(&event, "adv.")) return l.UnknownInstruction();
  std::string name(event);
  if (!inst.args.empty()) {
    if (event != "push_mapvaln") return l.NoImmediates();
    if (inst.args.size() > 1) return l.TooManyImmediates();
    const ast::Immediate& pad = inst.args[0];
    if (pad.kind != ast::Immediate::Kind::kLiteral ||
        (pad.value != 0 && pad.value != 4 && pad.value != 8)) {
      return l.Error(absl::StrCat("invalid pad value for 'adv.push_mapvaln': ",
                                  pad.kind == ast::Immediate::Kind::kLiteral
                                      ? absl::StrCat(pad.value)
                                      : std::string("not a literal"),
                                  " (expected 0, 4 or 8)"));
    }
    if (pad.value != 0) absl::StrAppend(&name, ".", pad.value);
  }
  const SystemEventRow* row = l.events().FindByName(name);
  if (row == nullptr) {
    return l.Error(absl::StrCat("unknown system event '", l.name(), "'"));
  }
  l.emit().Push(row->id);
  l.emit().Ops({kEmitTop, kDrop});
  return absl::OkStatus();
}

// ---- hashing, Merkle trees ---------------------------------------------------------------

// hash: the state [A, 0, [4, 0, 0, 0]] permuted; the digest is the first rate word.
absl::Status LowerHash(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  Emitter& e = l.emit();
  e.Times(kPad, 7);
  e.Push(4);
  e.Ops({kSwapW2, kHPermP2, kSwapW2});
  e.Times(kDrop, 8);
  return absl::OkStatus();
}

// The node from the advice provider: MERKLE_NODE_TO_STACK, then one ADVPOPW.
absl::Status ReadMtreeNode(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  FLAMEFLEET_RETURN_IF_ERROR(EmitEvent(l, SystemEventHandler::kMerkleNodeToStack));
  l.emit().Times(kPad, 4);
  l.emit().Op(kAdvPopWLe);
  return absl::OkStatus();
}

absl::Status LowerMtreeGet(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(ReadMtreeNode(l));
  l.emit().Op(kMpVerifyLe, 0);
  l.emit().Ops({kMovUp4, kDrop, kMovUp4, kDrop});
  return absl::OkStatus();
}

absl::Status LowerMtreeSet(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(ReadMtreeNode(l));
  Emitter& e = l.emit();
  e.Ops({kMovUp5, kMovUp5, kDup5, kDup5, kSwapDW, kSwapW, kSwapW2, kDup13, kDup13, kMrUpdateLe,
         kMovUp4, kDrop, kMovUp4, kDrop, kSwapW});
  e.Times(kDrop, 4);
  e.Op(kSwapW);
  e.Times(kDrop, 4);
  e.Op(kSwapW);
  return absl::OkStatus();
}

absl::Status LowerMtreeMerge(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  FLAMEFLEET_RETURN_IF_ERROR(EmitEvent(l, SystemEventHandler::kMerkleNodeMerge));
  HMerge(l.emit());
  return absl::OkStatus();
}

using E = Emitter;
using F = Form;
constexpr ImmType kU32 = ImmType::kU32;
using LA = LocalAccess;

// Sorted by name (checked at compile time below) for binary search. The min/max columns are
// the literal ranges the parser checks; a null lowering marks instructions that become MAST
// nodes (built by the assembler).
constexpr InstructionRow kRows[] = {
    {"add", F::kFelt, 0, 0, LowerAdd},
    {"adv", F::kAdvPadded, 0, 0, LowerAdv},
    {"adv_loadw", F::kPlain, 0, 0, Plain<kAdvPopWLe>},
    {"adv_pipe", F::kPlain, 0, 0, Plain<kPipeLe>},
    {"adv_push", F::kPlain, 0, 0, Plain<kAdvPop>},
    {"adv_pushw", F::kPlain, 0, 0, Plain<kPad, kPad, kPad, kPad, kAdvPopWLe>},
    {"and", F::kPlain, 0, 0, Plain<kAnd>},
    {"assert", F::kErr, 0, 0, lowering::LowerAssert},
    {"assert_eq", F::kErr, 0, 0, lowering::LowerAssertEq},
    {"assert_eqw", F::kErr, 0, 0, lowering::LowerAssertEqw},
    {"assertz", F::kErr, 0, 0, lowering::LowerAssertz},
    {"call", F::kInvoke, 0, 0, nullptr},
    {"caller", F::kPlain, 0, 0, Plain<kCallerAny>},
    {"cdrop", F::kPlain, 0, 0, Plain<kCSwap, kDrop>},
    {"cdropw", F::kPlain, 0, 0, Plain<kCSwapW, kDrop, kDrop, kDrop, kDrop>},
    {"clk", F::kPlain, 0, 0, Plain<kClk>},
    {"crypto_stream", F::kPlain, 0, 0, Plain<kCryptoStream>},
    {"cswap", F::kPlain, 0, 0, Plain<kCSwap>},
    {"cswapw", F::kPlain, 0, 0, Plain<kCSwapW>},
    {"div", F::kFeltNonZero, 0, 0, LowerDiv},
    {"drop", F::kPlain, 0, 0, Plain<kDrop>},
    {"dropw", F::kPlain, 0, 0, Plain<kDrop, kDrop, kDrop, kDrop>},
    {"dup", F::kStackIndex, 0, 15, LowerDup},
    {"dupw", F::kStackIndex, 0, 3, LowerDupw},
    {"dyncall", F::kPlain, 0, 0, nullptr},
    {"dynexec", F::kPlain, 0, 0, nullptr},
    {"emit", F::kEvent, 0, 0, LowerEmit},
    {"eq", F::kFelt, 0, 0, LowerEq<false>},
    {"eqw", F::kPlain, 0, 0,
     Plain<kDup7, kDup4, kEq, kDup7, kDup4, kEq, kAnd, kDup6, kDup3, kEq, kAnd, kDup5, kDup2, kEq,
           kAnd>},
    {"eval_circuit", F::kPlain, 0, 0, Plain<kEvalCircuitLe>},
    {"exec", F::kInvoke, 0, 0, nullptr},
    {"exp", F::kExp, 0, 0, LowerExp},
    {"ext2add", F::kPlain, 0, 0, Plain<kSwap, kMovUp3, kAdd, kMovDn2, kAdd>},
    {"ext2div", F::kPlain, 0, 0, LowerExt2Inv<true>},
    {"ext2inv", F::kPlain, 0, 0, LowerExt2Inv<false>},
    {"ext2mul", F::kPlain, 0, 0, Plain<kExt2MulX7, kDrop, kDrop>},
    {"ext2neg", F::kPlain, 0, 0, Plain<kNeg, kSwap, kNeg, kSwap>},
    {"ext2sub", F::kPlain, 0, 0, Plain<kNeg, kSwap, kNeg, kMovUp3, kAdd, kMovDn2, kAdd>},
    {"fri_ext2fold4", F::kPlain, 0, 0, Plain<kFriE2F4Le>},
    {"gt", F::kFelt, 0, 0, LowerCmp<CmpGt>},
    {"gte", F::kFelt, 0, 0, LowerCmp<CmpGte>},
    {"hash", F::kPlain, 0, 0, LowerHash},
    {"hmerge", F::kPlain, 0, 0, Sequence<HMerge>},
    {"horner_eval_base", F::kPlain, 0, 0, Plain<kHornerBaseLe>},
    {"horner_eval_ext", F::kPlain, 0, 0, Plain<kHornerExtLe>},
    {"hperm", F::kPlain, 0, 0, Plain<kHPermP2>},
    {"ilog2", F::kPlain, 0, 0, LowerIlog2},
    {"inv", F::kPlain, 0, 0, Plain<kInv>},
    {"is_odd", F::kPlain, 0, 0, Plain<kU32SplitLe, kSwap, kDrop, kPad, kIncr, kU32And>},
    {"loc_load", F::kLocal, 0, 65535, LowerLocal<LA::kLoad>},
    {"loc_loadw", F::kLocal, 0, 65535, LowerDeprecatedWordAccess},
    {"loc_loadw_be", F::kLocal, 0, 65535, LowerLocal<LA::kLoadWBe>},
    {"loc_loadw_le", F::kLocal, 0, 65535, LowerLocal<LA::kLoadWLe>},
    {"loc_store", F::kLocal, 0, 65535, LowerLocal<LA::kStore>},
    {"loc_storew", F::kLocal, 0, 65535, LowerDeprecatedWordAccess},
    {"loc_storew_be", F::kLocal, 0, 65535, LowerLocal<LA::kStoreWBe>},
    {"loc_storew_le", F::kLocal, 0, 65535, LowerLocal<LA::kStoreWLe>},
    {"locaddr", F::kLocal, 0, 65535, LowerLocal<LA::kAddress>},
    {"log_precompile", F::kPlain, 0, 0, Plain<kLogPrecompile>},
    {"lt", F::kFelt, 0, 0, LowerCmp<CmpLt>},
    {"lte", F::kFelt, 0, 0, LowerCmp<CmpLte>},
    {"mem_load", F::kU32, 0, 0, PushedImm<kU32, kMLoad>},
    {"mem_loadw", F::kU32, 0, 0, LowerDeprecatedWordAccess},
    {"mem_loadw_be", F::kU32, 0, 0, PushedU32ThenRevW<kMLoadWLe>},
    {"mem_loadw_le", F::kU32, 0, 0, PushedImm<kU32, kMLoadWLe>},
    {"mem_store", F::kU32, 0, 0, PushedImm<kU32, kMStore, kDrop>},
    {"mem_storew", F::kU32, 0, 0, LowerDeprecatedWordAccess},
    {"mem_storew_be", F::kU32, 0, 0, LowerMemStorewBe},
    {"mem_storew_le", F::kU32, 0, 0, PushedImm<kU32, kMStoreWLe>},
    {"mem_stream", F::kPlain, 0, 0, Plain<kMStreamLe>},
    {"movdn", F::kStackIndexRequired, 2, 15, LowerMovdn},
    {"movdnw", F::kStackIndexRequired, 2, 3, LowerMovdnw},
    {"movup", F::kStackIndexRequired, 2, 15, LowerMovup},
    {"movupw", F::kStackIndexRequired, 2, 3, LowerMovupw},
    {"mtree_get", F::kPlain, 0, 0, LowerMtreeGet},
    {"mtree_merge", F::kPlain, 0, 0, LowerMtreeMerge},
    {"mtree_set", F::kPlain, 0, 0, LowerMtreeSet},
    {"mtree_verify", F::kErr, 0, 0, LowerMtreeVerify},
    {"mul", F::kFelt, 0, 0, LowerMul},
    {"neg", F::kPlain, 0, 0, Plain<kNeg>},
    {"neq", F::kFelt, 0, 0, LowerEq<true>},
    {"nop", F::kPlain, 0, 0, Plain<kNoop>},
    {"not", F::kPlain, 0, 0, Plain<kNot>},
    {"or", F::kPlain, 0, 0, Plain<kOr>},
    {"padw", F::kPlain, 0, 0, Plain<kPad, kPad, kPad, kPad>},
    {"pow2", F::kPlain, 0, 0, Sequence<Pow2>},
    {"procref", F::kInvoke, 0, 0, nullptr},
    {"push", F::kPushSliced, 0, 0, LowerPush},
    {"reversedw", F::kPlain, 0, 0, LowerReversedw},
    {"reversew", F::kPlain, 0, 0, Sequence<RevW>},
    {"sdepth", F::kPlain, 0, 0, Plain<kSDepth>},
    {"sub", F::kFelt, 0, 0, LowerSub},
    {"swap", F::kStackIndex, 1, 15, LowerSwap},
    {"swapdw", F::kPlain, 0, 0, Plain<kSwapDW>},
    {"swapw", F::kStackIndex, 1, 3, LowerSwapw},
    {"syscall", F::kInvoke, 0, 0, nullptr},
    {"u32and", F::kU32, 0, 0, PushedImm<kU32, kU32And>},
    {"u32assert", F::kErr, 0, 0, lowering::LowerU32Assert},
    {"u32assert2", F::kErr, 0, 0, lowering::LowerU32Assert2},
    {"u32assertw", F::kErr, 0, 0, lowering::LowerU32Assertw},
    {"u32cast", F::kPlain, 0, 0, Plain<kU32SplitLe, kSwap, kDrop>},
    {"u32clo", F::kPlain, 0, 0, LowerU32Clo},
    {"u32clz", F::kPlain, 0, 0, LowerU32Clz},
    {"u32cto", F::kPlain, 0, 0, LowerU32CountTrailing<false>},
    {"u32ctz", F::kPlain, 0, 0, LowerU32CountTrailing<true>},
    {"u32div", F::kU32NonZero, 0, 0, LowerU32Div<U32DivKeeps::kQuotient>},
    {"u32divmod", F::kU32NonZero, 0, 0, LowerU32Div<U32DivKeeps::kBoth>},
    {"u32gt", F::kU32, 0, 0, PushedImm<kU32, kSwap, kU32Sub, kSwap, kDrop>},
    {"u32gte", F::kU32, 0, 0, PushedImm<kU32, kU32Sub, kSwap, kDrop, kNot>},
    {"u32lt", F::kU32, 0, 0, PushedImm<kU32, kU32Sub, kSwap, kDrop>},
    {"u32lte", F::kU32, 0, 0, PushedImm<kU32, kSwap, kU32Sub, kSwap, kDrop, kNot>},
    {"u32max", F::kU32, 0, 0,
     PushedImm<kU32, kDup1, kDup1, kU32Sub, kSwap, kDrop, kEqz, kCSwap, kSwap, kDrop>},
    {"u32min", F::kU32, 0, 0,
     PushedImm<kU32, kDup1, kDup1, kU32Sub, kSwap, kDrop, kEqz, kCSwap, kDrop>},
    {"u32mod", F::kU32NonZero, 0, 0, LowerU32Div<U32DivKeeps::kRemainder>},
    {"u32not", F::kU32, 0, 0, PushedU32Then<&E::U32Not>},
    {"u32or", F::kU32, 0, 0, PushedU32Then<&E::U32Or>},
    {"u32overflowing_add", F::kU32, 0, 0, LowerU32Arith<kU32AddLe, Keep::kSwapped, true>},
    {"u32overflowing_add3", F::kPlain, 0, 0, LowerU32Arith<kU32Add3Le, Keep::kSwapped, false>},
    {"u32overflowing_sub", F::kU32, 0, 0, LowerU32Arith<kU32Sub, Keep::kBoth, true>},
    {"u32popcnt", F::kPlain, 0, 0, LowerU32Popcnt},
    {"u32rotl", F::kShift, 0, 31, LowerU32Shift<U32Shift::kRotl>},
    {"u32rotr", F::kShift, 0, 31, LowerU32Shift<U32Shift::kRotr>},
    {"u32shl", F::kShift, 0, 31, LowerU32Shift<U32Shift::kShl>},
    {"u32shr", F::kShift, 0, 31, LowerU32Shift<U32Shift::kShr>},
    {"u32split", F::kPlain, 0, 0, Plain<kU32SplitLe>},
    {"u32test", F::kPlain, 0, 0, Plain<kDup0, kU32SplitLe, kDrop, kEqz>},
    {"u32testw", F::kPlain, 0, 0,
     Plain<kDup3, kU32SplitLe, kDrop, kEqz, kDup3, kU32SplitLe, kDrop, kEqz, kAnd, kDup2,
           kU32SplitLe, kDrop, kEqz, kAnd, kDup1, kU32SplitLe, kDrop, kEqz, kAnd>},
    {"u32widening_add", F::kU32, 0, 0, LowerU32Arith<kU32AddLe, Keep::kBoth, true>},
    {"u32widening_add3", F::kPlain, 0, 0, LowerU32Arith<kU32Add3Le, Keep::kBoth, false>},
    {"u32widening_madd", F::kPlain, 0, 0, LowerU32Arith<kU32MAddLe, Keep::kBoth, false>},
    {"u32widening_mul", F::kU32, 0, 0, LowerU32Arith<kU32MulLe, Keep::kBoth, true>},
    {"u32wrapping_add", F::kU32, 0, 0, LowerU32Arith<kU32AddLe, Keep::kLowOnly, true>},
    {"u32wrapping_add3", F::kPlain, 0, 0, LowerU32Arith<kU32Add3Le, Keep::kLowOnly, false>},
    {"u32wrapping_madd", F::kPlain, 0, 0, LowerU32Arith<kU32MAddLe, Keep::kLowOnly, false>},
    {"u32wrapping_mul", F::kU32, 0, 0, LowerU32Arith<kU32MulLe, Keep::kLowOnly, true>},
    {"u32wrapping_sub", F::kU32, 0, 0, LowerU32Arith<kU32Sub, Keep::kTopDropped, true>},
    {"u32xor", F::kU32, 0, 0, PushedImm<kU32, kU32Xor>},
    {"xor", F::kPlain, 0, 0, Plain<kDup0, kDup2, kOr, kMovDn2, kAnd, kNot, kAnd>},
};
static_assert(RowsSortedAndUnique(kRows), "kRows must be sorted by name, without duplicates");

}  // namespace

const InstructionTable& Instructions() {
  static const InstructionTable* const table = [] {
    absl::StatusOr<InstructionTable> t = InstructionTable::Create(kRows, SystemEvents());
    if (!t.ok()) {  // a broken invariant of the static rows above
      std::fprintf(stderr, "v0.25 instructions: %s\n", t.status().ToString().c_str());
      std::abort();
    }
    return new InstructionTable(*std::move(t));
  }();
  return *table;
}

}  // namespace flamefleet::vm::v0_25
