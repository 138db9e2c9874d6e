#include "vm/assembler/lower.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "vm/assembler/opcodes.h"
#include "vm/crypto/blake3.h"
#include "vm/parser/ast.h"

namespace flamefleet::vm {
namespace {

using enum Opcode;

// The Goldilocks prime p = 2^64 - 2^32 + 1.
constexpr uint64_t kModulus = 0xFFFFFFFF00000001ULL;
constexpr uint64_t kU32Max = 0xFFFFFFFFULL;

// System-event ids (v0.16 core/src/sys_events.rs), emitted as EMIT immediates
// (§2.12).
constexpr uint64_t kEventMerkleNodeMerge = 276124218;
constexpr uint64_t kEventMerkleNodeToStack = 361943238;
constexpr uint64_t kEventMapValueToStack = 574478993;
constexpr uint64_t kEventMapValueToStackN = 630847990;
constexpr uint64_t kEventHasMapKey = 652777600;
constexpr uint64_t kEventU64Div = 678156251;
constexpr uint64_t kEventExt2Inv = 1251967401;
constexpr uint64_t kEventSmtPeek = 1889584556;
constexpr uint64_t kEventU32Clz = 1951932030;
constexpr uint64_t kEventU32Ctz = 2008979519;
constexpr uint64_t kEventU32Clo = 2032895094;
constexpr uint64_t kEventU32Cto = 2083700134;
constexpr uint64_t kEventIlog2 = 2297972669;
constexpr uint64_t kEventMemToMap = 2389394361;
constexpr uint64_t kEventHdwordToMap = 2391452729;
constexpr uint64_t kEventHdwordToMapWithDomain = 2822590340;
constexpr uint64_t kEventHpermToMap = 3297060969;
constexpr uint64_t kEventFalconDiv = 3419226155;

constexpr uint64_t Negate(uint64_t v) { return v == 0 ? 0 : kModulus - v; }

uint64_t MulMod(uint64_t a, uint64_t b) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(a) * b %
                               kModulus);
}

// Returns v^(p-2) = 1/v for v != 0 (Fermat).
uint64_t Inverse(uint64_t v) {
  uint64_t result = 1;
  uint64_t base = v;
  for (uint64_t e = kModulus - 2; e != 0; e >>= 1) {
    if (e & 1) result = MulMod(result, base);
    base = MulMod(base, base);
  }
  return result;
}

int BitLength(uint64_t v) {
  int n = 0;
  for (; v != 0; v >>= 1) ++n;
  return n;
}

// Appends operations, with the helper sequences of §0.1.
class Emitter {
 public:
  explicit Emitter(std::vector<LoweredOp>* out) : out_(out) {}

  void Op(Opcode op, uint64_t imm = 0) { out_->push_back(LoweredOp{op, imm}); }
  void Ops(std::initializer_list<Opcode> ops) {
    for (Opcode op : ops) Op(op);
  }
  void Times(Opcode op, int n) {
    for (int i = 0; i < n; ++i) Op(op);
  }
  // PUSH(v) with v already reduced; always a PUSH, even for 0 and 1.
  void Push(uint64_t v) { Op(kPush, v % kModulus); }
  // P(v): 0 -> PAD, 1 -> PAD INCR, otherwise PUSH(v).
  void P(uint64_t v) {
    v %= kModulus;
    if (v == 0) {
      Op(kPad);
    } else if (v == 1) {
      Ops({kPad, kIncr});
    } else {
      Push(v);
    }
  }
  void Pow2() {
    Push(2);
    Ops({kPad, kIncr, kSwap, kPad});
    Times(kExpAcc, 6);
    Ops({kDrop, kDrop, kSwap, kEqz});
    Op(kAssert, 0);
  }
  void Exp(int bits) {
    Ops({kPad, kIncr, kMovUp2, kPad});
    Times(kExpAcc, bits);
    Ops({kDrop, kDrop, kSwap, kEqz});
    Op(kAssert, 0);
  }
  void CmpLt() {
    Ops({kU32Split, kMovUp2, kU32Split, kMovUp2, kU32Sub, kSwap, kEqz, kMovUp2,
         kMovUp3, kU32Sub, kSwap, kDrop, kAnd, kOr});
  }
  void CmpLte() {
    Ops({kU32Split, kMovUp2, kU32Split, kMovUp2, kU32Sub, kSwap, kEqz, kMovUp2,
         kMovUp3, kU32Sub, kSwap, kEqz, kOr, kAnd, kOr});
  }
  void CmpGt() {
    Ops({kU32Split, kMovUp2, kU32Split, kSwap, kMovDn2, kU32Sub, kSwap, kEqz,
         kMovUp3, kMovUp3, kU32Sub, kSwap, kDrop, kAnd, kOr});
  }
  void CmpGte() {
    Ops({kU32Split, kMovUp2, kU32Split, kSwap, kMovDn2, kU32Sub, kSwap, kEqz,
         kMovUp3, kMovUp3, kU32Sub, kSwap, kEqz, kOr, kAnd, kOr});
  }
  void U32Or() { Ops({kDup1, kDup1, kU32And, kNeg, kAdd, kAdd}); }
  void U32Not() {
    Push(kU32Max);
    Op(kU32Assert2, 0);
    Ops({kSwap, kU32Sub, kDrop});
  }
  void HMerge() {
    Ops({kPad, kPad, kPad, kPad, kSwapW2, kSwapW, kHPerm, kDrop, kDrop, kDrop,
         kDrop, kSwapW, kDrop, kDrop, kDrop, kDrop});
  }
  void AssertW(uint64_t code) {
    Ops({kMovUp4, kEq});
    Op(kAssert, code);
    Ops({kMovUp3, kEq});
    Op(kAssert, code);
    Ops({kMovUp2, kEq});
    Op(kAssert, code);
    Op(kEq);
    Op(kAssert, code);
  }

 private:
  std::vector<LoweredOp>* out_;
};

// An immediate after resolution: its value and whether it was written as a
// number literal (the parser-time folding of §2 applies only to literals).
struct Imm {
  uint64_t value = 0;
  bool literal = true;
};

// The integer type an immediate must fit.
enum class ImmType { kFelt, kU32, kU16, kU8 };

uint64_t MaxOf(ImmType type) {
  switch (type) {
    case ImmType::kFelt:
      return kModulus - 1;
    case ImmType::kU32:
      return kU32Max;
    case ImmType::kU16:
      return 0xFFFF;
    case ImmType::kU8:
      return 0xFF;
  }
  return 0;
}

absl::string_view TypeName(ImmType type) {
  switch (type) {
    case ImmType::kFelt:
      return "a field element";
    case ImmType::kU32:
      return "a u32 value";
    case ImmType::kU16:
      return "a u16 value";
    case ImmType::kU8:
      return "a u8 value";
  }
  return "?";
}

// The state of one LowerInstruction call.
class Lowering {
 public:
  Lowering(const ast::Instruction& inst, const LowerContext& ctx,
           std::vector<LoweredOp>* out)
      : inst_(inst), ctx_(ctx), e_(out) {}

  absl::Status Run();

 private:
  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(message);
  }

  absl::StatusOr<ast::ConstantValue> Resolve(const std::string& name) const {
    if (!ctx_.resolve_constant) {
      return absl::InvalidArgumentError(
          absl::StrCat("undefined constant '", name, "'"));
    }
    absl::StatusOr<ast::ConstantValue> value = ctx_.resolve_constant(name);
    if (absl::IsNotFound(value.status())) {
      return absl::InvalidArgumentError(
          absl::StrCat("undefined constant '", name, "'"));
    }
    return value;
  }

  // Resolves a scalar immediate (literal or felt constant) and checks it fits
  // `type`.
  absl::StatusOr<Imm> Scalar(const ast::Immediate& imm, ImmType type) const {
    Imm result;
    switch (imm.kind) {
      case ast::Immediate::Kind::kLiteral:
        result = Imm{imm.value, true};
        break;
      case ast::Immediate::Kind::kConstant: {
        FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstantValue value,
                                    Resolve(imm.text));
        if (value.kind != ast::ConstantValue::Kind::kFelt) {
          return Error(absl::StrCat("invalid immediate for '", inst_.name,
                                    "': constant '", imm.text, "' is not ",
                                    TypeName(type)));
        }
        result = Imm{value.felt, false};
        break;
      }
      case ast::Immediate::Kind::kWord:
      case ast::Immediate::Kind::kString:
        return Error(absl::StrCat("invalid immediate for '", inst_.name,
                                  "': expected ", TypeName(type)));
    }
    if (result.value > MaxOf(type)) {
      return Error(absl::StrCat("invalid immediate for '", inst_.name, "': ",
                                result.value, " is not ", TypeName(type)));
    }
    return result;
  }

  // Returns the single optional immediate of the instruction (nullopt when
  // written bare).
  absl::StatusOr<std::optional<Imm>> OptionalImm(ImmType type) const {
    if (inst_.args.empty()) return std::optional<Imm>();
    if (inst_.args.size() > 1) return TooManyImmediates();
    FLAMEFLEET_ASSIGN_OR_RETURN(Imm imm, Scalar(inst_.args[0], type));
    return std::optional<Imm>(imm);
  }

  // Returns the single required immediate of the instruction.
  absl::StatusOr<Imm> RequiredImm(ImmType type) const {
    if (inst_.args.empty()) {
      return Error(
          absl::StrCat("'", inst_.name, "' requires an immediate value"));
    }
    if (inst_.args.size() > 1) return TooManyImmediates();
    return Scalar(inst_.args[0], type);
  }

  // Returns the stack index of dup/swap/movup/...: a literal in [lo, hi],
  // `dflt` when bare.
  absl::StatusOr<uint64_t> StackIndex(uint64_t lo, uint64_t hi,
                                      std::optional<uint64_t> dflt) const {
    if (inst_.args.empty()) {
      if (dflt) return *dflt;
      return Error(absl::StrCat("'", inst_.name, "' requires an index"));
    }
    if (inst_.args.size() > 1) return TooManyImmediates();
    const ast::Immediate& imm = inst_.args[0];
    if (imm.kind != ast::Immediate::Kind::kLiteral) {
      return Error(absl::StrCat("'", inst_.name, "' requires a literal index"));
    }
    if (imm.value < lo || imm.value > hi) {
      return Error(absl::StrCat("invalid index for '", inst_.name,
                                "': ", imm.value, " is not in the range ", lo,
                                "..=", hi));
    }
    return imm.value;
  }

  absl::Status TooManyImmediates() const {
    return Error(
        absl::StrCat("too many immediate values for '", inst_.name, "'"));
  }

  absl::Status NoImmediates() const {
    if (!inst_.args.empty()) {
      return Error(absl::StrCat("'", inst_.name, "' takes no immediate value"));
    }
    return absl::OkStatus();
  }

  // Returns the error code of the instruction's `.err=` (0 when absent).
  absl::StatusOr<uint64_t> ErrorCode() const {
    if (!inst_.error) return uint64_t{0};
    const ast::Immediate& err = *inst_.error;
    switch (err.kind) {
      case ast::Immediate::Kind::kString:
        return ErrorCodeFromMessage(err.text);
      case ast::Immediate::Kind::kConstant: {
        FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstantValue value,
                                    Resolve(err.text));
        if (value.kind != ast::ConstantValue::Kind::kString) {
          return Error(absl::StrCat("invalid error message: constant '",
                                    err.text, "' is not a string"));
        }
        return ErrorCodeFromMessage(value.text);
      }
      case ast::Immediate::Kind::kLiteral:
      case ast::Immediate::Kind::kWord:
        break;
    }
    return Error(
        "invalid error message: expected a quoted string or a string constant");
  }

  // Appends LADDR(i) after the §2.11 checks.
  absl::Status LocalAddress(bool word) {
    FLAMEFLEET_ASSIGN_OR_RETURN(Imm imm, RequiredImm(ImmType::kU16));
    const uint64_t index = imm.value;
    const uint64_t n = ctx_.num_locals;
    if (word && index % 4 != 0) {
      return Error(
          absl::StrCat("invalid local word index: ", index,
                       " (the index of a local word must be a multiple of 4)"));
    }
    if (n == 0) {
      return Error(
          "invalid procedure local reference: this procedure does not allocate "
          "any locals");
    }
    if (word && n < 4) {
      return Error(
          absl::StrCat("invalid procedure local reference: word access needs "
                       "at least 4 locals, "
                       "the procedure has ",
                       n));
    }
    const uint64_t max = word ? n - 4 : n - 1;
    if (index > max) {
      return Error(
          absl::StrCat("invalid procedure local reference: index ", index,
                       " is out of range (valid range: 0..=", max, ")"));
    }
    e_.Push(Negate(n - index));
    e_.Op(kFmpAdd);
    return absl::OkStatus();
  }

  absl::Status Assertion(absl::string_view name);
  absl::Status FieldOp(absl::string_view name, bool* handled);
  absl::Status U32Op(absl::string_view name, bool* handled);
  absl::Status StackOp(absl::string_view name, bool* handled);
  absl::Status IoOp(absl::string_view name, bool* handled);
  absl::Status CryptoOrMiscOp(absl::string_view name, bool* handled);
  absl::Status PushOp();
  absl::Status ShiftOp(absl::string_view name);

  const ast::Instruction& inst_;
  const LowerContext& ctx_;
  Emitter e_;
};

bool IsAssertion(absl::string_view name) {
  return name == "assert" || name == "assertz" || name == "assert_eq" ||
         name == "assert_eqw" || name == "u32assert" || name == "u32assert2" ||
         name == "u32assertw" || name == "mtree_verify";
}

absl::Status Lowering::Run() {
  const absl::string_view name = inst_.name;
  if (name == "exec" || name == "call" || name == "syscall" ||
      name == "procref" || name == "dynexec" || name == "dyncall") {
    return absl::InternalError(absl::StrCat(
        "'", name,
        "' produces a MAST node and is not lowered per instruction"));
  }
  if (IsAssertion(name)) return Assertion(name);
  if (inst_.error) {
    return Error(absl::StrCat("'", name, "' does not take an error message"));
  }
  bool handled = false;
  FLAMEFLEET_RETURN_IF_ERROR(FieldOp(name, &handled));
  if (handled) return absl::OkStatus();
  FLAMEFLEET_RETURN_IF_ERROR(U32Op(name, &handled));
  if (handled) return absl::OkStatus();
  FLAMEFLEET_RETURN_IF_ERROR(StackOp(name, &handled));
  if (handled) return absl::OkStatus();
  FLAMEFLEET_RETURN_IF_ERROR(IoOp(name, &handled));
  if (handled) return absl::OkStatus();
  FLAMEFLEET_RETURN_IF_ERROR(CryptoOrMiscOp(name, &handled));
  if (handled) return absl::OkStatus();
  return Error(absl::StrCat("unknown instruction '", name, "'"));
}

// §2.1.
absl::Status Lowering::Assertion(absl::string_view name) {
  FLAMEFLEET_RETURN_IF_ERROR(NoImmediates());
  FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t code, ErrorCode());
  if (name == "assert") {
    e_.Op(kAssert, code);
  } else if (name == "assertz") {
    e_.Op(kEqz);
    e_.Op(kAssert, code);
  } else if (name == "assert_eq") {
    e_.Op(kEq);
    e_.Op(kAssert, code);
  } else if (name == "assert_eqw") {
    e_.AssertW(code);
  } else if (name == "u32assert") {
    e_.Op(kPad);
    e_.Op(kU32Assert2, code);
    e_.Op(kDrop);
  } else if (name == "u32assert2") {
    e_.Op(kU32Assert2, code);
  } else if (name == "u32assertw") {
    e_.Op(kU32Assert2, code);
    e_.Ops({kMovUp3, kMovUp3});
    e_.Op(kU32Assert2, code);
    e_.Ops({kMovUp3, kMovUp3});
  } else {  // mtree_verify
    e_.Op(kMpVerify, code);
  }
  return absl::OkStatus();
}

// §2.2 - §2.4: field arithmetic, comparisons and the extension field.
absl::Status Lowering::FieldOp(absl::string_view name, bool* handled) {
  *handled = true;
  if (name == "add") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b,
                                OptionalImm(ImmType::kFelt));
    if (!b) {
      e_.Op(kAdd);
    } else if (b->value == 0) {
      // A literal add.0 is removed by the parser; a constant 0 is a NOOP.
      if (!b->literal) e_.Op(kNoop);
    } else if (b->value == 1) {
      e_.Op(kIncr);
    } else if (b->value == 2) {
      e_.Ops({kIncr, kIncr});
    } else {
      e_.Push(b->value);
      e_.Op(kAdd);
    }
  } else if (name == "sub") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b,
                                OptionalImm(ImmType::kFelt));
    if (!b) {
      e_.Ops({kNeg, kAdd});
    } else if (b->value == 0) {
      if (!b->literal) e_.Op(kNoop);
    } else {
      e_.Push(Negate(b->value));
      e_.Op(kAdd);
    }
  } else if (name == "mul") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b,
                                OptionalImm(ImmType::kFelt));
    if (!b) {
      e_.Op(kMul);
    } else if (b->value == 0) {
      e_.Ops({kDrop, kPad});
    } else if (b->value == 1) {
      if (!b->literal) e_.Op(kNoop);
    } else {
      e_.Push(b->value);
      e_.Op(kMul);
    }
  } else if (name == "div") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b,
                                OptionalImm(ImmType::kFelt));
    if (!b) {
      e_.Ops({kInv, kMul});
    } else if (b->value == 0) {
      return Error("division by zero");
    } else if (b->value == 1) {
      if (!b->literal) e_.Op(kNoop);
    } else {
      e_.Push(Inverse(b->value));
      e_.Op(kMul);
    }
  } else if (name == "neg" || name == "inv" || name == "pow2" ||
             name == "ilog2" || name == "not" || name == "and" ||
             name == "or" || name == "xor" || name == "eqw" ||
             name == "is_odd" || name == "ext2add" || name == "ext2sub" ||
             name == "ext2mul" || name == "ext2neg" || name == "ext2inv" ||
             name == "ext2div") {
    FLAMEFLEET_RETURN_IF_ERROR(NoImmediates());
    if (name == "neg") {
      e_.Op(kNeg);
    } else if (name == "inv") {
      e_.Op(kInv);
    } else if (name == "pow2") {
      e_.Pow2();
    } else if (name == "ilog2") {
      e_.Op(kEmit, kEventIlog2);
      e_.Ops({kAdvPop, kDup0});
      e_.Pow2();
      e_.Ops({kMovUp2, kU32Split, kMovUp2, kU32Split, kDup1,  kEqz,  kDup0,
              kMovDn3, kCSwap,    kDrop,   kMovDn3,   kCSwap, kDrop, kSwap,
              kPad,    kIncr,     kIncr,   kMul,      kPad,   kIncr, kNeg,
              kAdd,    kDup1,     kU32And, kEq});
      e_.Op(kAssert, 0);
    } else if (name == "not") {
      e_.Op(kNot);
    } else if (name == "and") {
      e_.Op(kAnd);
    } else if (name == "or") {
      e_.Op(kOr);
    } else if (name == "xor") {
      e_.Ops({kDup0, kDup2, kOr, kMovDn2, kAnd, kNot, kAnd});
    } else if (name == "eqw") {
      e_.Ops({kDup7, kDup4, kEq, kDup7, kDup4, kEq, kAnd, kDup6, kDup3, kEq,
              kAnd, kDup5, kDup2, kEq, kAnd});
    } else if (name == "is_odd") {
      e_.Ops({kU32Split, kDrop, kPad, kIncr, kU32And});
    } else if (name == "ext2add") {
      e_.Ops({kSwap, kMovUp3, kAdd, kMovDn2, kAdd});
    } else if (name == "ext2sub") {
      e_.Ops({kNeg, kSwap, kNeg, kMovUp3, kAdd, kMovDn2, kAdd});
    } else if (name == "ext2mul") {
      e_.Ops({kExt2Mul, kDrop, kDrop});
    } else if (name == "ext2neg") {
      e_.Ops({kNeg, kSwap, kNeg, kSwap});
    } else {  // ext2inv, ext2div
      e_.Op(kEmit, kEventExt2Inv);
      e_.Ops({kAdvPop, kAdvPop, kExt2Mul, kMovUp2, kEqz});
      e_.Op(kAssert, 0);
      e_.Op(kMovUp2);
      e_.Op(kAssert, 0);
      if (name == "ext2div") e_.Ops({kExt2Mul, kDrop, kDrop});
    }
  } else if (name == "exp") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b,
                                OptionalImm(ImmType::kFelt));
    if (!b) {
      e_.Exp(64);
    } else if (b->value == 0) {
      e_.Ops({kDrop, kPad, kIncr});
    } else if (b->value == 1) {
      e_.Op(kNoop);
    } else if (b->value <= 7) {
      e_.Times(kDup0, static_cast<int>(b->value - 1));
      e_.Times(kMul, static_cast<int>(b->value - 1));
    } else {
      e_.Push(b->value);
      e_.Exp(BitLength(b->value));
    }
  } else if (name == "exp.u") {
    if (inst_.args.size() != 1 ||
        inst_.args[0].kind != ast::Immediate::Kind::kLiteral) {
      return Error("'exp.u' requires a literal bit count");
    }
    const uint64_t bits = inst_.args[0].value;
    if (bits > 63) {
      return Error(absl::StrCat("invalid bit count for 'exp.u': ", bits,
                                " is not in the range 0..=63"));
    }
    e_.Exp(static_cast<int>(bits));
  } else if (name == "eq" || name == "neq") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b,
                                OptionalImm(ImmType::kFelt));
    if (!b) {
      e_.Op(kEq);
    } else if (b->value == 0) {
      e_.Op(kEqz);
    } else {
      e_.Push(b->value);
      e_.Op(kEq);
    }
    if (name == "neq") e_.Op(kNot);
  } else if (name == "lt" || name == "lte" || name == "gt" || name == "gte") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b,
                                OptionalImm(ImmType::kFelt));
    if (b) e_.P(b->value);
    if (name == "lt") {
      e_.CmpLt();
    } else if (name == "lte") {
      e_.CmpLte();
    } else if (name == "gt") {
      e_.CmpGt();
    } else {
      e_.CmpGte();
    }
  } else {
    *handled = false;
  }
  return absl::OkStatus();
}

// u32shl/shr/rotl/rotr (§2.7): literal 0 folds away, a constant 0 is a NOOP, >
// 31 is an error.
absl::Status Lowering::ShiftOp(absl::string_view name) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b, OptionalImm(ImmType::kU8));
  if (!b) {
    if (name == "u32rotr") {
      e_.Push(32);
      e_.Ops({kSwap, kU32Sub, kDrop});
      e_.Pow2();
      e_.Ops({kMul, kU32Split, kAdd});
      return absl::OkStatus();
    }
    e_.Pow2();
  } else if (b->value == 0) {
    if (!b->literal) e_.Op(kNoop);
    return absl::OkStatus();
  } else if (b->value > 31) {
    return Error(absl::StrCat("invalid shift amount for '", name,
                              "': ", b->value,
                              " (value must be in the range 0..=31)"));
  } else if (name == "u32rotr") {
    e_.Push(uint64_t{1} << (32 - b->value));
    e_.Ops({kU32Mul, kAdd});
    return absl::OkStatus();
  } else {
    e_.Push(uint64_t{1} << b->value);
  }
  if (name == "u32shl") {
    e_.Ops({kU32Mul, kDrop});
  } else if (name == "u32shr") {
    e_.Ops({kU32Div, kDrop});
  } else {  // u32rotl, u32rotr without immediate
    e_.Ops({kU32Mul, kAdd});
  }
  return absl::OkStatus();
}

// §2.5 - §2.8.
absl::Status Lowering::U32Op(absl::string_view name, bool* handled) {
  *handled = true;
  if (name == "u32overflowing_add" || name == "u32wrapping_add" ||
      name == "u32overflowing_sub" || name == "u32wrapping_sub" ||
      name == "u32overflowing_mul" || name == "u32wrapping_mul") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b,
                                OptionalImm(ImmType::kU32));
    const bool wrapping = absl::StartsWith(name, "u32wrapping");
    const bool is_mul = absl::EndsWith(name, "_mul");
    const Opcode op = absl::EndsWith(name, "_add")   ? kU32Add
                      : absl::EndsWith(name, "_sub") ? kU32Sub
                                                     : kU32Mul;
    if (b && b->literal && wrapping) {
      // Parse-time folding of literal immediates.
      if (is_mul && b->value == 0) {
        e_.Ops({kDrop, kPad});
        return absl::OkStatus();
      }
      if (is_mul && b->value == 1) return absl::OkStatus();
      if (!is_mul && b->value == 0) return absl::OkStatus();
    }
    if (b) e_.P(b->value);
    e_.Op(op);
    if (wrapping) e_.Op(kDrop);
  } else if (name == "u32div" || name == "u32mod" || name == "u32divmod") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b,
                                OptionalImm(ImmType::kU32));
    if (b) {
      if (b->value == 0) return Error("division by zero");
      if (name == "u32div" && b->literal && b->value == 1) {
        return absl::OkStatus();  // removed by the parser
      }
      e_.P(b->value);
    }
    e_.Op(kU32Div);
    if (name == "u32div") {
      e_.Op(kDrop);
    } else if (name == "u32mod") {
      e_.Ops({kSwap, kDrop});
    }
  } else if (name == "u32and" || name == "u32or" || name == "u32xor" ||
             name == "u32not") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b,
                                OptionalImm(ImmType::kU32));
    if (b && b->literal && b->value == 0) {
      if (name == "u32and") {
        e_.Ops({kDrop, kPad});
        return absl::OkStatus();
      }
      if (name == "u32or" || name == "u32xor") return absl::OkStatus();
    }
    if (b) e_.P(b->value);
    if (name == "u32and") {
      e_.Op(kU32And);
    } else if (name == "u32or") {
      e_.U32Or();
    } else if (name == "u32xor") {
      e_.Op(kU32Xor);
    } else {
      e_.U32Not();
    }
  } else if (name == "u32shl" || name == "u32shr" || name == "u32rotl" ||
             name == "u32rotr") {
    return ShiftOp(name);
  } else if (name == "u32lt" || name == "u32lte" || name == "u32gt" ||
             name == "u32gte" || name == "u32min" || name == "u32max") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> b,
                                OptionalImm(ImmType::kU32));
    if (b) e_.P(b->value);
    if (name == "u32lt") {
      e_.Ops({kU32Sub, kSwap, kDrop});
    } else if (name == "u32lte") {
      e_.Ops({kSwap, kU32Sub, kSwap, kDrop, kNot});
    } else if (name == "u32gt") {
      e_.Ops({kSwap, kU32Sub, kSwap, kDrop});
    } else if (name == "u32gte") {
      e_.Ops({kU32Sub, kSwap, kDrop, kNot});
    } else if (name == "u32min") {
      e_.Ops({kDup1, kDup1, kU32Sub, kSwap, kDrop, kEqz, kCSwap, kDrop});
    } else {
      e_.Ops({kDup1, kDup1, kU32Sub, kSwap, kDrop, kEqz, kCSwap, kSwap, kDrop});
    }
  } else if (name == "u32test" || name == "u32testw" || name == "u32cast" ||
             name == "u32split" || name == "u32overflowing_add3" ||
             name == "u32wrapping_add3" || name == "u32overflowing_madd" ||
             name == "u32wrapping_madd" || name == "u32popcnt" ||
             name == "u32clz" || name == "u32ctz" || name == "u32clo" ||
             name == "u32cto") {
    FLAMEFLEET_RETURN_IF_ERROR(NoImmediates());
    if (name == "u32test") {
      e_.Ops({kDup0, kU32Split, kSwap, kDrop, kEqz});
    } else if (name == "u32testw") {
      e_.Ops({kDup3, kU32Split, kSwap, kDrop, kEqz});
      e_.Ops({kDup3, kU32Split, kSwap, kDrop, kEqz, kAnd});
      e_.Ops({kDup2, kU32Split, kSwap, kDrop, kEqz, kAnd});
      e_.Ops({kDup1, kU32Split, kSwap, kDrop, kEqz, kAnd});
    } else if (name == "u32cast") {
      e_.Ops({kU32Split, kDrop});
    } else if (name == "u32split") {
      e_.Op(kU32Split);
    } else if (name == "u32overflowing_add3") {
      e_.Op(kU32Add3);
    } else if (name == "u32wrapping_add3") {
      e_.Ops({kU32Add3, kDrop});
    } else if (name == "u32overflowing_madd") {
      e_.Op(kU32MAdd);
    } else if (name == "u32wrapping_madd") {
      e_.Ops({kU32MAdd, kDrop});
    } else if (name == "u32popcnt") {
      e_.Op(kDup0);
      e_.Push(2);
      e_.Ops({kU32Div, kDrop});
      e_.Push(0x55555555);
      e_.Ops({kU32And, kU32Sub, kDrop, kDup0});
      e_.Push(4);
      e_.Ops({kU32Div, kDrop});
      e_.Push(0x33333333);
      e_.Ops({kU32And, kSwap});
      e_.Push(0x33333333);
      e_.Ops({kU32And, kU32Add, kDrop, kDup0});
      e_.Push(16);
      e_.Ops({kU32Div, kDrop, kU32Add, kDrop});
      e_.Push(0x0F0F0F0F);
      e_.Op(kU32And);
      e_.Push(0x01010101);
      e_.Ops({kU32Mul, kDrop});
      e_.Push(1u << 24);
      e_.Ops({kU32Div, kDrop});
    } else if (name == "u32clz") {
      e_.Op(kEmit, kEventU32Clz);
      e_.Op(kAdvPop);
      e_.Push(32);
      e_.Ops({kDup1, kNeg, kAdd});
      e_.Pow2();
      e_.Push(1);
      e_.Ops({kNeg, kAdd});
      e_.Push(2);
      e_.Ops({kU32Div, kDrop, kDup0, kIncr});
      e_.Push(kU32Max);
      e_.Ops({kMovUp2, kNeg, kAdd, kDup3, kEqz, kMovDn3, kMovUp4, kU32And, kEq,
              kMovUp2, kOr});
      e_.Op(kAssert, 0);
    } else if (name == "u32clo") {
      e_.Op(kEmit, kEventU32Clo);
      e_.Op(kAdvPop);
      e_.Push(32);
      e_.Ops({kDup1, kNeg, kAdd});
      e_.Pow2();
      e_.Push(1);
      e_.Ops({kNeg, kAdd, kDup0});
      e_.Push(2);
      e_.Ops({kU32Div, kDrop});
      e_.Push(kU32Max);
      e_.Ops({kSwap, kNeg, kAdd, kMovUp3, kU32And});
      e_.Push(kU32Max);
      e_.Ops({kMovUp2, kNeg, kAdd, kEq});
      e_.Op(kAssert, 0);
    } else {  // u32ctz, u32cto
      const bool ctz = name == "u32ctz";
      e_.Op(kEmit, ctz ? kEventU32Ctz : kEventU32Cto);
      e_.Ops({kAdvPop, kSwap, kDup1});
      e_.Pow2();
      e_.Ops({kDup0, kPad, kIncr, kNeg, kAdd, kSwap, kU32Split, kDrop});
      if (ctz) {
        e_.Ops({kDup0, kMovUp2, kAdd});
      } else {
        e_.Ops({kDup1, kAdd});
      }
      e_.Ops({kMovUp2, kU32And, kEq});
      e_.Op(kAssert, 0);
    }
  } else {
    *handled = false;
  }
  return absl::OkStatus();
}

// §2.9.
absl::Status Lowering::StackOp(absl::string_view name, bool* handled) {
  *handled = true;
  static constexpr std::array<Opcode, 16> kDup = {
      kDup0, kDup1, kDup2, kDup3,  kDup4, kDup5,  kDup6, kDup7,
      kNoop, kDup9, kNoop, kDup11, kNoop, kDup13, kNoop, kDup15};
  static constexpr std::array<Opcode, 9> kMovUp = {kNoop,   kNoop,   kMovUp2,
                                                   kMovUp3, kMovUp4, kMovUp5,
                                                   kMovUp6, kMovUp7, kMovUp8};
  static constexpr std::array<Opcode, 9> kMovDn = {kNoop,   kNoop,   kMovDn2,
                                                   kMovDn3, kMovDn4, kMovDn5,
                                                   kMovDn6, kMovDn7, kMovDn8};
  if (name == "drop" || name == "dropw" || name == "padw" || name == "swapdw" ||
      name == "cswap" || name == "cswapw" || name == "cdrop" ||
      name == "cdropw") {
    FLAMEFLEET_RETURN_IF_ERROR(NoImmediates());
    if (name == "drop") {
      e_.Op(kDrop);
    } else if (name == "dropw") {
      e_.Times(kDrop, 4);
    } else if (name == "padw") {
      e_.Times(kPad, 4);
    } else if (name == "swapdw") {
      e_.Op(kSwapDW);
    } else if (name == "cswap") {
      e_.Op(kCSwap);
    } else if (name == "cswapw") {
      e_.Op(kCSwapW);
    } else if (name == "cdrop") {
      e_.Ops({kCSwap, kDrop});
    } else {
      e_.Op(kCSwapW);
      e_.Times(kDrop, 4);
    }
  } else if (name == "dup") {
    FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n, StackIndex(0, 15, 0));
    if (n == 8 || n == 10 || n == 12 || n == 14) {
      e_.Ops({kPad, kDup[n + 1], kAdd});
    } else {
      e_.Op(kDup[n]);
    }
  } else if (name == "dupw") {
    FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n, StackIndex(0, 3, 0));
    e_.Times(kDup[4 * n + 3], 4);
  } else if (name == "swap") {
    FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n, StackIndex(1, 15, 1));
    if (n == 1) {
      e_.Op(kSwap);
    } else if (n == 2) {
      e_.Ops({kSwap, kMovUp2});
    } else if (n <= 8) {
      e_.Ops({kMovDn[n - 1], kMovUp[n]});
    } else {
      e_.Ops({kMovDn8, kSwapDW});
      if (n == 9) {
        e_.Op(kSwap);
      } else if (n == 10) {
        e_.Ops({kSwap, kMovUp2});
      } else {
        e_.Ops({kMovDn[n - 9], kMovUp[n - 8]});
      }
      e_.Ops({kSwapDW, kMovUp8});
    }
  } else if (name == "swapw") {
    FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n, StackIndex(1, 3, 1));
    e_.Op(n == 1 ? kSwapW : n == 2 ? kSwapW2 : kSwapW3);
  } else if (name == "movup") {
    FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n,
                                StackIndex(2, 15, std::nullopt));
    if (n <= 8) {
      e_.Op(kMovUp[n]);
    } else {
      e_.Ops({kSwapDW, n == 9 ? kSwap : kMovUp[n - 8], kSwapDW, kMovUp8});
    }
  } else if (name == "movdn") {
    FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n,
                                StackIndex(2, 15, std::nullopt));
    if (n <= 8) {
      e_.Op(kMovDn[n]);
    } else {
      e_.Ops({kMovDn8, kSwapDW, n == 9 ? kSwap : kMovDn[n - 8], kSwapDW});
    }
  } else if (name == "movupw") {
    FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n,
                                StackIndex(2, 3, std::nullopt));
    e_.Ops({kSwapW, kSwapW2});
    if (n == 3) e_.Op(kSwapW3);
  } else if (name == "movdnw") {
    FLAMEFLEET_ASSIGN_OR_RETURN(const uint64_t n,
                                StackIndex(2, 3, std::nullopt));
    if (n == 3) e_.Op(kSwapW3);
    e_.Ops({kSwapW2, kSwapW});
  } else {
    *handled = false;
  }
  return absl::OkStatus();
}

// §2.10.
absl::Status Lowering::PushOp() {
  if (inst_.args.empty()) return Error("'push' requires at least one value");
  if (inst_.args.size() > 16) {
    return Error(absl::StrCat("too many values for 'push': ", inst_.args.size(),
                              " (at most 16 per instruction)"));
  }
  for (const ast::Immediate& imm : inst_.args) {
    switch (imm.kind) {
      case ast::Immediate::Kind::kLiteral:
        if (imm.value >= kModulus) {
          return Error(absl::StrCat("invalid value for 'push': ", imm.value,
                                    " exceeds the field modulus"));
        }
        e_.P(imm.value);
        break;
      case ast::Immediate::Kind::kWord:
        for (uint64_t w : imm.word) {
          if (w >= kModulus) {
            return Error(absl::StrCat("invalid value for 'push': word element ",
                                      w, " exceeds the field modulus"));
          }
          e_.P(w);
        }
        break;
      case ast::Immediate::Kind::kConstant: {
        FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstantValue value,
                                    Resolve(imm.text));
        if (value.kind == ast::ConstantValue::Kind::kFelt) {
          e_.P(value.felt);
        } else if (value.kind == ast::ConstantValue::Kind::kWord) {
          for (uint64_t w : value.word) e_.P(w);
        } else {
          return Error(absl::StrCat("invalid value for 'push': constant '",
                                    imm.text, "' is a string"));
        }
        break;
      }
      case ast::Immediate::Kind::kString:
        return Error(
            "invalid value for 'push': expected a field element or a word");
    }
  }
  return absl::OkStatus();
}

// §2.10 - §2.13.
absl::Status Lowering::IoOp(absl::string_view name, bool* handled) {
  *handled = true;
  if (name == "push") return PushOp();
  if (name == "mem_load" || name == "mem_loadw" || name == "mem_store" ||
      name == "mem_storew") {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<Imm> a,
                                OptionalImm(ImmType::kU32));
    if (a) e_.P(a->value);
    if (name == "mem_load") {
      e_.Op(kMLoad);
    } else if (name == "mem_loadw") {
      e_.Op(kMLoadW);
    } else if (name == "mem_store") {
      e_.Ops({kMStore, kDrop});
    } else {
      e_.Op(kMStoreW);
    }
  } else if (name == "locaddr") {
    return LocalAddress(/*word=*/false);
  } else if (name == "loc_load") {
    FLAMEFLEET_RETURN_IF_ERROR(LocalAddress(/*word=*/false));
    e_.Op(kMLoad);
  } else if (name == "loc_loadw") {
    FLAMEFLEET_RETURN_IF_ERROR(LocalAddress(/*word=*/true));
    e_.Op(kMLoadW);
  } else if (name == "loc_store") {
    FLAMEFLEET_RETURN_IF_ERROR(LocalAddress(/*word=*/false));
    e_.Ops({kMStore, kDrop});
  } else if (name == "loc_storew") {
    FLAMEFLEET_RETURN_IF_ERROR(LocalAddress(/*word=*/true));
    e_.Op(kMStoreW);
  } else if (name == "adv_push") {
    if (inst_.args.size() != 1 ||
        inst_.args[0].kind != ast::Immediate::Kind::kLiteral) {
      return Error("'adv_push' requires a literal count");
    }
    const uint64_t n = inst_.args[0].value;
    if (n < 1 || n > 16) {
      return Error(absl::StrCat("invalid count for 'adv_push': ", n,
                                " is not in the range 1..=16"));
    }
    e_.Times(kAdvPop, static_cast<int>(n));
  } else if (name == "emit") {
    FLAMEFLEET_ASSIGN_OR_RETURN(Imm id, RequiredImm(ImmType::kU32));
    e_.Op(kEmit, id.value);
  } else if (absl::StartsWith(name, "adv.")) {
    FLAMEFLEET_RETURN_IF_ERROR(NoImmediates());
    const absl::string_view event = name.substr(4);
    uint64_t id = 0;
    if (event == "push_mapval") {
      id = kEventMapValueToStack;
    } else if (event == "push_mapvaln") {
      id = kEventMapValueToStackN;
    } else if (event == "has_mapkey") {
      id = kEventHasMapKey;
    } else if (event == "push_mtnode") {
      id = kEventMerkleNodeToStack;
    } else if (event == "push_smtpeek") {
      id = kEventSmtPeek;
    } else if (event == "push_u64div") {
      id = kEventU64Div;
    } else if (event == "push_falcon_div") {
      id = kEventFalconDiv;
    } else if (event == "insert_mem") {
      id = kEventMemToMap;
    } else if (event == "insert_hdword") {
      id = kEventHdwordToMap;
    } else if (event == "insert_hdword_d") {
      id = kEventHdwordToMapWithDomain;
    } else if (event == "insert_hperm") {
      id = kEventHpermToMap;
    } else {
      return Error(absl::StrCat("unknown system event '", name, "'"));
    }
    e_.Op(kEmit, id);
  } else if (name == "adv_loadw" || name == "adv_pipe" ||
             name == "mem_stream" || name == "nop" || name == "clk" ||
             name == "sdepth" || name == "caller") {
    FLAMEFLEET_RETURN_IF_ERROR(NoImmediates());
    if (name == "adv_loadw") {
      e_.Op(kAdvPopW);
    } else if (name == "adv_pipe") {
      e_.Op(kPipe);
    } else if (name == "mem_stream") {
      e_.Op(kMStream);
    } else if (name == "nop") {
      e_.Op(kNoop);
    } else if (name == "clk") {
      e_.Op(kClk);
    } else if (name == "sdepth") {
      e_.Op(kSDepth);
    } else {
      if (!ctx_.in_kernel) {
        return Error("invalid use of 'caller' instruction outside of kernel");
      }
      e_.Op(kCaller);
    }
  } else {
    *handled = false;
  }
  return absl::OkStatus();
}

// §2.14 - §2.16.
absl::Status Lowering::CryptoOrMiscOp(absl::string_view name, bool* handled) {
  *handled = true;
  if (name == "trace") {
    // A Trace decorator: no operation. The id is still validated.
    FLAMEFLEET_ASSIGN_OR_RETURN(Imm id, RequiredImm(ImmType::kU32));
    (void)id;
    return absl::OkStatus();
  }
  if (absl::StartsWith(name, "debug.")) {
    const absl::string_view what = name.substr(6);
    if (what != "stack" && what != "mem" && what != "local" &&
        what != "adv_stack") {
      return Error(absl::StrCat("unknown debug decorator '", name, "'"));
    }
    return absl::OkStatus();  // a Debug decorator: no operation
  }
  FLAMEFLEET_RETURN_IF_ERROR(NoImmediates());
  if (name == "breakpoint") {
    if (ctx_.debug_mode) e_.Op(kNoop);
  } else if (name == "hperm") {
    e_.Op(kHPerm);
  } else if (name == "hash") {
    e_.Push(4);
    e_.Ops({kPad, kPad, kPad, kSwapW, kPad, kDup7, kDup7, kDup7, kHPerm, kDrop,
            kDrop, kDrop, kDrop, kSwapW, kDrop, kDrop, kDrop, kDrop});
  } else if (name == "hmerge") {
    e_.HMerge();
  } else if (name == "mtree_get" || name == "mtree_set") {
    e_.Op(kEmit, kEventMerkleNodeToStack);
    e_.Times(kAdvPop, 4);
    if (name == "mtree_get") {
      e_.Op(kMpVerify, 0);
      e_.Ops({kMovUp4, kDrop, kMovUp4, kDrop});
    } else {
      e_.Ops({kMovUp5, kMovUp5, kDup5,     kDup5,   kSwapDW, kSwapW,  kSwapW2,
              kDup13,  kDup13,  kMrUpdate, kMovUp4, kDrop,   kMovUp4, kDrop,
              kSwapW,  kDrop,   kDrop,     kDrop,   kDrop,   kSwapW,  kDrop,
              kDrop,   kDrop,   kDrop,     kSwapW});
    }
  } else if (name == "mtree_merge") {
    e_.Op(kEmit, kEventMerkleNodeMerge);
    e_.HMerge();
  } else if (name == "fri_ext2fold4") {
    e_.Op(kFriE2F4);
  } else if (name == "horner_eval_base") {
    e_.Op(kHornerBase);
  } else if (name == "horner_eval_ext") {
    e_.Op(kHornerExt);
  } else if (name == "arithmetic_circuit_eval" || name == "eval_circuit") {
    e_.Op(kEvalCircuit);
  } else {
    *handled = false;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LowerInstruction(const ast::Instruction& inst,
                              const LowerContext& ctx,
                              std::vector<LoweredOp>* out) {
  return Lowering(inst, ctx, out).Run();
}

uint64_t ErrorCodeFromMessage(absl::string_view message) {
  const std::array<uint8_t, 32> digest = Blake3(message);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | digest[i];
  return v % kModulus;
}

}  // namespace flamefleet::vm
