// Tests of the operation table (vm/assembler/opcodes.def -> opcodes.h) and of the v0.16 wire
// opcode table (vm/dialects/v0_16/wire.cc).
#include "vm/assembler/opcodes.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "vm/dialects/v0_16/v0_16.h"
#include "vm/dialects/v0_25/v0_25.h"

namespace flamefleet::vm {
namespace {

// Every native operation with the 7-bit opcode the Miden VM v0.16 gives it (written out, not
// derived from the table under test).
const std::vector<std::pair<Opcode, int>>& ExpectedV016WireOpcodes() {
  static const auto* const kExpected = new std::vector<std::pair<Opcode, int>>{
      {Opcode::kNoop, 0},         {Opcode::kEqz, 1},        {Opcode::kNeg, 2},
      {Opcode::kInv, 3},          {Opcode::kIncr, 4},       {Opcode::kNot, 5},
      {Opcode::kFmpAdd, 6},       {Opcode::kMLoad, 7},      {Opcode::kSwap, 8},
      {Opcode::kCaller, 9},       {Opcode::kMovUp2, 10},    {Opcode::kMovDn2, 11},
      {Opcode::kMovUp3, 12},      {Opcode::kMovDn3, 13},    {Opcode::kAdvPopW, 14},
      {Opcode::kExpAcc, 15},      {Opcode::kMovUp4, 16},    {Opcode::kMovDn4, 17},
      {Opcode::kMovUp5, 18},      {Opcode::kMovDn5, 19},    {Opcode::kMovUp6, 20},
      {Opcode::kMovDn6, 21},      {Opcode::kMovUp7, 22},    {Opcode::kMovDn7, 23},
      {Opcode::kSwapW, 24},       {Opcode::kExt2Mul, 25},   {Opcode::kMovUp8, 26},
      {Opcode::kMovDn8, 27},      {Opcode::kSwapW2, 28},    {Opcode::kSwapW3, 29},
      {Opcode::kSwapDW, 30},      {Opcode::kAssert, 32},    {Opcode::kEq, 33},
      {Opcode::kAdd, 34},         {Opcode::kMul, 35},       {Opcode::kAnd, 36},
      {Opcode::kOr, 37},          {Opcode::kU32And, 38},    {Opcode::kU32Xor, 39},
      {Opcode::kFriE2F4, 40},     {Opcode::kDrop, 41},      {Opcode::kCSwap, 42},
      {Opcode::kCSwapW, 43},      {Opcode::kMLoadW, 44},    {Opcode::kMStore, 45},
      {Opcode::kMStoreW, 46},     {Opcode::kFmpUpdate, 47}, {Opcode::kPad, 48},
      {Opcode::kDup0, 49},        {Opcode::kDup1, 50},      {Opcode::kDup2, 51},
      {Opcode::kDup3, 52},        {Opcode::kDup4, 53},      {Opcode::kDup5, 54},
      {Opcode::kDup6, 55},        {Opcode::kDup7, 56},      {Opcode::kDup9, 57},
      {Opcode::kDup11, 58},       {Opcode::kDup13, 59},     {Opcode::kDup15, 60},
      {Opcode::kAdvPop, 61},      {Opcode::kSDepth, 62},    {Opcode::kClk, 63},
      {Opcode::kU32Add, 64},      {Opcode::kU32Sub, 66},    {Opcode::kU32Mul, 68},
      {Opcode::kU32Div, 70},      {Opcode::kU32Split, 72},  {Opcode::kU32Assert2, 74},
      {Opcode::kU32Add3, 76},     {Opcode::kU32MAdd, 78},   {Opcode::kHPerm, 80},
      {Opcode::kMpVerify, 81},    {Opcode::kPipe, 82},      {Opcode::kMStream, 83},
      {Opcode::kSplit, 84},       {Opcode::kLoop, 85},      {Opcode::kSpan, 86},
      {Opcode::kJoin, 87},        {Opcode::kDyn, 88},       {Opcode::kHornerExt, 89},
      {Opcode::kEmit, 90},        {Opcode::kPush, 91},      {Opcode::kDynCall, 92},
      {Opcode::kEvalCircuit, 93}, {Opcode::kMrUpdate, 96},  {Opcode::kHornerBase, 100},
      {Opcode::kSyscall, 104},    {Opcode::kCall, 108},     {Opcode::kEnd, 112},
      {Opcode::kRepeat, 116},     {Opcode::kRespan, 120},   {Opcode::kHalt, 124},
  };
  return *kExpected;
}

TEST(OpcodesTest, OpcodeNamesAreUpperCaseV016Names) {
  EXPECT_EQ(OpcodeName(Opcode::kNoop), "NOOP");
  EXPECT_EQ(OpcodeName(Opcode::kU32Add), "U32ADD");
  EXPECT_EQ(OpcodeName(Opcode::kDup9), "DUP9");
  EXPECT_EQ(OpcodeName(Opcode::kMovUp2), "MOVUP2");
  EXPECT_EQ(OpcodeName(Opcode::kPush), "PUSH");
  EXPECT_EQ(OpcodeName(Opcode::kEmit), "EMIT");
  EXPECT_EQ(OpcodeName(Opcode::kFmpAdd), "FMPADD");
  EXPECT_EQ(OpcodeName(Opcode::kMpVerify), "MPVERIFY");
  EXPECT_EQ(OpcodeName(Opcode::kSpan), "SPAN");
  EXPECT_EQ(OpcodeName(Opcode::kEnterProc), "ENTER");
  EXPECT_EQ(OpcodeName(Opcode::kLeaveProc), "LEAVE");
  EXPECT_EQ(OpcodeName(Opcode::kGosub), "GOSUB");
  EXPECT_EQ(OpcodeName(Opcode::kReturn), "RETURN");
  EXPECT_EQ(OpcodeName(Opcode::kJump), "JUMP");
  EXPECT_EQ(OpcodeName(Opcode::kFinish), "FINISH");
  EXPECT_EQ(OpcodeName(Opcode::kDynEnter), "DYNENTER");
  EXPECT_EQ(OpcodeName(Opcode::kNoForest), "NOFOREST");
  EXPECT_EQ(OpcodeName(Opcode::kTrace), "TRACE");
  // Values past the table are not operations.
  EXPECT_EQ(OpcodeName(static_cast<Opcode>(137)), "?");  // after TRACE
  EXPECT_EQ(OpcodeName(static_cast<Opcode>(200)), "?");
  // 31 was never a v0.16 opcode: no operation is encoded as 31.
  for (size_t i = 0; i < kNumOpcodes; ++i) {
    EXPECT_NE(v0_16::WireOpcodes()[i], 31) << OpcodeName(kAllOpcodes[i]);
  }
}

TEST(OpcodesTest, EachDialectNamesNinetyThreeDistinctNativeOps) {
  // Rows of different dialects may share a name (v0.16's U32SPLIT and v0.25's little-endian
  // one); within one dialect the native operations and the pseudo operations are distinct.
  for (const WireOpcodeTable* wire : {&v0_16::WireOpcodes(), &v0_25::WireOpcodes()}) {
    std::map<std::string, int> seen;
    int native = 0;
    for (int v = 0; v < 256; ++v) {
      const Opcode op = static_cast<Opcode>(v);
      const std::string name(OpcodeName(op));
      if (name == "?") continue;
      if (!IsPseudo(op) && (*wire)[OpcodeIndex(op)] == kNotNative) continue;
      EXPECT_EQ(seen.count(name), 0u) << name;
      seen[name] = v;
      if (!IsPseudo(op)) ++native;
    }
    EXPECT_EQ(native, 93);
    EXPECT_EQ(seen.size(), 102u);  // + 9 pseudo operations
  }
}

TEST(OpcodesTest, IndicesAreDenseAndInTableOrder) {
  EXPECT_EQ(kNumOpcodes, 128u);  // + the 4 v0.25 recursive-verifier rows, TRACE
  EXPECT_EQ(OpcodeIndex(Opcode::kNoop), 0u);
  EXPECT_EQ(OpcodeIndex(Opcode::kEqz), 1u);
  EXPECT_EQ(OpcodeIndex(Opcode::kAssert), 31u);  // right after SWAPDW (30)
  EXPECT_EQ(OpcodeIndex(Opcode::kHalt), 92u);
  EXPECT_EQ(OpcodeIndex(Opcode::kEmitTop), 93u);  // the rows later dialects added follow HALT
  EXPECT_EQ(OpcodeIndex(Opcode::kEnterProc), 119u);
  EXPECT_EQ(OpcodeIndex(Opcode::kTrace), kNumOpcodes - 1);
  // Each row has its own value (the index table would be inconsistent otherwise).
  for (size_t i = 0; i < kNumOpcodes; ++i) {
    EXPECT_EQ(OpcodeIndex(kAllOpcodes[i]), i);
    EXPECT_NE(OpcodeName(kAllOpcodes[i]), "?") << i;
  }
  EXPECT_EQ(OpcodeIndex(static_cast<Opcode>(125)), kNumOpcodes);  // no operation has value 125
}

TEST(OpcodesTest, DispatchValuesAreTheExecutorsSwitchValues) {
  // Not an encoding (the wire table is), but kept sparse for the executor's code generation:
  // the classic numbering, with the pseudo operations from 128.
  EXPECT_EQ(static_cast<int>(Opcode::kU32Add), 64);
  EXPECT_EQ(static_cast<int>(Opcode::kHalt), 124);
  EXPECT_EQ(static_cast<int>(Opcode::kEnterProc), 128);
  EXPECT_EQ(static_cast<int>(Opcode::kNoForest), 135);
}

TEST(OpcodesTest, NamesRoundTrip) {
  std::map<std::string_view, Opcode> by_name;
  size_t classic = 0;
  for (size_t i = 0; i < kNumOpcodes; ++i) {
    if (!IsPseudo(kAllOpcodes[i]) && v0_16::WireOpcodes()[i] == kNotNative) continue;
    by_name.emplace(OpcodeName(kAllOpcodes[i]), kAllOpcodes[i]);
    ++classic;
  }
  ASSERT_EQ(by_name.size(), classic);
  for (const auto& [name, op] : by_name) EXPECT_EQ(OpcodeName(op), name);
  EXPECT_EQ(by_name.at("U32ASSERT2"), Opcode::kU32Assert2);
  EXPECT_EQ(by_name.at("ENTER"), Opcode::kEnterProc);
}

TEST(OpcodesTest, FlagsMarkImmediatesControlRowsAndPseudoOps) {
  std::set<Opcode> immediate, control, pseudo;
  for (size_t i = 0; i < kNumOpcodes; ++i) {
    const Opcode op = kAllOpcodes[i];
    if (HasImmediate(op)) immediate.insert(op);
    if (IsControl(op)) control.insert(op);
    if (IsPseudo(op)) pseudo.insert(op);
    EXPECT_EQ(OpcodeFlags(op) & ~(kFlagImmediate | kFlagControl | kFlagPseudo), 0) << i;
  }
  EXPECT_EQ(immediate, (std::set<Opcode>{Opcode::kPush, Opcode::kEmit}));
  EXPECT_EQ(control,
            (std::set<Opcode>{Opcode::kJoin, Opcode::kSplit, Opcode::kLoop, Opcode::kRepeat,
                              Opcode::kSpan, Opcode::kRespan, Opcode::kEnd, Opcode::kCall,
                              Opcode::kSyscall, Opcode::kDyn, Opcode::kDynCall, Opcode::kHalt,
                              Opcode::kLoopDo, Opcode::kCallMemFmp, Opcode::kSyscallMemFmp,
                              Opcode::kDynCallMemFmp}));
  EXPECT_EQ(pseudo, (std::set<Opcode>{Opcode::kEnterProc, Opcode::kLeaveProc, Opcode::kGosub,
                                      Opcode::kReturn, Opcode::kJump, Opcode::kFinish,
                                      Opcode::kDynEnter, Opcode::kNoForest, Opcode::kTrace}));
  EXPECT_EQ(OpcodeFlags(static_cast<Opcode>(200)), kFlagNone);
  static_assert(HasImmediate(Opcode::kPush) && !HasImmediate(Opcode::kAdd));
  static_assert(IsControl(Opcode::kEnd) && !IsControl(Opcode::kGosub));
}

TEST(OpcodesTest, V016WireTableKeepsEveryNativeOpcode) {
  const WireOpcodeTable& wire = v0_16::WireOpcodes();
  std::set<Opcode> listed;
  for (const auto& [op, code] : ExpectedV016WireOpcodes()) {
    EXPECT_EQ(wire[OpcodeIndex(op)], code) << OpcodeName(op);
    listed.insert(op);
  }
  EXPECT_EQ(listed.size(), 93u);
  std::set<int> codes;
  for (size_t i = 0; i < kNumOpcodes; ++i) {
    const Opcode op = kAllOpcodes[i];
    if (listed.contains(op)) {
      EXPECT_TRUE(codes.insert(wire[i]).second) << "duplicate wire opcode " << int{wire[i]};
      EXPECT_GE(wire[i], 0);
      EXPECT_LT(wire[i], 128);
    } else {
      EXPECT_EQ(wire[i], kNotNative) << OpcodeName(op);  // pseudo, or another dialect's
    }
  }
}

}  // namespace
}  // namespace flamefleet::vm
