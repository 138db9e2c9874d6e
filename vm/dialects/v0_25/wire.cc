// The v0.25 wire opcode table: the 7-bit opcodes of the native operations, as the Miden VM
// v0.25.7 encodes them in op groups and uses them as the domains of control-node digests
// (core/src/operations/mod.rs at v0.25.7). Against v0.16: FMPADD (6) and FMPUPDATE (47) are
// gone, EMIT moved to 31, HORNERBASE to 89 and HORNEREXT to 90, LOGPRECOMPILE (94) and
// CRYPTOSTREAM (100) are new, and the operations whose semantics changed are the
// little-endian, Poseidon2 and memory-fmp rows of opcodes.def (and the recursive-verifier rows
// FRIE2F4/HORNERBASE/HORNEREXT/EVALCIRCUIT in their v0.25.7 layouts, vm/executor/verifier_ops.h).
#include <cstddef>

#include "vm/assembler/opcodes.h"
#include "vm/dialects/v0_25/v0_25.h"

namespace flamefleet::vm::v0_25 {
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
  t[Index(Opcode::kMLoad)] = 7;
  t[Index(Opcode::kSwap)] = 8;
  t[Index(Opcode::kCallerAny)] = 9;
  t[Index(Opcode::kMovUp2)] = 10;
  t[Index(Opcode::kMovDn2)] = 11;
  t[Index(Opcode::kMovUp3)] = 12;
  t[Index(Opcode::kMovDn3)] = 13;
  t[Index(Opcode::kAdvPopWLe)] = 14;
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
  t[Index(Opcode::kExt2MulX7)] = 25;
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
  t[Index(Opcode::kFriE2F4Le)] = 40;
  t[Index(Opcode::kDrop)] = 41;
  t[Index(Opcode::kCSwap)] = 42;
  t[Index(Opcode::kCSwapW)] = 43;
  t[Index(Opcode::kMLoadWLe)] = 44;
  t[Index(Opcode::kMStore)] = 45;
  t[Index(Opcode::kMStoreWLe)] = 46;
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
  t[Index(Opcode::kU32AddLe)] = 64;
  t[Index(Opcode::kU32Sub)] = 66;
  t[Index(Opcode::kU32MulLe)] = 68;
  t[Index(Opcode::kU32Div)] = 70;
  t[Index(Opcode::kU32SplitLe)] = 72;
  t[Index(Opcode::kU32Assert2)] = 74;
  t[Index(Opcode::kU32Add3Le)] = 76;
  t[Index(Opcode::kU32MAddLe)] = 78;
  t[Index(Opcode::kHPermP2)] = 80;
  t[Index(Opcode::kMpVerifyLe)] = 81;
  t[Index(Opcode::kPipeLe)] = 82;
  t[Index(Opcode::kMStreamLe)] = 83;
  t[Index(Opcode::kSplit)] = 84;
  t[Index(Opcode::kLoopDo)] = 85;
  t[Index(Opcode::kSpan)] = 86;
  t[Index(Opcode::kJoin)] = 87;
  t[Index(Opcode::kDyn)] = 88;
  t[Index(Opcode::kHornerExtLe)] = 90;
  t[Index(Opcode::kEmitTop)] = 31;
  t[Index(Opcode::kPush)] = 91;
  t[Index(Opcode::kDynCallMemFmp)] = 92;
  t[Index(Opcode::kEvalCircuitLe)] = 93;
  t[Index(Opcode::kMrUpdateLe)] = 96;
  t[Index(Opcode::kHornerBaseLe)] = 89;
  t[Index(Opcode::kSyscallMemFmp)] = 104;
  t[Index(Opcode::kCallMemFmp)] = 108;
  t[Index(Opcode::kEnd)] = 112;
  t[Index(Opcode::kRepeat)] = 116;
  t[Index(Opcode::kRespan)] = 120;
  t[Index(Opcode::kHalt)] = 124;
  t[Index(Opcode::kLogPrecompile)] = 94;
  t[Index(Opcode::kCryptoStream)] = 100;
  return t;
}

constexpr WireOpcodeTable kWireOpcodes = MakeWireOpcodes();

// No pseudo operation has an encoding, and no two operations share one (the classic rows whose
// semantics v0.25 changed, e.g. kU32Split, are not v0.25 operations and keep kNotNative).
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

}  // namespace flamefleet::vm::v0_25
