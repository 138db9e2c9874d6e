// Tests of vm/assembler/lower.h with each dialect's instruction table: the exact operation
// sequence of every instruction form (the rows of tests/testdata/vm/<dialect>/lowering.txt, one
// test instance per dialect), the assembly-time errors of v0.16 and v0.25, the error-code
// derivation, the BLAKE3 implementation behind it (official test vectors), and the v0.25 forms
// the parser takes from the table (events, adv.push_mapvaln.N, word slices).
#include "vm/assembler/lower.h"

#include <array>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "vm/assembler/opcodes.h"
#include "vm/crypto/blake3.h"
#include "vm/dialect.h"
#include "vm/dialects/v0_16/v0_16.h"
#include "vm/dialects/v0_25/v0_25.h"
#include "vm/parser/ast.h"
#include "vm/parser/parser.h"
#include "vm/parser/source_manager.h"

namespace flamefleet::vm {
namespace {

constexpr uint64_t kP = 0xFFFFFFFF00000001ULL;

// ---------------------------------------------------------------------------------------------
// Building instructions from compact specs.

// Parses one immediate: a decimal literal, a 0x hex literal (<= 16 digits), a word literal
// "[a,b,c,d]", an inline event `event("name")`, or a constant name (starts with an upper-case
// letter). A word literal or constant may end in a slice "[i]" or "[i..j]".
ast::Immediate ParseImmediate(absl::string_view text) {
  ast::Immediate imm;
  if (absl::ConsumePrefix(&text, "event(\"") && absl::ConsumeSuffix(&text, "\")")) {
    imm.kind = ast::Immediate::Kind::kEvent;
    imm.text = std::string(text);
    imm.value = ErrorCodeFromMessage(text);
    return imm;
  }
  if (size_t open = text.rfind('['); open != absl::string_view::npos && open > 0) {
    absl::string_view range = text.substr(open + 1, text.size() - open - 2);
    const std::vector<std::string> bounds = absl::StrSplit(range, "..");
    int begin = 0;
    int end = 0;
    EXPECT_TRUE(absl::SimpleAtoi(bounds[0], &begin)) << text;
    end = begin + 1;
    if (bounds.size() == 2) {
      EXPECT_TRUE(absl::SimpleAtoi(bounds[1], &end)) << text;
    }
    imm = ParseImmediate(text.substr(0, open));
    imm.slice = std::pair<uint8_t, uint8_t>(static_cast<uint8_t>(begin), static_cast<uint8_t>(end));
    return imm;
  }
  if (absl::StartsWith(text, "[")) {
    imm.kind = ast::Immediate::Kind::kWord;
    std::vector<std::string> parts = absl::StrSplit(text.substr(1, text.size() - 2), ',');
    for (size_t i = 0; i < 4 && i < parts.size(); ++i) {
      EXPECT_TRUE(absl::SimpleAtoi(parts[i], &imm.word[i])) << text;
    }
  } else if (!text.empty() && absl::ascii_isupper(static_cast<unsigned char>(text[0]))) {
    imm.kind = ast::Immediate::Kind::kConstant;
    imm.text = std::string(text);
  } else if (absl::StartsWith(text, "0x")) {
    EXPECT_TRUE(absl::SimpleHexAtoi(text.substr(2), &imm.value)) << text;
  } else {
    EXPECT_TRUE(absl::SimpleAtoi(text, &imm.value)) << text;
  }
  return imm;
}

// Splits `spec` at the dots that are outside brackets and parentheses.
std::vector<std::string> SplitDots(absl::string_view spec) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (size_t i = 0; i < spec.size(); ++i) {
    const char c = spec[i];
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == '.' && depth == 0) {
      parts.emplace_back();
    } else {
      parts.back().push_back(c);
    }
  }
  return parts;
}

// Builds an instruction from MASM-like text without the `.err=` part:
// "u32rotr.7", "push.1.2.[1,2,3,4]", "adv.push_mapval", "debug.stack.4",
// "exp.u8", "add.K5" (constant K5), "push.WORD[1..3]", "emit.event(\"foo\")".
ast::Instruction Inst(absl::string_view spec) {
  std::vector<std::string> parts = SplitDots(spec);
  ast::Instruction inst;
  size_t first_arg = 1;
  inst.name = parts[0];
  if ((parts[0] == "adv" || parts[0] == "debug") && parts.size() > 1) {
    inst.name = absl::StrCat(parts[0], ".", parts[1]);
    first_arg = 2;
  } else if (parts[0] == "exp" && parts.size() > 1 && absl::StartsWith(parts[1], "u")) {
    inst.name = "exp.u";
    parts[1] = parts[1].substr(1);
  }
  for (size_t i = first_arg; i < parts.size(); ++i) inst.args.push_back(ParseImmediate(parts[i]));
  return inst;
}

// Resolves the test constants: "K<n>" is the felt n, "WORD" the word [5, 0, 1, 7], "MSG" the
// string "oops", "EV" the event constant event("foo"); anything else is undefined.
absl::StatusOr<ast::ConstantValue> ResolveTestConstant(const std::string& name) {
  ast::ConstantValue value;
  uint64_t n = 0;
  if (name.size() > 1 && name[0] == 'K' && absl::SimpleAtoi(name.substr(1), &n)) {
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
  if (name == "EV") {  // const EV = event("foo")
    value.kind = ast::ConstantValue::Kind::kEvent;
    value.text = "foo";
    value.felt = ErrorCodeFromMessage("foo");
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

// Parses "PUSH(-4) EXPACC*6 ASSERT(0) MOVUP2": names as printed by OpcodeName, an optional
// immediate (negative values mean p - x), an optional repeat count. Dialects share names
// (U32SPLIT is kU32Split in v0.16 and kU32SplitLe in v0.25): a name resolves to the operation
// that is native in `wire`, the dialect's wire table.
std::vector<LoweredOp> Ops(absl::string_view text, const WireOpcodeTable& wire) {
  static auto* const by_table =
      new std::map<const WireOpcodeTable*, std::map<std::string, Opcode, std::less<>>>();
  std::map<std::string, Opcode, std::less<>>& by_name = (*by_table)[&wire];
  if (by_name.empty()) {
    for (int v = 0; v < 256; ++v) {
      const Opcode op = static_cast<Opcode>(v);
      const std::string_view name = OpcodeName(op);
      if (name == "?" || (!IsPseudo(op) && wire[OpcodeIndex(op)] == kNotNative)) continue;
      by_name[std::string(name)] = op;
    }
  }
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
    auto it = by_name.find(token);
    EXPECT_NE(it, by_name.end()) << "unknown op " << token;
    if (it == by_name.end()) continue;
    op.opcode = it->second;
    for (int i = 0; i < repeat; ++i) ops.push_back(op);
  }
  return ops;
}

// The v0.16 names, for the v0.16-only tests below.
std::vector<LoweredOp> Ops(absl::string_view text) { return Ops(text, v0_16::WireOpcodes()); }

std::string Format(const std::vector<LoweredOp>& ops) {
  return absl::StrJoin(ops, " ", [](std::string* out, const LoweredOp& op) {
    absl::StrAppend(out, std::string(OpcodeName(op.opcode)));
    if (HasImmediate(op.opcode) || op.opcode == Opcode::kAssert || op.opcode == Opcode::kTrace ||
        op.opcode == Opcode::kU32Assert2 || op.opcode == Opcode::kMpVerify) {
      absl::StrAppend(out, "(", op.imm, ")");
    }
  });
}

// One row of the lowering table file.
struct Row {
  std::string spec;      // see Inst()
  std::string expected;  // see Ops()
  uint32_t num_locals = 0;
  int line = 0;  // in the file
};

std::string LoweringTablePath(absl::string_view folder) {
  return absl::StrCat(FLAMEFLEET_TESTDATA_DIR, "/vm/", folder, "/lowering.txt");
}

// Reads the rows of the lowering table (format in the file's header), expanding `$NAME`
// references to `def` lines. Malformed lines are test failures.
std::vector<Row> ReadLoweringTable(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::map<std::string, std::string, std::less<>> defs;
  std::vector<Row> rows;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    const absl::string_view stripped = absl::StripAsciiWhitespace(text);
    if (stripped.empty() || absl::StartsWith(stripped, "#")) continue;
    if (absl::StartsWith(stripped, "def ")) {
      const std::vector<std::string> parts =
          absl::StrSplit(stripped.substr(4), absl::MaxSplits(" = ", 1));
      EXPECT_EQ(parts.size(), 2u) << path << ":" << line << ": expected `def NAME = ops`";
      if (parts.size() == 2) {
        defs[std::string(absl::StripAsciiWhitespace(parts[0]))] = parts[1];
      }
      continue;
    }
    const std::vector<std::string> sides = absl::StrSplit(stripped, absl::MaxSplits("=>", 1));
    if (sides.size() != 2) {
      ADD_FAILURE() << path << ":" << line << ": expected `<instruction> => <operations>`";
      continue;
    }
    Row row;
    row.line = line;
    const std::vector<std::string> left = absl::StrSplit(sides[0], ' ', absl::SkipEmpty());
    if (left.empty()) {
      ADD_FAILURE() << path << ":" << line << ": no instruction";
      continue;
    }
    row.spec = left[0];
    for (size_t i = 1; i < left.size(); ++i) {
      absl::string_view option = left[i];
      if (!absl::ConsumePrefix(&option, "locals=") || !absl::SimpleAtoi(option, &row.num_locals)) {
        ADD_FAILURE() << path << ":" << line << ": unknown option " << left[i];
      }
    }
    std::vector<std::string> ops;
    for (absl::string_view token : absl::StrSplit(sides[1], ' ', absl::SkipEmpty())) {
      if (absl::ConsumePrefix(&token, "$")) {
        auto it = defs.find(token);
        if (it == defs.end()) {
          ADD_FAILURE() << path << ":" << line << ": undefined $" << token;
          continue;
        }
        ops.push_back(it->second);
      } else {
        ops.push_back(std::string(token));
      }
    }
    row.expected = absl::StrJoin(ops, " ");
    rows.push_back(std::move(row));
  }
  return rows;
}

// One dialect's instruction table and where its lowering table lives.
struct DialectCase {
  const char* folder;  // tests/testdata/vm/<folder>/lowering.txt
  const InstructionTable& (*instructions)();
  const WireOpcodeTable& (*wire)();
  size_t min_rows;  // the rows the file had when it was written: a guard against truncation
  // Space-separated rows the file need not cover (tested on their own below: context flags,
  // rejected spellings).
  const char* exempt;
};

class LowerDialectTest : public testing::TestWithParam<DialectCase> {};

TEST_P(LowerDialectTest, EveryTableRowLowersToItsExactSequence) {
  const DialectCase& dialect = GetParam();
  const std::string path = LoweringTablePath(dialect.folder);
  const std::vector<Row> rows = ReadLoweringTable(path);
  ASSERT_GE(rows.size(), dialect.min_rows) << "rows missing from " << path;
  for (const Row& row : rows) {
    SCOPED_TRACE(absl::StrCat(dialect.folder, "/lowering.txt:", row.line, ": ", row.spec,
                              " (N = ", row.num_locals, ")"));
    std::vector<LoweredOp> out;
    const absl::Status status =
        LowerInstruction(dialect.instructions(), Inst(row.spec), Context(row.num_locals), &out);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(Format(out), Format(Ops(row.expected, dialect.wire())));
  }
}

TEST_P(LowerDialectTest, EveryRowEmitsOnlyOperationsNativeInTheDialect) {
  const DialectCase& dialect = GetParam();
  for (const Row& row : ReadLoweringTable(LoweringTablePath(dialect.folder))) {
    std::vector<LoweredOp> out;
    ASSERT_TRUE(
        LowerInstruction(dialect.instructions(), Inst(row.spec), Context(row.num_locals), &out)
            .ok())
        << row.spec;
    for (const LoweredOp& op : out) {
      if (op.opcode == Opcode::kTrace) continue;  // a decorator, never encoded
      EXPECT_NE(dialect.wire()[OpcodeIndex(op.opcode)], kNotNative)
          << row.spec << ": " << OpcodeName(op.opcode) << " is not a native operation of "
          << dialect.folder;
    }
  }
}

TEST_P(LowerDialectTest, EveryLoweredMnemonicHasATableRow) {
  // The other direction: each row of the instruction table that lowers (a non-null lowering)
  // appears at least once in the lowering table file.
  const DialectCase& dialect = GetParam();
  std::set<std::string> covered;
  for (const Row& row : ReadLoweringTable(LoweringTablePath(dialect.folder))) {
    const ast::Instruction inst = Inst(row.spec);
    const InstructionRow* r = dialect.instructions().FindForInstruction(inst.name);
    if (r != nullptr) covered.insert(std::string(r->name));
  }
  const std::vector<std::string> exempt = absl::StrSplit(dialect.exempt, ' ', absl::SkipEmpty());
  for (const InstructionRow& row : dialect.instructions().rows()) {
    const std::string name(row.name);
    if (row.lower == nullptr || absl::c_linear_search(exempt, name)) continue;
    EXPECT_TRUE(covered.count(name)) << dialect.folder << ": no lowering.txt row for " << name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Dialects, LowerDialectTest,
    testing::Values(DialectCase{"v0_16", v0_16::Instructions, v0_16::WireOpcodes, 388,
                                "breakpoint caller"},
                    DialectCase{"v0_25", v0_25::Instructions, v0_25::WireOpcodes, 340,
                                "loc_loadw loc_storew mem_loadw mem_storew"}),
    [](const testing::TestParamInfo<DialectCase>& info) { return std::string(info.param.folder); });

TEST(LowerTest, OpCountsMatchTheReferenceColumn) {
  // A sample of the "Ops" column, checked independently of the sequences above.
  const std::map<std::string, size_t> counts = {
      {"pow2", 16},    {"exp", 73},       {"exp.u63", 72},    {"exp.8", 14},       {"exp.255", 18},
      {"exp.256", 19}, {"ilog2", 45},     {"u32popcnt", 33},  {"u32clz", 43},      {"u32ctz", 35},
      {"u32clo", 41},  {"u32cto", 34},    {"u32rotr", 23},    {"u32shl", 18},      {"hash", 19},
      {"hmerge", 16},  {"mtree_get", 10}, {"mtree_set", 30},  {"mtree_merge", 17}, {"ext2div", 12},
      {"ext2inv", 9},  {"u32testw", 23},  {"eqw", 15},        {"gte.1", 18},       {"lte.1", 17},
      {"u32or.1", 8},  {"u32not.1", 7},   {"assert_eqw", 11},
  };
  for (const auto& [spec, n] : counts) {
    std::vector<LoweredOp> out;
    ASSERT_TRUE(LowerInstruction(v0_16::Instructions(), Inst(spec), Context(), &out).ok()) << spec;
    EXPECT_EQ(out.size(), n) << spec;
  }
}

TEST(LowerTest, AppendsToExistingOutput) {
  std::vector<LoweredOp> out = {{Opcode::kAdd, 0}};
  ASSERT_TRUE(LowerInstruction(v0_16::Instructions(), Inst("push.5"), Context(), &out).ok());
  EXPECT_EQ(Format(out), "ADD PUSH(5)");
}

TEST(LowerTest, BreakpointDependsOnDebugMode) {
  std::vector<LoweredOp> out;
  LowerContext ctx = Context();
  ctx.debug_mode = true;
  ASSERT_TRUE(LowerInstruction(v0_16::Instructions(), Inst("breakpoint"), ctx, &out).ok());
  EXPECT_EQ(Format(out), "NOOP");
  out.clear();
  ctx.debug_mode = false;
  ASSERT_TRUE(LowerInstruction(v0_16::Instructions(), Inst("breakpoint"), ctx, &out).ok());
  EXPECT_TRUE(out.empty());
  // Debug decorators emit nothing in either mode.
  ASSERT_TRUE(LowerInstruction(v0_16::Instructions(), Inst("debug.stack"), ctx, &out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(LowerTest, CallerIsLoweredInsideKernel) {
  std::vector<LoweredOp> out;
  LowerContext ctx = Context();
  ctx.in_kernel = true;
  ASSERT_TRUE(LowerInstruction(v0_16::Instructions(), Inst("caller"), ctx, &out).ok());
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
      {"assert_eqw", "MOVUP4 EQ ASSERT(" + c + ") MOVUP3 EQ ASSERT(" + c + ") MOVUP2 EQ ASSERT(" +
                         c + ") EQ ASSERT(" + c + ")"},
      {"u32assert", "PAD U32ASSERT2(" + c + ") DROP"},
      {"u32assert2", "U32ASSERT2(" + c + ")"},
      {"u32assertw", "U32ASSERT2(" + c + ") MOVUP3 MOVUP3 U32ASSERT2(" + c + ") MOVUP3 MOVUP3"},
      {"mtree_verify", "MPVERIFY(" + c + ")"},
  };
  for (const auto& [spec, expected] : rows) {
    ast::Instruction inst = Inst(spec);
    inst.error = ast::Immediate{};
    inst.error->kind = ast::Immediate::Kind::kString;
    inst.error->text = "boom";
    std::vector<LoweredOp> out;
    ASSERT_TRUE(LowerInstruction(v0_16::Instructions(), inst, Context(), &out).ok()) << spec;
    EXPECT_EQ(Format(out), Format(Ops(expected))) << spec;
  }
}

TEST(LowerTest, StringConstantErrorMessageGivesSameCodeAsLiteral) {
  ast::Instruction inst = Inst("assert");
  inst.error = ParseImmediate("MSG");
  std::vector<LoweredOp> out;
  ASSERT_TRUE(LowerInstruction(v0_16::Instructions(), inst, Context(), &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].imm, ErrorCodeFromMessage("oops"));
}

TEST(LowerTest, NonStringErrorMessagesAreRejected) {
  std::vector<LoweredOp> out;
  ast::Instruction numeric = Inst("assert");
  numeric.error = ParseImmediate("123");  // v0.16 `.err=` takes a string or a string constant
  EXPECT_EQ(LowerInstruction(v0_16::Instructions(), numeric, Context(), &out).code(),
            absl::StatusCode::kInvalidArgument);
  ast::Instruction felt_constant = Inst("assert");
  felt_constant.error = ParseImmediate("K5");
  EXPECT_EQ(LowerInstruction(v0_16::Instructions(), felt_constant, Context(), &out).code(),
            absl::StatusCode::kInvalidArgument);
  ast::Instruction not_an_assertion = Inst("add");
  not_an_assertion.error = ParseImmediate("MSG");
  EXPECT_EQ(LowerInstruction(v0_16::Instructions(), not_an_assertion, Context(), &out).code(),
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
      // Local references.
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
        LowerInstruction(v0_16::Instructions(), Inst(row.spec), Context(row.num_locals), &out);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), row.message_part)) << status;
  }
}

TEST(LowerTest, LocalWordIndexErrorHasExactV016Message) {
  std::vector<LoweredOp> out;
  const absl::Status status =
      LowerInstruction(v0_16::Instructions(), Inst("loc_loadw.2"), Context(8), &out);
  EXPECT_TRUE(absl::StartsWith(status.message(), "invalid local word index: 2")) << status;
}

TEST(LowerTest, NodeProducingInstructionsAreInternalErrors) {
  for (const char* name : {"exec", "call", "syscall", "procref", "dynexec", "dyncall"}) {
    ast::Instruction inst;
    inst.name = name;
    inst.target = "foo";
    std::vector<LoweredOp> out;
    EXPECT_EQ(LowerInstruction(v0_16::Instructions(), inst, Context(), &out).code(),
              absl::StatusCode::kInternal)
        << name;
    EXPECT_TRUE(out.empty());
  }
}

TEST(LowerTest, MissingResolverMakesConstantsUndefined) {
  LowerContext ctx;
  std::vector<LoweredOp> out;
  const absl::Status status = LowerInstruction(v0_16::Instructions(), Inst("add.K5"), ctx, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(status.message(), "undefined constant")) << status;
}

// ---------------------------------------------------------------------------------------------
// v0.25.

std::vector<LoweredOp> Ops25(absl::string_view text) { return Ops(text, v0_25::WireOpcodes()); }

absl::Status Lower25(const ast::Instruction& inst, const LowerContext& ctx,
                     std::vector<LoweredOp>* out) {
  return LowerInstruction(v0_25::Instructions(), inst, ctx, out);
}

TEST(LowerV025Test, EveryMnemonicOfTheReferenceHasARow) {
  // Every instruction masm-lowering-v0.25.md (§3) names, as the v0.25.7 parser spells it
  // (crates/assembly-syntax/src/parser/cst/instructions.rs).
  const std::vector<std::string> mnemonics = {"assert",
                                              "assertz",
                                              "assert_eq",
                                              "assert_eqw",
                                              "u32assert",
                                              "u32assert2",
                                              "u32assertw",
                                              "mtree_verify",
                                              "add",
                                              "sub",
                                              "mul",
                                              "div",
                                              "neg",
                                              "inv",
                                              "pow2",
                                              "exp",
                                              "exp.u",
                                              "ilog2",
                                              "not",
                                              "and",
                                              "or",
                                              "xor",
                                              "eq",
                                              "neq",
                                              "eqw",
                                              "lt",
                                              "lte",
                                              "gt",
                                              "gte",
                                              "is_odd",
                                              "ext2add",
                                              "ext2sub",
                                              "ext2mul",
                                              "ext2neg",
                                              "ext2inv",
                                              "ext2div",
                                              "u32test",
                                              "u32testw",
                                              "u32cast",
                                              "u32split",
                                              "u32widening_add",
                                              "u32overflowing_add",
                                              "u32wrapping_add",
                                              "u32widening_add3",
                                              "u32overflowing_add3",
                                              "u32wrapping_add3",
                                              "u32overflowing_sub",
                                              "u32wrapping_sub",
                                              "u32widening_mul",
                                              "u32wrapping_mul",
                                              "u32widening_madd",
                                              "u32wrapping_madd",
                                              "u32div",
                                              "u32mod",
                                              "u32divmod",
                                              "u32and",
                                              "u32or",
                                              "u32xor",
                                              "u32not",
                                              "u32shl",
                                              "u32shr",
                                              "u32rotl",
                                              "u32rotr",
                                              "u32popcnt",
                                              "u32clz",
                                              "u32ctz",
                                              "u32clo",
                                              "u32cto",
                                              "u32lt",
                                              "u32lte",
                                              "u32gt",
                                              "u32gte",
                                              "u32min",
                                              "u32max",
                                              "drop",
                                              "dropw",
                                              "padw",
                                              "dup",
                                              "dupw",
                                              "swap",
                                              "swapw",
                                              "swapdw",
                                              "movup",
                                              "movupw",
                                              "movdn",
                                              "movdnw",
                                              "cswap",
                                              "cswapw",
                                              "cdrop",
                                              "cdropw",
                                              "reversew",
                                              "reversedw",
                                              "push",
                                              "mem_load",
                                              "mem_store",
                                              "mem_loadw_le",
                                              "mem_loadw_be",
                                              "mem_storew_le",
                                              "mem_storew_be",
                                              "mem_stream",
                                              "locaddr",
                                              "loc_load",
                                              "loc_loadw_le",
                                              "loc_loadw_be",
                                              "loc_store",
                                              "loc_storew_le",
                                              "loc_storew_be",
                                              "adv_push",
                                              "adv_pushw",
                                              "adv_loadw",
                                              "adv_pipe",
                                              "adv.push_mapval",
                                              "adv.push_mapval_count",
                                              "adv.push_mapvaln",
                                              "adv.has_mapkey",
                                              "adv.push_mtnode",
                                              "adv.insert_mem",
                                              "adv.insert_hdword",
                                              "adv.insert_hdword_d",
                                              "adv.insert_hqword",
                                              "adv.insert_hperm",
                                              "nop",
                                              "clk",
                                              "sdepth",
                                              "caller",
                                              "procref",
                                              "emit",
                                              "hperm",
                                              "hash",
                                              "hmerge",
                                              "mtree_get",
                                              "mtree_set",
                                              "mtree_merge",
                                              "crypto_stream",
                                              "fri_ext2fold4",
                                              "horner_eval_base",
                                              "horner_eval_ext",
                                              "eval_circuit",
                                              "log_precompile",
                                              "exec",
                                              "call",
                                              "syscall",
                                              "dynexec",
                                              "dyncall"};
  for (const std::string& name : mnemonics) {
    EXPECT_NE(v0_25::Instructions().FindForInstruction(name), nullptr) << name;
    if (absl::StartsWith(name, "adv.")) {  // the event must be one of the dialect's
      std::vector<LoweredOp> out;
      EXPECT_TRUE(Lower25(Inst(name), Context(), &out).ok()) << name;
    }
  }
  // Spellings v0.25.7 no longer has.
  for (const char* name : {"breakpoint", "debug.stack", "trace", "arithmetic_circuit_eval",
                           "u32overflowing_mul", "u32overflowing_madd"}) {
    EXPECT_EQ(v0_25::Instructions().FindForInstruction(name), nullptr) << name;
  }
  // System events that became core-library events.
  for (const char* name : {"adv.push_u64div", "adv.push_falcon_div", "adv.push_smtpeek"}) {
    std::vector<LoweredOp> out;
    EXPECT_TRUE(
        absl::StrContains(Lower25(Inst(name), Context(), &out).message(), "unknown system event"))
        << name;
  }
}

TEST(LowerV025Test, OpCountsMatchTheReferenceColumn) {
  // The "Ops" column of masm-lowering-v0.25.md §3, checked independently of lowering.txt.
  const std::vector<std::pair<std::string, size_t>> counts = {
      {"ilog2", 70},
      {"u32clz", 52},
      {"u32ctz", 38},
      {"u32clo", 43},
      {"u32cto", 37},
      {"ext2inv", 11},
      {"ext2div", 14},
      {"mtree_get", 13},
      {"mtree_set", 33},
      {"mtree_merge", 19},
      {"hash", 19},
      {"hmerge", 16},
      {"u32test", 4},
      {"u32testw", 19},
      {"u32cast", 3},
      {"u32popcnt", 36},
      {"u32rotr", 23},
      {"u32shl", 19},
      {"u32shl.3", 4},
      {"u32shr", 18},
      {"u32shr.3", 3},
      {"lt", 17},
      {"lte", 18},
      {"gt", 16},
      {"gte", 17},
      {"lt.1", 18},
      {"gte.0", 18},
      {"is_odd", 6},
      {"u32wrapping_mul", 3},
      {"u32wrapping_mul.1", 5},
      {"u32wrapping_add.0", 4},
      {"u32div.1", 4},
      {"mem_storew_be", 9},
      {"mem_storew_be.8", 8},
      {"mem_loadw_be.8", 5},
      {"adv_pushw", 5},
      {"adv_push", 1},
      {"emit", 1},
      {"emit.EV", 3},
      {"adv.push_mapval", 3},
      {"reversedw", 7},
      {"add.0", 1},
      {"exp", 73},
      {"pow2", 16},
      {"eqw", 15},
      {"assert_eqw", 11},
  };
  for (const auto& [spec, n] : counts) {
    std::vector<LoweredOp> out;
    ASSERT_TRUE(Lower25(Inst(spec), Context(), &out).ok()) << spec;
    EXPECT_EQ(out.size(), n) << spec;
  }
  const std::vector<std::pair<std::string, size_t>> local_counts = {
      {"locaddr.0", 4},      {"loc_load.0", 5},      {"loc_store.0", 6},      {"loc_loadw_le.0", 5},
      {"loc_loadw_be.0", 8}, {"loc_storew_le.0", 5}, {"loc_storew_be.0", 11},
  };
  for (const auto& [spec, n] : local_counts) {
    std::vector<LoweredOp> out;
    ASSERT_TRUE(Lower25(Inst(spec), Context(4), &out).ok()) << spec;
    EXPECT_EQ(out.size(), n) << spec;
  }
}

TEST(LowerV025Test, LocalOffsetsUseTheLocalCountRoundedUpToAWord) {
  // @locals(5): R = 8, so local 0 is fmp - 8 and local 4 is fmp - 4 (word-aligned), as the
  // upstream `locaddr` oracle (env_ops.rs) requires: 2^31 and 2^31 + 4 after the prologue.
  std::vector<LoweredOp> out;
  ASSERT_TRUE(Lower25(Inst("locaddr.0"), Context(5), &out).ok());
  ASSERT_TRUE(Lower25(Inst("locaddr.4"), Context(5), &out).ok());
  EXPECT_EQ(Format(out), Format(Ops25("PUSH(-8) PUSH(4294967294) MLOAD ADD "
                                      "PUSH(-4) PUSH(4294967294) MLOAD ADD")));
}

TEST(LowerV025Test, CallerIsAllowedOutsideKernels) {
  std::vector<LoweredOp> out;
  ASSERT_TRUE(Lower25(Inst("caller"), Context(), &out).ok());
  LowerContext kernel = Context();
  kernel.in_kernel = true;
  ASSERT_TRUE(Lower25(Inst("caller"), kernel, &out).ok());
  EXPECT_EQ(Format(out), Format(Ops25("CALLER CALLER")));
  EXPECT_EQ(out[0].opcode, Opcode::kCallerAny);
}

TEST(LowerV025Test, InlineEventAndEventConstantGiveTheSameId) {
  std::vector<LoweredOp> inline_event;
  std::vector<LoweredOp> constant;
  ASSERT_TRUE(Lower25(Inst("emit.event(\"foo\")"), Context(), &inline_event).ok());
  ASSERT_TRUE(Lower25(Inst("emit.EV"), Context(), &constant).ok());
  EXPECT_EQ(Format(inline_event), Format(constant));
  EXPECT_EQ(Format(constant),
            Format(Ops25(absl::StrCat("PUSH(", ErrorCodeFromMessage("foo"), ") EMIT DROP"))));
}

TEST(LowerV025Test, ErrorCodesAreAttachedToEveryAssertion) {
  // Oracle: snapshot u32assertw_with_code (crates/assembly/src/snapshots at v0.25.7).
  EXPECT_EQ(ErrorCodeFromMessage("Oh no"), 15491226248792286710ULL);
  const std::string c = absl::StrCat(ErrorCodeFromMessage("Oh no"));
  const std::map<std::string, std::string> rows = {
      {"assert", "ASSERT(" + c + ")"},
      {"assertz", "EQZ ASSERT(" + c + ")"},
      {"assert_eq", "EQ ASSERT(" + c + ")"},
      {"u32assert", "PAD U32ASSERT2(" + c + ") DROP"},
      {"u32assertw", "U32ASSERT2(" + c + ") MOVUP3 MOVUP3 U32ASSERT2(" + c + ") MOVUP3 MOVUP3"},
      {"mtree_verify", "MPVERIFY(" + c + ")"},
  };
  for (const auto& [spec, expected] : rows) {
    ast::Instruction inst = Inst(spec);
    inst.error = ast::Immediate{};
    inst.error->kind = ast::Immediate::Kind::kString;
    inst.error->text = "Oh no";
    std::vector<LoweredOp> out;
    ASSERT_TRUE(Lower25(inst, Context(), &out).ok()) << spec;
    EXPECT_EQ(Format(out), Format(Ops25(expected))) << spec;
  }
}

TEST(LowerV025Test, AssemblyErrorsAreInvalidArgumentWithMessage) {
  const std::vector<ErrorRow> rows = {
      // Division by zero, literal and constant alike.
      {"div.0", 0, "division by zero"},
      {"div.K0", 0, "division by zero"},
      {"u32div.0", 0, "division by zero"},
      {"u32div.K0", 0, "division by zero"},
      {"u32mod.0", 0, "division by zero"},
      {"u32divmod.K0", 0, "division by zero"},
      // Shift/rotate amounts.
      {"u32shl.K32", 0, "0..=31"},
      {"u32shr.32", 0, "0..=31"},
      {"u32rotl.K255", 0, "0..=31"},
      {"u32rotr.K256", 0, "u8"},
      // Local references (the declared N bounds them).
      {"loc_load.0", 0, "invalid procedure local reference"},
      {"locaddr.5", 5, "invalid procedure local reference"},
      {"loc_loadw_le.0", 3, "invalid procedure local reference"},
      {"loc_storew_be.4", 7, "invalid procedure local reference"},
      {"loc_loadw_be.2", 8, "invalid local word index"},
      {"loc_storew_le.1", 0, "invalid local word index"},
      // Removed spellings.
      {"mem_loadw", 0, "deprecated instruction, use `mem_loadw_be`"},
      {"mem_storew.4", 0, "deprecated instruction, use `mem_storew_be`"},
      {"loc_loadw.0", 4, "deprecated instruction, use `loc_loadw_be`"},
      {"loc_storew.0", 4, "deprecated instruction, use `loc_storew_be`"},
      {"breakpoint", 0, "unknown instruction 'breakpoint'"},
      {"arithmetic_circuit_eval", 0, "unknown instruction"},
      {"u32overflowing_mul", 0, "unknown instruction"},
      {"adv_push.4", 0, "takes no immediate"},
      // Events.
      {"emit.5", 0, "event"},
      {"emit.K5", 0, "event(\"...\")"},
      {"emit.EV.EV", 0, "too many"},
      {"adv.push_mapvaln.3", 0, "invalid pad value"},
      {"adv.push_mapvaln.K4", 0, "invalid pad value"},
      {"adv.push_mapval.4", 0, "takes no immediate"},
      {"adv.push_nothing", 0, "unknown system event"},
      // push: slices, word literals in lists, ranges.
      {"push.WORD[2..2]", 0, "empty"},
      {"push.WORD[3..5]", 0, "out of range"},
      {"push.K5[0]", 0, "cannot be sliced"},
      {"push.[1,2,3,4].5", 0, "cannot be mixed"},
      {"push.1.WORD[0]", 0, "only value"},
      {"push.MSG", 0, "string"},
      {"push.18446744069414584321", 0, "field modulus"},
      {"push.1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17", 0, "at most 16"},
      // Immediate kinds and ranges.
      {"u32wrapping_add.4294967296", 0, "u32"},
      {"add.WORD", 0, "not a field element"},
      {"u32wrapping_add.EV", 0, "not a u32 value"},
      {"mem_load.EV", 0, "not a u32 value"},
      {"exp.u64", 0, "0..=63"},
      {"dup.16", 0, "0..=15"},
      {"movup.1", 0, "2..=15"},
      {"u32widening_add3.1", 0, "takes no immediate"},
      {"frobnicate", 0, "unknown instruction 'frobnicate'"},
  };
  for (const ErrorRow& row : rows) {
    SCOPED_TRACE(row.spec);
    std::vector<LoweredOp> out;
    const absl::Status status = Lower25(Inst(row.spec), Context(row.num_locals), &out);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), row.message_part)) << status;
  }
}

TEST(LowerV025Test, NodeProducingInstructionsAreInternalErrors) {
  for (const char* name : {"exec", "call", "syscall", "procref", "dynexec", "dyncall"}) {
    ast::Instruction inst;
    inst.name = name;
    inst.target = "foo";
    std::vector<LoweredOp> out;
    EXPECT_EQ(Lower25(inst, Context(), &out).code(), absl::StatusCode::kInternal) << name;
  }
}

// Parses `begin <body> end` with the v0.25 table and returns the entry's instructions.
absl::StatusOr<std::vector<ast::Instruction>> ParseV025Body(const std::string& body) {
  SourceManager sources;
  const uint32_t id = sources.Add("t.masm", absl::StrCat("begin\n", body, "\nend\n"));
  absl::StatusOr<ast::Module> module =
      ParseModule(sources, id, ast::ModuleKind::kExecutable, v0_25::Spec());
  if (!module.ok()) return module.status();
  std::vector<ast::Instruction> out;
  for (const ast::Node& node : *module->entry) {
    if (const auto* inst = std::get_if<ast::Instruction>(&node.op)) out.push_back(*inst);
  }
  return out;
}

TEST(LowerV025Test, ParserTakesTheV025FormsFromTheTable) {
  absl::StatusOr<std::vector<ast::Instruction>> insts = ParseV025Body(
      "emit.event(\"foo\") emit adv.push_mapvaln.4 adv.push_mapvaln push.[10,11,12,13][1..3] "
      "push.[6,7,8,9][2] adv_push adv_pushw");
  ASSERT_TRUE(insts.ok()) << insts.status();
  ASSERT_EQ(insts->size(), 8u);
  std::vector<LoweredOp> out;
  LowerContext ctx = Context();
  for (const ast::Instruction& inst : *insts) {
    ASSERT_TRUE(Lower25(inst, ctx, &out).ok()) << inst.name;
  }
  EXPECT_EQ(Format(out),
            Format(Ops25(absl::StrCat(
                "PUSH(", ErrorCodeFromMessage("foo"),
                ") EMIT DROP EMIT PUSH(3443305460233942990) EMIT DROP "
                "PUSH(11775886982554463322) EMIT DROP PUSH(12) PUSH(11) PUSH(8) ADVPOP "
                "PAD PAD PAD PAD ADVPOPW"))));
}

TEST(LowerV025Test, ParserRejectsMalformedV025Forms) {
  for (const char* body : {"emit.event(foo)", "emit.event(\"foo\"", "push.[1,2,3,4][1..]",
                           "push.[1,2,3,4][4]", "push.[1,2,3,4][2..1]", "adv.push_mapvaln.x"}) {
    absl::StatusOr<std::vector<ast::Instruction>> insts = ParseV025Body(body);
    EXPECT_EQ(insts.status().code(), absl::StatusCode::kInvalidArgument) << body;
  }
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
      {1023, "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11"},
      {1024, "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"},
      {1025, "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444"},
      {2048, "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a"},
      {2049, "5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030"},
      {3072, "b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2"},
      {3073, "7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd3"},
      {4096, "015094013f57a5277b59d8475c0501042c0b642e531b0a1c8f58d2163229e969"},
      {4097, "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995"},
      {5120, "9cadc15fed8b5d854562b26a9536d9707cadeda9b143978f319ab34230535833"},
      {5121, "628bd2cb2004694adaab7bbd778a25df25c47b9d4155a55f8fbd79f2fe154cff"},
      {6144, "3e2e5b74e048f3add6d21faab3f83aa44d3b2278afb83b80b3c35164ebeca205"},
      {6145, "f1323a8631446cc50536a9f705ee5cb619424d46887f3c376c695b70e0f0507f"},
      {7168, "61da957ec2499a95d6b8023e2b0e604ec7f6b50e80a9678b89d2628e99ada77a"},
      {7169, "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817"},
      {8192, "aae792484c8efe4f19e2ca7d371d8c467ffb10748d8a5a1ae579948f718a2a63"},
      {8193, "bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3b"},
      {16384, "f875d6646de28985646f34ee13be9a576fd515f76b5b0a26bb324735041ddde4"},
      {31744, "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47"},
      {102400, "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085"},
  };
  for (const auto& [len, expected] : vectors) {
    std::string input(len, '\0');
    for (size_t i = 0; i < len; ++i) input[i] = static_cast<char>(i % 251);
    EXPECT_EQ(Hex(Blake3(input)), expected) << "input_len " << len;
  }
}

}  // namespace
}  // namespace flamefleet::vm
