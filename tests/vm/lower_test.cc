// Tests of vm/assembler/lower.h: the exact v0.16 operation sequence of every
// row of
// ../shared/reference/masm-lowering-v0.16.md §2, the assembly-time errors, the
// error-code derivation, and the BLAKE3 implementation behind it (official test
// vectors).
#include "vm/assembler/lower.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "vm/assembler/opcodes.h"
#include "vm/crypto/blake3.h"
#include "vm/parser/ast.h"

namespace flamefleet::vm {
namespace {

constexpr uint64_t kP = 0xFFFFFFFF00000001ULL;

// ---------------------------------------------------------------------------------------------
// Building instructions from compact specs.

// Parses one immediate: a decimal literal, a 0x hex literal (<= 16 digits), a
// word literal
// "[a,b,c,d]", or a constant name (starts with an upper-case letter).
ast::Immediate ParseImmediate(absl::string_view text) {
  ast::Immediate imm;
  if (absl::StartsWith(text, "[")) {
    imm.kind = ast::Immediate::Kind::kWord;
    std::vector<std::string> parts =
        absl::StrSplit(text.substr(1, text.size() - 2), ',');
    for (size_t i = 0; i < 4 && i < parts.size(); ++i) {
      EXPECT_TRUE(absl::SimpleAtoi(parts[i], &imm.word[i])) << text;
    }
  } else if (!text.empty() &&
             absl::ascii_isupper(static_cast<unsigned char>(text[0]))) {
    imm.kind = ast::Immediate::Kind::kConstant;
    imm.text = std::string(text);
  } else if (absl::StartsWith(text, "0x")) {
    EXPECT_TRUE(absl::SimpleHexAtoi(text.substr(2), &imm.value)) << text;
  } else {
    EXPECT_TRUE(absl::SimpleAtoi(text, &imm.value)) << text;
  }
  return imm;
}

// Builds an instruction from MASM-like text without the `.err=` part:
// "u32rotr.7", "push.1.2.[1,2,3,4]", "adv.push_mapval", "debug.stack.4",
// "exp.u8", "add.K5" (constant K5).
ast::Instruction Inst(absl::string_view spec) {
  std::vector<std::string> parts = absl::StrSplit(spec, '.');
  ast::Instruction inst;
  size_t first_arg = 1;
  inst.name = parts[0];
  if ((parts[0] == "adv" || parts[0] == "debug") && parts.size() > 1) {
    inst.name = absl::StrCat(parts[0], ".", parts[1]);
    first_arg = 2;
  } else if (parts[0] == "exp" && parts.size() > 1 &&
             absl::StartsWith(parts[1], "u")) {
    inst.name = "exp.u";
    parts[1] = parts[1].substr(1);
  }
  for (size_t i = first_arg; i < parts.size(); ++i)
    inst.args.push_back(ParseImmediate(parts[i]));
  return inst;
}

// Resolves the test constants: "K<n>" is the felt n, "WORD" the word [5, 0, 1,
// 7], "MSG" the string "oops"; anything else is undefined.
absl::StatusOr<ast::ConstantValue> ResolveTestConstant(
    const std::string& name) {
  ast::ConstantValue value;
  uint64_t n = 0;
  if (name.size() > 1 && name[0] == 'K' &&
      absl::SimpleAtoi(name.substr(1), &n)) {
    value.kind = ast::ConstantValue::Kind::kFelt;
    value.felt = n;
    return value;
  }
  if (name == "WORD") {
    value.kind = ast::ConstantValue::Kind::kWord;
    value.word = {5, 0, 1, 7};
    return value;
  }
  if (name == "MSG") {
    value.kind = ast::ConstantValue::Kind::kString;
    value.text = "oops";
    return value;
  }
  return absl::NotFoundError(absl::StrCat("no constant ", name));
}

LowerContext Context(uint32_t num_locals = 0) {
  LowerContext ctx;
  ctx.num_locals = num_locals;
  ctx.resolve_constant = ResolveTestConstant;
  return ctx;
}

// ---------------------------------------------------------------------------------------------
// Expected sequences.

// Parses "PUSH(-4) EXPACC*6 ASSERT(0) MOVUP2": names as printed by OpcodeName,
// an optional immediate (negative values mean p - x), an optional repeat count.
std::vector<LoweredOp> Ops(absl::string_view text) {
  static const std::map<std::string, Opcode, std::less<>>* const kByName = [] {
    auto* m = new std::map<std::string, Opcode, std::less<>>();
    for (int v = 0; v < 256; ++v) {
      const std::string_view name = OpcodeName(static_cast<Opcode>(v));
      if (name != "?") (*m)[std::string(name)] = static_cast<Opcode>(v);
    }
    return m;
  }();
  std::vector<LoweredOp> ops;
  for (absl::string_view token : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    int repeat = 1;
    if (size_t star = token.find('*'); star != absl::string_view::npos) {
      EXPECT_TRUE(absl::SimpleAtoi(token.substr(star + 1), &repeat)) << token;
      token = token.substr(0, star);
    }
    LoweredOp op;
    if (size_t paren = token.find('('); paren != absl::string_view::npos) {
      absl::string_view imm = token.substr(paren + 1, token.size() - paren - 2);
      const bool negative = absl::ConsumePrefix(&imm, "-");
      uint64_t v = 0;
      EXPECT_TRUE(absl::SimpleAtoi(imm, &v)) << token;
      op.imm = negative ? kP - v : v;
      token = token.substr(0, paren);
    }
    auto it = kByName->find(token);
    EXPECT_NE(it, kByName->end()) << "unknown op " << token;
    if (it == kByName->end()) continue;
    op.opcode = it->second;
    for (int i = 0; i < repeat; ++i) ops.push_back(op);
  }
  return ops;
}

std::string Format(const std::vector<LoweredOp>& ops) {
  return absl::StrJoin(ops, " ", [](std::string* out, const LoweredOp& op) {
    absl::StrAppend(out, std::string(OpcodeName(op.opcode)));
    if (HasImmediate(op.opcode) || op.opcode == Opcode::kAssert ||
        op.opcode == Opcode::kU32Assert2 || op.opcode == Opcode::kMpVerify) {
      absl::StrAppend(out, "(", op.imm, ")");
    }
  });
}

// The helper sequences of §0.1.
const std::string kPow2 =
    "PUSH(2) PAD INCR SWAP PAD EXPACC*6 DROP DROP SWAP EQZ ASSERT(0)";
std::string Exp(int n) {
  return absl::StrCat("PAD INCR MOVUP2 PAD EXPACC*", n,
                      " DROP DROP SWAP EQZ ASSERT(0)");
}
const std::string kCmpLt =
    "U32SPLIT MOVUP2 U32SPLIT MOVUP2 U32SUB SWAP EQZ MOVUP2 MOVUP3 U32SUB SWAP "
    "DROP AND OR";
const std::string kCmpLte =
    "U32SPLIT MOVUP2 U32SPLIT MOVUP2 U32SUB SWAP EQZ MOVUP2 MOVUP3 U32SUB SWAP "
    "EQZ OR AND OR";
const std::string kCmpGt =
    "U32SPLIT MOVUP2 U32SPLIT SWAP MOVDN2 U32SUB SWAP EQZ MOVUP3 MOVUP3 U32SUB "
    "SWAP DROP AND OR";
const std::string kCmpGte =
    "U32SPLIT MOVUP2 U32SPLIT SWAP MOVDN2 U32SUB SWAP EQZ MOVUP3 MOVUP3 U32SUB "
    "SWAP EQZ OR AND "
    "OR";
const std::string kU32Or = "DUP1 DUP1 U32AND NEG ADD ADD";
const std::string kU32Not = "PUSH(4294967295) U32ASSERT2(0) SWAP U32SUB DROP";
const std::string kHMerge =
    "PAD PAD PAD PAD SWAPW2 SWAPW HPERM DROP DROP DROP DROP SWAPW DROP DROP "
    "DROP DROP";

struct Row {
  std::string spec;      // see Inst()
  std::string expected;  // see Ops()
  uint32_t num_locals = 0;
};

// Every row of §2.1 - §2.16 (literal and constant variants), in table order.
std::vector<Row> AllRows() {
  std::vector<Row> rows = {
      // §2.1 Assertions (the .err= forms are in ErrorCodes* below).
      {"assert", "ASSERT(0)"},
      {"assertz", "EQZ ASSERT(0)"},
      {"assert_eq", "EQ ASSERT(0)"},
      {"assert_eqw",
       "MOVUP4 EQ ASSERT(0) MOVUP3 EQ ASSERT(0) MOVUP2 EQ ASSERT(0) EQ "
       "ASSERT(0)"},
      {"u32assert", "PAD U32ASSERT2(0) DROP"},
      {"u32assert2", "U32ASSERT2(0)"},
      {"u32assertw", "U32ASSERT2(0) MOVUP3 MOVUP3 U32ASSERT2(0) MOVUP3 MOVUP3"},
      {"mtree_verify", "MPVERIFY(0)"},

      // §2.2 Field arithmetic and logic.
      {"add", "ADD"},
      {"add.0", ""},
      {"add.1", "INCR"},
      {"add.K0", "NOOP"},
      {"add.K1", "INCR"},
      {"add.2", "INCR INCR"},
      {"add.K2", "INCR INCR"},
      {"add.3", "PUSH(3) ADD"},
      {"add.K1000", "PUSH(1000) ADD"},
      {"add.18446744069414584320", "PUSH(-1) ADD"},
      {"sub", "NEG ADD"},
      {"sub.0", ""},
      {"sub.K0", "NOOP"},
      {"sub.1", "PUSH(-1) ADD"},
      {"sub.K1", "PUSH(-1) ADD"},
      {"sub.5", "PUSH(-5) ADD"},
      {"mul", "MUL"},
      {"mul.0", "DROP PAD"},
      {"mul.K0", "DROP PAD"},
      {"mul.1", ""},
      {"mul.K1", "NOOP"},
      {"mul.7", "PUSH(7) MUL"},
      {"mul.K2", "PUSH(2) MUL"},
      {"div", "INV MUL"},
      {"div.1", ""},
      {"div.K1", "NOOP"},
      {"div.2", "PUSH(9223372034707292161) MUL"},  // 1/2 = (p + 1) / 2
      {"div.K7",
       "PUSH(2635249152773512046) MUL"},  // 7 * 2635249152773512046 = 1 (mod p)
      {"neg", "NEG"},
      {"inv", "INV"},
      {"pow2", kPow2},
      {"exp", Exp(64)},
      {"exp.u0", Exp(0)},
      {"exp.u8", Exp(8)},
      {"exp.u63", Exp(63)},
      {"exp.0", "DROP PAD INCR"},
      {"exp.K0", "DROP PAD INCR"},
      {"exp.1", "NOOP"},
      {"exp.K1", "NOOP"},
      {"exp.2", "DUP0 MUL"},
      {"exp.3", "DUP0*2 MUL*2"},
      {"exp.4", "DUP0*3 MUL*3"},
      {"exp.5", "DUP0*4 MUL*4"},
      {"exp.6", "DUP0*5 MUL*5"},
      {"exp.7", "DUP0*6 MUL*6"},
      {"exp.K7", "DUP0*6 MUL*6"},
      {"exp.8", "PUSH(8) " + Exp(4)},
      {"exp.255", "PUSH(255) " + Exp(8)},
      {"exp.K256", "PUSH(256) " + Exp(9)},
      {"exp.18446744069414584320", "PUSH(-1) " + Exp(64)},
      {"ilog2",
       "EMIT(2297972669) ADVPOP DUP0 " + kPow2 +
           " MOVUP2 U32SPLIT MOVUP2 U32SPLIT DUP1 EQZ DUP0 MOVDN3 CSWAP DROP "
           "MOVDN3 CSWAP DROP "
           "SWAP PAD INCR INCR MUL PAD INCR NEG ADD DUP1 U32AND EQ ASSERT(0)"},
      {"not", "NOT"},
      {"and", "AND"},
      {"or", "OR"},
      {"xor", "DUP0 DUP2 OR MOVDN2 AND NOT AND"},

      // §2.3 Field comparisons.
      {"eq", "EQ"},
      {"eq.0", "EQZ"},
      {"eq.K0", "EQZ"},
      {"eq.1", "PUSH(1) EQ"},
      {"eq.K9", "PUSH(9) EQ"},
      {"neq", "EQ NOT"},
      {"neq.0", "EQZ NOT"},
      {"neq.K0", "EQZ NOT"},
      {"neq.1", "PUSH(1) EQ NOT"},
      {"eqw",
       "DUP7 DUP4 EQ DUP7 DUP4 EQ AND DUP6 DUP3 EQ AND DUP5 DUP2 EQ AND"},
      {"lt", kCmpLt},
      {"lt.0", "PAD " + kCmpLt},
      {"lt.1", "PAD INCR " + kCmpLt},
      {"lt.K1", "PAD INCR " + kCmpLt},
      {"lt.9", "PUSH(9) " + kCmpLt},
      {"lte", kCmpLte},
      {"lte.0", "PAD " + kCmpLte},
      {"lte.1", "PAD INCR " + kCmpLte},
      {"lte.K9", "PUSH(9) " + kCmpLte},
      {"gt", kCmpGt},
      {"gt.K0", "PAD " + kCmpGt},
      {"gt.1", "PAD INCR " + kCmpGt},
      {"gt.9", "PUSH(9) " + kCmpGt},
      {"gte", kCmpGte},
      {"gte.0", "PAD " + kCmpGte},
      {"gte.1", "PAD INCR " + kCmpGte},
      {"gte.9", "PUSH(9) " + kCmpGte},
      {"is_odd", "U32SPLIT DROP PAD INCR U32AND"},

      // §2.4 Quadratic extension field.
      {"ext2add", "SWAP MOVUP3 ADD MOVDN2 ADD"},
      {"ext2sub", "NEG SWAP NEG MOVUP3 ADD MOVDN2 ADD"},
      {"ext2mul", "EXT2MUL DROP DROP"},
      {"ext2neg", "NEG SWAP NEG SWAP"},
      {"ext2inv",
       "EMIT(1251967401) ADVPOP ADVPOP EXT2MUL MOVUP2 EQZ ASSERT(0) MOVUP2 "
       "ASSERT(0)"},
      {"ext2div",
       "EMIT(1251967401) ADVPOP ADVPOP EXT2MUL MOVUP2 EQZ ASSERT(0) MOVUP2 "
       "ASSERT(0) EXT2MUL DROP "
       "DROP"},

      // §2.5 u32 conversions and tests.
      {"u32test", "DUP0 U32SPLIT SWAP DROP EQZ"},
      {"u32testw",
       "DUP3 U32SPLIT SWAP DROP EQZ DUP3 U32SPLIT SWAP DROP EQZ AND DUP2 "
       "U32SPLIT SWAP DROP EQZ "
       "AND DUP1 U32SPLIT SWAP DROP EQZ AND"},
      {"u32cast", "U32SPLIT DROP"},
      {"u32split", "U32SPLIT"},

      // §2.6 u32 arithmetic.
      {"u32overflowing_add", "U32ADD"},
      {"u32overflowing_add.0", "PAD U32ADD"},
      {"u32overflowing_add.1", "PAD INCR U32ADD"},
      {"u32overflowing_add.K5", "PUSH(5) U32ADD"},
      {"u32wrapping_add", "U32ADD DROP"},
      {"u32wrapping_add.0", ""},
      {"u32wrapping_add.K0", "PAD U32ADD DROP"},
      {"u32wrapping_add.1", "PAD INCR U32ADD DROP"},
      {"u32wrapping_add.K1", "PAD INCR U32ADD DROP"},
      {"u32wrapping_add.4294967295", "PUSH(4294967295) U32ADD DROP"},
      {"u32overflowing_add3", "U32ADD3"},
      {"u32wrapping_add3", "U32ADD3 DROP"},
      {"u32overflowing_sub", "U32SUB"},
      {"u32overflowing_sub.K0", "PAD U32SUB"},
      {"u32overflowing_sub.1", "PAD INCR U32SUB"},
      {"u32overflowing_sub.3", "PUSH(3) U32SUB"},
      {"u32wrapping_sub", "U32SUB DROP"},
      {"u32wrapping_sub.0", ""},
      {"u32wrapping_sub.K0", "PAD U32SUB DROP"},
      {"u32wrapping_sub.1", "PAD INCR U32SUB DROP"},
      {"u32wrapping_sub.3", "PUSH(3) U32SUB DROP"},
      {"u32overflowing_mul", "U32MUL"},
      {"u32overflowing_mul.0", "PAD U32MUL"},
      {"u32overflowing_mul.K1", "PAD INCR U32MUL"},
      {"u32overflowing_mul.3", "PUSH(3) U32MUL"},
      {"u32wrapping_mul", "U32MUL DROP"},
      {"u32wrapping_mul.0", "DROP PAD"},
      {"u32wrapping_mul.1", ""},
      {"u32wrapping_mul.K0", "PAD U32MUL DROP"},
      {"u32wrapping_mul.K1", "PAD INCR U32MUL DROP"},
      {"u32wrapping_mul.3", "PUSH(3) U32MUL DROP"},
      {"u32overflowing_madd", "U32MADD"},
      {"u32wrapping_madd", "U32MADD DROP"},
      {"u32div", "U32DIV DROP"},
      {"u32div.1", ""},
      {"u32div.K1", "PAD INCR U32DIV DROP"},
      {"u32div.3", "PUSH(3) U32DIV DROP"},
      {"u32mod", "U32DIV SWAP DROP"},
      {"u32mod.1", "PAD INCR U32DIV SWAP DROP"},
      {"u32mod.K1", "PAD INCR U32DIV SWAP DROP"},
      {"u32mod.3", "PUSH(3) U32DIV SWAP DROP"},
      {"u32divmod", "U32DIV"},
      {"u32divmod.1", "PAD INCR U32DIV"},
      {"u32divmod.K3", "PUSH(3) U32DIV"},

      // §2.7 u32 bitwise operations.
      {"u32and", "U32AND"},
      {"u32and.0", "DROP PAD"},
      {"u32and.K0", "PAD U32AND"},
      {"u32and.1", "PAD INCR U32AND"},
      {"u32and.K1", "PAD INCR U32AND"},
      {"u32and.255", "PUSH(255) U32AND"},
      {"u32or", kU32Or},
      {"u32or.0", ""},
      {"u32or.K0", "PAD " + kU32Or},
      {"u32or.1", "PAD INCR " + kU32Or},
      {"u32or.255", "PUSH(255) " + kU32Or},
      {"u32xor", "U32XOR"},
      {"u32xor.0", ""},
      {"u32xor.K0", "PAD U32XOR"},
      {"u32xor.1", "PAD INCR U32XOR"},
      {"u32xor.255", "PUSH(255) U32XOR"},
      {"u32not", kU32Not},
      {"u32not.0", "PAD " + kU32Not},
      {"u32not.1", "PAD INCR " + kU32Not},
      {"u32not.K1", "PAD INCR " + kU32Not},
      {"u32not.7", "PUSH(7) " + kU32Not},
      {"u32shl", kPow2 + " U32MUL DROP"},
      {"u32shl.0", ""},
      {"u32shl.K0", "NOOP"},
      {"u32shl.1", "PUSH(2) U32MUL DROP"},
      {"u32shl.31", "PUSH(2147483648) U32MUL DROP"},
      {"u32shl.K31", "PUSH(2147483648) U32MUL DROP"},
      {"u32shr", kPow2 + " U32DIV DROP"},
      {"u32shr.0", ""},
      {"u32shr.K0", "NOOP"},
      {"u32shr.4", "PUSH(16) U32DIV DROP"},
      {"u32rotl", kPow2 + " U32MUL ADD"},
      {"u32rotl.0", ""},
      {"u32rotl.K0", "NOOP"},
      {"u32rotl.8", "PUSH(256) U32MUL ADD"},
      {"u32rotr", "PUSH(32) SWAP U32SUB DROP " + kPow2 + " MUL U32SPLIT ADD"},
      {"u32rotr.0", ""},
      {"u32rotr.K0", "NOOP"},
      {"u32rotr.7", "PUSH(33554432) U32MUL ADD"},
      {"u32rotr.1", "PUSH(2147483648) U32MUL ADD"},
      {"u32rotr.K31", "PUSH(2) U32MUL ADD"},
      {"u32popcnt",
       "DUP0 PUSH(2) U32DIV DROP PUSH(1431655765) U32AND U32SUB DROP DUP0 "
       "PUSH(4) U32DIV DROP "
       "PUSH(858993459) U32AND SWAP PUSH(858993459) U32AND U32ADD DROP DUP0 "
       "PUSH(16) U32DIV DROP "
       "U32ADD DROP PUSH(252645135) U32AND PUSH(16843009) U32MUL DROP "
       "PUSH(16777216) U32DIV DROP"},
      {"u32clz", "EMIT(1951932030) ADVPOP PUSH(32) DUP1 NEG ADD " + kPow2 +
                     " PUSH(1) NEG ADD PUSH(2) U32DIV DROP DUP0 INCR "
                     "PUSH(4294967295) MOVUP2 NEG ADD DUP3 "
                     "EQZ MOVDN3 MOVUP4 U32AND EQ MOVUP2 OR ASSERT(0)"},
      {"u32ctz", "EMIT(2008979519) ADVPOP SWAP DUP1 " + kPow2 +
                     " DUP0 PAD INCR NEG ADD SWAP U32SPLIT DROP DUP0 MOVUP2 "
                     "ADD MOVUP2 U32AND EQ "
                     "ASSERT(0)"},
      {"u32clo", "EMIT(2032895094) ADVPOP PUSH(32) DUP1 NEG ADD " + kPow2 +
                     " PUSH(1) NEG ADD DUP0 PUSH(2) U32DIV DROP "
                     "PUSH(4294967295) SWAP NEG ADD MOVUP3 "
                     "U32AND PUSH(4294967295) MOVUP2 NEG ADD EQ ASSERT(0)"},
      {"u32cto", "EMIT(2083700134) ADVPOP SWAP DUP1 " + kPow2 +
                     " DUP0 PAD INCR NEG ADD SWAP U32SPLIT DROP DUP1 ADD "
                     "MOVUP2 U32AND EQ ASSERT(0)"},

      // §2.8 u32 comparisons.
      {"u32lt", "U32SUB SWAP DROP"},
      {"u32lt.0", "PAD U32SUB SWAP DROP"},
      {"u32lt.1", "PAD INCR U32SUB SWAP DROP"},
      {"u32lt.K9", "PUSH(9) U32SUB SWAP DROP"},
      {"u32lte", "SWAP U32SUB SWAP DROP NOT"},
      {"u32lte.0", "PAD SWAP U32SUB SWAP DROP NOT"},
      {"u32lte.1", "PAD INCR SWAP U32SUB SWAP DROP NOT"},
      {"u32lte.9", "PUSH(9) SWAP U32SUB SWAP DROP NOT"},
      {"u32gt", "SWAP U32SUB SWAP DROP"},
      {"u32gt.K0", "PAD SWAP U32SUB SWAP DROP"},
      {"u32gt.1", "PAD INCR SWAP U32SUB SWAP DROP"},
      {"u32gt.9", "PUSH(9) SWAP U32SUB SWAP DROP"},
      {"u32gte", "U32SUB SWAP DROP NOT"},
      {"u32gte.0", "PAD U32SUB SWAP DROP NOT"},
      {"u32gte.1", "PAD INCR U32SUB SWAP DROP NOT"},
      {"u32gte.9", "PUSH(9) U32SUB SWAP DROP NOT"},
      {"u32min", "DUP1 DUP1 U32SUB SWAP DROP EQZ CSWAP DROP"},
      {"u32min.0", "PAD DUP1 DUP1 U32SUB SWAP DROP EQZ CSWAP DROP"},
      {"u32min.1", "PAD INCR DUP1 DUP1 U32SUB SWAP DROP EQZ CSWAP DROP"},
      {"u32min.9", "PUSH(9) DUP1 DUP1 U32SUB SWAP DROP EQZ CSWAP DROP"},
      {"u32max", "DUP1 DUP1 U32SUB SWAP DROP EQZ CSWAP SWAP DROP"},
      {"u32max.0", "PAD DUP1 DUP1 U32SUB SWAP DROP EQZ CSWAP SWAP DROP"},
      {"u32max.K1", "PAD INCR DUP1 DUP1 U32SUB SWAP DROP EQZ CSWAP SWAP DROP"},
      {"u32max.9", "PUSH(9) DUP1 DUP1 U32SUB SWAP DROP EQZ CSWAP SWAP DROP"},

      // §2.9 Stack manipulation.
      {"drop", "DROP"},
      {"dropw", "DROP*4"},
      {"padw", "PAD*4"},
      {"dup", "DUP0"},
      {"dup.0", "DUP0"},
      {"dup.1", "DUP1"},
      {"dup.2", "DUP2"},
      {"dup.3", "DUP3"},
      {"dup.4", "DUP4"},
      {"dup.5", "DUP5"},
      {"dup.6", "DUP6"},
      {"dup.7", "DUP7"},
      {"dup.8", "PAD DUP9 ADD"},
      {"dup.9", "DUP9"},
      {"dup.10", "PAD DUP11 ADD"},
      {"dup.11", "DUP11"},
      {"dup.12", "PAD DUP13 ADD"},
      {"dup.13", "DUP13"},
      {"dup.14", "PAD DUP15 ADD"},
      {"dup.15", "DUP15"},
      {"dupw", "DUP3*4"},
      {"dupw.0", "DUP3*4"},
      {"dupw.1", "DUP7*4"},
      {"dupw.2", "DUP11*4"},
      {"dupw.3", "DUP15*4"},
      {"swap", "SWAP"},
      {"swap.1", "SWAP"},
      {"swap.2", "SWAP MOVUP2"},
      {"swap.3", "MOVDN2 MOVUP3"},
      {"swap.4", "MOVDN3 MOVUP4"},
      {"swap.5", "MOVDN4 MOVUP5"},
      {"swap.6", "MOVDN5 MOVUP6"},
      {"swap.7", "MOVDN6 MOVUP7"},
      {"swap.8", "MOVDN7 MOVUP8"},
      {"swap.9", "MOVDN8 SWAPDW SWAP SWAPDW MOVUP8"},
      {"swap.10", "MOVDN8 SWAPDW SWAP MOVUP2 SWAPDW MOVUP8"},
      {"swap.11", "MOVDN8 SWAPDW MOVDN2 MOVUP3 SWAPDW MOVUP8"},
      {"swap.12", "MOVDN8 SWAPDW MOVDN3 MOVUP4 SWAPDW MOVUP8"},
      {"swap.13", "MOVDN8 SWAPDW MOVDN4 MOVUP5 SWAPDW MOVUP8"},
      {"swap.14", "MOVDN8 SWAPDW MOVDN5 MOVUP6 SWAPDW MOVUP8"},
      {"swap.15", "MOVDN8 SWAPDW MOVDN6 MOVUP7 SWAPDW MOVUP8"},
      {"swapw", "SWAPW"},
      {"swapw.1", "SWAPW"},
      {"swapw.2", "SWAPW2"},
      {"swapw.3", "SWAPW3"},
      {"swapdw", "SWAPDW"},
      {"movup.2", "MOVUP2"},
      {"movup.3", "MOVUP3"},
      {"movup.4", "MOVUP4"},
      {"movup.5", "MOVUP5"},
      {"movup.6", "MOVUP6"},
      {"movup.7", "MOVUP7"},
      {"movup.8", "MOVUP8"},
      {"movup.9", "SWAPDW SWAP SWAPDW MOVUP8"},
      {"movup.10", "SWAPDW MOVUP2 SWAPDW MOVUP8"},
      {"movup.11", "SWAPDW MOVUP3 SWAPDW MOVUP8"},
      {"movup.12", "SWAPDW MOVUP4 SWAPDW MOVUP8"},
      {"movup.13", "SWAPDW MOVUP5 SWAPDW MOVUP8"},
      {"movup.14", "SWAPDW MOVUP6 SWAPDW MOVUP8"},
      {"movup.15", "SWAPDW MOVUP7 SWAPDW MOVUP8"},
      {"movdn.2", "MOVDN2"},
      {"movdn.3", "MOVDN3"},
      {"movdn.4", "MOVDN4"},
      {"movdn.5", "MOVDN5"},
      {"movdn.6", "MOVDN6"},
      {"movdn.7", "MOVDN7"},
      {"movdn.8", "MOVDN8"},
      {"movdn.9", "MOVDN8 SWAPDW SWAP SWAPDW"},
      {"movdn.10", "MOVDN8 SWAPDW MOVDN2 SWAPDW"},
      {"movdn.11", "MOVDN8 SWAPDW MOVDN3 SWAPDW"},
      {"movdn.12", "MOVDN8 SWAPDW MOVDN4 SWAPDW"},
      {"movdn.13", "MOVDN8 SWAPDW MOVDN5 SWAPDW"},
      {"movdn.14", "MOVDN8 SWAPDW MOVDN6 SWAPDW"},
      {"movdn.15", "MOVDN8 SWAPDW MOVDN7 SWAPDW"},
      {"movupw.2", "SWAPW SWAPW2"},
      {"movupw.3", "SWAPW SWAPW2 SWAPW3"},
      {"movdnw.2", "SWAPW2 SWAPW"},
      {"movdnw.3", "SWAPW3 SWAPW2 SWAPW"},
      {"cswap", "CSWAP"},
      {"cswapw", "CSWAPW"},
      {"cdrop", "CSWAP DROP"},
      {"cdropw", "CSWAPW DROP*4"},

      // §2.10 push.
      {"push.0", "PAD"},
      {"push.1", "PAD INCR"},
      {"push.2", "PUSH(2)"},
      {"push.0xff", "PUSH(255)"},
      {"push.18446744069414584320", "PUSH(-1)"},
      {"push.1.0.7.1", "PAD INCR PAD PUSH(7) PAD INCR"},
      {"push.1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16",
       "PAD INCR PUSH(2) PUSH(3) PUSH(4) PUSH(5) PUSH(6) PUSH(7) PUSH(8) "
       "PUSH(9) PUSH(10) "
       "PUSH(11) PUSH(12) PUSH(13) PUSH(14) PUSH(15) PUSH(16)"},
      {"push.[1,0,3,4]", "PAD INCR PAD PUSH(3) PUSH(4)"},
      {"push.WORD", "PUSH(5) PAD PAD INCR PUSH(7)"},
      {"push.K0", "PAD"},
      {"push.K1", "PAD INCR"},
      {"push.K77", "PUSH(77)"},
      {"push.3.[0,0,0,2].K1", "PUSH(3) PAD PAD PAD PUSH(2) PAD INCR"},

      // §2.11 Memory and procedure locals (N = 4 unless stated).
      {"mem_load", "MLOAD"},
      {"mem_load.0", "PAD MLOAD"},
      {"mem_load.1", "PAD INCR MLOAD"},
      {"mem_load.K8", "PUSH(8) MLOAD"},
      {"mem_loadw", "MLOADW"},
      {"mem_loadw.K0", "PAD MLOADW"},
      {"mem_loadw.1", "PAD INCR MLOADW"},
      {"mem_loadw.8", "PUSH(8) MLOADW"},
      {"mem_store", "MSTORE DROP"},
      {"mem_store.0", "PAD MSTORE DROP"},
      {"mem_store.K1", "PAD INCR MSTORE DROP"},
      {"mem_store.4294967295", "PUSH(4294967295) MSTORE DROP"},
      {"mem_storew", "MSTOREW"},
      {"mem_storew.0", "PAD MSTOREW"},
      {"mem_storew.1", "PAD INCR MSTOREW"},
      {"mem_storew.12", "PUSH(12) MSTOREW"},
      {"mem_stream", "MSTREAM"},
      {"locaddr.0", "PUSH(-4) FMPADD", 4},
      {"locaddr.3", "PUSH(-1) FMPADD", 4},
      {"locaddr.K2", "PUSH(-2) FMPADD", 4},
      {"loc_load.0", "PUSH(-4) FMPADD MLOAD", 4},
      {"loc_load.1", "PUSH(-3) FMPADD MLOAD", 4},
      {"loc_load.3", "PUSH(-1) FMPADD MLOAD", 4},
      {"loc_loadw.0", "PUSH(-4) FMPADD MLOADW", 4},
      {"loc_store.0", "PUSH(-4) FMPADD MSTORE DROP", 4},
      {"loc_store.3", "PUSH(-1) FMPADD MSTORE DROP", 4},
      {"loc_storew.0", "PUSH(-4) FMPADD MSTOREW", 4},
      {"locaddr.0", "PUSH(-5) FMPADD", 5},
      {"locaddr.4", "PUSH(-1) FMPADD", 5},
      {"loc_storew.0", "PUSH(-5) FMPADD MSTOREW", 5},
      {"loc_loadw.4", "PUSH(-4) FMPADD MLOADW", 8},
      {"loc_load.0", "PUSH(-1) FMPADD MLOAD", 1},
      {"loc_load.65534", "PUSH(-1) FMPADD MLOAD", 65535},

      // §2.12 Advice provider, system events and streaming.
      {"adv_push.1", "ADVPOP"},
      {"adv_push.16", "ADVPOP*16"},
      {"adv_loadw", "ADVPOPW"},
      {"adv_pipe", "PIPE"},
      {"adv.push_mapval", "EMIT(574478993)"},
      {"adv.push_mapvaln", "EMIT(630847990)"},
      {"adv.has_mapkey", "EMIT(652777600)"},
      {"adv.push_mtnode", "EMIT(361943238)"},
      {"adv.push_smtpeek", "EMIT(1889584556)"},
      {"adv.push_u64div", "EMIT(678156251)"},
      {"adv.push_falcon_div", "EMIT(3419226155)"},
      {"adv.insert_mem", "EMIT(2389394361)"},
      {"adv.insert_hdword", "EMIT(2391452729)"},
      {"adv.insert_hdword_d", "EMIT(2822590340)"},
      {"adv.insert_hperm", "EMIT(3297060969)"},

      // §2.13 Environment, events, no-op (caller: see
      // CallerIsLoweredInsideKernel).
      {"nop", "NOOP"},
      {"clk", "CLK"},
      {"sdepth", "SDEPTH"},
      {"emit.0", "EMIT(0)"},
      {"emit.1", "EMIT(1)"},
      {"emit.4294967295", "EMIT(4294967295)"},
      {"emit.K42", "EMIT(42)"},
      {"emit.574478993", "EMIT(574478993)"},

      // §2.14 Hashing and Merkle trees.
      {"hperm", "HPERM"},
      {"hash",
       "PUSH(4) PAD PAD PAD SWAPW PAD DUP7 DUP7 DUP7 HPERM DROP DROP DROP DROP "
       "SWAPW DROP DROP "
       "DROP DROP"},
      {"hmerge", kHMerge},
      {"mtree_get",
       "EMIT(361943238) ADVPOP ADVPOP ADVPOP ADVPOP MPVERIFY(0) MOVUP4 DROP "
       "MOVUP4 DROP"},
      {"mtree_set",
       "EMIT(361943238) ADVPOP ADVPOP ADVPOP ADVPOP MOVUP5 MOVUP5 DUP5 DUP5 "
       "SWAPDW SWAPW SWAPW2 "
       "DUP13 DUP13 MRUPDATE MOVUP4 DROP MOVUP4 DROP SWAPW DROP DROP DROP DROP "
       "SWAPW DROP DROP "
       "DROP DROP SWAPW"},
      {"mtree_merge", "EMIT(276124218) " + kHMerge},

      // §2.15 Recursive-verifier helpers.
      {"fri_ext2fold4", "FRIE2F4"},
      {"horner_eval_base", "HORNERBASE"},
      {"horner_eval_ext", "HORNEREXT"},
      {"arithmetic_circuit_eval", "EVALCIRCUIT"},

      // §2.16 Decorators (breakpoint: see BreakpointDependsOnDebugMode).
      {"trace.7", ""},
      {"trace.K3", ""},
      {"debug.stack", ""},
      {"debug.stack.4", ""},
      {"debug.mem", ""},
      {"debug.mem.4", ""},
      {"debug.mem.4.8", ""},
      {"debug.local", "", 4},
      {"debug.local.1", "", 4},
      {"debug.local.1.2", "", 4},
      {"debug.adv_stack", ""},
      {"debug.adv_stack.3", ""},
  };
  return rows;
}

TEST(LowerTest, EveryTableRowLowersToItsExactSequence) {
  for (const Row& row : AllRows()) {
    SCOPED_TRACE(absl::StrCat(row.spec, " (N = ", row.num_locals, ")"));
    std::vector<LoweredOp> out;
    const absl::Status status =
        LowerInstruction(Inst(row.spec), Context(row.num_locals), &out);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(Format(out), Format(Ops(row.expected)));
  }
}

TEST(LowerTest, OpCountsMatchTheReferenceColumn) {
  // A sample of the "Ops" column, checked independently of the sequences above.
  const std::map<std::string, size_t> counts = {
      {"pow2", 16},        {"exp", 73},       {"exp.u63", 72},
      {"exp.8", 14},       {"exp.255", 18},   {"exp.256", 19},
      {"ilog2", 45},       {"u32popcnt", 33}, {"u32clz", 43},
      {"u32ctz", 35},      {"u32clo", 41},    {"u32cto", 34},
      {"u32rotr", 23},     {"u32shl", 18},    {"hash", 19},
      {"hmerge", 16},      {"mtree_get", 10}, {"mtree_set", 30},
      {"mtree_merge", 17}, {"ext2div", 12},   {"ext2inv", 9},
      {"u32testw", 23},    {"eqw", 15},       {"gte.1", 18},
      {"lte.1", 17},       {"u32or.1", 8},    {"u32not.1", 7},
      {"assert_eqw", 11},
  };
  for (const auto& [spec, n] : counts) {
    std::vector<LoweredOp> out;
    ASSERT_TRUE(LowerInstruction(Inst(spec), Context(), &out).ok()) << spec;
    EXPECT_EQ(out.size(), n) << spec;
  }
}

TEST(LowerTest, AppendsToExistingOutput) {
  std::vector<LoweredOp> out = {{Opcode::kAdd, 0}};
  ASSERT_TRUE(LowerInstruction(Inst("push.5"), Context(), &out).ok());
  EXPECT_EQ(Format(out), "ADD PUSH(5)");
}

TEST(LowerTest, BreakpointDependsOnDebugMode) {
  std::vector<LoweredOp> out;
  LowerContext ctx = Context();
  ctx.debug_mode = true;
  ASSERT_TRUE(LowerInstruction(Inst("breakpoint"), ctx, &out).ok());
  EXPECT_EQ(Format(out), "NOOP");
  out.clear();
  ctx.debug_mode = false;
  ASSERT_TRUE(LowerInstruction(Inst("breakpoint"), ctx, &out).ok());
  EXPECT_TRUE(out.empty());
  // Debug decorators emit nothing in either mode.
  ASSERT_TRUE(LowerInstruction(Inst("debug.stack"), ctx, &out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(LowerTest, CallerIsLoweredInsideKernel) {
  std::vector<LoweredOp> out;
  LowerContext ctx = Context();
  ctx.in_kernel = true;
  ASSERT_TRUE(LowerInstruction(Inst("caller"), ctx, &out).ok());
  EXPECT_EQ(Format(out), "CALLER");
}

// ---------------------------------------------------------------------------------------------
// Error codes.

TEST(LowerTest, ErrorCodeFromMessageUsesFirstEightBlake3BytesLittleEndian) {
  // BLAKE3("") = af1349b9f5f9a1a6..., read little-endian: 0xa6a1f9f5b94913af (<
  // p).
  EXPECT_EQ(ErrorCodeFromMessage(""), 0xa6a1f9f5b94913afULL);
  // BLAKE3("oops") starts with 34 30 d7 22 73 97 15 13 (value checked against
  // the Python model).
  EXPECT_EQ(ErrorCodeFromMessage("oops"), 1375171781993115700ULL);
  EXPECT_LT(ErrorCodeFromMessage("some other message"), kP);
}

TEST(LowerTest, ErrorCodesAreAttachedToEveryAssertion) {
  const uint64_t e = ErrorCodeFromMessage("boom");
  const std::string c = absl::StrCat(e);
  const std::map<std::string, std::string> rows = {
      {"assert", "ASSERT(" + c + ")"},
      {"assertz", "EQZ ASSERT(" + c + ")"},
      {"assert_eq", "EQ ASSERT(" + c + ")"},
      {"assert_eqw", "MOVUP4 EQ ASSERT(" + c + ") MOVUP3 EQ ASSERT(" + c +
                         ") MOVUP2 EQ ASSERT(" + c + ") EQ ASSERT(" + c + ")"},
      {"u32assert", "PAD U32ASSERT2(" + c + ") DROP"},
      {"u32assert2", "U32ASSERT2(" + c + ")"},
      {"u32assertw", "U32ASSERT2(" + c + ") MOVUP3 MOVUP3 U32ASSERT2(" + c +
                         ") MOVUP3 MOVUP3"},
      {"mtree_verify", "MPVERIFY(" + c + ")"},
  };
  for (const auto& [spec, expected] : rows) {
    ast::Instruction inst = Inst(spec);
    inst.error = ast::Immediate{};
    inst.error->kind = ast::Immediate::Kind::kString;
    inst.error->text = "boom";
    std::vector<LoweredOp> out;
    ASSERT_TRUE(LowerInstruction(inst, Context(), &out).ok()) << spec;
    EXPECT_EQ(Format(out), Format(Ops(expected))) << spec;
  }
}

TEST(LowerTest, StringConstantErrorMessageGivesSameCodeAsLiteral) {
  ast::Instruction inst = Inst("assert");
  inst.error = ParseImmediate("MSG");
  std::vector<LoweredOp> out;
  ASSERT_TRUE(LowerInstruction(inst, Context(), &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].imm, ErrorCodeFromMessage("oops"));
}

TEST(LowerTest, NonStringErrorMessagesAreRejected) {
  std::vector<LoweredOp> out;
  ast::Instruction numeric = Inst("assert");
  numeric.error = ParseImmediate(
      "123");  // v0.16 `.err=` takes a string or a string constant
  EXPECT_EQ(LowerInstruction(numeric, Context(), &out).code(),
            absl::StatusCode::kInvalidArgument);
  ast::Instruction felt_constant = Inst("assert");
  felt_constant.error = ParseImmediate("K5");
  EXPECT_EQ(LowerInstruction(felt_constant, Context(), &out).code(),
            absl::StatusCode::kInvalidArgument);
  ast::Instruction not_an_assertion = Inst("add");
  not_an_assertion.error = ParseImmediate("MSG");
  EXPECT_EQ(LowerInstruction(not_an_assertion, Context(), &out).code(),
            absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------------------
// Assembly errors.

struct ErrorRow {
  std::string spec;
  uint32_t num_locals;
  std::string message_part;
};

TEST(LowerTest, AssemblyErrorsAreInvalidArgumentWithMessage) {
  const std::vector<ErrorRow> rows = {
      // Division by zero, literal (a parse error upstream) and constant.
      {"div.0", 0, "division by zero"},
      {"div.K0", 0, "division by zero"},
      {"u32div.0", 0, "division by zero"},
      {"u32div.K0", 0, "division by zero"},
      {"u32mod.K0", 0, "division by zero"},
      {"u32divmod.0", 0, "division by zero"},
      // Shift/rotate amounts.
      {"u32shl.K32", 0, "0..=31"},
      {"u32shr.K255", 0, "0..=31"},
      {"u32rotl.32", 0, "0..=31"},
      {"u32rotr.K40", 0, "0..=31"},
      {"u32shl.K256", 0, "u8"},
      // Local references (§2.11).
      {"loc_load.0", 0, "invalid procedure local reference"},
      {"locaddr.0", 0, "invalid procedure local reference"},
      {"loc_store.4", 4, "invalid procedure local reference"},
      {"locaddr.5", 5, "invalid procedure local reference"},
      {"loc_loadw.0", 3, "invalid procedure local reference"},
      {"loc_storew.4", 7, "invalid procedure local reference"},
      {"loc_loadw.2", 8, "invalid local word index"},
      {"loc_storew.1", 0, "invalid local word index"},  // checked before N = 0
      {"loc_load.65536", 70000, "u16"},
      // Caller outside a kernel.
      {"caller", 0, "invalid use of 'caller' instruction outside of kernel"},
      // Immediate ranges and kinds.
      {"u32wrapping_add.4294967296", 0, "u32"},
      {"mem_load.K4294967296", 0, "u32"},
      {"emit.4294967296", 0, "u32"},
      {"add.18446744069414584321", 0, "field element"},
      {"add.WORD", 0, "not a field element"},
      {"add.[1,2,3,4]", 0, "field element"},
      {"push.MSG", 0, "string"},
      {"push.18446744069414584321", 0, "field modulus"},
      {"push.1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17", 0, "at most 16"},
      {"push", 0, "at least one value"},
      {"add.UNDEFINED", 0, "undefined constant 'UNDEFINED'"},
      {"exp.u64", 0, "0..=63"},
      {"adv_push.0", 0, "1..=16"},
      {"adv_push.17", 0, "1..=16"},
      {"adv_push.K3", 0, "literal"},
      {"dup.16", 0, "0..=15"},
      {"dupw.4", 0, "0..=3"},
      {"swap.0", 0, "1..=15"},
      {"swap.16", 0, "1..=15"},
      {"swapw.4", 0, "1..=3"},
      {"movup.1", 0, "2..=15"},
      {"movdn.16", 0, "2..=15"},
      {"movupw.4", 0, "2..=3"},
      {"movdnw.1", 0, "2..=3"},
      {"movup", 0, "requires an index"},
      {"dup.K1", 0, "literal"},
      {"drop.1", 0, "takes no immediate"},
      {"add.1.2", 0, "too many"},
      {"emit", 0, "requires an immediate"},
      {"adv.push_nothing", 0, "unknown system event"},
      {"debug.nothing", 0, "unknown debug decorator"},
      {"frobnicate", 0, "unknown instruction 'frobnicate'"},
  };
  for (const ErrorRow& row : rows) {
    SCOPED_TRACE(row.spec);
    std::vector<LoweredOp> out;
    const absl::Status status =
        LowerInstruction(Inst(row.spec), Context(row.num_locals), &out);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), row.message_part))
        << status;
  }
}

TEST(LowerTest, LocalWordIndexErrorHasExactV016Message) {
  std::vector<LoweredOp> out;
  const absl::Status status =
      LowerInstruction(Inst("loc_loadw.2"), Context(8), &out);
  EXPECT_TRUE(absl::StartsWith(status.message(), "invalid local word index: 2"))
      << status;
}

TEST(LowerTest, NodeProducingInstructionsAreInternalErrors) {
  for (const char* name :
       {"exec", "call", "syscall", "procref", "dynexec", "dyncall"}) {
    ast::Instruction inst;
    inst.name = name;
    inst.target = "foo";
    std::vector<LoweredOp> out;
    EXPECT_EQ(LowerInstruction(inst, Context(), &out).code(),
              absl::StatusCode::kInternal)
        << name;
    EXPECT_TRUE(out.empty());
  }
}

TEST(LowerTest, MissingResolverMakesConstantsUndefined) {
  LowerContext ctx;
  std::vector<LoweredOp> out;
  const absl::Status status = LowerInstruction(Inst("add.K5"), ctx, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "undefined constant"))
      << status;
}

// ---------------------------------------------------------------------------------------------
// BLAKE3 (official test vectors: input i % 251, first 32 bytes of the "hash"
// output).

std::string Hex(const std::array<uint8_t, 32>& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t b : digest) {
    hex.push_back(kDigits[b >> 4]);
    hex.push_back(kDigits[b & 15]);
  }
  return hex;
}

TEST(LowerTest, Blake3MatchesOfficialTestVectors) {
  const std::vector<std::pair<size_t, std::string>> vectors = {
      {0, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"},
      {1, "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"},
      {1023,
       "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11"},
      {1024,
       "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"},
      {1025,
       "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444"},
      {2048,
       "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a"},
      {2049,
       "5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030"},
      {3072,
       "b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2"},
      {3073,
       "7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd3"},
      {4096,
       "015094013f57a5277b59d8475c0501042c0b642e531b0a1c8f58d2163229e969"},
      {4097,
       "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995"},
      {5120,
       "9cadc15fed8b5d854562b26a9536d9707cadeda9b143978f319ab34230535833"},
      {5121,
       "628bd2cb2004694adaab7bbd778a25df25c47b9d4155a55f8fbd79f2fe154cff"},
      {6144,
       "3e2e5b74e048f3add6d21faab3f83aa44d3b2278afb83b80b3c35164ebeca205"},
      {6145,
       "f1323a8631446cc50536a9f705ee5cb619424d46887f3c376c695b70e0f0507f"},
      {7168,
       "61da957ec2499a95d6b8023e2b0e604ec7f6b50e80a9678b89d2628e99ada77a"},
      {7169,
       "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817"},
      {8192,
       "aae792484c8efe4f19e2ca7d371d8c467ffb10748d8a5a1ae579948f718a2a63"},
      {8193,
       "bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3b"},
      {16384,
       "f875d6646de28985646f34ee13be9a576fd515f76b5b0a26bb324735041ddde4"},
      {31744,
       "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47"},
      {102400,
       "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085"},
  };
  for (const auto& [len, expected] : vectors) {
    std::string input(len, '\0');
    for (size_t i = 0; i < len; ++i) input[i] = static_cast<char>(i % 251);
    EXPECT_EQ(Hex(Blake3(input)), expected) << "input_len " << len;
  }
}

}  // namespace
}  // namespace flamefleet::vm
