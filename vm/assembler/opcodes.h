// The native operations of the Miden VM v0.16 and the few executor-only pseudo operations.
//
// Native operations keep their v0.16 7-bit opcode values (core/src/operations/mod.rs), so the
// same enum serves op-group encoding, MAST hashing and dispatch. Values >= 128 are pseudo
// operations that exist only in flamefleet's linearised program: they cost no cycle and only
// move the program counter or the procedure frame stack (see vm/assembler/program.h).
//
//   LoweredOp op{Opcode::kPush, 42};
//   if (HasImmediate(op.opcode)) { ... }  // PUSH and EMIT take an op-group slot
//   absl::string_view name = OpcodeName(Opcode::kU32Add);  // "U32ADD"
#ifndef FLAMEFLEET_VM_ASSEMBLER_OPCODES_H_
#define FLAMEFLEET_VM_ASSEMBLER_OPCODES_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace flamefleet::vm {

enum class Opcode : uint8_t {
  // System.
  kNoop = 0,
  kEqz = 1,
  kNeg = 2,
  kInv = 3,
  kIncr = 4,
  kNot = 5,
  kFmpAdd = 6,
  kMLoad = 7,
  kSwap = 8,
  kCaller = 9,
  kMovUp2 = 10,
  kMovDn2 = 11,
  kMovUp3 = 12,
  kMovDn3 = 13,
  kAdvPopW = 14,
  kExpAcc = 15,
  kMovUp4 = 16,
  kMovDn4 = 17,
  kMovUp5 = 18,
  kMovDn5 = 19,
  kMovUp6 = 20,
  kMovDn6 = 21,
  kMovUp7 = 22,
  kMovDn7 = 23,
  kSwapW = 24,
  kExt2Mul = 25,
  kMovUp8 = 26,
  kMovDn8 = 27,
  kSwapW2 = 28,
  kSwapW3 = 29,
  kSwapDW = 30,
  // 31 unused
  kAssert = 32,  // imm = error code
  kEq = 33,
  kAdd = 34,
  kMul = 35,
  kAnd = 36,
  kOr = 37,
  kU32And = 38,
  kU32Xor = 39,
  kFriE2F4 = 40,
  kDrop = 41,
  kCSwap = 42,
  kCSwapW = 43,
  kMLoadW = 44,
  kMStore = 45,
  kMStoreW = 46,
  kFmpUpdate = 47,
  kPad = 48,
  kDup0 = 49,
  kDup1 = 50,
  kDup2 = 51,
  kDup3 = 52,
  kDup4 = 53,
  kDup5 = 54,
  kDup6 = 55,
  kDup7 = 56,
  kDup9 = 57,
  kDup11 = 58,
  kDup13 = 59,
  kDup15 = 60,
  kAdvPop = 61,
  kSDepth = 62,
  kClk = 63,
  kU32Add = 64,
  kU32Sub = 66,
  kU32Mul = 68,
  kU32Div = 70,
  kU32Split = 72,
  kU32Assert2 = 74,  // imm = error code
  kU32Add3 = 76,
  kU32MAdd = 78,
  kHPerm = 80,  // RPO hperm (the RPO-256 permutation; another hash gets its own opcode)
  kMpVerify = 81,  // imm = error code
  kPipe = 82,
  kMStream = 83,
  kSplit = 84,
  kLoop = 85,
  kSpan = 86,
  kJoin = 87,
  kDyn = 88,
  kHornerExt = 89,
  kEmit = 90,  // imm = event id (u32); takes an op-group slot
  kPush = 91,  // imm = felt; takes an op-group slot
  kDynCall = 92,
  kEvalCircuit = 93,
  kMrUpdate = 96,
  kHornerBase = 100,
  kSyscall = 104,
  kCall = 108,
  kEnd = 112,
  kRepeat = 116,
  kRespan = 120,
  kHalt = 124,

  // Executor-only pseudo operations (no cycle). See program.h for their operands.
  kEnterProc = 128,  // push procedure frame `aux`
  kLeaveProc = 129,  // pop the innermost procedure frame
  kGosub = 130,      // push return pc, jump to `aux`; if imm != kNoFrame also push frame imm
  kReturn = 131,     // pop return pc (and the frame kGosub pushed), jump there
  kJump = 132,       // jump to `aux`
  kFinish = 133,     // end of program
  kDynEnter = 134,   // after a DYN/DYNCALL row: GOSUB into the procedure that row looked up
  kNoForest = 135,   // an EXTERNAL node no forest resolves: trap (imm indexes unresolved_roots)
};

// Returns true for operations whose immediate occupies an op-group slot (PUSH, EMIT).
constexpr bool HasImmediate(Opcode op) { return op == Opcode::kPush || op == Opcode::kEmit; }

// Returns true for native control-flow operations (never inside a basic block's op list).
constexpr bool IsControl(Opcode op) {
  switch (op) {
    case Opcode::kJoin: case Opcode::kSplit: case Opcode::kLoop: case Opcode::kRepeat:
    case Opcode::kSpan: case Opcode::kRespan: case Opcode::kEnd: case Opcode::kCall:
    case Opcode::kSyscall: case Opcode::kDyn: case Opcode::kDynCall: case Opcode::kHalt:
      return true;
    default:
      return false;
  }
}

// Returns the upper-case v0.16 name of an operation ("U32ADD", "DUP9", "PUSH"), or "?" for an
// unknown value.
std::string_view OpcodeName(Opcode op);

// One native operation produced by instruction lowering. `imm` is the PUSH value (canonical
// felt), the EMIT event id, or the error code of ASSERT / U32ASSERT2 / MPVERIFY; 0 otherwise.
struct LoweredOp {
  Opcode opcode = Opcode::kNoop;
  uint64_t imm = 0;
  friend bool operator==(const LoweredOp&, const LoweredOp&) = default;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_ASSEMBLER_OPCODES_H_
