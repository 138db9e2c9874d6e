// Internal to vm/: what the lowering functions of a dialect's instruction table
// (InstructionRow::lower) work with. `Lowering` is the state of one LowerInstruction call: the
// instruction, its context, the dialect's tables and an `Emitter` that appends operations; it
// also resolves and range-checks immediates with the assembler's error messages. `Emitter`
// has the helper sequences several instructions share (PUSH-or-PAD of a constant, pow2, exp,
// the u32 comparisons, hmerge, ...).
//
//   absl::Status LowerAdd(lowering::Lowering& l) {
//     FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<lowering::Imm> b,
//                                 l.OptionalImm(lowering::ImmType::kFelt));
//     if (!b) l.emit().Op(Opcode::kAdd);
//     return absl::OkStatus();
//   }
//
// Not thread-safe (one Lowering per call); nothing here is kept after the call.
#ifndef FLAMEFLEET_VM_ASSEMBLER_INTERNAL_LOWER_HELPERS_H_
#define FLAMEFLEET_VM_ASSEMBLER_INTERNAL_LOWER_HELPERS_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vm/assembler/instruction_table.h"
#include "vm/assembler/lower.h"
#include "vm/assembler/opcodes.h"
#include "vm/executor/system_events.h"
#include "vm/parser/ast.h"

namespace flamefleet::vm::lowering {

// The Goldilocks prime p = 2^64 - 2^32 + 1.
inline constexpr uint64_t kModulus = 0xFFFFFFFF00000001ULL;
inline constexpr uint64_t kU32Max = 0xFFFFFFFFULL;

// Returns -v mod p for v < p.
constexpr uint64_t Negate(uint64_t v) { return v == 0 ? 0 : kModulus - v; }

// Returns a * b mod p.
inline uint64_t MulMod(uint64_t a, uint64_t b) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(a) * b % kModulus);
}

// Returns v^(p-2) = 1/v for v != 0 (Fermat).
inline uint64_t Inverse(uint64_t v) {
  uint64_t result = 1;
  uint64_t base = v;
  for (uint64_t e = kModulus - 2; e != 0; e >>= 1) {
    if (e & 1) result = MulMod(result, base);
    base = MulMod(base, base);
  }
  return result;
}

// Returns the number of significant bits of v (0 for 0).
inline int BitLength(uint64_t v) {
  int n = 0;
  for (; v != 0; v >>= 1) ++n;
  return n;
}

// Appends operations to a LoweredOp vector, with the helper sequences several instructions
// share.
class Emitter {
 public:
  // Appends to `out`, which must not be null and must outlive the Emitter.
  explicit Emitter(std::vector<LoweredOp>* out) : out_(out) {}

  // Appends one operation with immediate `imm`.
  void Op(Opcode op, uint64_t imm = 0) { out_->push_back(LoweredOp{op, imm}); }
  // Appends operations without immediates, in order.
  void Ops(std::initializer_list<Opcode> ops) {
    for (Opcode op : ops) Op(op);
  }
  // Appends `op` n times.
  void Times(Opcode op, int n) {
    for (int i = 0; i < n; ++i) Op(op);
  }
  // Appends PUSH(v mod p); always a PUSH, even for 0 and 1.
  void Push(uint64_t v) { Op(Opcode::kPush, v % kModulus); }
  // Appends the shortest push of a constant: 0 -> PAD, 1 -> PAD INCR, otherwise PUSH(v).
  void P(uint64_t v) {
    v %= kModulus;
    if (v == 0) {
      Op(Opcode::kPad);
    } else if (v == 1) {
      Ops({Opcode::kPad, Opcode::kIncr});
    } else {
      Push(v);
    }
  }
  // Appends [a] -> [2^a] for a < 64 (6 EXPACC steps over a 6-bit exponent).
  void Pow2() {
    using enum Opcode;
    Push(2);
    Ops({kPad, kIncr, kSwap, kPad});
    Times(kExpAcc, 6);
    Ops({kDrop, kDrop, kSwap, kEqz});
    Op(kAssert, 0);
  }
  // Appends [e, b] -> [b^e] for an exponent of `bits` bits.
  void Exp(int bits) {
    using enum Opcode;
    Ops({kPad, kIncr, kMovUp2, kPad});
    Times(kExpAcc, bits);
    Ops({kDrop, kDrop, kSwap, kEqz});
    Op(kAssert, 0);
  }
  // Appends the field comparisons [b, a] -> [a < b] (and <=, >, >=) over the u32 limbs.
  void CmpLt() {
    using enum Opcode;
    Ops({kU32Split, kMovUp2, kU32Split, kMovUp2, kU32Sub, kSwap, kEqz, kMovUp2, kMovUp3, kU32Sub,
         kSwap, kDrop, kAnd, kOr});
  }
  void CmpLte() {
    using enum Opcode;
    Ops({kU32Split, kMovUp2, kU32Split, kMovUp2, kU32Sub, kSwap, kEqz, kMovUp2, kMovUp3, kU32Sub,
         kSwap, kEqz, kOr, kAnd, kOr});
  }
  void CmpGt() {
    using enum Opcode;
    Ops({kU32Split, kMovUp2, kU32Split, kSwap, kMovDn2, kU32Sub, kSwap, kEqz, kMovUp3, kMovUp3,
         kU32Sub, kSwap, kDrop, kAnd, kOr});
  }
  void CmpGte() {
    using enum Opcode;
    Ops({kU32Split, kMovUp2, kU32Split, kSwap, kMovDn2, kU32Sub, kSwap, kEqz, kMovUp3, kMovUp3,
         kU32Sub, kSwap, kEqz, kOr, kAnd, kOr});
  }
  // Appends [b, a] -> [a | b] for u32 values.
  void U32Or() {
    using enum Opcode;
    Ops({kDup1, kDup1, kU32And, kNeg, kAdd, kAdd});
  }
  // Appends [a] -> [~a] for a u32 value (asserting it is one).
  void U32Not() {
    using enum Opcode;
    Push(kU32Max);
    Op(kU32Assert2, 0);
    Ops({kSwap, kU32Sub, kDrop});
  }
  // Appends [B, A] -> [hash(A || B)] (2-to-1 hash through one HPERM).
  void HMerge() {
    using enum Opcode;
    Ops({kPad, kPad, kPad, kPad, kSwapW2, kSwapW, kHPerm, kDrop, kDrop, kDrop, kDrop, kSwapW, kDrop,
         kDrop, kDrop, kDrop});
  }
  // Appends the assertion that the top two words are equal, with error code `code`.
  void AssertW(uint64_t code) {
    using enum Opcode;
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

// An immediate after resolution: its value and whether it was written as a number literal
// (the assembler folds some instructions away only when the immediate is a literal).
struct Imm {
  uint64_t value = 0;
  bool literal = true;
};

// The integer type an immediate must fit.
enum class ImmType { kFelt, kU32, kU16, kU8 };

// The state of one LowerInstruction call, handed to the row's lowering function.
class Lowering {
 public:
  // Keeps references to every argument for the call; `out` must not be null.
  Lowering(const InstructionTable& table, const ast::Instruction& inst, const LowerContext& ctx,
           std::vector<LoweredOp>* out)
      : table_(table), inst_(inst), ctx_(ctx), e_(out) {}

  // The instruction being lowered, its name and its context.
  const ast::Instruction& inst() const { return inst_; }
  absl::string_view name() const { return inst_.name; }
  const LowerContext& ctx() const { return ctx_; }
  // The dialect's system events (EMIT immediates).
  const SystemEventTable& events() const { return table_.events(); }
  // Where the operations go.
  Emitter& emit() { return e_; }

  // Returns InvalidArgument(message).
  absl::Status Error(absl::string_view message) const;
  // Resolves a named constant; an undefined one (or no resolver) is "undefined constant".
  absl::StatusOr<ast::ConstantValue> Resolve(const std::string& name) const;
  // Resolves a scalar immediate (literal or felt constant) and checks it fits `type`.
  absl::StatusOr<Imm> Scalar(const ast::Immediate& imm, ImmType type) const;
  // Returns the single optional immediate (nullopt when written bare).
  absl::StatusOr<std::optional<Imm>> OptionalImm(ImmType type) const;
  // Returns the single required immediate.
  absl::StatusOr<Imm> RequiredImm(ImmType type) const;
  // Returns the stack index of dup/swap/movup/...: a literal in [lo, hi], `dflt` when bare.
  absl::StatusOr<uint64_t> StackIndex(uint64_t lo, uint64_t hi, std::optional<uint64_t> dflt) const;
  // Returns the "too many immediate values" error.
  absl::Status TooManyImmediates() const;
  // Returns OK if the instruction has no immediates, else "takes no immediate value".
  absl::Status NoImmediates() const;
  // Returns the error code of the instruction's `.err=` (0 when absent).
  absl::StatusOr<uint64_t> ErrorCode() const;
  // Returns the error for a name the table does not know (or a row's unknown suffix): "takes
  // no immediate value" if it has immediates, else "unknown instruction".
  absl::Status UnknownInstruction() const;
  // Returns the id of the system event `handler` runs; Internal if the dialect has none.
  absl::StatusOr<uint64_t> EventId(SystemEventHandler handler) const;

 private:
  const InstructionTable& table_;
  const ast::Instruction& inst_;
  const LowerContext& ctx_;
  Emitter e_;
};

}  // namespace flamefleet::vm::lowering

#endif  // FLAMEFLEET_VM_ASSEMBLER_INTERNAL_LOWER_HELPERS_H_
