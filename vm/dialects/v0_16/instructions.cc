// The v0.16 instruction table: every mnemonic of the classic dialect, with the immediates the
// parser accepts and the exact native operation sequence the v0.16 assembler appends for it.
//
// Rules that hold throughout:
// * An immediate written as a number literal may be folded away when the v0.16 parser would
//   fold it (`add.0`, `mul.1`, `u32wrapping_add.0`, ... append nothing), while the same value
//   given by a named constant still lowers, at worst to a NOOP.
// * Constants are pushed as PAD (0), PAD INCR (1) or PUSH(v) (Emitter::P).
// * Instructions that need a non-deterministic hint EMIT the system event that computes it
//   (ids from events.cc) and then verify the hint they pop from the advice stack.
// * Procedure locals live below the frame pointer: local i of a procedure with n locals is at
//   fmp - (n - i).
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
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
#include "vm/dialects/v0_16/v0_16.h"
#include "vm/executor/system_events.h"
#include "vm/parser/ast.h"

namespace flamefleet::vm::v0_16 {
namespace {

using enum Opcode;
using lowering::Emitter;
using lowering::Imm;
using lowering::ImmType;
using lowering::kModulus;
using lowering::kU32Max;
using lowering::Lowering;
using lowering::Negate;

// ---- generic shapes --------------------------------------------------------------------------

// No immediates; appends kOps.
template <Opcode... kOps>
absl::Status Plain(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  (l.emit().Op(kOps), ...);
  return absl::OkStatus();
}

// No immediates; appends the Emitter helper sequence kSeq.
template <void (Emitter::*kSeq)()>
absl::Status Sequence(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  (l.emit().*kSeq)();
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

// As PushedImm with a felt immediate, then the Emitter helper sequence kSeq.
template <void (Emitter::*kSeq)()>
absl::Status PushedFeltThen(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kFelt));
  if (b) l.emit().P(b->value);
  (l.emit().*kSeq)();
  return absl::OkStatus();
}

// EMITs the system event `handler` runs.
absl::Status EmitEvent(Lowering& l, SystemEventHandler handler) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t id, l.EventId(handler));
  l.emit().Op(kEmit, id);
  return absl::OkStatus();
}

// ---- assertions: the shared lowering (vm/assembler/internal/assertion_lowering.h) ---

absl::Status LowerMtreeVerify(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t code, lowering::AssertionCode(l));
  l.emit().Op(kMpVerify, code);
  return absl::OkStatus();
}

// ---- field arithmetic, comparisons and the extension field ----------------------------------

absl::Status LowerAdd(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kFelt));
  Emitter& e = l.emit();
  if (!b) {
    e.Op(kAdd);
  } else if (b->value == 0) {
    // A literal add.0 is removed by the parser; a constant 0 is a NOOP.
    if (!b->literal) e.Op(kNoop);
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
    if (!b->literal) e.Op(kNoop);
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
    if (!b->literal) e.Op(kNoop);
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
    if (!b->literal) e.Op(kNoop);
  } else {
    e.Push(lowering::Inverse(b->value));
    e.Op(kMul);
  }
  return absl::OkStatus();
}

absl::Status LowerIlog2(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  FLAMEFLEET_RETURN_IF_ERROR(EmitEvent(l, SystemEventHandler::kIlog2));
  Emitter& e = l.emit();
  e.Ops({kAdvPop, kDup0});
  e.Pow2();
  e.Ops({kMovUp2, kU32Split, kMovUp2, kU32Split, kDup1, kEqz,    kDup0, kMovDn3, kCSwap,
         kDrop,   kMovDn3,   kCSwap,  kDrop,     kSwap, kPad,    kIncr, kIncr,   kMul,
         kPad,    kIncr,     kNeg,    kAdd,      kDup1, kU32And, kEq});
  e.Op(kAssert, 0);
  return absl::OkStatus();
}

// ext2inv, and ext2div (= ext2inv then ext2mul).
template <bool kDiv>
absl::Status LowerExt2Inv(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  FLAMEFLEET_RETURN_IF_ERROR(EmitEvent(l, SystemEventHandler::kExt2Inv));
  Emitter& e = l.emit();
  e.Ops({kAdvPop, kAdvPop, kExt2Mul, kMovUp2, kEqz});
  e.Op(kAssert, 0);
  e.Op(kMovUp2);
  e.Op(kAssert, 0);
  if (kDiv) e.Ops({kExt2Mul, kDrop, kDrop});
  return absl::OkStatus();
}

// exp (64-bit exponent from the stack), exp.<felt> and exp.uN (N-bit exponent).
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

// eq and neq (= eq then NOT).
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

// u32overflowing_* and u32wrapping_* of add, sub, mul. A literal immediate folds the wrapping
// forms: x + 0, x - 0 and x * 1 append nothing, x * 0 is DROP PAD.
template <Opcode kOp, bool kWrapping>
absl::Status LowerU32Arith(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kU32));
  constexpr bool kIsMul = kOp == kU32Mul;
  Emitter& e = l.emit();
  if (b && b->literal && kWrapping) {
    if (kIsMul && b->value == 0) {
      e.Ops({kDrop, kPad});
      return absl::OkStatus();
    }
    if (kIsMul && b->value == 1) return absl::OkStatus();
    if (!kIsMul && b->value == 0) return absl::OkStatus();
  }
  if (b) e.P(b->value);
  e.Op(kOp);
  if (kWrapping) e.Op(kDrop);
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
    if (kKeeps == U32DivKeeps::kQuotient && b->literal && b->value == 1) {
      return absl::OkStatus();  // removed by the parser
    }
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

// u32and, u32or, u32xor, u32not. A literal 0 folds: x & 0 is DROP PAD, x | 0 and x ^ 0 append
// nothing.
enum class U32Bitwise { kAnd, kOr, kXor, kNot };

template <U32Bitwise kOp>
absl::Status LowerU32Bitwise(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, l.OptionalImm(ImmType::kU32));
  Emitter& e = l.emit();
  if (b && b->literal && b->value == 0) {
    if (kOp == U32Bitwise::kAnd) {
      e.Ops({kDrop, kPad});
      return absl::OkStatus();
    }
    if (kOp == U32Bitwise::kOr || kOp == U32Bitwise::kXor) return absl::OkStatus();
  }
  if (b) e.P(b->value);
  switch (kOp) {
    case U32Bitwise::kAnd:
      e.Op(kU32And);
      break;
    case U32Bitwise::kOr:
      e.U32Or();
      break;
    case U32Bitwise::kXor:
      e.Op(kU32Xor);
      break;
    case U32Bitwise::kNot:
      e.U32Not();
      break;
  }
  return absl::OkStatus();
}

// u32shl, u32shr, u32rotl, u32rotr: a literal 0 folds away, a constant 0 is a NOOP, an amount
// over 31 is an error; without an immediate the amount comes from the stack (via pow2).
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
      e.Ops({kMul, kU32Split, kAdd});
      return absl::OkStatus();
    }
    e.Pow2();
  } else if (b->value == 0) {
    if (!b->literal) e.Op(kNoop);
    return absl::OkStatus();
  } else if (b->value > 31) {
    return l.Error(absl::StrCat("invalid shift amount for '", l.name(), "': ", b->value,
                                " (value must be in the range 0..=31)"));
  } else if (kShift == U32Shift::kRotr) {
    e.Push(uint64_t{1} << (32 - b->value));
    e.Ops({kU32Mul, kAdd});
    return absl::OkStatus();
  } else {
    e.Push(uint64_t{1} << b->value);
  }
  if (kShift == U32Shift::kShl) {
    e.Ops({kU32Mul, kDrop});
  } else if (kShift == U32Shift::kShr) {
    e.Ops({kU32Div, kDrop});
  } else {  // u32rotl, u32rotr without immediate
    e.Ops({kU32Mul, kAdd});
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
  e.Ops({kU32And, kU32Add, kDrop, kDup0});
  e.Push(16);
  e.Ops({kU32Div, kDrop, kU32Add, kDrop});
  e.Push(0x0F0F0F0F);
  e.Op(kU32And);
  e.Push(0x01010101);
  e.Ops({kU32Mul, kDrop});
  e.Push(1u << 24);
  e.Ops({kU32Div, kDrop});
  return absl::OkStatus();
}

absl::Status LowerU32Clz(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  FLAMEFLEET_RETURN_IF_ERROR(EmitEvent(l, SystemEventHandler::kU32Clz));
  Emitter& e = l.emit();
  e.Op(kAdvPop);
  e.Push(32);
  e.Ops({kDup1, kNeg, kAdd});
  e.Pow2();
  e.Push(1);
  e.Ops({kNeg, kAdd});
  e.Push(2);
  e.Ops({kU32Div, kDrop, kDup0, kIncr});
  e.Push(kU32Max);
  e.Ops({kMovUp2, kNeg, kAdd, kDup3, kEqz, kMovDn3, kMovUp4, kU32And, kEq, kMovUp2, kOr});
  e.Op(kAssert, 0);
  return absl::OkStatus();
}

absl::Status LowerU32Clo(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  FLAMEFLEET_RETURN_IF_ERROR(EmitEvent(l, SystemEventHandler::kU32Clo));
  Emitter& e = l.emit();
  e.Op(kAdvPop);
  e.Push(32);
  e.Ops({kDup1, kNeg, kAdd});
  e.Pow2();
  e.Push(1);
  e.Ops({kNeg, kAdd, kDup0});
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
  e.Ops({kDup0, kPad, kIncr, kNeg, kAdd, kSwap, kU32Split, kDrop});
  if (kCtz) {
    e.Ops({kDup0, kMovUp2, kAdd});
  } else {
    e.Ops({kDup1, kAdd});
  }
  e.Ops({kMovUp2, kU32And, kEq});
  e.Op(kAssert, 0);
  return absl::OkStatus();
}

// ---- stack manipulation ----------------------------------------------------------------------

// Stack manipulation: the shared lowering (vm/assembler/internal/stack_lowering.h).
using lowering::LowerDup;
using lowering::LowerDupw;
using lowering::LowerMovdn;
using lowering::LowerMovdnw;
using lowering::LowerMovup;
using lowering::LowerMovupw;
using lowering::LowerSwap;
using lowering::LowerSwapw;

// ---- push, memory, locals, advice, environment -----------------------------------------------

// push.a.b...: 1 to 16 values, each a felt, a word (4 felts) or a felt or word constant.
absl::Status LowerPush(Lowering& l) {
  const ast::Instruction& inst = l.inst();
  Emitter& e = l.emit();
  if (inst.args.empty()) return l.Error("'push' requires at least one value");
  if (inst.args.size() > 16) {
    return l.Error(absl::StrCat("too many values for 'push': ", inst.args.size(),
                                " (at most 16 per instruction)"));
  }
  for (const ast::Immediate& imm : inst.args) {
    switch (imm.kind) {
      case ast::Immediate::Kind::kLiteral:
        if (imm.value >= kModulus) {
          return l.Error(
              absl::StrCat("invalid value for 'push': ", imm.value, " exceeds the field modulus"));
        }
        e.P(imm.value);
        break;
      case ast::Immediate::Kind::kWord:
        for (uint64_t w : imm.word) {
          if (w >= kModulus) {
            return l.Error(absl::StrCat("invalid value for 'push': word element ", w,
                                        " exceeds the field modulus"));
          }
          e.P(w);
        }
        break;
      case ast::Immediate::Kind::kConstant: {
        FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstantValue value, l.Resolve(imm.text));
        if (value.kind == ast::ConstantValue::Kind::kFelt) {
          e.P(value.felt);
        } else if (value.kind == ast::ConstantValue::Kind::kWord) {
          for (uint64_t w : value.word) e.P(w);
        } else {
          return l.Error(
              absl::StrCat("invalid value for 'push': constant '", imm.text, "' is a string"));
        }
        break;
      }
      case ast::Immediate::Kind::kString:
      case ast::Immediate::Kind::kEvent:
        return l.Error("invalid value for 'push': expected a field element or a word");
    }
  }
  return absl::OkStatus();
}

// locaddr / loc_*: pushes the address of local i (fmp - (n - i)), then kOps. A word access
// needs an index that is a multiple of 4 and four locals from it on.
template <bool kWord, Opcode... kOps>
absl::Status LowerLocal(Lowering& l) {
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
  l.emit().Push(Negate(n - index));
  l.emit().Op(kFmpAdd);
  (l.emit().Op(kOps), ...);
  return absl::OkStatus();
}

absl::Status LowerAdvPush(Lowering& l) {
  const ast::Instruction& inst = l.inst();
  if (inst.args.size() != 1 || inst.args[0].kind != ast::Immediate::Kind::kLiteral) {
    return l.Error("'adv_push' requires a literal count");
  }
  const uint64_t n = inst.args[0].value;
  if (n < 1 || n > 16) {
    return l.Error(
        absl::StrCat("invalid count for 'adv_push': ", n, " is not in the range 1..=16"));
  }
  l.emit().Times(kAdvPop, static_cast<int>(n));
  return absl::OkStatus();
}

absl::Status LowerEmit(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(Imm id, l.RequiredImm(ImmType::kU32));
  l.emit().Op(kEmit, id.value);
  return absl::OkStatus();
}

// adv.<event>: EMIT of the named system event.
absl::Status LowerAdv(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  absl::string_view event = l.name();
  if (!absl::ConsumePrefix(&event, "adv.")) return l.UnknownInstruction();
  const SystemEventRow* row = l.events().FindByName(event);
  if (row == nullptr) {
    return l.Error(absl::StrCat("unknown system event '", l.name(), "'"));
  }
  l.emit().Op(kEmit, row->id);
  return absl::OkStatus();
}

absl::Status LowerCaller(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  if (!l.ctx().in_kernel) {
    return l.Error("invalid use of 'caller' instruction outside of kernel");
  }
  l.emit().Op(kCaller);
  return absl::OkStatus();
}

// ---- hashing, Merkle trees, recursive-verifier helpers, decorators ---------------------------

absl::Status LowerHash(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  l.emit().Push(4);
  l.emit().Ops({kPad, kPad, kPad, kSwapW, kPad, kDup7, kDup7, kDup7, kHPerm, kDrop, kDrop, kDrop,
                kDrop, kSwapW, kDrop, kDrop, kDrop, kDrop});
  return absl::OkStatus();
}

// mtree_get and mtree_set: the node comes from the advice provider and is verified (get) or
// updated (set) against the root.
template <bool kSet>
absl::Status LowerMtreeGetSet(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  FLAMEFLEET_RETURN_IF_ERROR(EmitEvent(l, SystemEventHandler::kMerkleNodeToStack));
  Emitter& e = l.emit();
  e.Times(kAdvPop, 4);
  if (!kSet) {
    e.Op(kMpVerify, 0);
    e.Ops({kMovUp4, kDrop, kMovUp4, kDrop});
  } else {
    e.Ops({kMovUp5,   kMovUp5, kDup5, kDup5,   kSwapDW, kSwapW, kSwapW2, kDup13, kDup13,
           kMrUpdate, kMovUp4, kDrop, kMovUp4, kDrop,   kSwapW, kDrop,   kDrop,  kDrop,
           kDrop,     kSwapW,  kDrop, kDrop,   kDrop,   kDrop,  kSwapW});
  }
  return absl::OkStatus();
}

absl::Status LowerMtreeMerge(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  FLAMEFLEET_RETURN_IF_ERROR(EmitEvent(l, SystemEventHandler::kMerkleNodeMerge));
  l.emit().HMerge();
  return absl::OkStatus();
}

// breakpoint: a NOOP in debug mode (as `miden run`), nothing otherwise.
absl::Status LowerBreakpoint(Lowering& l) {
  FLAMEFLEET_RETURN_IF_ERROR(l.NoImmediates());
  if (l.ctx().debug_mode) l.emit().Op(kNoop);
  return absl::OkStatus();
}

// trace.<u32>: a Trace decorator: no row, no op-group slot, no part of the digest; the
// zero-cycle TRACE pseudo op hands the id to the host where the decorator runs (a marker for
// `--phase` / `--marker`).
absl::Status LowerTrace(Lowering& l) {
  FLAMEFLEET_ASSIGN_OR_RETURN(Imm id, l.RequiredImm(ImmType::kU32));
  l.emit().Op(kTrace, id.value);
  return absl::OkStatus();
}

// debug.<kind>: a Debug decorator, no operation.
absl::Status LowerDebug(Lowering& l) {
  absl::string_view what = l.name();
  if (!absl::ConsumePrefix(&what, "debug.")) return l.UnknownInstruction();
  if (what != "stack" && what != "mem" && what != "local" && what != "adv_stack") {
    return l.Error(absl::StrCat("unknown debug decorator '", l.name(), "'"));
  }
  return absl::OkStatus();
}

using E = Emitter;
using F = Form;
constexpr ImmType kU32 = ImmType::kU32;

// Sorted by name (checked at compile time below) for binary search. The min/max columns are
// the literal ranges the parser checks; a null lowering marks instructions that become MAST
// nodes (built by the assembler).
constexpr InstructionRow kRows[] = {
    {"add", F::kFelt, 0, 0, LowerAdd},
    {"adv", F::kAdv, 0, 0, LowerAdv},
    {"adv_loadw", F::kPlain, 0, 0, Plain<kAdvPopW>},
    {"adv_pipe", F::kPlain, 0, 0, Plain<kPipe>},
    {"adv_push", F::kAdvPush, 1, 16, LowerAdvPush},
    {"and", F::kPlain, 0, 0, Plain<kAnd>},
    {"arithmetic_circuit_eval", F::kPlain, 0, 0, Plain<kEvalCircuit>},
    {"assert", F::kErr, 0, 0, lowering::LowerAssert},
    {"assert_eq", F::kErr, 0, 0, lowering::LowerAssertEq},
    {"assert_eqw", F::kErr, 0, 0, lowering::LowerAssertEqw},
    {"assertz", F::kErr, 0, 0, lowering::LowerAssertz},
    {"breakpoint", F::kPlain, 0, 0, LowerBreakpoint},
    {"call", F::kInvoke, 0, 0, nullptr},
    {"caller", F::kPlain, 0, 0, LowerCaller},
    {"cdrop", F::kPlain, 0, 0, Plain<kCSwap, kDrop>},
    {"cdropw", F::kPlain, 0, 0, Plain<kCSwapW, kDrop, kDrop, kDrop, kDrop>},
    {"clk", F::kPlain, 0, 0, Plain<kClk>},
    {"cswap", F::kPlain, 0, 0, Plain<kCSwap>},
    {"cswapw", F::kPlain, 0, 0, Plain<kCSwapW>},
    {"debug", F::kDebug, 0, 0, LowerDebug},
    {"div", F::kFeltNonZero, 0, 0, LowerDiv},
    {"drop", F::kPlain, 0, 0, Plain<kDrop>},
    {"dropw", F::kPlain, 0, 0, Plain<kDrop, kDrop, kDrop, kDrop>},
    {"dup", F::kStackIndex, 0, 15, LowerDup},
    {"dupw", F::kStackIndex, 0, 3, LowerDupw},
    {"dyncall", F::kPlain, 0, 0, nullptr},
    {"dynexec", F::kPlain, 0, 0, nullptr},
    {"emit", F::kU32Required, 0, 0, LowerEmit},
    {"eq", F::kFelt, 0, 0, LowerEq<false>},
    {"eqw", F::kPlain, 0, 0,
     Plain<kDup7, kDup4, kEq, kDup7, kDup4, kEq, kAnd, kDup6, kDup3, kEq, kAnd, kDup5, kDup2, kEq,
           kAnd>},
    {"exec", F::kInvoke, 0, 0, nullptr},
    {"exp", F::kExp, 0, 0, LowerExp},
    {"ext2add", F::kPlain, 0, 0, Plain<kSwap, kMovUp3, kAdd, kMovDn2, kAdd>},
    {"ext2div", F::kPlain, 0, 0, LowerExt2Inv<true>},
    {"ext2inv", F::kPlain, 0, 0, LowerExt2Inv<false>},
    {"ext2mul", F::kPlain, 0, 0, Plain<kExt2Mul, kDrop, kDrop>},
    {"ext2neg", F::kPlain, 0, 0, Plain<kNeg, kSwap, kNeg, kSwap>},
    {"ext2sub", F::kPlain, 0, 0, Plain<kNeg, kSwap, kNeg, kMovUp3, kAdd, kMovDn2, kAdd>},
    {"fri_ext2fold4", F::kPlain, 0, 0, Plain<kFriE2F4>},
    {"gt", F::kFelt, 0, 0, PushedFeltThen<&E::CmpGt>},
    {"gte", F::kFelt, 0, 0, PushedFeltThen<&E::CmpGte>},
    {"hash", F::kPlain, 0, 0, LowerHash},
    {"hmerge", F::kPlain, 0, 0, Sequence<&E::HMerge>},
    {"horner_eval_base", F::kPlain, 0, 0, Plain<kHornerBase>},
    {"horner_eval_ext", F::kPlain, 0, 0, Plain<kHornerExt>},
    {"hperm", F::kPlain, 0, 0, Plain<kHPerm>},
    {"ilog2", F::kPlain, 0, 0, LowerIlog2},
    {"inv", F::kPlain, 0, 0, Plain<kInv>},
    {"is_odd", F::kPlain, 0, 0, Plain<kU32Split, kDrop, kPad, kIncr, kU32And>},
    {"loc_load", F::kLocal, 0, 65535, LowerLocal<false, kMLoad>},
    {"loc_loadw", F::kLocal, 0, 65535, LowerLocal<true, kMLoadW>},
    {"loc_store", F::kLocal, 0, 65535, LowerLocal<false, kMStore, kDrop>},
    {"loc_storew", F::kLocal, 0, 65535, LowerLocal<true, kMStoreW>},
    {"locaddr", F::kLocal, 0, 65535, LowerLocal<false>},
    {"lt", F::kFelt, 0, 0, PushedFeltThen<&E::CmpLt>},
    {"lte", F::kFelt, 0, 0, PushedFeltThen<&E::CmpLte>},
    {"mem_load", F::kU32, 0, 0, PushedImm<kU32, kMLoad>},
    {"mem_loadw", F::kU32, 0, 0, PushedImm<kU32, kMLoadW>},
    {"mem_store", F::kU32, 0, 0, PushedImm<kU32, kMStore, kDrop>},
    {"mem_storew", F::kU32, 0, 0, PushedImm<kU32, kMStoreW>},
    {"mem_stream", F::kPlain, 0, 0, Plain<kMStream>},
    {"movdn", F::kStackIndexRequired, 2, 15, LowerMovdn},
    {"movdnw", F::kStackIndexRequired, 2, 3, LowerMovdnw},
    {"movup", F::kStackIndexRequired, 2, 15, LowerMovup},
    {"movupw", F::kStackIndexRequired, 2, 3, LowerMovupw},
    {"mtree_get", F::kPlain, 0, 0, LowerMtreeGetSet<false>},
    {"mtree_merge", F::kPlain, 0, 0, LowerMtreeMerge},
    {"mtree_set", F::kPlain, 0, 0, LowerMtreeGetSet<true>},
    {"mtree_verify", F::kErr, 0, 0, LowerMtreeVerify},
    {"mul", F::kFelt, 0, 0, LowerMul},
    {"neg", F::kPlain, 0, 0, Plain<kNeg>},
    {"neq", F::kFelt, 0, 0, LowerEq<true>},
    {"nop", F::kPlain, 0, 0, Plain<kNoop>},
    {"not", F::kPlain, 0, 0, Plain<kNot>},
    {"or", F::kPlain, 0, 0, Plain<kOr>},
    {"padw", F::kPlain, 0, 0, Plain<kPad, kPad, kPad, kPad>},
    {"pow2", F::kPlain, 0, 0, Sequence<&E::Pow2>},
    {"procref", F::kInvoke, 0, 0, nullptr},
    {"push", F::kPush, 0, 0, LowerPush},
    {"sdepth", F::kPlain, 0, 0, Plain<kSDepth>},
    {"sub", F::kFelt, 0, 0, LowerSub},
    {"swap", F::kStackIndex, 1, 15, LowerSwap},
    {"swapdw", F::kPlain, 0, 0, Plain<kSwapDW>},
    {"swapw", F::kStackIndex, 1, 3, LowerSwapw},
    {"syscall", F::kInvoke, 0, 0, nullptr},
    {"trace", F::kU32Required, 0, 0, LowerTrace},
    {"u32and", F::kU32, 0, 0, LowerU32Bitwise<U32Bitwise::kAnd>},
    {"u32assert", F::kErr, 0, 0, lowering::LowerU32Assert},
    {"u32assert2", F::kErr, 0, 0, lowering::LowerU32Assert2},
    {"u32assertw", F::kErr, 0, 0, lowering::LowerU32Assertw},
    {"u32cast", F::kPlain, 0, 0, Plain<kU32Split, kDrop>},
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
    {"u32not", F::kU32, 0, 0, LowerU32Bitwise<U32Bitwise::kNot>},
    {"u32or", F::kU32, 0, 0, LowerU32Bitwise<U32Bitwise::kOr>},
    {"u32overflowing_add", F::kU32, 0, 0, LowerU32Arith<kU32Add, false>},
    {"u32overflowing_add3", F::kPlain, 0, 0, Plain<kU32Add3>},
    {"u32overflowing_madd", F::kPlain, 0, 0, Plain<kU32MAdd>},
    {"u32overflowing_mul", F::kU32, 0, 0, LowerU32Arith<kU32Mul, false>},
    {"u32overflowing_sub", F::kU32, 0, 0, LowerU32Arith<kU32Sub, false>},
    {"u32popcnt", F::kPlain, 0, 0, LowerU32Popcnt},
    {"u32rotl", F::kShift, 0, 31, LowerU32Shift<U32Shift::kRotl>},
    {"u32rotr", F::kShift, 0, 31, LowerU32Shift<U32Shift::kRotr>},
    {"u32shl", F::kShift, 0, 31, LowerU32Shift<U32Shift::kShl>},
    {"u32shr", F::kShift, 0, 31, LowerU32Shift<U32Shift::kShr>},
    {"u32split", F::kPlain, 0, 0, Plain<kU32Split>},
    {"u32test", F::kPlain, 0, 0, Plain<kDup0, kU32Split, kSwap, kDrop, kEqz>},
    {"u32testw", F::kPlain, 0, 0,
     Plain<kDup3, kU32Split, kSwap, kDrop, kEqz, kDup3, kU32Split, kSwap, kDrop, kEqz, kAnd, kDup2,
           kU32Split, kSwap, kDrop, kEqz, kAnd, kDup1, kU32Split, kSwap, kDrop, kEqz, kAnd>},
    {"u32wrapping_add", F::kU32, 0, 0, LowerU32Arith<kU32Add, true>},
    {"u32wrapping_add3", F::kPlain, 0, 0, Plain<kU32Add3, kDrop>},
    {"u32wrapping_madd", F::kPlain, 0, 0, Plain<kU32MAdd, kDrop>},
    {"u32wrapping_mul", F::kU32, 0, 0, LowerU32Arith<kU32Mul, true>},
    {"u32wrapping_sub", F::kU32, 0, 0, LowerU32Arith<kU32Sub, true>},
    {"u32xor", F::kU32, 0, 0, LowerU32Bitwise<U32Bitwise::kXor>},
    {"xor", F::kPlain, 0, 0, Plain<kDup0, kDup2, kOr, kMovDn2, kAnd, kNot, kAnd>},
};
static_assert(RowsSortedAndUnique(kRows), "kRows must be sorted by name, without duplicates");

}  // namespace

const InstructionTable& Instructions() {
  static const InstructionTable* const table = [] {
    absl::StatusOr<InstructionTable> t = InstructionTable::Create(kRows, SystemEvents());
    if (!t.ok()) {  // a broken invariant of the static rows above
      std::fprintf(stderr, "v0.16 instructions: %s\n", t.status().ToString().c_str());
      std::abort();
    }
    return new InstructionTable(*std::move(t));
  }();
  return *table;
}

}  // namespace flamefleet::vm::v0_16
