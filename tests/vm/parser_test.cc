#include "vm/parser/parser.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vm/assembler/instruction_table.h"
#include "vm/dialect.h"
#include "vm/dialects/v0_16/v0_16.h"
#include "vm/felt.h"
#include "vm/parser/ast.h"
#include "vm/parser/lexer.h"
#include "vm/parser/source_manager.h"
#include "vm/parser/syntax_rules.h"

namespace flamefleet::vm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kP = Felt::kModulus;

// ------------------------------------------------------------------------------------------------
// SourceManager

TEST(SourceManagerTest, AddAssignsSequentialIds) {
  SourceManager sm;
  EXPECT_EQ(sm.Add("a.masm", "x"), 0u);
  EXPECT_EQ(sm.Add("b.masm", "y"), 1u);
  EXPECT_EQ(sm.size(), 2u);
  EXPECT_EQ(sm.path(1), "b.masm");
  EXPECT_EQ(sm.text(0), "x");
}

TEST(SourceManagerTest, UnknownIdYieldsEmptyValues) {
  SourceManager sm;
  EXPECT_EQ(sm.path(7), "");
  EXPECT_EQ(sm.text(7), "");
  EXPECT_EQ(sm.Line(7, 1), "");
}

TEST(SourceManagerTest, LineStripsTerminators) {
  SourceManager sm;
  const uint32_t id = sm.Add("f", "one\r\ntwo\n\nfour");
  EXPECT_EQ(sm.Line(id, 1), "one");
  EXPECT_EQ(sm.Line(id, 2), "two");
  EXPECT_EQ(sm.Line(id, 3), "");
  EXPECT_EQ(sm.Line(id, 4), "four");
  EXPECT_EQ(sm.Line(id, 5), "");
  EXPECT_EQ(sm.Line(id, 0), "");
}

TEST(SourceManagerTest, FormatPutsCaretUnderColumn) {
  SourceManager sm;
  const uint32_t id = sm.Add("main.masm", "begin\n  push.1 foo\nend\n");
  EXPECT_EQ(sm.Format({id, 2, 10}, "unknown instruction 'foo'"),
            "main.masm:2:10: unknown instruction 'foo'\n  push.1 foo\n         ^");
}

TEST(SourceManagerTest, FormatKeepsTabsInCaretPrefix) {
  SourceManager sm;
  const uint32_t id = sm.Add("t.masm", "\t\tpush.1 x");
  EXPECT_EQ(sm.Format({id, 1, 10}, "m"), "t.masm:1:10: m\n\t\tpush.1 x\n\t\t       ^");
}

TEST(SourceManagerTest, LoadReadsFile) {
  const std::string path = testing::TempDir() + "/source_manager_load.masm";
  {
    std::ofstream out(path, std::ios::binary);
    out << "begin nop end\n";
  }
  SourceManager sm;
  absl::StatusOr<uint32_t> id = sm.Load(path);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(sm.path(*id), path);
  EXPECT_EQ(sm.text(*id), "begin nop end\n");
  std::filesystem::remove(path);
}

TEST(SourceManagerTest, LoadMissingFileIsNotFound) {
  SourceManager sm;
  absl::StatusOr<uint32_t> id = sm.Load("/nonexistent/dir/x.masm");
  EXPECT_EQ(id.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(id.status().message()), HasSubstr("/nonexistent/dir/x.masm"));
}

TEST(SourceManagerTest, LoadDirectoryIsInvalidArgument) {
  SourceManager sm;
  absl::StatusOr<uint32_t> id = sm.Load(testing::TempDir());
  EXPECT_EQ(id.status().code(), absl::StatusCode::kInvalidArgument);
}

// ------------------------------------------------------------------------------------------------
// Lexer

std::vector<Token> LexAll(absl::string_view text) {
  Lexer lexer(text, 0);
  std::vector<Token> out;
  for (;;) {
    Token t = lexer.Next();
    out.push_back(t);
    if (t.kind == TokenKind::kEof || t.kind == TokenKind::kError) break;
  }
  return out;
}

TEST(LexerTest, TokensCarryLineAndColumn) {
  const std::vector<Token> toks = LexAll("begin\n  push.12 # c\nend");
  ASSERT_EQ(toks.size(), 6u);
  EXPECT_EQ(toks[1].text, "push");
  EXPECT_EQ(toks[1].loc.line, 2u);
  EXPECT_EQ(toks[1].loc.column, 3u);
  EXPECT_EQ(toks[3].kind, TokenKind::kInt);
  EXPECT_EQ(toks[3].value, 12u);
  EXPECT_EQ(toks[4].loc.line, 3u);
}

TEST(LexerTest, HexWordElementsAreLittleEndian) {
  const std::vector<Token> toks =
      LexAll("0x0100000000000000020000000000000003000000000000000400000000000000");
  ASSERT_EQ(toks[0].kind, TokenKind::kHexWord);
  EXPECT_THAT(toks[0].word, ElementsAre(1u, 2u, 3u, 4u));
}

TEST(LexerTest, ShortHexIsBigEndianNumber) {
  const std::vector<Token> toks = LexAll("0x0102");
  ASSERT_EQ(toks[0].kind, TokenKind::kHex);
  EXPECT_EQ(toks[0].value, 0x0102u);
}

TEST(LexerTest, RejectsBadHexLiterals) {
  EXPECT_EQ(LexAll("0x123")[0].kind, TokenKind::kError);
  EXPECT_EQ(LexAll("0x")[0].kind, TokenKind::kError);
  EXPECT_EQ(LexAll("0xFFFFFFFFFFFFFFFF")[0].kind,
            TokenKind::kHex);  // parser checks < p
  EXPECT_EQ(LexAll(std::string("0x") + std::string(66, '0'))[0].kind, TokenKind::kError);
}

TEST(LexerTest, RejectsNulAndInvalidUtf8) {
  EXPECT_EQ(LexAll(std::string("nop\0nop", 7))[0].kind, TokenKind::kError);
  EXPECT_EQ(LexAll("nop \xff")[0].kind, TokenKind::kError);
  EXPECT_EQ(LexAll("nop \xc0\x80")[0].kind, TokenKind::kError);  // overlong
}

TEST(LexerTest, AllowsUtf8InCommentsAndStrings) {
  const std::vector<Token> toks = LexAll("# caf\xc3\xa9\n\"\xe2\x86\x92\" nop");
  ASSERT_EQ(toks.size(), 3u);
  EXPECT_EQ(toks[0].kind, TokenKind::kString);
  EXPECT_FALSE(toks[0].quoted_ident);
}

// ------------------------------------------------------------------------------------------------
// Parser

class ParserTest : public ::testing::Test {
 protected:
  absl::StatusOr<ast::Module> Parse(absl::string_view text,
                                    ast::ModuleKind kind = ast::ModuleKind::kExecutable) {
    const uint32_t id = sources_.Add("test.masm", std::string(text));
    return ParseModule(sources_, id, kind, v0_16::Instructions());
  }

  ast::Module ParseOk(absl::string_view text, ast::ModuleKind kind = ast::ModuleKind::kExecutable) {
    absl::StatusOr<ast::Module> m = Parse(text, kind);
    EXPECT_TRUE(m.ok()) << m.status().message();
    return m.ok() ? *std::move(m) : ast::Module{};
  }

  std::string ParseError(absl::string_view text,
                         ast::ModuleKind kind = ast::ModuleKind::kExecutable) {
    absl::StatusOr<ast::Module> m = Parse(text, kind);
    EXPECT_FALSE(m.ok()) << "unexpectedly parsed: " << text;
    if (m.ok()) return "";
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(m.status().message());
  }

  // Parses `begin <body> end` and returns the first entry instruction.
  ast::Instruction Inst(absl::string_view body) {
    ast::Module m = ParseOk(absl::StrCat("begin ", body, " end"));
    if (!m.entry.has_value() || m.entry->empty() ||
        !std::holds_alternative<ast::Instruction>(m.entry->front().op)) {
      ADD_FAILURE() << "no instruction in " << body;
      return {};
    }
    return std::get<ast::Instruction>(m.entry->front().op);
  }

  SourceManager sources_;
};

const ast::Instruction& AsInst(const ast::Node& n) { return std::get<ast::Instruction>(n.op); }

TEST_F(ParserTest, ParsesMinimalExecutable) {
  ast::Module m = ParseOk("begin\n  push.1 push.2 add\nend\n");
  ASSERT_TRUE(m.entry.has_value());
  ASSERT_EQ(m.entry->size(), 3u);
  EXPECT_EQ(AsInst((*m.entry)[2]).name, "add");
  EXPECT_EQ(m.entry_loc.line, 1u);
  EXPECT_EQ(AsInst((*m.entry)[0]).loc.line, 2u);
  EXPECT_EQ(AsInst((*m.entry)[0]).loc.column, 3u);
  EXPECT_EQ(m.kind, ast::ModuleKind::kExecutable);
}

TEST_F(ParserTest, ParsesClassicImports) {
  ast::Module m = ParseOk("use.std::math::u64\nuse.std::math::u64->bigint\nbegin nop end");
  ASSERT_EQ(m.imports.size(), 2u);
  EXPECT_EQ(m.imports[0].path, "std::math::u64");
  EXPECT_EQ(m.imports[0].alias, "u64");
  EXPECT_EQ(m.imports[1].alias, "bigint");
}

TEST_F(ParserTest, ParsesV020Imports) {
  ast::Module m = ParseOk("use miden::core::math::u64\nuse a::b->c\nuse ::x::y\nbegin nop end");
  ASSERT_EQ(m.imports.size(), 3u);
  EXPECT_EQ(m.imports[0].path, "miden::core::math::u64");
  EXPECT_EQ(m.imports[0].alias, "u64");
  EXPECT_EQ(m.imports[1].path, "a::b");
  EXPECT_EQ(m.imports[1].alias, "c");
  EXPECT_EQ(m.imports[2].path, "x::y");
}

TEST_F(ParserTest, RejectsUnqualifiedAndDuplicateImports) {
  EXPECT_THAT(ParseError("use.u64\nbegin nop end"), HasSubstr("at least two components"));
  EXPECT_THAT(ParseError("use.a::b\nuse.c::b\nbegin nop end"),
              StartsWith("test.masm:2:5: duplicate import 'b'"));
}

TEST_F(ParserTest, EvaluatesClassicConstantExpressions) {
  ast::Module m = ParseOk(
      "const.A=2\nconst.B=A*3+1\nconst.C=(B-1)//4\nconst.D=1/"
      "2\nconst.E=0-1\nconst.H=0x10\n"
      "begin nop end");
  ASSERT_EQ(m.constants.size(), 6u);
  EXPECT_EQ(m.constants[1].name, "B");
  EXPECT_EQ(m.constants[1].value.felt, 7u);
  EXPECT_EQ(m.constants[2].value.felt, 1u);
  EXPECT_EQ((Felt(m.constants[3].value.felt) * Felt(2)).value(), 1u);
  EXPECT_EQ(m.constants[4].value.felt, kP - 1);
  EXPECT_EQ(m.constants[5].value.felt, 16u);
  EXPECT_EQ(m.constants[0].value.kind, ast::ConstantValue::Kind::kFelt);
}

TEST_F(ParserTest, EvaluatesV020ConstantsWordsAndStrings) {
  ast::Module m = ParseOk(
      "const X = 5\npub const Y = X + 1\nconst W = [1, 2, 3, 4]\n"
      "const.V="
      "0x0100000000000000020000000000000003000000000000000400000000000000\n"
      "const.ERR=\"bad thing\"\nbegin nop end");
  ASSERT_EQ(m.constants.size(), 5u);
  EXPECT_EQ(m.constants[1].value.felt, 6u);
  EXPECT_EQ(m.constants[2].value.kind, ast::ConstantValue::Kind::kWord);
  EXPECT_THAT(m.constants[2].value.word, ElementsAre(1u, 2u, 3u, 4u));
  EXPECT_THAT(m.constants[3].value.word, ElementsAre(1u, 2u, 3u, 4u));
  EXPECT_EQ(m.constants[4].value.kind, ast::ConstantValue::Kind::kString);
  EXPECT_EQ(m.constants[4].value.text, "bad thing");
}

TEST_F(ParserTest, RejectsBadConstants) {
  EXPECT_EQ(ParseError("const.A=B+1\nbegin nop end"),
            "test.masm:1:9: undefined constant 'B'\nconst.A=B+1\n        ^");
  EXPECT_THAT(ParseError("const.A=1\nconst.A=2\nbegin nop end"),
              StartsWith("test.masm:2:7: duplicate constant 'A'"));
  EXPECT_THAT(ParseError("const.A=1/0\nbegin nop end"),
              StartsWith("test.masm:1:10: division by zero"));
  EXPECT_THAT(ParseError("const.A=1//0\nbegin nop end"), HasSubstr("division by zero"));
  EXPECT_THAT(ParseError("const.A=\"x\"+1\nbegin nop end"), HasSubstr("field elements"));
  EXPECT_THAT(ParseError("const.A=18446744069414584321\nbegin nop end"),
              HasSubstr("is not a field element (>= p)"));
}

// v0.16.4 folds constants in the field (ConstantExpr::try_fold): no range errors.
TEST_F(ParserTest, ConstantArithmeticIsFieldArithmetic) {
  ast::Module m = ParseOk(
      "const.A=1-2\nconst.B=18446744069414584320+2\nconst.C=4294967296*4294967296\n"
      "const.D=1/2\nconst.E=7//2\nbegin nop end");
  ASSERT_EQ(m.constants.size(), 5u);
  EXPECT_EQ(m.constants[0].value.felt, kP - 1);
  EXPECT_EQ(m.constants[1].value.felt, 1u);
  EXPECT_EQ(m.constants[2].value.felt, 0xFFFFFFFFu);  // 2^64 mod p = 2^32 - 1
  EXPECT_EQ(m.constants[3].value.felt, (kP + 1) / 2);
  EXPECT_EQ(m.constants[4].value.felt, 3u);
}

// v0.16.4's lexer: a backslash escapes only `"` and a newline (other characters are read as
// usual, so `\\"` does not close the string), and a carriage return is part of the string.
TEST_F(ParserTest, QuotedStringEscapes) {
  ast::Module m =
      ParseOk("const.S=\"a\\\nb\"\nconst.Q=\"x\\\"y\"\nconst.R=\"c\rd\"\nbegin nop end");
  ASSERT_EQ(m.constants.size(), 3u);
  EXPECT_EQ(m.constants[0].value.text, "a\\\nb");
  EXPECT_EQ(m.constants[1].value.text, "x\\\"y");
  EXPECT_EQ(m.constants[2].value.text, "c\rd");
  EXPECT_EQ(ParseError("const.S=\"c\\\\\"\nbegin nop end"),
            "test.masm:1:9: unclosed quoted string\nconst.S=\"c\\\\\"\n        ^");
}

TEST_F(ParserTest, ParsesClassicProcedures) {
  ast::Module m = ParseOk(
      "proc.foo\n  nop\nend\nexport.bar.2\n  exec.foo\nend\nproc.baz.65535 nop "
      "end\n",
      ast::ModuleKind::kLibrary);
  ASSERT_EQ(m.procedures.size(), 3u);
  EXPECT_EQ(m.procedures[0].name, "foo");
  EXPECT_FALSE(m.procedures[0].exported);
  EXPECT_EQ(m.procedures[0].num_locals, 0u);
  EXPECT_EQ(m.procedures[1].name, "bar");
  EXPECT_TRUE(m.procedures[1].exported);
  EXPECT_EQ(m.procedures[1].num_locals, 2u);
  EXPECT_EQ(m.procedures[2].num_locals, 65535u);
  EXPECT_EQ(m.procedures[1].loc.line, 4u);
  EXPECT_FALSE(m.entry.has_value());
  EXPECT_THAT(ParseError("proc.foo.65536 nop end", ast::ModuleKind::kLibrary),
              HasSubstr("at most 65535"));
}

TEST_F(ParserTest, ParsesV020Procedures) {
  ast::Module m = ParseOk(
      "@locals(4)\npub proc foo(a: felt, b: ptr<u8>) -> felt\n  add\nend\n"
      "@inline\nproc bar -> (felt, felt)\n  nop\nend\n"
      "@callconv(\"fast\")\n@locals(8)\nproc baz\n  nop\nend\n",
      ast::ModuleKind::kLibrary);
  ASSERT_EQ(m.procedures.size(), 3u);
  EXPECT_EQ(m.procedures[0].name, "foo");
  EXPECT_TRUE(m.procedures[0].exported);
  EXPECT_EQ(m.procedures[0].num_locals, 4u);
  EXPECT_EQ(m.procedures[1].name, "bar");
  EXPECT_FALSE(m.procedures[1].exported);
  EXPECT_EQ(m.procedures[1].num_locals, 0u);
  EXPECT_EQ(m.procedures[2].num_locals, 8u);
  EXPECT_THAT(ParseError("@locals(4)\nconst.A=1\nbegin nop end"),
              StartsWith("test.masm:1:1: an annotation must be followed by a procedure"));
}

TEST_F(ParserTest, ParsesQuotedProcedureNames) {
  ast::Module m = ParseOk("proc.\"foo::bar\" nop end\nbegin exec.\"foo::bar\" end");
  ASSERT_EQ(m.procedures.size(), 1u);
  EXPECT_EQ(m.procedures[0].name, "foo::bar");
  EXPECT_EQ(AsInst(m.entry->front()).target, "\"foo::bar\"");
  EXPECT_THAT(ParseError("proc.\"a b\" nop end\nbegin nop end"),
              HasSubstr("invalid procedure name"));
}

TEST_F(ParserTest, AttachesDocComments) {
  ast::Module m = ParseOk(
      "#! Module docs.\n#! Second line.\n\nuse.std::math::u64\n\n#! Adds.\n#!  "
      " Really.\n"
      "export.add_it\n  add\nend\n\n# plain comment\nproc.helper nop end\n",
      ast::ModuleKind::kLibrary);
  EXPECT_EQ(m.docs, "Module docs.\nSecond line.");
  ASSERT_EQ(m.procedures.size(), 2u);
  EXPECT_EQ(m.procedures[0].docs, "Adds.\nReally.");
  EXPECT_EQ(m.procedures[1].docs, "");
}

TEST_F(ParserTest, ParsesReExports) {
  const std::string root = "0x" + std::string(64, '0');
  ast::Module m = ParseOk(
      absl::StrCat("use.std::math::u64\nexport.u64::add\n", "export.u64::mul->mul64\nexport.", root,
                   "->rooted\n", "pub use u64::sub\npub use u64::div->div64\n",
                   "export.::std::math::u64::shr\n"),
      ast::ModuleKind::kLibrary);
  ASSERT_EQ(m.reexports.size(), 6u);
  EXPECT_EQ(m.reexports[0].target, "u64::add");
  EXPECT_EQ(m.reexports[0].name, "add");
  EXPECT_EQ(m.reexports[1].name, "mul64");
  EXPECT_EQ(m.reexports[2].target, root);
  EXPECT_EQ(m.reexports[2].name, "rooted");
  EXPECT_EQ(m.reexports[3].name, "sub");
  EXPECT_EQ(m.reexports[4].target, "u64::div");
  EXPECT_EQ(m.reexports[4].name, "div64");
  EXPECT_EQ(m.reexports[5].target, "::std::math::u64::shr");
  EXPECT_EQ(m.reexports[5].name, "shr");
  EXPECT_THAT(ParseError(absl::StrCat("export.", root, "\n"), ast::ModuleKind::kLibrary),
              HasSubstr("needs a name"));
}

TEST_F(ParserTest, RejectsDuplicateProcedures) {
  EXPECT_EQ(ParseError("proc.foo nop end\nproc.foo nop end\nbegin nop end"),
            "test.masm:2:6: duplicate procedure 'foo'\nproc.foo nop end\n     ^");
  EXPECT_THAT(ParseError("export.u64::add\nexport.add nop end", ast::ModuleKind::kLibrary),
              HasSubstr("duplicate procedure 'add'"));
}

TEST_F(ParserTest, EnforcesModuleKindRules) {
  EXPECT_EQ(ParseError("proc.foo nop end\n"),
            "test.masm:2:1: an executable module must contain a `begin ... "
            "end` block\n\n^");
  EXPECT_THAT(ParseError("begin nop end", ast::ModuleKind::kLibrary),
              StartsWith("test.masm:1:1: `begin ... end` is not allowed"));
  EXPECT_THAT(ParseError("begin nop end", ast::ModuleKind::kKernel), HasSubstr("not allowed"));
  EXPECT_THAT(ParseError("export.foo nop end\nbegin nop end"),
              StartsWith("test.masm:1:1: exported procedures are not allowed"));
  EXPECT_THAT(ParseError("pub proc foo nop end\nbegin nop end"), HasSubstr("not allowed"));
  EXPECT_THAT(ParseError("begin nop end\nbegin nop end"), HasSubstr("duplicate"));
  ast::Module k = ParseOk("export.foo caller end", ast::ModuleKind::kKernel);
  EXPECT_EQ(k.kind, ast::ModuleKind::kKernel);
}

TEST_F(ParserTest, ParsesAdviceMapEntries) {
  const std::string key = "0x0100000000000000020000000000000003000000000000000400000000000000";
  ast::Module m =
      ParseOk(absl::StrCat("adv_map.A=[1,2,0x03]\nadv_map.B(", key, ")=[5]\nbegin nop end"));
  ASSERT_EQ(m.adv_map.size(), 2u);
  EXPECT_EQ(m.adv_map[0].name, "A");
  EXPECT_FALSE(m.adv_map[0].key.has_value());
  EXPECT_THAT(m.adv_map[0].values, ElementsAre(1u, 2u, 3u));
  ASSERT_TRUE(m.adv_map[1].key.has_value());
  EXPECT_THAT(*m.adv_map[1].key, ElementsAre(1u, 2u, 3u, 4u));
  EXPECT_THAT(ParseError("adv_map.A(5)=[1]\nbegin nop end"), HasSubstr("must be a word"));
}

TEST_F(ParserTest, ParsesIfElseForms) {
  ast::Module m = ParseOk(
      "begin\n if.true push.1 else push.2 end\n if.false push.3 else push.4 "
      "push.5 end\n"
      " if.true else push.6 end\n if.true push.7 else end\n if.false push.8 "
      "end\nend");
  ASSERT_EQ(m.entry->size(), 5u);
  const auto& a = std::get<ast::IfElse>((*m.entry)[0].op);
  EXPECT_EQ(AsInst(a.on_true[0]).args[0].value, 1u);
  EXPECT_EQ(AsInst(a.on_false[0]).args[0].value, 2u);
  const auto& b = std::get<ast::IfElse>((*m.entry)[1].op);
  EXPECT_EQ(b.on_true.size(), 2u);  // swapped
  EXPECT_EQ(AsInst(b.on_false[0]).args[0].value, 3u);
  const auto& c = std::get<ast::IfElse>((*m.entry)[2].op);
  EXPECT_TRUE(c.on_true.empty());
  EXPECT_EQ(c.on_false.size(), 1u);
  const auto& d = std::get<ast::IfElse>((*m.entry)[3].op);
  EXPECT_EQ(d.on_true.size(), 1u);
  EXPECT_TRUE(d.on_false.empty());
  const auto& e = std::get<ast::IfElse>((*m.entry)[4].op);
  EXPECT_TRUE(e.on_true.empty());
  EXPECT_EQ(AsInst(e.on_false[0]).args[0].value, 8u);
  EXPECT_EQ(e.loc.line, 6u);
  EXPECT_THAT(ParseError("begin if.true end end"), HasSubstr("at least one instruction"));
  EXPECT_THAT(ParseError("begin if.true else end end"), HasSubstr("at least one instruction"));
  EXPECT_THAT(ParseError("begin if.maybe nop end end"), HasSubstr("'true' or 'false'"));
}

TEST_F(ParserTest, ParsesLoops) {
  ast::Module m = ParseOk("begin while.true push.0 end repeat.3 nop nop end end");
  ASSERT_EQ(m.entry->size(), 2u);
  EXPECT_EQ(std::get<ast::While>((*m.entry)[0].op).body.size(), 1u);
  const auto& r = std::get<ast::Repeat>((*m.entry)[1].op);
  EXPECT_EQ(r.count, 3u);
  EXPECT_EQ(r.body.size(), 2u);
  ParseOk("begin repeat.4294967295 nop end end");
  EXPECT_THAT(ParseError("begin repeat.0 nop end end"),
              StartsWith("test.masm:1:7: repeat count 0 is out of range"));
  EXPECT_THAT(ParseError("begin repeat.4294967296 nop end end"), HasSubstr("out of range"));
  EXPECT_THAT(ParseError("begin while.false nop end end"), HasSubstr("'true'"));
}

TEST_F(ParserTest, RejectsEmptyBodies) {
  EXPECT_EQ(ParseError("begin\nend"),
            "test.masm:2:1: a block must contain at least one instruction\nend\n^");
  EXPECT_THAT(ParseError("proc.foo end\nbegin nop end"), HasSubstr("at least one instruction"));
  EXPECT_THAT(ParseError("begin while.true end end"), HasSubstr("at least one instruction"));
}

TEST_F(ParserTest, ReportsUnknownInstructionWithCaret) {
  EXPECT_EQ(ParseError("begin\n  push.1\n\tfoo\nend"),
            "test.masm:3:2: unknown instruction 'foo'\n\tfoo\n\t^");
}

TEST_F(ParserTest, ReportsUnexpectedEndOfFile) {
  EXPECT_THAT(ParseError("begin nop"), HasSubstr("found end of file"));
  EXPECT_THAT(ParseError("begin push."), HasSubstr("found end of file"));
}

TEST_F(ParserTest, ParsesPushForms) {
  ast::Instruction p = Inst("push.1.0x02.3");
  EXPECT_EQ(p.name, "push");
  ASSERT_EQ(p.args.size(), 3u);
  EXPECT_EQ(p.args[1].value, 2u);
  EXPECT_EQ(p.args[1].kind, ast::Immediate::Kind::kLiteral);
  EXPECT_EQ(p.args[2].loc.column, 19u);

  p = Inst(
      "push."
      "0x0100000000000000020000000000000003000000000000000400000000000000");
  ASSERT_EQ(p.args.size(), 1u);
  EXPECT_EQ(p.args[0].kind, ast::Immediate::Kind::kWord);
  EXPECT_THAT(p.args[0].word, ElementsAre(1u, 2u, 3u, 4u));

  p = Inst("push.[5,6,7,8].9");
  ASSERT_EQ(p.args.size(), 2u);
  EXPECT_THAT(p.args[0].word, ElementsAre(5u, 6u, 7u, 8u));

  ast::Module m = ParseOk("const.C=3\nbegin push.C end");
  const ast::Instruction& c = AsInst(m.entry->front());
  EXPECT_EQ(c.args[0].kind, ast::Immediate::Kind::kConstant);
  EXPECT_EQ(c.args[0].text, "C");

  std::string sixteen = "push";
  for (int i = 0; i < 16; ++i) absl::StrAppend(&sixteen, ".", i);
  EXPECT_EQ(Inst(sixteen).args.size(), 16u);
  EXPECT_THAT(ParseError(absl::StrCat("begin ", sixteen, ".16 end")),
              HasSubstr("too many values in push"));
  EXPECT_THAT(ParseError("begin push.18446744069414584321 end"),
              StartsWith("test.masm:1:7: value 18446744069414584321 is not a field element"));
  EXPECT_THAT(ParseError("begin push.0xffffffff00000001 end"),
              StartsWith("test.masm:1:7: value 0xffffffff00000001 is not a "
                         "field element (>= p)"));
  EXPECT_THAT(ParseError("begin push end"), HasSubstr("expected '.'"));
  Inst("push.18446744069414584320");  // p - 1
}

TEST_F(ParserTest, DoesNotFoldImmediates) {
  ast::Instruction a = Inst("add.0");
  EXPECT_EQ(a.name, "add");
  ASSERT_EQ(a.args.size(), 1u);
  EXPECT_EQ(a.args[0].kind, ast::Immediate::Kind::kLiteral);
  EXPECT_EQ(a.args[0].value, 0u);
  EXPECT_EQ(Inst("lt.5").name, "lt");
  EXPECT_EQ(Inst("mul.1").args[0].value, 1u);
}

TEST_F(ParserTest, ParsesExpForms) {
  ast::Instruction e = Inst("exp.u32");
  EXPECT_EQ(e.name, "exp.u");
  ASSERT_EQ(e.args.size(), 1u);
  EXPECT_EQ(e.args[0].value, 32u);
  EXPECT_EQ(Inst("exp.u63").args[0].value, 63u);
  EXPECT_EQ(Inst("exp.u0").args[0].value, 0u);
  EXPECT_EQ(Inst("exp.5").name, "exp");
  EXPECT_TRUE(Inst("exp").args.empty());
  EXPECT_THAT(ParseError("begin exp.u64 end"), HasSubstr("out of range for exp.u"));
  EXPECT_THAT(ParseError("begin exp.u99999999999999999999 end"),
              HasSubstr("out of range for exp.u"));
}

TEST_F(ParserTest, ParsesErrorImmediates) {
  ast::Instruction a = Inst("assert.err=\"boom\"");
  EXPECT_EQ(a.name, "assert");
  ASSERT_TRUE(a.error.has_value());
  EXPECT_EQ(a.error->kind, ast::Immediate::Kind::kString);
  EXPECT_EQ(a.error->text, "boom");
  ast::Module m = ParseOk("const.E=\"x\"\nbegin assert_eq.err=E u32assert2.err=42 end");
  EXPECT_EQ(AsInst((*m.entry)[0]).error->kind, ast::Immediate::Kind::kConstant);
  EXPECT_EQ(AsInst((*m.entry)[0]).error->text, "E");
  EXPECT_EQ(AsInst((*m.entry)[1]).error->kind, ast::Immediate::Kind::kLiteral);
  EXPECT_EQ(AsInst((*m.entry)[1]).error->value, 42u);
  EXPECT_FALSE(Inst("mtree_verify").error.has_value());
  EXPECT_TRUE(Inst("mtree_verify.err=\"m\"").error.has_value());
  EXPECT_THAT(ParseError("begin assert.1 end"), HasSubstr("unexpected immediate"));
}

TEST_F(ParserTest, ParsesSystemEventsAndDebug) {
  EXPECT_EQ(Inst("adv.push_mapval").name, "adv.push_mapval");
  EXPECT_EQ(Inst("adv.insert_hdword_d").name, "adv.insert_hdword_d");
  EXPECT_THAT(ParseError("begin adv.push_nothing end"),
              StartsWith("test.masm:1:7: unknown system event 'adv.push_nothing'"));
  ast::Instruction d = Inst("debug.stack.4");
  EXPECT_EQ(d.name, "debug.stack");
  ASSERT_EQ(d.args.size(), 1u);
  EXPECT_EQ(d.args[0].value, 4u);
  EXPECT_EQ(Inst("debug.mem.1.2").args.size(), 2u);
  EXPECT_EQ(Inst("debug.local").name, "debug.local");
  EXPECT_EQ(Inst("debug.adv_stack.3").name, "debug.adv_stack");
  EXPECT_THAT(ParseError("begin debug.stack.256 end"), HasSubstr("out of range"));
  EXPECT_THAT(ParseError("begin debug.heap end"), HasSubstr("unknown debug option"));
  EXPECT_EQ(Inst("trace.240").args[0].value, 240u);
  EXPECT_EQ(Inst("emit.0xFFFFFFFF").args[0].value, 0xFFFFFFFFu);
  EXPECT_THAT(ParseError("begin emit end"), HasSubstr("expected '.'"));
}

TEST_F(ParserTest, ParsesInvocationTargets) {
  const std::string root = "0x" + std::string(63, '0') + "1";
  ast::Module m =
      ParseOk(absl::StrCat("use.std::math::u64\nproc.foo nop end\nbegin\n "
                           "exec.foo call.u64::wrapping_add\n"
                           " syscall.::std::math::u64::add procref.foo exec.",
                           root, " dynexec dyncall exec.$kernel::x\nend"));
  const ast::Block& b = *m.entry;
  ASSERT_EQ(b.size(), 8u);
  EXPECT_EQ(AsInst(b[0]).name, "exec");
  EXPECT_EQ(AsInst(b[0]).target, "foo");
  EXPECT_EQ(AsInst(b[1]).name, "call");
  EXPECT_EQ(AsInst(b[1]).target, "u64::wrapping_add");
  EXPECT_EQ(AsInst(b[2]).target, "::std::math::u64::add");
  EXPECT_EQ(AsInst(b[3]).name, "procref");
  EXPECT_EQ(AsInst(b[4]).target, root);
  EXPECT_EQ(AsInst(b[5]).name, "dynexec");
  EXPECT_TRUE(AsInst(b[5]).target.empty());
  EXPECT_EQ(AsInst(b[7]).target, "$kernel::x");
  EXPECT_THAT(ParseError("begin exec.( end"), HasSubstr("procedure path"));
}

TEST_F(ParserTest, RejectsLiteralDivisionByZero) {
  for (const char* body : {"div.0", "u32div.0", "u32mod.0", "u32divmod.0", "u32div.0x00"}) {
    EXPECT_THAT(ParseError(absl::StrCat("begin ", body, " end")), HasSubstr("division by zero"))
        << body;
  }
  ast::Module m = ParseOk("const.Z=0\nbegin div.Z u32div.Z end");
  EXPECT_EQ(AsInst(m.entry->front()).args[0].kind, ast::Immediate::Kind::kConstant);
  EXPECT_EQ(ParseError("begin\n  u32div.0\nend"),
            "test.masm:2:3: division by zero\n  u32div.0\n  ^");
}

TEST_F(ParserTest, ValidatesShiftAmounts) {
  EXPECT_EQ(Inst("u32shl.31").args[0].value, 31u);
  EXPECT_EQ(Inst("u32rotr.0").args[0].value, 0u);
  EXPECT_TRUE(Inst("u32shr").args.empty());
  EXPECT_THAT(ParseError("begin u32shl.32 end"), HasSubstr("out of range (0..31)"));
  EXPECT_THAT(ParseError("begin u32rotl.100 end"), HasSubstr("out of range"));
  ParseOk("const.S=40\nbegin u32shl.S end");  // checked by the assembler
}

TEST_F(ParserTest, ValidatesStackIndices) {
  struct Case {
    const char* name;
    int min;
    int max;
  };
  for (const Case& c :
       {Case{"dup", 0, 15}, Case{"dupw", 0, 3}, Case{"swap", 1, 15}, Case{"swapw", 1, 3},
        Case{"movup", 2, 15}, Case{"movdn", 2, 15}, Case{"movupw", 2, 3}, Case{"movdnw", 2, 3}}) {
    EXPECT_EQ(Inst(absl::StrCat(c.name, ".", c.min)).args[0].value, static_cast<uint64_t>(c.min));
    EXPECT_EQ(Inst(absl::StrCat(c.name, ".", c.max)).args[0].value, static_cast<uint64_t>(c.max));
    EXPECT_THAT(ParseError(absl::StrCat("begin ", c.name, ".", c.max + 1, " end")),
                HasSubstr("out of range"));
    if (c.min > 0) {
      EXPECT_THAT(ParseError(absl::StrCat("begin ", c.name, ".", c.min - 1, " end")),
                  HasSubstr("out of range"));
    }
  }
  EXPECT_TRUE(Inst("dup").args.empty());
  EXPECT_TRUE(Inst("swapw").args.empty());
  EXPECT_THAT(ParseError("begin movup end"), HasSubstr("expected '.'"));
  EXPECT_THAT(ParseError("const.I=1\nbegin dup.I end"), HasSubstr("expected an integer"));
}

TEST_F(ParserTest, ValidatesOtherImmediateRanges) {
  EXPECT_EQ(Inst("adv_push.16").args[0].value, 16u);
  EXPECT_THAT(ParseError("begin adv_push.0 end"), HasSubstr("out of range (1..16)"));
  EXPECT_THAT(ParseError("begin adv_push.17 end"), HasSubstr("out of range"));
  EXPECT_EQ(Inst("mem_load.4294967295").args[0].value, 4294967295u);
  EXPECT_THAT(ParseError("begin mem_store.4294967296 end"), HasSubstr("does not fit in u32"));
  EXPECT_THAT(ParseError("begin u32wrapping_add.0x0100000000 end"),
              HasSubstr("does not fit in u32"));
  EXPECT_EQ(Inst("u32and.0b101").args[0].value, 5u);
  EXPECT_EQ(Inst("loc_load.65535").args[0].value, 65535u);
  EXPECT_THAT(ParseError("begin loc_store.65536 end"), HasSubstr("out of range (0..65535)"));
  EXPECT_THAT(ParseError("begin locaddr end"), HasSubstr("expected '.'"));
  EXPECT_THAT(ParseError("begin "
                         "add.0x0100000000000000020000000000000003000000000000000400000000"
                         "000000 end"),
              HasSubstr("found a word"));
  EXPECT_THAT(ParseError("begin drop.1 end"), HasSubstr("unexpected immediate after 'drop'"));
  EXPECT_THAT(ParseError("begin dup.1.2 end"), HasSubstr("unexpected immediate"));
}

TEST_F(ParserTest, AcceptsEveryPlainMnemonic) {
  const char* kMnemonics[] = {"assert",
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
                              "u32overflowing_add",
                              "u32wrapping_add",
                              "u32overflowing_add3",
                              "u32wrapping_add3",
                              "u32overflowing_sub",
                              "u32wrapping_sub",
                              "u32overflowing_mul",
                              "u32wrapping_mul",
                              "u32overflowing_madd",
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
                              "cswap",
                              "cswapw",
                              "cdrop",
                              "cdropw",
                              "mem_load",
                              "mem_loadw",
                              "mem_store",
                              "mem_storew",
                              "mem_stream",
                              "adv_loadw",
                              "adv_pipe",
                              "nop",
                              "clk",
                              "sdepth",
                              "caller",
                              "hperm",
                              "hash",
                              "hmerge",
                              "mtree_get",
                              "mtree_set",
                              "mtree_merge",
                              "fri_ext2fold4",
                              "horner_eval_base",
                              "horner_eval_ext",
                              "arithmetic_circuit_eval",
                              "dynexec",
                              "dyncall",
                              "breakpoint"};
  for (const char* name : kMnemonics) {
    ast::Instruction i = Inst(name);
    EXPECT_EQ(i.name, name);
    EXPECT_TRUE(i.args.empty()) << name;
  }
}

TEST_F(ParserTest, EnforcesBlockInstructionLimit) {
  std::string body;
  for (int i = 0; i < 65535; ++i) body += "nop\n";
  ast::Module m = ParseOk(absl::StrCat("begin\n", body, "end"));
  EXPECT_EQ(m.entry->size(), 65535u);
  EXPECT_THAT(ParseError(absl::StrCat("begin\n", body, "nop\nend")),
              StartsWith("test.masm:65537:1: a block may contain at most 65535 instructions"));
}

TEST_F(ParserTest, RejectsDeepNestingWithoutCrashing) {
  std::string ok = "begin ";
  for (int i = 0; i < 200; ++i) ok += "while.true ";
  ok += "nop ";
  for (int i = 0; i < 200; ++i) ok += "end ";
  ParseOk(ok + "end");

  std::string deep = "begin ";
  for (int i = 0; i < 100000; ++i) deep += "if.true ";
  EXPECT_THAT(ParseError(deep), HasSubstr("nesting is too deep"));

  std::string parens = "const.A=";
  for (int i = 0; i < 100000; ++i) parens += "(";
  EXPECT_THAT(ParseError(parens + "1"), HasSubstr("nesting is too deep"));
}

TEST_F(ParserTest, RejectsOverlongInput) {
  std::string big(kMaxSourceBytes + 1, ' ');
  EXPECT_THAT(ParseError(big), HasSubstr("too large"));
}

TEST_F(ParserTest, RejectsBinaryInput) {
  EXPECT_THAT(ParseError(std::string("begin\n nop\0 end", 15)),
              StartsWith("test.masm:2:5: invalid NUL byte"));
  EXPECT_THAT(ParseError("begin nop \xfe end"), HasSubstr("invalid UTF-8"));
  EXPECT_THAT(ParseError("begin nop \xc3\xa9 end"), HasSubstr("unexpected character"));
}

TEST_F(ParserTest, SurvivesRandomGarbage) {
  std::mt19937 rng(12345);
  const std::vector<std::string> fragments = {"begin",
                                              "end",
                                              "proc.",
                                              "export.",
                                              "if.true",
                                              "else",
                                              "while.true",
                                              "repeat.",
                                              "push.",
                                              ".",
                                              "::",
                                              "->",
                                              "(",
                                              ")",
                                              "[",
                                              "]",
                                              ",",
                                              "=",
                                              "const.",
                                              "A",
                                              "1",
                                              "0x00",
                                              "\"s\"",
                                              "#!",
                                              "#",
                                              "\n",
                                              " ",
                                              "@locals(",
                                              "use.",
                                              "exec.",
                                              "u32div.",
                                              "0",
                                              "adv_map.",
                                              "pub",
                                              "proc",
                                              "exp.u",
                                              "debug.",
                                              "nop",
                                              "add",
                                              "+",
                                              "/",
                                              "//",
                                              "*",
                                              "-",
                                              "\t",
                                              "\xff",
                                              std::string(1, '\0'),
                                              "0x" + std::string(64, 'f'),
                                              "0b",
                                              "$kernel",
                                              "\""};
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text;
    const int n = static_cast<int>(rng() % 60);
    if (iter % 3 == 0) {
      for (int i = 0; i < n * 4; ++i) text.push_back(static_cast<char>(rng() & 0xFF));
    } else {
      for (int i = 0; i < n; ++i) text += fragments[rng() % fragments.size()];
    }
    for (ast::ModuleKind kind :
         {ast::ModuleKind::kExecutable, ast::ModuleKind::kLibrary, ast::ModuleKind::kKernel}) {
      absl::StatusOr<ast::Module> m = Parse(text, kind);
      if (!m.ok()) {
        EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
        EXPECT_THAT(std::string(m.status().message()), StartsWith("test.masm:"));
      }
    }
  }
}

TEST_F(ParserTest, ParsesRealisticLibrary) {
  ast::Module m = ParseOk(R"(#! Unsigned 64-bit helpers.

use.std::crypto::hashes::rpo
const.MASK=0xFFFFFFFF
const.SHIFT=2*16

#! Adds two u64 values.
export.wrapping_add
    swap
    movup.3
    u32overflowing_add
    movup.3
    movup.3
    u32wrapping_add3
end

export.overflowing_add.4
    loc_storew.0
    dropw
    loc_loadw.0
    u32assertw.err="not u32"
    if.true
        push.MASK u32and
    else
        repeat.2
            u32shr.SHIFT
        end
    end
    exec.rpo::hash
end
)",
                          ast::ModuleKind::kLibrary);
  EXPECT_EQ(m.docs, "Unsigned 64-bit helpers.");
  ASSERT_EQ(m.procedures.size(), 2u);
  EXPECT_EQ(m.procedures[0].docs, "Adds two u64 values.");
  EXPECT_EQ(m.procedures[1].num_locals, 4u);
  EXPECT_EQ(m.constants[1].value.felt, 32u);
}

// ------------------------------------------------------------------------------------------------
// The v0.25 grammar (SyntaxRules of v0.25). The mnemonics come from a test-local table: the v0.16
// rows with `emit` taking an event (Form::kEvent), so that these tests do not depend on the v0.25
// instruction rows.

const InstructionTable& V025TestTable() {
  static const InstructionTable* const table = [] {
    static std::vector<InstructionRow> rows(v0_16::Instructions().rows().begin(),
                                            v0_16::Instructions().rows().end());
    for (InstructionRow& row : rows) {
      if (row.name == "emit") row.form = Form::kEvent;
    }
    absl::StatusOr<InstructionTable> t =
        InstructionTable::Create(rows, v0_16::Instructions().events());
    return new InstructionTable(*std::move(t));
  }();
  return *table;
}

class V025ParserTest : public ::testing::Test {
 protected:
  absl::StatusOr<ast::Module> Parse(absl::string_view text,
                                    ast::ModuleKind kind = ast::ModuleKind::kExecutable) {
    const uint32_t id = sources_.Add("test.masm", std::string(text));
    return ParseModule(sources_, id, kind, V025TestTable(),
                       *GetDialectSpec(Dialect::kV0_25).syntax);
  }

  ast::Module ParseOk(absl::string_view text, ast::ModuleKind kind = ast::ModuleKind::kExecutable) {
    absl::StatusOr<ast::Module> m = Parse(text, kind);
    EXPECT_TRUE(m.ok()) << m.status().message();
    return m.ok() ? *std::move(m) : ast::Module{};
  }

  // The first line of the error message (file:line:col: reason).
  std::string ParseError(absl::string_view text,
                         ast::ModuleKind kind = ast::ModuleKind::kExecutable) {
    absl::StatusOr<ast::Module> m = Parse(text, kind);
    EXPECT_FALSE(m.ok()) << "unexpectedly parsed: " << text;
    if (m.ok()) return "";
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string message(m.status().message());
    return message.substr(0, message.find('\n'));
  }

  ast::Instruction Inst(absl::string_view body) {
    ast::Module m = ParseOk(absl::StrCat("begin ", body, " end"));
    if (!m.entry.has_value() || m.entry->empty() ||
        !std::holds_alternative<ast::Instruction>(m.entry->front().op)) {
      ADD_FAILURE() << "no instruction in " << body;
      return {};
    }
    return std::get<ast::Instruction>(m.entry->front().op);
  }

  SourceManager sources_;
};

TEST_F(V025ParserTest, ProceduresWithAttributesAndSignatures) {
  ast::Module m = ParseOk(R"(#! module docs

#! the add procedure
@locals(8)
@callconv(fast)
@inline
@meta(key = 1, other)
pub proc add(a: felt, b: ptr<u8, addrspace(byte)>) -> (r: felt, [felt; 4])
  add
end
proc helper -> word
  drop
end
proc "quoted::name"
  nop
end
)",
                          ast::ModuleKind::kLibrary);
  EXPECT_EQ(m.docs, "module docs");
  ASSERT_EQ(m.procedures.size(), 3u);
  EXPECT_EQ(m.procedures[0].name, "add");
  EXPECT_TRUE(m.procedures[0].exported);
  EXPECT_EQ(m.procedures[0].num_locals, 8u);
  EXPECT_EQ(m.procedures[0].docs, "the add procedure");
  EXPECT_EQ(m.procedures[1].name, "helper");
  EXPECT_FALSE(m.procedures[1].exported);
  EXPECT_EQ(m.procedures[2].name, "quoted::name");
}

TEST_F(V025ParserTest, LocalsLimitIs65532) {
  EXPECT_TRUE(Parse("@locals(65532)\nproc f\n  nop\nend\nbegin exec.f end").ok());
  EXPECT_EQ(ParseError("@locals(65533)\nproc f\n  nop\nend\nbegin exec.f end"),
            "test.masm:1:9: number of locals exceeds the maximum of 65532");
  EXPECT_EQ(ParseError("@locals(1)\n@locals(2)\nproc f\n  nop\nend\nbegin exec.f end"),
            "test.masm:2:2: duplicate @locals annotation");
}

TEST_F(V025ParserTest, ImportForms) {
  ast::Module m = ParseOk(R"(use miden::core::math::u64
use ::a::b as c
use {x, y as z, CONST} from p::q
use self::child::leaf
begin
  exec.u64::wrapping_add exec.c::f exec.x exec.z push.CONST
end
)");
  ASSERT_EQ(m.imports.size(), 6u);
  EXPECT_EQ(m.imports[0].path, "miden::core::math::u64");
  EXPECT_EQ(m.imports[0].alias, "u64");
  EXPECT_TRUE(m.imports[0].item.empty());
  EXPECT_EQ(m.imports[1].path, "a::b");
  EXPECT_EQ(m.imports[1].alias, "c");
  EXPECT_EQ(m.imports[2].path, "p::q");
  EXPECT_EQ(m.imports[2].item, "x");
  EXPECT_EQ(m.imports[2].alias, "x");
  EXPECT_EQ(m.imports[3].item, "y");
  EXPECT_EQ(m.imports[3].alias, "z");
  EXPECT_EQ(m.imports[4].item, "CONST");
  EXPECT_EQ(m.imports[5].path, "self::child::leaf");
  EXPECT_EQ(m.imports[5].alias, "leaf");
}

TEST_F(V025ParserTest, RejectedImportForms) {
  EXPECT_EQ(ParseError("use.a::b\nbegin nop end"),
            "test.masm:1:1: `use.a::b` is classic syntax: write `use a::b` "
            "(this is classic v0.16 MASM: pass --dialect v0.16)");
  EXPECT_EQ(ParseError("use a::b->c\nbegin nop end"),
            "test.masm:1:9: import aliases use `as`; `->` is no longer supported "
            "(this is classic v0.16 MASM: pass --dialect v0.16)");
  EXPECT_EQ(ParseError("use *\nbegin nop end"),
            "test.masm:1:5: glob imports (`use *`) are not supported");
  EXPECT_EQ(ParseError("use a::b as c\nuse d::c\nbegin nop end"),
            "test.masm:2:5: duplicate import 'c'");
  EXPECT_EQ(ParseError("use {x} a::b\nbegin nop end"), "test.masm:1:9: expected 'from', found 'a'");
  EXPECT_EQ(ParseError("pub use a::b\nproc f nop end", ast::ModuleKind::kLibrary),
            "test.masm:1:1: `pub use` of a module is not supported: re-export items with "
            "`pub use {name} from module::path` (this is classic v0.16 MASM: pass --dialect "
            "v0.16)");
}

TEST_F(V025ParserTest, ItemReExports) {
  ast::Module m = ParseOk("pub use {add, mul as times} from miden::core::math::u64\n",
                          ast::ModuleKind::kLibrary);
  ASSERT_EQ(m.reexports.size(), 2u);
  EXPECT_EQ(m.reexports[0].target, "::miden::core::math::u64::add");
  EXPECT_EQ(m.reexports[0].name, "add");
  EXPECT_EQ(m.reexports[1].target, "::miden::core::math::u64::mul");
  EXPECT_EQ(m.reexports[1].name, "times");
}

TEST_F(V025ParserTest, ModuleItems) {
  ast::Module m = ParseOk(R"(namespace miden::core
extern package "miden-base"
extern package other
pub mod math
mod private_child
type Ptr = ptr<u8>
pub type Pair = struct { a: felt, b: u32 }
pub enum Color : u8 { RED, GREEN = 5, BLUE, }
pub const X = 1
)",
                          ast::ModuleKind::kLibrary);
  ASSERT_EQ(m.submodules.size(), 2u);
  EXPECT_EQ(m.submodules[0].name, "math");
  EXPECT_TRUE(m.submodules[0].is_public);
  EXPECT_EQ(m.submodules[1].name, "private_child");
  EXPECT_FALSE(m.submodules[1].is_public);
  ASSERT_EQ(m.constants.size(), 4u);
  EXPECT_EQ(m.constants[0].name, "RED");
  EXPECT_EQ(m.constants[0].value.felt, 0u);
  EXPECT_EQ(m.constants[1].value.felt, 5u);
  EXPECT_EQ(m.constants[2].name, "BLUE");
  EXPECT_EQ(m.constants[2].value.felt, 6u);
  EXPECT_EQ(m.constants[3].value.felt, 1u);
}

TEST_F(V025ParserTest, NamespaceMustComeFirst) {
  EXPECT_EQ(ParseError("pub mod a\nnamespace x::y\n", ast::ModuleKind::kLibrary),
            "test.masm:2:1: a `namespace` declaration must precede every other item");
  EXPECT_EQ(ParseError("mod a\nmod a\n", ast::ModuleKind::kLibrary),
            "test.masm:2:5: duplicate module declaration 'a'");
}

TEST_F(V025ParserTest, Constants) {
  ast::Module m = ParseOk(R"(const A = 11-2+4*(12-(10+1))+9+8//4*2
const W = [1, 2, 3, 4]
const H = 0x0200000000000000030000000000000004000000000000000500000000000000
const ODD = 0x13a
const HW = word("hello")
const E = event("flamefleet::test")
begin push.A end
)");
  ASSERT_EQ(m.constants.size(), 6u);
  EXPECT_EQ(m.constants[0].value.felt, 26u);
  EXPECT_EQ(m.constants[1].value.kind, ast::ConstantValue::Kind::kWord);
  EXPECT_THAT(m.constants[2].value.word, ElementsAre(2u, 3u, 4u, 5u));
  EXPECT_EQ(m.constants[3].value.felt, 0x13Au);
  EXPECT_EQ(m.constants[4].value.kind, ast::ConstantValue::Kind::kWord);
  // BLAKE3("hello") as four little-endian u64 chunks, each mod p.
  EXPECT_THAT(m.constants[4].value.word, ElementsAre(10557148580892020714u, 12919575974044058718u,
                                                     9694762696758029904u, 1089984679005980905u));
  EXPECT_EQ(m.constants[5].value.kind, ast::ConstantValue::Kind::kEvent);
  EXPECT_EQ(m.constants[5].value.text, "flamefleet::test");
  EXPECT_EQ(m.constants[5].value.felt, 9774561760243831516u);
}

// v0.25.7 evaluates `+ - * //` as checked integers (IntValue::checked_*): a negative result or
// one >= p is an error at the operator; `/` stays field division.
TEST_F(V025ParserTest, ConstantArithmeticIsCheckedIntegers) {
  ast::Module m = ParseOk(
      "const MAX = 18446744069414584320 + 0\nconst Z = 5 - 5\nconst H = 1 / 2\n"
      "const Q = MAX // 2\nconst M = 4294967295 * 4294967295\nbegin push.MAX end");
  ASSERT_EQ(m.constants.size(), 5u);
  EXPECT_EQ(m.constants[0].value.felt, kP - 1);
  EXPECT_EQ(m.constants[1].value.felt, 0u);
  EXPECT_EQ(m.constants[2].value.felt, (kP + 1) / 2);
  EXPECT_EQ(m.constants[3].value.felt, (kP - 1) / 2);
  EXPECT_EQ(m.constants[4].value.felt, 18446744065119617025u);
  const std::string overflow = "invalid constant expression: value is larger than expected range";
  EXPECT_EQ(ParseError("const A = 1 - 2\nbegin push.A end"),
            absl::StrCat("test.masm:1:13: ", overflow));
  EXPECT_EQ(ParseError("const A = 18446744069414584320 + 1\nbegin push.A end"),
            absl::StrCat("test.masm:1:32: ", overflow));
  // u64 overflow, and a product below 2^64 but >= p.
  EXPECT_EQ(ParseError("const A = 4294967296 * 4294967296\nbegin push.A end"),
            absl::StrCat("test.masm:1:22: ", overflow));
  EXPECT_EQ(ParseError("const A = 4294967295 * 4294967297\nbegin push.A end"),
            absl::StrCat("test.masm:1:22: ", overflow));
  EXPECT_EQ(ParseError("const A = 1 // 0\nbegin push.A end"),
            "test.masm:1:13: invalid constant expression: division by zero");
  EXPECT_EQ(ParseError("const A = 1 / 0\nbegin push.A end"),
            "test.masm:1:13: invalid constant expression: division by zero");
  // A forward reference is checked when the module has been read.
  EXPECT_EQ(ParseError("const A = B - 3\nconst B = 2\nbegin push.A end"),
            absl::StrCat("test.masm:1:13: ", overflow));
  // An implicit enum discriminant is PREV + 1, checked where a variant takes it.
  ParseOk("enum Kind : felt { A = 18446744069414584320 }\nbegin push.A end");
  EXPECT_EQ(ParseError("enum Kind : felt { A = 18446744069414584320, B }\nbegin push.B end"),
            absl::StrCat("test.masm:1:20: ", overflow));
}

TEST_F(V025ParserTest, EnumVariantsHaveTheEnumsVisibility) {
  ast::Module m =
      ParseOk("pub enum Color : u8 { A, B }\nenum Shade : u8 { C }\n", ast::ModuleKind::kLibrary);
  ASSERT_EQ(m.constants.size(), 3u);
  EXPECT_TRUE(m.constants[0].is_public);
  EXPECT_TRUE(m.constants[1].is_public);
  EXPECT_FALSE(m.constants[2].is_public);
}

// v0.25.7's lexer: a backslash escapes any character, a newline too (the string goes on), and a
// carriage return ends a string like a newline.
TEST_F(V025ParserTest, QuotedStringEscapes) {
  ast::Module m = ParseOk("const S = \"a\\\nb\"\nconst T = \"c\\\\\"\nbegin nop end");
  ASSERT_EQ(m.constants.size(), 2u);
  EXPECT_EQ(m.constants[0].value.text, "a\\\nb");
  EXPECT_EQ(m.constants[1].value.text, "c\\\\");
  EXPECT_EQ(m.constants[1].loc.line, 3u);
  // (v0.16 reads the carriage return as text, hence the hint.)
  EXPECT_EQ(ParseError("const S = \"a\rb\"\nbegin nop end"),
            "test.masm:1:11: unclosed quoted string (this is classic v0.16 MASM: pass --dialect "
            "v0.16)");
  EXPECT_EQ(ParseError("const S = \"a\nb\"\nbegin nop end"),
            "test.masm:1:11: unclosed quoted string");
}

TEST_F(V025ParserTest, RejectedClassicDeclarations) {
  const std::string hint = " (this is classic v0.16 MASM: pass --dialect v0.16)";
  EXPECT_EQ(ParseError("proc.foo\n  nop\nend\nbegin exec.foo end"),
            "test.masm:1:1: `proc.NAME` is classic syntax: write `proc NAME`" + hint);
  EXPECT_EQ(ParseError("proc.foo.2\n  nop\nend\nbegin exec.foo end"),
            "test.masm:1:1: `proc.NAME` is classic syntax: write `proc NAME`" + hint);
  EXPECT_EQ(ParseError("export.foo\n  nop\nend\n", ast::ModuleKind::kLibrary),
            "test.masm:1:1: `export.` is classic syntax: write `pub proc NAME` or "
            "`pub use {name} from module::path`" +
                hint);
  EXPECT_EQ(ParseError("const.X=1\nbegin push.X end"),
            "test.masm:1:1: `const.NAME=` is classic syntax: write `const NAME = ...`" + hint);
  EXPECT_EQ(
      ParseError("adv_map.X=[1]\nbegin nop end"),
      "test.masm:1:1: `adv_map.NAME=` is classic syntax: write `adv_map NAME = [...]`" + hint);
}

TEST_F(V025ParserTest, NoHintWhenTheSourceIsNotClassicEither) {
  // Fails under both grammars: no hint.
  EXPECT_EQ(ParseError("proc.foo\n  nop\nbegin exec.foo end"),
            "test.masm:1:1: `proc.NAME` is classic syntax: write `proc NAME`");
  // A v0.25-only construct with an error elsewhere: no hint either.
  EXPECT_EQ(ParseError("begin do nop while push.1 end push.1.[1,2,3,4] end"),
            "test.masm:1:31: a word cannot be pushed together with other values");
}

TEST_F(V025ParserTest, AdvMap) {
  ast::Module m = ParseOk(R"(adv_map A = [1, 2,
  3]
adv_map B([5, 6, 7, 8]) = [9]
begin nop end
)");
  ASSERT_EQ(m.adv_map.size(), 2u);
  EXPECT_THAT(m.adv_map[0].values, ElementsAre(1u, 2u, 3u));
  EXPECT_FALSE(m.adv_map[0].key.has_value());
  ASSERT_TRUE(m.adv_map[1].key.has_value());
  EXPECT_THAT(*m.adv_map[1].key, ElementsAre(5u, 6u, 7u, 8u));
}

TEST_F(V025ParserTest, DoWhile) {
  ast::Module m = ParseOk(R"(begin
  do
    push.1 while.true push.0 end
  while
    push.0
  end
end
)");
  ASSERT_EQ(m.entry->size(), 1u);
  const auto* loop = std::get_if<ast::DoWhile>(&m.entry->front().op);
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->body.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<ast::While>(loop->body[1].op));
  ASSERT_EQ(loop->condition.size(), 1u);
  EXPECT_EQ(loop->loc.line, 2u);
  EXPECT_EQ(ParseError("begin do while push.1 end end"),
            "test.masm:1:10: a block must contain at least one instruction");
  EXPECT_EQ(ParseError("begin do push.1 while end end"),
            "test.masm:1:23: a block must contain at least one instruction");
  EXPECT_EQ(ParseError("begin do push.1 end end"),
            "test.masm:1:17: expected 'while' (a do-while body ends with `while`), found 'end'");
}

TEST_F(V025ParserTest, RepeatBoundsAndConstants) {
  ast::Module m = ParseOk("const N = 3\nbegin repeat.N nop end repeat.M nop end end");
  ASSERT_EQ(m.entry->size(), 2u);
  const auto& local = std::get<ast::Repeat>((*m.entry)[0].op);
  EXPECT_EQ(local.count, 3u);
  EXPECT_TRUE(local.count_constant.empty());
  const auto& imported = std::get<ast::Repeat>((*m.entry)[1].op);
  EXPECT_EQ(imported.count_constant, "M");
  EXPECT_TRUE(Parse("begin repeat.1000000 nop end end").ok());
  EXPECT_EQ(ParseError("begin repeat.1000001 nop end end"),
            "test.masm:1:7: repeat count 1000001 is out of range (1..1000000)");
  EXPECT_EQ(ParseError("const Z = 0\nbegin repeat.Z nop end end"),
            "test.masm:2:7: repeat count 0 is out of range (1..1000000)");
  EXPECT_EQ(ParseError("const W = [1,2,3,4]\nbegin repeat.W nop end end"),
            "test.masm:2:7: repeat count constant 'W' is not an integer");
}

TEST_F(V025ParserTest, WordSlices) {
  ast::Instruction slice = Inst("push.[10,11,12,13][1..3]");
  ASSERT_EQ(slice.args.size(), 1u);
  EXPECT_EQ(slice.args[0].kind, ast::Immediate::Kind::kWord);
  ASSERT_TRUE(slice.args[0].slice.has_value());
  EXPECT_EQ(slice.args[0].slice->first, 1u);
  EXPECT_EQ(slice.args[0].slice->second, 3u);
  ast::Instruction one = Inst("push.[10,11,12,13][2]");
  EXPECT_EQ(one.args[0].slice->first, 2u);
  EXPECT_EQ(one.args[0].slice->second, 3u);
  ast::Module m = ParseOk("const W = [1,2,3,4]\nbegin push.W[0..2] end");
  const ast::Instruction& c = AsInst(m.entry->front());
  EXPECT_EQ(c.args[0].kind, ast::Immediate::Kind::kConstant);
  EXPECT_EQ(c.args[0].text, "W");
  EXPECT_EQ(c.args[0].slice->second, 2u);
  EXPECT_EQ(ParseError("begin push.[1,2,3,4][2..2] end"), "test.masm:1:7: empty word slice");
  EXPECT_EQ(ParseError("begin push.[1,2,3,4][3..5] end"),
            "test.masm:1:7: word slice out of range (a word has 4 elements)");
  EXPECT_EQ(ParseError("const F = 1\nbegin push.F[0] end"),
            "test.masm:2:7: constant 'F' is not a word");
}

TEST_F(V025ParserTest, MixedWordPushIsRejected) {
  EXPECT_EQ(ParseError("begin push.[1,2,3,4].5 end"),
            "test.masm:1:7: a word cannot be pushed together with other values (this is classic "
            "v0.16 MASM: pass --dialect v0.16)");
  EXPECT_EQ(Inst("push.1.2.3").args.size(), 3u);
  EXPECT_EQ(Inst("push.[1,2,3,4]").args.size(), 1u);
}

TEST_F(V025ParserTest, EmitEvents) {
  ast::Module m = ParseOk(R"(const E = event("flamefleet::test")
begin
  emit
  emit.E
  emit.event("flamefleet::test")
end
)");
  ASSERT_EQ(m.entry->size(), 3u);
  EXPECT_TRUE(AsInst((*m.entry)[0]).args.empty());
  EXPECT_EQ(AsInst((*m.entry)[1]).args[0].kind, ast::Immediate::Kind::kConstant);
  const ast::Immediate& inline_event = AsInst((*m.entry)[2]).args[0];
  EXPECT_EQ(inline_event.kind, ast::Immediate::Kind::kEvent);
  EXPECT_EQ(inline_event.text, "flamefleet::test");
  EXPECT_EQ(inline_event.value, 9774561760243831516u);
  EXPECT_EQ(ParseError("begin emit.7 end"),
            "test.masm:1:7: emit takes an event, not a number: write `emit.event(\"name\")` or "
            "use a constant defined with `event(\"name\")` (this is classic v0.16 MASM: pass "
            "--dialect v0.16)");
  EXPECT_EQ(ParseError("const C = 5\nbegin emit.C end"),
            "test.masm:2:7: emit.CONST should require const defined via event (this is classic "
            "v0.16 MASM: pass --dialect v0.16)");
}

TEST_F(V025ParserTest, RemovedWordMemorySpellingsNameTheirReplacement) {
  EXPECT_EQ(ParseError("begin mem_loadw.4 end"),
            "test.masm:1:7: deprecated instruction: `mem_loadw` has been removed (use "
            "`mem_loadw_be` instead) (this is classic v0.16 MASM: pass --dialect v0.16)");
  EXPECT_EQ(ParseError("begin push.1 mem_storew end"),
            "test.masm:1:14: deprecated instruction: `mem_storew` has been removed (use "
            "`mem_storew_be` instead) (this is classic v0.16 MASM: pass --dialect v0.16)");
  EXPECT_EQ(ParseError("proc f\n  loc_loadw.0\nend\nbegin exec.f end"),
            "test.masm:2:3: deprecated instruction: `loc_loadw` has been removed (use "
            "`loc_loadw_be` instead) (this is classic v0.16 MASM: pass --dialect v0.16)");
}

TEST_F(V025ParserTest, ControlFlowAsBefore) {
  ast::Module m = ParseOk(R"(begin
  if.true push.1 else push.2 end
  if.false push.3 end
  if.true else push.4 end
  while.true push.0 end
end
)");
  EXPECT_EQ(m.entry->size(), 4u);
  EXPECT_EQ(ParseError("begin while.false nop end end"),
            "test.masm:1:13: expected 'true', found 'false'");
}

TEST_F(V025ParserTest, DialectOverloadUsesTheSpec) {
  // Through the DialectSpec the rules and table are the dialect's own; v0.16 keeps classic.
  const uint32_t id = sources_.Add("c.masm", "proc.f.1\n  nop\nend\nbegin exec.f end");
  EXPECT_TRUE(
      ParseModule(sources_, id, ast::ModuleKind::kExecutable, GetDialectSpec(Dialect::kV0_16))
          .ok());
  absl::StatusOr<ast::Module> v025 =
      ParseModule(sources_, id, ast::ModuleKind::kExecutable, GetDialectSpec(Dialect::kV0_25));
  ASSERT_FALSE(v025.ok());
  EXPECT_THAT(v025.status().message(),
              HasSubstr("c.masm:1:1: `proc.NAME` is classic syntax: write `proc NAME` (this is "
                        "classic v0.16 MASM: pass --dialect v0.16)"));
}

TEST_F(V025ParserTest, BracesAreNotTokensInV016) {
  const std::vector<Token> toks = LexAll("{");
  ASSERT_FALSE(toks.empty());
  EXPECT_EQ(toks[0].kind, TokenKind::kError);
  Lexer lexer("{ } 0x123", 0, LexerOptions{.braces = true, .odd_hex_digits = true});
  EXPECT_EQ(lexer.Next().kind, TokenKind::kLBrace);
  EXPECT_EQ(lexer.Next().kind, TokenKind::kRBrace);
  const Token hex = lexer.Next();
  EXPECT_EQ(hex.kind, TokenKind::kHex);
  EXPECT_EQ(hex.value, 0x123u);
}

// v0.25.7 evaluates a module's constants after reading all of them (sema simplify_constants):
// forward references are fine, cycles are errors at the constant being evaluated.
TEST_F(V025ParserTest, ConstantsMayReferToLaterConstants) {
  ast::Module m = ParseOk("const A = B * 2\nconst B = C + 1\nconst C = 20\nbegin\n  push.A\nend\n");
  ASSERT_EQ(m.constants.size(), 3u);
  EXPECT_FALSE(m.constants[0].pending.has_value());
  EXPECT_EQ(m.constants[0].value.felt, 42u);
  EXPECT_EQ(m.constants[1].value.felt, 21u);
}

TEST_F(V025ParserTest, ConstantCyclesAndUndefinedNamesAreErrors) {
  EXPECT_THAT(ParseError("const A = B + 1\nconst B = A\nbegin\n  nop\nend\n"),
              HasSubstr("test.masm:1:7: constant evaluation terminated due to infinite "
                        "recursion: 'A' depends on itself"));
  EXPECT_THAT(ParseError("const A = A\nbegin\n  nop\nend\n"),
              HasSubstr("test.masm:1:7: constant evaluation terminated due to infinite"));
  EXPECT_THAT(ParseError("const A = 1\nconst B = A + NOPE\nbegin\n  nop\nend\n"),
              HasSubstr("test.masm:2:15: undefined constant 'NOPE'"));
}

TEST_F(V025ParserTest, ConstantPathsAreLeftToTheLinker) {
  ast::Module m = ParseOk("use lib::consts\nconst A = consts::X + 1\nbegin\n  push.A\nend\n");
  ASSERT_EQ(m.constants.size(), 1u);
  ASSERT_TRUE(m.constants[0].pending.has_value());
  EXPECT_EQ(m.constants[0].pending->op, ast::ConstExpr::Op::kAdd);
  EXPECT_EQ(m.constants[0].pending->operands[0].name, "consts::X");
  // A known word still cannot take part in arithmetic, whatever the other operand is.
  EXPECT_THAT(ParseError("use lib::c\nconst A = [1,2,3,4] + c::X\nbegin\n  nop\nend\n"),
              HasSubstr("test.masm:2:21: operator '+' needs field elements"));
}

// The v0.25.7 lexer lets a backslash escape any character and keeps the raw text: the event id
// is derived from the bytes between the quotes, backslashes included.
TEST_F(V025ParserTest, EventNamesKeepEscapesVerbatim) {
  ast::Instruction e = Inst(R"(emit.event("a\"b\\c"))");
  ASSERT_EQ(e.args.size(), 1u);
  EXPECT_EQ(e.args[0].text, R"(a\"b\\c)");
}

}  // namespace
}  // namespace flamefleet::vm
