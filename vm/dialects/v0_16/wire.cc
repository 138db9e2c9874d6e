// The v0.16 wire opcode table: the 7-bit opcodes of the native operations, as the Miden VM
// v0.16 encodes them in op groups and uses them as the domains of control-node digests.
#include <cstddef>

#include "vm/assembler/opcodes.h"
#include "vm/dialects/v0_16/v0_16.h"

namespace flamefleet::vm::v0_16 {
namespace {

constexpr size_t Index(Opcode op) { return OpcodeIndex(op); }

constexpr WireOpcodeTable MakeWireOpcodes() {
  WireOpcodeTable t{};
  for (int8_t& v : t) v = kNotNative;  // the pseudo operations keep kNotNative
  t[Index(Opcode::kNoop)] = 0;
  t[Index(Opcode::kEqz)] = 1;
  t[Index(Opcode::kNeg)] = 2;
  t[Index(Opcode::kInv)] = 3;
  t[Index(Opcode::kIncr)] = 4;
  t[Index(Opcode::kNot)] = 5;
  t[Index(Opcode::kFmpAdd)] = 6;
  t[Index(Opcode::kMLoad)] = 7;
  t[Index(Opcode::kSwap)] = 8;
  t[Index(Opcode::kCaller)] = 9;
  t[Index(Opcode::kMovUp2)] = 10;
  t[Index(Opcode::kMovDn2)] = 11;
  t[Index(Opcode::kMovUp3)] = 12;
  t[Index(Opcode::kMovDn3)] = 13;
  t[Index(Opcode::kAdvPopW)] = 14;
  t[Index(Opcode::kExpAcc)] = 15;
  t[Index(Opcode::kMovUp4)] = 16;
  t[Index(Opcode::kMovDn4)] = 17;
  t[Index(Opcode::kMovUp5)] = 18;
  t[Index(Opcode::kMovDn5)] = 19;
  t[Index(Opcode::kMovUp6)] = 20;
  t[Index(Opcode::kMovDn6)] = 21;
  t[Index(Opcode::kMovUp7)] = 22;
  t[Index(Opcode::kMovDn7)] = 23;
  t[Index(Opcode::kSwapW)] = 24;
  t[Index(Opcode::kExt2Mul)] = 25;
  t[Index(Opcode::kMovUp8)] = 26;
  t[Index(Opcode::kMovDn8)] = 27;
  t[Index(Opcode::kSwapW2)] = 28;
  t[Index(Opcode::kSwapW3)] = 29;
  t[Index(Opcode::kSwapDW)] = 30;
  t[Index(Opcode::kAssert)] = 32;
  t[Index(Opcode::kEq)] = 33;
  t[Index(Opcode::kAdd)] = 34;
  t[Index(Opcode::kMul)] = 35;
  t[Index(Opcode::kAnd)] = 36;
  t[Index(Opcode::kOr)] = 37;
  t[Index(Opcode::kU32And)] = 38;
  t[Index(Opcode::kU32Xor)] = 39;
  t[Index(Opcode::kFriE2F4)] = 40;
  t[Index(Opcode::kDrop)] = 41;
  t[Index(Opcode::kCSwap)] = 42;
  t[Index(Opcode::kCSwapW)] = 43;
  t[Index(Opcode::kMLoadW)] = 44;
  t[Index(Opcode::kMStore)] = 45;
  t[Index(Opcode::kMStoreW)] = 46;
  t[Index(Opcode::kFmpUpdate)] = 47;
  t[Index(Opcode::kPad)] = 48;
  t[Index(Opcode::kDup0)] = 49;
  t[Index(Opcode::kDup1)] = 50;
  t[Index(Opcode::kDup2)] = 51;
  t[Index(Opcode::kDup3)] = 52;
  t[Index(Opcode::kDup4)] = 53;
  t[Index(Opcode::kDup5)] = 54;
  t[Index(Opcode::kDup6)] = 55;
  t[Index(Opcode::kDup7)] = 56;
  t[Index(Opcode::kDup9)] = 57;
  t[Index(Opcode::kDup11)] = 58;
  t[Index(Opcode::kDup13)] = 59;
  t[Index(Opcode::kDup15)] = 60;
  t[Index(Opcode::kAdvPop)] = 61;
  t[Index(Opcode::kSDepth)] = 62;
  t[Index(Opcode::kClk)] = 63;
  t[Index(Opcode::kU32Add)] = 64;
  t[Index(Opcode::kU32Sub)] = 66;
  t[Index(Opcode::kU32Mul)] = 68;
  t[Index(Opcode::kU32Div)] = 70;
  t[Index(Opcode::kU32Split)] = 72;
  t[Index(Opcode::kU32Assert2)] = 74;
  t[Index(Opcode::kU32Add3)] = 76;
  t[Index(Opcode::kU32MAdd)] = 78;
  t[Index(Opcode::kHPerm)] = 80;
  t[Index(Opcode::kMpVerify)] = 81;
  t[Index(Opcode::kPipe)] = 82;
  t[Index(Opcode::kMStream)] = 83;
  t[Index(Opcode::kSplit)] = 84;
  t[Index(Opcode::kLoop)] = 85;
  t[Index(Opcode::kSpan)] = 86;
  t[Index(Opcode::kJoin)] = 87;
  t[Index(Opcode::kDyn)] = 88;
  t[Index(Opcode::kHornerExt)] = 89;
  t[Index(Opcode::kEmit)] = 90;
  t[Index(Opcode::kPush)] = 91;
  t[Index(Opcode::kDynCall)] = 92;
  t[Index(Opcode::kEvalCircuit)] = 93;
  t[Index(Opcode::kMrUpdate)] = 96;
  t[Index(Opcode::kHornerBase)] = 100;
  t[Index(Opcode::kSyscall)] = 104;
  t[Index(Opcode::kCall)] = 108;
  t[Index(Opcode::kEnd)] = 112;
  t[Index(Opcode::kRepeat)] = 116;
  t[Index(Opcode::kRespan)] = 120;
  t[Index(Opcode::kHalt)] = 124;
  return t;
}

constexpr WireOpcodeTable kWireOpcodes = MakeWireOpcodes();

// No pseudo operation has an encoding, and no two operations share one (the operations added
// for later dialects, e.g. kU32SplitLe, are not v0.16 operations and keep kNotNative).
constexpr bool EncodingsAreSound() {
  bool seen[128] = {};
  for (size_t i = 0; i < kNumOpcodes; ++i) {
    const int8_t wire = kWireOpcodes[i];
    if (wire == kNotNative) continue;
    if (IsPseudo(kAllOpcodes[i]) || wire < 0 || seen[wire]) return false;
    seen[wire] = true;
  }
  return true;
}
static_assert(EncodingsAreSound());

}  // namespace

const WireOpcodeTable& WireOpcodes() { return kWireOpcodes; }

}  // namespace flamefleet::vm::v0_16
