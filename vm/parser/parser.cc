#include "vm/parser/parser.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "vm/assembler/instruction_table.h"
#include "vm/crypto/blake3.h"
#include "vm/dialect.h"
#include "vm/felt.h"
#include "vm/parser/const_eval.h"
#include "vm/parser/lexer.h"
#include "vm/parser/syntax_rules.h"

namespace flamefleet::vm {
namespace {

using ast::Immediate;
using ast::SourceLocation;

// Shortens a lexeme for use inside an error message.
std::string Quote(absl::string_view text) {
  constexpr size_t kMax = 40;
  if (text.size() > kMax) return absl::StrCat("'", text.substr(0, kMax), "...'");
  return absl::StrCat("'", text, "'");
}

std::string Describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::kEof:
      return "end of file";
    case TokenKind::kString:
      return absl::StrCat("string \"", t.text.substr(0, 40), t.text.size() > 40 ? "...\"" : "\"");
    default:
      return Quote(t.text);
  }
}

// A value during constant evaluation.
using ConstValue = ast::ConstantValue;
// Bounds an unevaluated constant expression (its tree is copied and destroyed recursively).
constexpr size_t kMaxPendingConstTerms = 4096;

// Returns the four little-endian u64 chunks of BLAKE3(text), each reduced mod p.
ast::WordValue Blake3Word(absl::string_view text) {
  const std::array<uint8_t, 32> digest = Blake3(text);
  ast::WordValue w{};
  for (size_t i = 0; i < 4; ++i) {
    uint64_t v = 0;
    for (size_t k = 0; k < 8; ++k) v |= static_cast<uint64_t>(digest[i * 8 + k]) << (8 * k);
    w[i] = Felt::FromU64(v).value();
  }
  return w;
}

// The error of the first failing parse: where and why, before formatting.
struct ParseError {
  SourceLocation loc;
  std::string reason;
  // Whether the classic-syntax hint may follow: false for a limit of the dialect (too many
  // locals, a repeat count out of range), which is no matter of syntax.
  bool hintable = true;
};

class Parser {
 public:
  Parser(const SourceManager& sources, uint32_t file_id, ast::ModuleKind kind,
         const InstructionTable& instructions, const SyntaxRules& rules)
      : sources_(sources),
        file_id_(file_id),
        instructions_(instructions),
        rules_(rules),
        lexer_(
            sources.text(file_id), file_id,
            LexerOptions{.braces = rules.braces,
                         .odd_hex_digits = rules.odd_hex_digits,
                         .escape_any_character = rules.escape_any_character,
                         .string_ends_at_carriage_return = rules.string_ends_at_carriage_return}) {
    module_.kind = kind;
    module_.file_id = file_id;
  }

  absl::StatusOr<ast::Module> Run();

  // The location and reason of the error Run() returned.
  const ParseError& error() const { return error_; }

 private:
  static constexpr size_t kLookahead = 4;

  // ---- token access
  // ------------------------------------------------------------------------
  const Token& Peek(size_t ahead = 0) {
    while (count_ <= ahead) {
      buf_[(head_ + count_) % kLookahead] = lexer_.Next();
      ++count_;
    }
    return buf_[(head_ + ahead) % kLookahead];
  }
  Token Take() {
    Peek();
    Token t = std::move(buf_[head_]);
    head_ = (head_ + 1) % kLookahead;
    --count_;
    return t;
  }
  bool At(TokenKind kind, size_t ahead = 0) { return Peek(ahead).kind == kind; }
  bool AtWord(absl::string_view word, size_t ahead = 0) {
    const Token& t = Peek(ahead);
    return t.kind == TokenKind::kIdent && t.text == word;
  }

  // ---- errors
  // --------------------------------------------------------------------------------
  absl::Status ErrorAt(SourceLocation loc, absl::string_view message) const {
    error_ = ParseError{loc, std::string(message)};
    return absl::InvalidArgumentError(sources_.Format(loc, message));
  }
  // Reports a value beyond a limit of the dialect (never followed by the syntax hint).
  absl::Status LimitError(SourceLocation loc, absl::string_view message) const {
    absl::Status status = ErrorAt(loc, message);
    error_.hintable = false;
    return status;
  }
  // Reports `t` where `expected` was required (or the lexer's error if `t` is
  // one).
  absl::Status Unexpected(const Token& t, absl::string_view expected) const {
    if (t.kind == TokenKind::kError) return ErrorAt(t.loc, t.text);
    return ErrorAt(t.loc, absl::StrCat("expected ", expected, ", found ", Describe(t)));
  }
  absl::StatusOr<Token> Expect(TokenKind kind, absl::string_view expected) {
    if (!At(kind)) return Unexpected(Peek(), expected);
    return Take();
  }
  absl::Status ExpectWord(absl::string_view word) {
    if (!AtWord(word)) return Unexpected(Peek(), absl::StrCat("'", word, "'"));
    Take();
    return absl::OkStatus();
  }
  // Reports an invalid value. Inside an instruction (or `repeat`), the error
  // points at the start of the instruction, like the upstream assembler; elsewhere
  // at the offending token.
  absl::Status ValueError(SourceLocation token_loc, absl::string_view message) const {
    return ErrorAt(anchor_.value_or(token_loc), message);
  }
  absl::Status EnterNesting(SourceLocation loc) {
    if (++depth_ > kMaxNestingDepth) {
      return ErrorAt(
          loc, absl::StrCat("nesting is too deep (the limit is ", kMaxNestingDepth, " levels)"));
    }
    return absl::OkStatus();
  }

  // ---- module level
  // --------------------------------------------------------------------------
  absl::Status ParseAnnotation(int64_t* locals);  // *locals: -1 = none
  absl::Status ParseImport();
  absl::Status ParseItemImport(SourceLocation loc, bool reexport);
  absl::StatusOr<std::string> ParseModulePath(SourceLocation* loc, size_t min_segments = 2);
  absl::Status AddImportAlias(const std::string& alias, SourceLocation loc);
  absl::Status ParseConstant(bool is_public);
  absl::Status AddConstant(const Token& name, ast::ConstExpr value, bool is_public);
  // Under SyntaxRules::deferred_constants: evaluates every constant left pending by a forward
  // reference, leaving pending only those that need another module (the linker's job).
  absl::Status ResolveLocalConstants();
  absl::StatusOr<std::optional<ConstValue>> ResolveLocalConstant(size_t index, size_t root,
                                                                 int depth);
  // Whether constant `name` is defined with a known value (forward references are not).
  const ConstValue* KnownConstant(absl::string_view name) const {
    const auto it = constants_.find(name);
    if (it == constants_.end() || module_.constants[it->second].pending.has_value()) {
      return nullptr;
    }
    return &module_.constants[it->second].value;
  }
  absl::Status ParseEnum(bool is_public);
  absl::Status ParseAdvMap();
  absl::Status ParseEntry();
  absl::Status ParseProcedure(const Token& keyword, bool exported, bool classic, std::string docs,
                              int64_t annotated_locals);
  absl::Status ParseReExport(SourceLocation loc);
  absl::Status SkipBalanced();
  absl::Status SkipType();
  absl::StatusOr<std::string> ParseProcedureName();
  absl::Status AddProcedureName(const std::string& name, SourceLocation loc);
  // Parses `::`-separated segments or a MAST root; `text` is the path as
  // written, `last` the unquoted final segment; `segments` counts segments (0
  // for a MAST root).
  absl::Status ParseTarget(std::string* text, std::string* last, int* segments);

  // ---- constants
  // -----------------------------------------------------------------------------
  absl::StatusOr<ast::ConstExpr> ParseConstExpr();
  absl::StatusOr<ast::ConstExpr> ParseConstProduct();
  absl::StatusOr<ast::ConstExpr> ParseConstTerm();
  absl::StatusOr<ast::ConstExpr> CombineConst(const Token& op, ast::ConstExpr lhs,
                                              ast::ConstExpr rhs);
  // Reports a constant-evaluation error (a value, not a syntax matter: no classic-syntax hint,
  // since v0.16 evaluates the same expression in the field and may accept it).
  absl::Status FormatError(SourceLocation loc, absl::string_view message) const {
    return LimitError(loc, message);
  }

  // ---- bodies
  // --------------------------------------------------------------------------------
  absl::Status ParseBlock(ast::Block* out, bool allow_empty);
  absl::Status ParseOp(ast::Block* out);
  absl::Status ParseIf(ast::Block* out);
  absl::Status ParseWhile(ast::Block* out);
  absl::Status ParseRepeat(ast::Block* out);
  absl::Status ParseDoWhile(ast::Block* out);
  // Whether the current token ends the block being parsed: `end`, `else`, or the bare `while`
  // of a do-while body.
  bool AtBlockEnd();
  absl::Status ParseInstruction(ast::Block* out);
  absl::Status ParseInstructionBody(const Token& mnemonic, ast::Block* out);

  // ---- immediates
  // ----------------------------------------------------------------------------
  absl::StatusOr<uint64_t> ParseFeltLiteral();
  absl::StatusOr<ast::WordValue> ParseWordLiteral();
  absl::StatusOr<Immediate> ParseFeltImmediate();
  absl::StatusOr<Immediate> ParseU32Immediate();
  absl::StatusOr<Immediate> ParseSmallImmediate(uint32_t min, uint32_t max, bool allow_constant);
  absl::StatusOr<Immediate> ParsePushValue();
  absl::StatusOr<Immediate> ParseErrorImmediate();
  absl::StatusOr<std::string> ParseEventName();
  absl::Status ParseSlice(Immediate* imm);
  absl::StatusOr<Immediate> ParseEventImmediate();

  const SourceManager& sources_;
  uint32_t file_id_;
  const InstructionTable& instructions_;
  const SyntaxRules& rules_;
  Lexer lexer_;
  mutable ParseError error_;
  bool seen_item_ = false;  // a module item other than `namespace` was parsed
  std::array<Token, kLookahead> buf_;
  size_t head_ = 0;
  size_t count_ = 0;
  int depth_ = 0;
  std::optional<SourceLocation> anchor_;  // start of the instruction being parsed
  ast::Module module_;
  absl::flat_hash_map<std::string, size_t> constants_;  // name -> index in module_.constants
  size_t pending_terms_ = 0;  // unevaluated nodes in the constant expression being parsed
  std::vector<uint8_t> constant_state_;               // ResolveLocalConstants: 1 = being evaluated
  absl::flat_hash_set<std::string> procedure_names_;  // procedures and re-exports
  absl::flat_hash_set<std::string> import_aliases_;
};

// RAII decrement of the nesting depth.
class DepthGuard {
 public:
  explicit DepthGuard(int* depth) : depth_(depth) {}
  ~DepthGuard() { --*depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  int* depth_;
};

// ================================================================================================
// Module level

absl::StatusOr<ast::Module> Parser::Run() {
  const std::string& text = sources_.text(file_id_);
  if (text.size() > kMaxSourceBytes) {
    return ErrorAt({file_id_, 1, 1}, absl::StrCat("source file is too large (", text.size(),
                                                  " bytes; the limit is ", kMaxSourceBytes, ")"));
  }
  int64_t annotated_locals = -1;  // from @locals(N); -1 = none
  std::optional<SourceLocation> annotation_loc;
  std::string docs;
  for (;;) {
    if (At(TokenKind::kEof)) break;
    {
      Token& t = buf_[head_];  // Peek() above filled it
      if (!t.docs.empty()) docs = std::move(t.docs);
      t.docs.clear();
    }
    const Token& t = Peek();
    if (t.kind == TokenKind::kAt) {
      if (!annotation_loc.has_value()) annotation_loc = t.loc;
      FLAMEFLEET_RETURN_IF_ERROR(ParseAnnotation(&annotated_locals));
      continue;
    }
    if (t.kind != TokenKind::kIdent) {
      return Unexpected(t, "a module item (use, const, proc, export, pub, adv_map, begin)");
    }
    const absl::string_view word = t.text;
    const bool classic = rules_.classic_declarations;
    const bool is_proc =
        word == "proc" || (word == "pub" && AtWord("proc", 1)) ||
        (classic && word == "export" && At(TokenKind::kDot, 1) && !At(TokenKind::kHexWord, 2) &&
         !At(TokenKind::kColonColon, 2) && !At(TokenKind::kColonColon, 3));
    if (annotation_loc.has_value() && !is_proc) {
      return ErrorAt(*annotation_loc, "an annotation must be followed by a procedure");
    }
    if (word == "namespace" && rules_.modern_items) {
      if (seen_item_) {
        return ErrorAt(t.loc, "a `namespace` declaration must precede every other item");
      }
      Take();
      FLAMEFLEET_ASSIGN_OR_RETURN(module_.declared_namespace,
                                  ParseModulePath(&module_.namespace_loc, /*min_segments=*/1));
      seen_item_ = true;
      docs.clear();
      continue;
    }
    seen_item_ = true;
    if (is_proc) {
      Token keyword = Take();
      bool exported = keyword.text != "proc";
      bool dotted = true;
      if (keyword.text == "pub") {
        Take();  // proc
        dotted = false;
      } else if (keyword.text == "proc" && !At(TokenKind::kDot)) {
        dotted = false;
      } else if (keyword.text == "proc" && !classic) {
        return ErrorAt(keyword.loc, "`proc.NAME` is classic syntax: write `proc NAME`");
      }
      FLAMEFLEET_RETURN_IF_ERROR(
          ParseProcedure(keyword, exported, dotted, std::move(docs), annotated_locals));
      annotated_locals = -1;
      annotation_loc.reset();
    } else if (word == "use") {
      FLAMEFLEET_RETURN_IF_ERROR(ParseImport());
    } else if (word == "const") {
      FLAMEFLEET_RETURN_IF_ERROR(ParseConstant(/*is_public=*/false));
    } else if (word == "pub" && AtWord("const", 1)) {
      Take();
      FLAMEFLEET_RETURN_IF_ERROR(ParseConstant(/*is_public=*/true));
    } else if (word == "pub" && AtWord("use", 1)) {
      const SourceLocation loc = Take().loc;
      Take();  // use
      if (rules_.modern_items && At(TokenKind::kLBrace)) {
        FLAMEFLEET_RETURN_IF_ERROR(ParseItemImport(loc, /*reexport=*/true));
      } else if (!rules_.path_reexports) {
        return ErrorAt(loc,
                       "`pub use` of a module is not supported: re-export items with "
                       "`pub use {name} from module::path`");
      } else {
        FLAMEFLEET_RETURN_IF_ERROR(ParseReExport(loc));
      }
    } else if (word == "export" && classic) {
      const SourceLocation loc = Take().loc;
      FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kDot, "'.'").status());
      FLAMEFLEET_RETURN_IF_ERROR(ParseReExport(loc));
    } else if (word == "export") {
      return ErrorAt(t.loc,
                     "`export.` is classic syntax: write `pub proc NAME` or "
                     "`pub use {name} from module::path`");
    } else if (word == "adv_map") {
      FLAMEFLEET_RETURN_IF_ERROR(ParseAdvMap());
    } else if (word == "begin") {
      FLAMEFLEET_RETURN_IF_ERROR(ParseEntry());
    } else if (rules_.modern_items && (word == "mod" || (word == "pub" && AtWord("mod", 1)))) {
      ast::Submodule sub;
      sub.loc = Take().loc;
      sub.is_public = word == "pub";
      if (sub.is_public) Take();  // mod
      FLAMEFLEET_ASSIGN_OR_RETURN(Token name, Expect(TokenKind::kIdent, "a module name"));
      sub.name = std::string(name.text);
      for (const ast::Submodule& other : module_.submodules) {
        if (other.name == sub.name) {
          return ErrorAt(name.loc, absl::StrCat("duplicate module declaration '", sub.name, "'"));
        }
      }
      module_.submodules.push_back(std::move(sub));
    } else if (rules_.modern_items && word == "extern") {
      Take();
      FLAMEFLEET_RETURN_IF_ERROR(ExpectWord("package"));
      if (At(TokenKind::kString)) {
        Take();
      } else {
        SourceLocation loc;
        FLAMEFLEET_RETURN_IF_ERROR(ParseModulePath(&loc, /*min_segments=*/1).status());
      }
    } else if (rules_.modern_items && (word == "type" || (word == "pub" && AtWord("type", 1)))) {
      if (word == "pub") Take();
      Take();  // type
      FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kIdent, "a type name").status());
      FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='").status());
      FLAMEFLEET_RETURN_IF_ERROR(SkipType());
    } else if (rules_.modern_items && (word == "enum" || (word == "pub" && AtWord("enum", 1)))) {
      if (word == "pub") Take();
      // v0.25.7 gives the variants' constants the enum's visibility.
      FLAMEFLEET_RETURN_IF_ERROR(ParseEnum(/*is_public=*/word == "pub"));
    } else {
      return ErrorAt(t.loc, absl::StrCat("unexpected ", Quote(word),
                                         " at module level (expected use, const, proc, ",
                                         classic ? "export, " : "", "pub, adv_map",
                                         rules_.modern_items ? ", mod" : "", " or begin)"));
    }
    docs.clear();
  }
  if (annotation_loc.has_value()) {
    return ErrorAt(*annotation_loc, "an annotation must be followed by a procedure");
  }
  if (module_.kind == ast::ModuleKind::kExecutable && !module_.entry.has_value()) {
    return ErrorAt(Peek().loc, "an executable module must contain a `begin ... end` block");
  }
  if (rules_.deferred_constants) FLAMEFLEET_RETURN_IF_ERROR(ResolveLocalConstants());
  module_.docs = lexer_.module_docs();
  return std::move(module_);
}

absl::Status Parser::ParseAnnotation(int64_t* locals) {
  Take();  // '@'
  FLAMEFLEET_ASSIGN_OR_RETURN(Token name, Expect(TokenKind::kIdent, "an annotation name"));
  if (name.text == "locals") {
    FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'('").status());
    FLAMEFLEET_ASSIGN_OR_RETURN(Token n, Expect(TokenKind::kInt, "the number of locals"));
    if (n.value > rules_.max_locals) return LimitError(n.loc, rules_.max_locals_error);
    if (*locals >= 0) return ErrorAt(name.loc, "duplicate @locals annotation");
    *locals = static_cast<int64_t>(n.value);
    return Expect(TokenKind::kRParen, "')'").status();
  }
  if (At(TokenKind::kLParen)) return SkipBalanced();
  return absl::OkStatus();
}

// Skips a balanced group starting at the current '(' / '[' / '<' token,
// iteratively.
absl::Status Parser::SkipBalanced() {
  size_t depth = 0;
  for (;;) {
    const Token& t = Peek();
    switch (t.kind) {
      case TokenKind::kLParen:
      case TokenKind::kLBracket:
      case TokenKind::kLess:
      case TokenKind::kLBrace:
        ++depth;
        break;
      case TokenKind::kRParen:
      case TokenKind::kRBracket:
      case TokenKind::kGreater:
      case TokenKind::kRBrace:
        if (depth == 0) return Unexpected(t, "an opening bracket");
        --depth;
        break;
      case TokenKind::kEof:
      case TokenKind::kError:
        return Unexpected(t, "a closing bracket");
      default:
        if (depth == 0) return Unexpected(t, "an opening bracket");
        break;
    }
    Take();
    if (depth == 0) return absl::OkStatus();
  }
}

// Skips a v0.20 result type: `felt`, `ptr<u8>`, `(felt, felt)`, `[felt; 4]`, and in v0.25
// `struct { f: T }` and named types `a::b::T`.
absl::Status Parser::SkipType() {
  if (At(TokenKind::kLParen) || At(TokenKind::kLBracket)) return SkipBalanced();
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kIdent, "a type").status());
  while (At(TokenKind::kColonColon) && At(TokenKind::kIdent, 1)) {
    Take();
    Take();
  }
  if (At(TokenKind::kLess) || At(TokenKind::kLBrace)) return SkipBalanced();
  return absl::OkStatus();
}

absl::Status Parser::AddImportAlias(const std::string& alias, SourceLocation loc) {
  if (!import_aliases_.insert(alias).second) {
    return ErrorAt(loc, absl::StrCat("duplicate import '", alias, "'"));
  }
  return absl::OkStatus();
}

// Parses `[::]a::b::c` (at least two components); `*loc` is where it starts. The leading `::`
// is dropped.
absl::StatusOr<std::string> Parser::ParseModulePath(SourceLocation* loc, size_t min_segments) {
  *loc = Peek().loc;
  if (At(TokenKind::kColonColon)) Take();
  std::string path;
  size_t segments = 0;
  for (;;) {
    FLAMEFLEET_ASSIGN_OR_RETURN(Token seg, Expect(TokenKind::kIdent, "a module path component"));
    if (segments++ > 0) path += "::";
    absl::StrAppend(&path, seg.text);
    if (!At(TokenKind::kColonColon)) break;
    Take();
  }
  if (segments < min_segments) {
    return ErrorAt(*loc, "an import path needs at least two components (e.g. std::math::u64)");
  }
  return path;
}

absl::Status Parser::ParseImport() {
  const SourceLocation use_loc = Take().loc;  // use
  if (At(TokenKind::kDot)) {
    if (!rules_.classic_declarations) {
      return ErrorAt(use_loc, "`use.a::b` is classic syntax: write `use a::b`");
    }
    Take();
  }
  if (rules_.modern_items) {
    if (At(TokenKind::kLBrace)) return ParseItemImport(use_loc, /*reexport=*/false);
    if (At(TokenKind::kStar))
      return ErrorAt(Peek().loc, "glob imports (`use *`) are not supported");
    if (At(TokenKind::kHexWord) || At(TokenKind::kHex)) {
      return ErrorAt(Peek().loc, "a MAST digest cannot be imported");
    }
  }
  SourceLocation loc;
  ast::Import import;
  import.absolute = At(TokenKind::kColonColon);
  FLAMEFLEET_ASSIGN_OR_RETURN(import.path, ParseModulePath(&loc));
  import.loc = loc;
  import.alias = import.path.substr(import.path.rfind(':') + 1);
  SourceLocation alias_loc = loc;
  if (At(TokenKind::kArrow)) {
    if (!rules_.arrow_import_alias) {
      return ErrorAt(Peek().loc, "import aliases use `as`; `->` is no longer supported");
    }
    Take();
    FLAMEFLEET_ASSIGN_OR_RETURN(Token alias, Expect(TokenKind::kIdent, "an import alias"));
    import.alias = std::string(alias.text);
    alias_loc = alias.loc;
  } else if (rules_.modern_items && AtWord("as")) {
    Take();
    FLAMEFLEET_ASSIGN_OR_RETURN(Token alias, Expect(TokenKind::kIdent, "an import alias"));
    import.alias = std::string(alias.text);
    alias_loc = alias.loc;
  }
  FLAMEFLEET_RETURN_IF_ERROR(AddImportAlias(import.alias, alias_loc));
  module_.imports.push_back(std::move(import));
  return absl::OkStatus();
}

// `{x, y as z} from a::b` after `use` (item imports) or `pub use` (item re-exports).
absl::Status Parser::ParseItemImport(SourceLocation loc, bool reexport) {
  if (reexport && module_.kind == ast::ModuleKind::kExecutable) {
    return ErrorAt(loc, "exported procedures are not allowed in an executable module");
  }
  Take();  // {
  struct Item {
    std::string name;
    std::string alias;
    SourceLocation loc;       // the alias
    SourceLocation name_loc;  // the item's name
  };
  std::vector<Item> items;
  while (!At(TokenKind::kRBrace)) {
    const Token& t = Peek();
    if (t.kind != TokenKind::kIdent && t.kind != TokenKind::kConstIdent &&
        !(t.kind == TokenKind::kString && t.quoted_ident)) {
      return Unexpected(t, "an item name or '}'");
    }
    Item item{std::string(t.text), std::string(t.text), t.loc, t.loc};
    Take();
    if (AtWord("as")) {
      Take();
      const Token& a = Peek();
      if (a.kind != TokenKind::kIdent && a.kind != TokenKind::kConstIdent &&
          !(a.kind == TokenKind::kString && a.quoted_ident)) {
        return Unexpected(a, "an alias");
      }
      item.alias = std::string(a.text);
      item.loc = a.loc;
      Take();
    } else if (At(TokenKind::kArrow)) {
      return ErrorAt(Peek().loc, "import aliases use `as`; `->` is no longer supported");
    }
    items.push_back(std::move(item));
    if (!At(TokenKind::kComma)) break;
    Take();
  }
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "',' or '}'").status());
  if (items.empty()) return ErrorAt(loc, "an item import needs at least one item");
  FLAMEFLEET_RETURN_IF_ERROR(ExpectWord("from"));
  SourceLocation path_loc;
  const bool absolute = At(TokenKind::kColonColon);
  FLAMEFLEET_ASSIGN_OR_RETURN(std::string path, ParseModulePath(&path_loc));
  for (Item& item : items) {
    if (reexport) {
      ast::ReExport re;
      re.loc = item.loc;
      re.target = absl::StrCat("::", path, "::", item.name);
      re.name = item.alias;
      FLAMEFLEET_RETURN_IF_ERROR(AddProcedureName(re.name, item.loc));
      module_.reexports.push_back(std::move(re));
    } else {
      FLAMEFLEET_RETURN_IF_ERROR(AddImportAlias(item.alias, item.loc));
      module_.imports.push_back(ast::Import{path, std::move(item.alias), std::move(item.name),
                                            item.loc, absolute, item.name_loc});
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseConstant(bool is_public) {
  const SourceLocation const_loc = Take().loc;  // const
  if (At(TokenKind::kDot)) {
    if (!rules_.classic_declarations) {
      return ErrorAt(const_loc, "`const.NAME=` is classic syntax: write `const NAME = ...`");
    }
    Take();
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(Token name, Expect(TokenKind::kConstIdent, "a constant name"));
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='").status());
  pending_terms_ = 0;
  FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstExpr value, ParseConstExpr());
  return AddConstant(name, std::move(value), is_public);
}

absl::Status Parser::AddConstant(const Token& name, ast::ConstExpr value, bool is_public) {
  std::string key(name.text);
  if (constants_.contains(key)) {
    return ErrorAt(name.loc, absl::StrCat("duplicate constant '", key, "'"));
  }
  constants_.emplace(key, module_.constants.size());
  ast::Constant c;
  c.name = std::move(key);
  c.loc = name.loc;
  c.is_public = is_public;
  if (value.op == ast::ConstExpr::Op::kValue) {
    c.value = std::move(value.value);
  } else {
    c.pending = std::move(value);
  }
  module_.constants.push_back(std::move(c));
  return absl::OkStatus();
}

absl::Status Parser::ResolveLocalConstants() {
  constant_state_.assign(module_.constants.size(), 0);
  for (size_t i = 0; i < module_.constants.size(); ++i) {
    if (!module_.constants[i].pending.has_value()) continue;
    FLAMEFLEET_RETURN_IF_ERROR(ResolveLocalConstant(i, i, 0).status());
  }
  return absl::OkStatus();
}

// Evaluates constant `index` (reached from constant `root` of the module's list), following
// local references depth-first; v0.25.7 does the same when it simplifies the module's
// constants, and reports a cycle at the constant whose evaluation found it.
absl::StatusOr<std::optional<ConstValue>> Parser::ResolveLocalConstant(size_t index, size_t root,
                                                                       int depth) {
  ast::Constant& c = module_.constants[index];
  if (!c.pending.has_value()) return std::optional<ConstValue>(c.value);
  if (constant_state_[index] == 2) return std::optional<ConstValue>();  // needs another module
  if (constant_state_[index] == 1) {
    const ast::Constant& r = module_.constants[root];
    return ErrorAt(
        r.loc, absl::StrCat("constant evaluation terminated due to infinite recursion: '", r.name,
                            "' depends on itself (dependencies between constants must "
                            "form an acyclic graph)"));
  }
  if (depth > kMaxNestingDepth) {
    return ErrorAt(c.loc, absl::StrCat("constants refer to constants defined later too deeply (the "
                                       "limit is ",
                                       kMaxNestingDepth, " levels)"));
  }
  constant_state_[index] = 1;
  auto lookup = [&](const ast::ConstExpr& ref) -> absl::StatusOr<std::optional<ConstValue>> {
    if (absl::StrContains(ref.name, "::")) return std::optional<ConstValue>();  // the linker's
    if (const auto it = constants_.find(ref.name); it != constants_.end()) {
      return ResolveLocalConstant(it->second, root, depth + 1);
    }
    if (import_aliases_.contains(ref.name)) return std::optional<ConstValue>();  // imported
    return ErrorAt(ref.loc, absl::StrCat("undefined constant '", ref.name, "'"));
  };
  auto error = [this](SourceLocation loc, absl::string_view m) { return FormatError(loc, m); };
  absl::StatusOr<std::optional<ConstValue>> v =
      EvaluateConstExpr(*c.pending, rules_.const_arithmetic, lookup, error);
  constant_state_[index] = v.ok() && !v->has_value() ? 2 : 0;
  if (!v.ok()) return v.status();
  ast::Constant& done = module_.constants[index];
  if (v->has_value()) {
    done.value = **v;
    done.pending.reset();
  }
  return *v;
}

// `enum Name : T { A = EXPR, B, ... }`: one felt constant per variant; a variant without a
// value is the previous one plus 1 (the first is 0).
absl::Status Parser::ParseEnum(bool is_public) {
  Take();  // enum
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kIdent, "an enum name").status());
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':'").status());
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kIdent, "an enum representation type").status());
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{'").status());
  ast::ConstExpr next;  // the next implicit discriminant: 0, then the previous one plus 1
  next.value.kind = ConstValue::Kind::kFelt;
  while (!At(TokenKind::kRBrace)) {
    FLAMEFLEET_ASSIGN_OR_RETURN(Token name, Expect(TokenKind::kConstIdent, "an enum variant name"));
    ast::ConstExpr value = next;
    if (At(TokenKind::kEqual)) {
      const SourceLocation loc = Take().loc;
      pending_terms_ = 0;
      FLAMEFLEET_ASSIGN_OR_RETURN(value, ParseConstExpr());
      if (value.op == ast::ConstExpr::Op::kValue && value.value.kind != ConstValue::Kind::kFelt) {
        return ErrorAt(loc, "an enum discriminant must be a field element");
      }
    }
    ast::ConstExpr one;
    one.value.felt = 1;
    absl::StatusOr<ConstValue> folded = absl::UnknownError("not folded");
    if (value.op == ast::ConstExpr::Op::kValue) {
      auto error = [this](SourceLocation loc, absl::string_view m) { return FormatError(loc, m); };
      folded = ApplyConstOp(ast::ConstExpr::Op::kAdd, "+", rules_.const_arithmetic, value.value,
                            one.value, name.loc, error);
    }
    if (folded.ok()) {
      next.op = ast::ConstExpr::Op::kValue;
      next.operands.clear();
      next.value = *std::move(folded);
    } else {
      // Not known yet, or it overflows (v0.25.7 checks `PREV + 1` where the next variant uses
      // it, at PREV's name): evaluated, and any error reported, only if a variant takes it.
      ast::ConstExpr sum;
      sum.op = ast::ConstExpr::Op::kAdd;
      sum.loc = name.loc;
      sum.operands = {value, std::move(one)};
      next = std::move(sum);
    }
    FLAMEFLEET_RETURN_IF_ERROR(AddConstant(name, std::move(value), is_public));
    if (!At(TokenKind::kComma)) break;
    Take();
  }
  return Expect(TokenKind::kRBrace, "',' or '}'").status();
}

absl::Status Parser::ParseAdvMap() {
  const SourceLocation loc = Take().loc;  // adv_map
  if (At(TokenKind::kDot)) {
    if (!rules_.classic_declarations) {
      return ErrorAt(loc, "`adv_map.NAME=` is classic syntax: write `adv_map NAME = [...]`");
    }
    Take();
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(Token name, Expect(TokenKind::kConstIdent, "an advice map name"));
  ast::AdvMapEntry entry;
  entry.name = std::string(name.text);
  entry.loc = loc;
  if (At(TokenKind::kLParen)) {
    Take();
    if (At(TokenKind::kHexWord) || At(TokenKind::kLBracket)) {
      FLAMEFLEET_ASSIGN_OR_RETURN(entry.key, ParseWordLiteral());
    } else {
      const Token& t = Peek();
      if (t.kind == TokenKind::kError) return Unexpected(t, "");
      return ErrorAt(t.loc, "an advice map key must be a word (0x<64 hex digits> or [a,b,c,d])");
    }
    FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'").status());
  }
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='").status());
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kLBracket, "'['").status());
  for (;;) {
    FLAMEFLEET_ASSIGN_OR_RETURN(uint64_t v, ParseFeltLiteral());
    entry.values.push_back(v);
    if (!At(TokenKind::kComma)) break;
    Take();
  }
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kRBracket, "',' or ']'").status());
  module_.adv_map.push_back(std::move(entry));
  return absl::OkStatus();
}

absl::Status Parser::ParseEntry() {
  const Token begin = Take();
  if (module_.kind != ast::ModuleKind::kExecutable) {
    return ErrorAt(begin.loc, "`begin ... end` is not allowed in a library or kernel module");
  }
  if (module_.entry.has_value()) {
    return ErrorAt(begin.loc, "duplicate `begin ... end` block");
  }
  ast::Block body;
  FLAMEFLEET_RETURN_IF_ERROR(ParseBlock(&body, /*allow_empty=*/false));
  FLAMEFLEET_RETURN_IF_ERROR(ExpectWord("end"));
  module_.entry = std::move(body);
  module_.entry_loc = begin.loc;
  return absl::OkStatus();
}

absl::StatusOr<std::string> Parser::ParseProcedureName() {
  const Token& t = Peek();
  if (t.kind == TokenKind::kIdent) return std::string(Take().text);
  if (t.kind == TokenKind::kString) {
    if (!t.quoted_ident) {
      return ErrorAt(t.loc,
                     "invalid procedure name: a quoted name may only contain printable "
                     "ASCII characters other than space and backslash");
    }
    return std::string(Take().text);
  }
  return Unexpected(t, "a procedure name");
}

absl::Status Parser::AddProcedureName(const std::string& name, SourceLocation loc) {
  if (!procedure_names_.insert(name).second) {
    return ErrorAt(loc, absl::StrCat("duplicate procedure '", name, "'"));
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseProcedure(const Token& keyword, bool exported, bool classic,
                                    std::string docs, int64_t annotated_locals) {
  if (exported && module_.kind == ast::ModuleKind::kExecutable) {
    return ErrorAt(keyword.loc, "exported procedures are not allowed in an executable module");
  }
  if (classic) FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kDot, "'.'").status());
  ast::Procedure proc;
  proc.loc = keyword.loc;
  proc.exported = exported;
  proc.docs = std::move(docs);
  const SourceLocation name_loc = Peek().loc;
  FLAMEFLEET_ASSIGN_OR_RETURN(proc.name, ParseProcedureName());
  if (annotated_locals >= 0) proc.num_locals = static_cast<uint32_t>(annotated_locals);
  if (classic && At(TokenKind::kDot)) {
    Take();
    FLAMEFLEET_ASSIGN_OR_RETURN(Token n, Expect(TokenKind::kInt, "the number of locals"));
    if (n.value > rules_.max_locals) return LimitError(n.loc, rules_.max_locals_error);
    if (annotated_locals >= 0) {
      return ErrorAt(n.loc, "the number of locals is also given by @locals");
    }
    proc.num_locals = static_cast<uint32_t>(n.value);
  }
  if (!classic) {
    // An optional v0.20 type signature: `(a: felt, b: u32) -> felt`.
    if (At(TokenKind::kLParen)) FLAMEFLEET_RETURN_IF_ERROR(SkipBalanced());
    if (At(TokenKind::kArrow)) {
      Take();
      FLAMEFLEET_RETURN_IF_ERROR(SkipType());
    }
  }
  FLAMEFLEET_RETURN_IF_ERROR(AddProcedureName(proc.name, name_loc));
  FLAMEFLEET_RETURN_IF_ERROR(ParseBlock(&proc.body, /*allow_empty=*/false));
  FLAMEFLEET_RETURN_IF_ERROR(ExpectWord("end"));
  module_.procedures.push_back(std::move(proc));
  return absl::OkStatus();
}

absl::Status Parser::ParseReExport(SourceLocation loc) {
  if (module_.kind == ast::ModuleKind::kExecutable) {
    return ErrorAt(loc, "exported procedures are not allowed in an executable module");
  }
  ast::ReExport re;
  re.loc = loc;
  const SourceLocation target_loc = Peek().loc;
  std::string last;
  int segments = 0;
  FLAMEFLEET_RETURN_IF_ERROR(ParseTarget(&re.target, &last, &segments));
  const bool absolute = re.target.size() >= 2 && re.target[0] == ':';
  if (segments == 1 && !absolute) {
    return ErrorAt(target_loc, "a re-export target must be qualified (module::procedure)");
  }
  SourceLocation name_loc = target_loc;
  if (At(TokenKind::kArrow)) {
    Take();
    name_loc = Peek().loc;
    FLAMEFLEET_ASSIGN_OR_RETURN(re.name, ParseProcedureName());
  } else if (segments == 0) {
    return ErrorAt(target_loc, "a re-exported MAST root needs a name (`->name`)");
  } else {
    re.name = std::move(last);
  }
  FLAMEFLEET_RETURN_IF_ERROR(AddProcedureName(re.name, name_loc));
  module_.reexports.push_back(std::move(re));
  return absl::OkStatus();
}

absl::Status Parser::ParseTarget(std::string* text, std::string* last, int* segments) {
  *segments = 0;
  if (At(TokenKind::kHexWord)) {
    *text = std::string(Take().text);
    return absl::OkStatus();
  }
  if (At(TokenKind::kColonColon)) {
    Take();
    *text = "::";
  }
  for (;;) {
    const Token& t = Peek();
    if (t.kind == TokenKind::kIdent) {
      absl::StrAppend(text, t.text);
      *last = std::string(t.text);
    } else if (t.kind == TokenKind::kString && t.quoted_ident) {
      absl::StrAppend(text, "\"", t.text, "\"");
      *last = std::string(t.text);
    } else if (t.kind == TokenKind::kString) {
      return ErrorAt(t.loc, "invalid quoted procedure name");
    } else {
      return Unexpected(t, *segments == 0 ? "a procedure path or MAST root" : "a procedure name");
    }
    Take();
    ++*segments;
    if (!At(TokenKind::kColonColon)) return absl::OkStatus();
    Take();
    absl::StrAppend(text, "::");
  }
}

// ================================================================================================
// Constant expressions: expr := product (('+' | '-') product)*
//                       product := term (('*' | '/' | '//') term)*
//                       term := '(' expr ')' | number | word | string |
//                       CONSTANT

absl::StatusOr<ast::ConstExpr> Parser::ParseConstExpr() {
  FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstExpr lhs, ParseConstProduct());
  while (At(TokenKind::kPlus) || At(TokenKind::kMinus)) {
    const Token op = Take();
    FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstExpr rhs, ParseConstProduct());
    FLAMEFLEET_ASSIGN_OR_RETURN(lhs, CombineConst(op, std::move(lhs), std::move(rhs)));
  }
  return lhs;
}

absl::StatusOr<ast::ConstExpr> Parser::ParseConstProduct() {
  FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstExpr lhs, ParseConstTerm());
  while (At(TokenKind::kStar) || At(TokenKind::kSlash) || At(TokenKind::kSlashSlash)) {
    const Token op = Take();
    FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstExpr rhs, ParseConstTerm());
    FLAMEFLEET_ASSIGN_OR_RETURN(lhs, CombineConst(op, std::move(lhs), std::move(rhs)));
  }
  return lhs;
}

absl::StatusOr<ast::ConstExpr> Parser::ParseConstTerm() {
  const Token& t = Peek();
  ast::ConstExpr e;
  e.loc = t.loc;
  ConstValue& v = e.value;
  // A reference the parser cannot evaluate yet (deferred constants only).
  auto reference = [&](std::string name) -> absl::StatusOr<ast::ConstExpr> {
    if (++pending_terms_ > kMaxPendingConstTerms) {
      return ErrorAt(e.loc, absl::StrCat("constant expression is too large (at most ",
                                         kMaxPendingConstTerms, " unevaluated terms)"));
    }
    e.op = ast::ConstExpr::Op::kRef;
    e.name = std::move(name);
    return std::move(e);
  };
  switch (t.kind) {
    case TokenKind::kLParen: {
      FLAMEFLEET_RETURN_IF_ERROR(EnterNesting(t.loc));
      DepthGuard guard(&depth_);
      Take();
      FLAMEFLEET_ASSIGN_OR_RETURN(e, ParseConstExpr());
      FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'").status());
      return e;
    }
    case TokenKind::kInt:
    case TokenKind::kHex: {
      FLAMEFLEET_ASSIGN_OR_RETURN(v.felt, ParseFeltLiteral());
      v.kind = ConstValue::Kind::kFelt;
      return e;
    }
    case TokenKind::kHexWord:
    case TokenKind::kLBracket: {
      FLAMEFLEET_ASSIGN_OR_RETURN(v.word, ParseWordLiteral());
      v.kind = ConstValue::Kind::kWord;
      return e;
    }
    case TokenKind::kString:
      v.kind = ConstValue::Kind::kString;
      v.text = std::string(Take().text);
      return e;
    case TokenKind::kConstIdent: {
      if (const ConstValue* known = KnownConstant(t.text)) {
        Take();
        v = *known;
        return e;
      }
      if (!rules_.deferred_constants) {
        return ErrorAt(t.loc, absl::StrCat("undefined constant '", t.text, "'"));
      }
      return reference(std::string(Take().text));
    }
    case TokenKind::kColonColon:
    case TokenKind::kIdent:
      if (rules_.hash_constants && (t.text == "word" || t.text == "event") &&
          At(TokenKind::kLParen, 1)) {
        const bool event = t.text == "event";
        FLAMEFLEET_ASSIGN_OR_RETURN(std::string text, ParseEventName());
        if (event) {
          v.kind = ConstValue::Kind::kEvent;
          v.felt = Blake3Word(text)[0];
        } else {
          v.kind = ConstValue::Kind::kWord;
          v.word = Blake3Word(text);
        }
        v.text = std::move(text);
        return e;
      }
      if (rules_.deferred_constants &&
          (t.kind == TokenKind::kColonColon || At(TokenKind::kColonColon, 1))) {
        // `alias::NAME`, `alias::sub::NAME` or `::a::b::NAME`: another module's constant.
        std::string path;
        if (At(TokenKind::kColonColon)) path = std::string(Take().text);
        for (;;) {
          FLAMEFLEET_ASSIGN_OR_RETURN(Token seg,
                                      Expect(TokenKind::kIdent, "a module path component"));
          absl::StrAppend(&path, seg.text);
          FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kColonColon, "'::'").status());
          absl::StrAppend(&path, "::");
          if (At(TokenKind::kConstIdent)) break;
        }
        absl::StrAppend(&path, Take().text);
        return reference(std::move(path));
      }
      return Unexpected(t, "a constant expression");
    default:
      return Unexpected(t, "a constant expression");
  }
}

absl::StatusOr<ast::ConstExpr> Parser::CombineConst(const Token& op, ast::ConstExpr lhs,
                                                    ast::ConstExpr rhs) {
  using Op = ast::ConstExpr::Op;
  Op o = Op::kAdd;
  switch (op.kind) {
    case TokenKind::kPlus:
      o = Op::kAdd;
      break;
    case TokenKind::kMinus:
      o = Op::kSub;
      break;
    case TokenKind::kStar:
      o = Op::kMul;
      break;
    case TokenKind::kSlash:
      o = Op::kDiv;
      break;
    case TokenKind::kSlashSlash:
      o = Op::kIntDiv;
      break;
    default:
      return ErrorAt(op.loc, "unsupported operator");
  }
  auto error = [this](SourceLocation loc, absl::string_view m) { return FormatError(loc, m); };
  const std::string op_text(op.text);
  if (lhs.op == Op::kValue && rhs.op == Op::kValue) {
    ast::ConstExpr out;
    out.loc = op.loc;
    FLAMEFLEET_ASSIGN_OR_RETURN(out.value, ApplyConstOp(o, op_text, rules_.const_arithmetic,
                                                        lhs.value, rhs.value, op.loc, error));
    return out;
  }
  // A known word or string operand is an error whatever the other operand turns out to be.
  for (const ast::ConstExpr* side : {&lhs, &rhs}) {
    if (side->op == Op::kValue && side->value.kind != ConstValue::Kind::kFelt) {
      return ErrorAt(op.loc, absl::StrCat("operator ", Quote(op.text),
                                          " needs field elements, not words or strings"));
    }
  }
  if (++pending_terms_ > kMaxPendingConstTerms) {
    return ErrorAt(op.loc, absl::StrCat("constant expression is too large (at most ",
                                        kMaxPendingConstTerms, " unevaluated terms)"));
  }
  ast::ConstExpr out;
  out.op = o;
  out.loc = op.loc;
  out.operands.reserve(2);
  out.operands.push_back(std::move(lhs));
  out.operands.push_back(std::move(rhs));
  return out;
}

// ================================================================================================
// Bodies

absl::Status Parser::ParseBlock(ast::Block* out, bool allow_empty) {
  FLAMEFLEET_RETURN_IF_ERROR(EnterNesting(Peek().loc));
  DepthGuard guard(&depth_);
  for (;;) {
    if (AtBlockEnd()) break;
    const Token& t = Peek();
    if (t.kind == TokenKind::kEof) return Unexpected(t, "an instruction or 'end'");
    if (out->size() >= kMaxBlockInstructions) {
      return ErrorAt(t.loc, absl::StrCat("a block may contain at most ", kMaxBlockInstructions,
                                         " instructions"));
    }
    FLAMEFLEET_RETURN_IF_ERROR(ParseOp(out));
  }
  if (out->empty() && !allow_empty) {
    return ErrorAt(Peek().loc, "a block must contain at least one instruction");
  }
  return absl::OkStatus();
}

bool Parser::AtBlockEnd() {
  const Token& t = Peek();
  if (t.kind != TokenKind::kIdent) return false;
  if (t.text == "end" || t.text == "else") return true;
  return rules_.do_while && t.text == "while" && !At(TokenKind::kDot, 1);
}

absl::Status Parser::ParseOp(ast::Block* out) {
  const Token& t = Peek();
  if (t.kind != TokenKind::kIdent) return Unexpected(t, "an instruction");
  if (t.text == "if") return ParseIf(out);
  if (t.text == "while") return ParseWhile(out);
  if (t.text == "repeat") return ParseRepeat(out);
  if (rules_.do_while && t.text == "do") return ParseDoWhile(out);
  return ParseInstruction(out);
}

absl::Status Parser::ParseDoWhile(ast::Block* out) {
  ast::DoWhile node;
  node.loc = Take().loc;  // do
  FLAMEFLEET_RETURN_IF_ERROR(ParseBlock(&node.body, /*allow_empty=*/false));
  if (!AtWord("while")) return Unexpected(Peek(), "'while' (a do-while body ends with `while`)");
  Take();
  FLAMEFLEET_RETURN_IF_ERROR(ParseBlock(&node.condition, /*allow_empty=*/false));
  FLAMEFLEET_RETURN_IF_ERROR(ExpectWord("end"));
  out->push_back(ast::Node{std::move(node)});
  return absl::OkStatus();
}

absl::Status Parser::ParseIf(ast::Block* out) {
  ast::IfElse node;
  node.loc = Take().loc;
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kDot, "'.'").status());
  bool condition;
  if (AtWord("true")) {
    condition = true;
  } else if (AtWord("false")) {
    condition = false;
  } else {
    return Unexpected(Peek(), "'true' or 'false'");
  }
  Take();
  FLAMEFLEET_RETURN_IF_ERROR(ParseBlock(&node.on_true, /*allow_empty=*/true));
  if (AtWord("else")) {
    Take();
    FLAMEFLEET_RETURN_IF_ERROR(ParseBlock(&node.on_false, !node.on_true.empty()));
  } else if (node.on_true.empty()) {
    return ErrorAt(Peek().loc, "a block must contain at least one instruction");
  }
  FLAMEFLEET_RETURN_IF_ERROR(ExpectWord("end"));
  if (!condition) std::swap(node.on_true, node.on_false);
  out->push_back(ast::Node{std::move(node)});
  return absl::OkStatus();
}

absl::Status Parser::ParseWhile(ast::Block* out) {
  ast::While node;
  node.loc = Take().loc;
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kDot, "'.'").status());
  FLAMEFLEET_RETURN_IF_ERROR(ExpectWord("true"));
  FLAMEFLEET_RETURN_IF_ERROR(ParseBlock(&node.body, /*allow_empty=*/false));
  FLAMEFLEET_RETURN_IF_ERROR(ExpectWord("end"));
  out->push_back(ast::Node{std::move(node)});
  return absl::OkStatus();
}

absl::Status Parser::ParseRepeat(ast::Block* out) {
  ast::Repeat node;
  node.loc = Take().loc;
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kDot, "'.'").status());
  uint64_t count = 0;
  if (rules_.repeat_constant && At(TokenKind::kConstIdent)) {
    const Token name = Take();
    const ConstValue* known = KnownConstant(name.text);
    if (known == nullptr) {
      // imported or defined later: the linker resolves it
      node.count_constant = std::string(name.text);
    } else if (known->kind != ConstValue::Kind::kFelt) {
      return ErrorAt(node.loc,
                     absl::StrCat("repeat count constant '", name.text, "' is not an integer"));
    } else {
      count = known->felt;
    }
  } else {
    FLAMEFLEET_ASSIGN_OR_RETURN(Token n, Expect(TokenKind::kInt, "a repeat count"));
    count = n.value;
  }
  if (node.count_constant.empty() && (count == 0 || count > rules_.max_repeat_count)) {
    return LimitError(node.loc, absl::StrCat("repeat count ", count, " is out of range (1..",
                                             rules_.max_repeat_count, ")"));
  }
  node.count = static_cast<uint32_t>(count);
  FLAMEFLEET_RETURN_IF_ERROR(ParseBlock(&node.body, /*allow_empty=*/false));
  FLAMEFLEET_RETURN_IF_ERROR(ExpectWord("end"));
  out->push_back(ast::Node{std::move(node)});
  return absl::OkStatus();
}

absl::Status Parser::ParseInstruction(ast::Block* out) {
  const Token mnemonic = Take();
  anchor_ = mnemonic.loc;
  absl::Status status = ParseInstructionBody(mnemonic, out);
  anchor_.reset();
  return status;
}

absl::Status Parser::ParseInstructionBody(const Token& mnemonic, ast::Block* out) {
  for (const RemovedInstruction& removed : rules_.removed_instructions) {
    if (mnemonic.text == removed.name) {
      return ErrorAt(mnemonic.loc,
                     absl::StrCat("deprecated instruction: `", removed.name,
                                  "` has been removed (use `", removed.replacement, "` instead)"));
    }
  }
  const InstructionRow* spec = instructions_.Find(mnemonic.text);
  if (spec == nullptr) {
    return ErrorAt(mnemonic.loc, absl::StrCat("unknown instruction ", Quote(mnemonic.text)));
  }
  ast::Instruction ins;
  ins.name = std::string(mnemonic.text);
  ins.loc = mnemonic.loc;
  auto expect_dot = [&]() { return Expect(TokenKind::kDot, "'.'").status(); };
  switch (spec->form) {
    case Form::kPlain:
      break;
    case Form::kErr:
      if (At(TokenKind::kDot) && AtWord("err", 1)) {
        Take();
        Take();
        FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='").status());
        FLAMEFLEET_ASSIGN_OR_RETURN(ins.error, ParseErrorImmediate());
      }
      break;
    case Form::kFelt:
    case Form::kFeltNonZero:
    case Form::kU32:
    case Form::kU32NonZero:
      if (At(TokenKind::kDot)) {
        Take();
        const bool felt = spec->form == Form::kFelt || spec->form == Form::kFeltNonZero;
        FLAMEFLEET_ASSIGN_OR_RETURN(Immediate imm,
                                    felt ? ParseFeltImmediate() : ParseU32Immediate());
        if ((spec->form == Form::kFeltNonZero || spec->form == Form::kU32NonZero) &&
            imm.kind == Immediate::Kind::kLiteral && imm.value == 0) {
          return ValueError(imm.loc, "division by zero");
        }
        ins.args.push_back(std::move(imm));
      }
      break;
    case Form::kShift:
    case Form::kStackIndex:
      if (At(TokenKind::kDot)) {
        Take();
        FLAMEFLEET_ASSIGN_OR_RETURN(
            Immediate imm, ParseSmallImmediate(spec->min, spec->max, spec->form == Form::kShift));
        ins.args.push_back(std::move(imm));
      }
      break;
    case Form::kU32Required: {
      FLAMEFLEET_RETURN_IF_ERROR(expect_dot());
      FLAMEFLEET_ASSIGN_OR_RETURN(Immediate imm, ParseU32Immediate());
      ins.args.push_back(std::move(imm));
      break;
    }
    case Form::kLocal:
    case Form::kStackIndexRequired:
    case Form::kAdvPush: {
      FLAMEFLEET_RETURN_IF_ERROR(expect_dot());
      FLAMEFLEET_ASSIGN_OR_RETURN(
          Immediate imm, ParseSmallImmediate(spec->min, spec->max, spec->form == Form::kLocal));
      ins.args.push_back(std::move(imm));
      break;
    }
    case Form::kPush:
    case Form::kPushSliced: {  // slices are parsed where the syntax has them (word_slices)
      constexpr size_t kMaxPushValues = 16;
      FLAMEFLEET_RETURN_IF_ERROR(expect_dot());
      for (;;) {
        if (ins.args.size() == kMaxPushValues) {
          return ValueError(Peek().loc, "too many values in push (at most 16)");
        }
        FLAMEFLEET_ASSIGN_OR_RETURN(Immediate imm, ParsePushValue());
        ins.args.push_back(std::move(imm));
        if (!At(TokenKind::kDot)) break;
        Take();
      }
      if (!rules_.mixed_word_push && ins.args.size() > 1) {
        for (const Immediate& imm : ins.args) {
          if (imm.kind == Immediate::Kind::kWord || imm.slice.has_value()) {
            return ValueError(imm.loc, "a word cannot be pushed together with other values");
          }
        }
      }
      break;
    }
    case Form::kEvent:
      if (At(TokenKind::kDot)) {
        Take();
        FLAMEFLEET_ASSIGN_OR_RETURN(Immediate imm, ParseEventImmediate());
        ins.args.push_back(std::move(imm));
      }
      break;
    case Form::kInvoke: {
      FLAMEFLEET_RETURN_IF_ERROR(expect_dot());
      std::string last;
      int segments = 0;
      const bool root = At(TokenKind::kHexWord);
      const Token root_token = Peek();
      FLAMEFLEET_RETURN_IF_ERROR(ParseTarget(&ins.target, &last, &segments));
      if (root) {
        ast::Immediate imm;
        imm.kind = ast::Immediate::Kind::kWord;
        imm.word = root_token.word;
        imm.loc = root_token.loc;
        ins.args.push_back(std::move(imm));
      }
      break;
    }
    case Form::kExp: {
      if (!At(TokenKind::kDot)) break;
      const Token& next = Peek(1);
      if (next.kind == TokenKind::kIdent && next.text.size() >= 2 && next.text[0] == 'u' &&
          std::all_of(next.text.begin() + 1, next.text.end(),
                      [](char c) { return c >= '0' && c <= '9'; })) {
        Take();
        const Token bits = Take();
        const absl::string_view digits = bits.text.substr(1);
        uint64_t n = 0;
        for (char c : digits.substr(0, 4)) n = n * 10 + static_cast<uint64_t>(c - '0');
        if (digits.size() > 4 || n > 63) {
          return ValueError(bits.loc, absl::StrCat("bit size ", Quote(digits),
                                                   " is out of range for exp.u (0..63)"));
        }
        ins.name = "exp.u";
        Immediate imm;
        imm.value = n;
        imm.loc = bits.loc;
        ins.args.push_back(std::move(imm));
        break;
      }
      Take();
      FLAMEFLEET_ASSIGN_OR_RETURN(Immediate imm, ParseFeltImmediate());
      ins.args.push_back(std::move(imm));
      break;
    }
    case Form::kAdv: {
      FLAMEFLEET_RETURN_IF_ERROR(expect_dot());
      FLAMEFLEET_ASSIGN_OR_RETURN(Token event, Expect(TokenKind::kIdent, "a system event name"));
      if (instructions_.events().FindByName(event.text) == nullptr) {
        return ValueError(
            event.loc, absl::StrCat("unknown system event 'adv.", event.text.substr(0, 40), "'"));
      }
      ins.name = absl::StrCat("adv.", event.text);
      break;
    }
    case Form::kAdvPadded: {
      FLAMEFLEET_RETURN_IF_ERROR(expect_dot());
      FLAMEFLEET_ASSIGN_OR_RETURN(Token event, Expect(TokenKind::kIdent, "a system event name"));
      if (instructions_.events().FindByName(event.text) == nullptr) {
        return ValueError(
            event.loc, absl::StrCat("unknown system event 'adv.", event.text.substr(0, 40), "'"));
      }
      ins.name = absl::StrCat("adv.", event.text);
      if (At(TokenKind::kDot) && At(TokenKind::kInt, 1)) {  // adv.push_mapvaln.N
        Take();
        Immediate imm;
        imm.loc = Peek().loc;
        imm.value = Take().value;
        ins.args.push_back(std::move(imm));
      }
      break;
    }
    case Form::kDebug: {
      FLAMEFLEET_RETURN_IF_ERROR(expect_dot());
      FLAMEFLEET_ASSIGN_OR_RETURN(Token what, Expect(TokenKind::kIdent, "a debug option"));
      size_t max_args;
      uint32_t max_value;
      if (what.text == "stack") {
        max_args = 1, max_value = 0xFF;
      } else if (what.text == "mem") {
        max_args = 2, max_value = 0xFFFFFFFF;
      } else if (what.text == "local") {
        max_args = 2, max_value = 0xFFFF;
      } else if (what.text == "adv_stack") {
        max_args = 1, max_value = 0xFFFF;
      } else {
        return ValueError(what.loc, absl::StrCat("unknown debug option ", Quote(what.text),
                                                 " (expected stack, mem, local or adv_stack)"));
      }
      ins.name = absl::StrCat("debug.", what.text);
      while (ins.args.size() < max_args && At(TokenKind::kDot)) {
        Take();
        Immediate imm;
        if (max_value == 0xFFFFFFFF) {
          FLAMEFLEET_ASSIGN_OR_RETURN(imm, ParseU32Immediate());
        } else {
          FLAMEFLEET_ASSIGN_OR_RETURN(imm, ParseSmallImmediate(0, max_value, true));
        }
        ins.args.push_back(std::move(imm));
      }
      break;
    }
  }
  if (At(TokenKind::kDot)) {
    return ErrorAt(Peek().loc, absl::StrCat("unexpected immediate after ", Quote(ins.name)));
  }
  out->push_back(ast::Node{std::move(ins)});
  return absl::OkStatus();
}

// ================================================================================================
// Immediates

absl::StatusOr<uint64_t> Parser::ParseFeltLiteral() {
  const Token& t = Peek();
  if (t.kind == TokenKind::kInt || t.kind == TokenKind::kHex) {
    if (!Felt::IsCanonical(t.value)) {
      return ValueError(t.loc, absl::StrCat("value ", t.text, " is not a field element (>= p)"));
    }
    return Take().value;
  }
  if (t.kind == TokenKind::kHexWord || t.kind == TokenKind::kLBracket) {
    return ValueError(t.loc, "expected a field element, found a word");
  }
  return Unexpected(t, "a field element");
}

absl::StatusOr<ast::WordValue> Parser::ParseWordLiteral() {
  if (At(TokenKind::kHexWord)) return Take().word;
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kLBracket, "a word").status());
  ast::WordValue w{};
  for (size_t i = 0; i < 4; ++i) {
    if (i > 0) FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kComma, "','").status());
    FLAMEFLEET_ASSIGN_OR_RETURN(w[i], ParseFeltLiteral());
  }
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kRBracket, "']' (a word has 4 elements)").status());
  return w;
}

absl::StatusOr<Immediate> Parser::ParseFeltImmediate() {
  Immediate imm;
  imm.loc = Peek().loc;
  if (At(TokenKind::kConstIdent)) {
    imm.kind = Immediate::Kind::kConstant;
    imm.text = std::string(Take().text);
    return imm;
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(imm.value, ParseFeltLiteral());
  return imm;
}

absl::StatusOr<Immediate> Parser::ParseU32Immediate() {
  Immediate imm;
  const Token& t = Peek();
  imm.loc = t.loc;
  switch (t.kind) {
    case TokenKind::kConstIdent:
      imm.kind = Immediate::Kind::kConstant;
      imm.text = std::string(Take().text);
      return imm;
    case TokenKind::kInt:
    case TokenKind::kHex:
    case TokenKind::kBin:
      if (t.value > 0xFFFFFFFFull) {
        return ValueError(t.loc, absl::StrCat("value ", t.text, " does not fit in u32"));
      }
      imm.value = Take().value;
      return imm;
    default:
      return Unexpected(t, "a u32 value or constant");
  }
}

absl::StatusOr<Immediate> Parser::ParseSmallImmediate(uint32_t min, uint32_t max,
                                                      bool allow_constant) {
  Immediate imm;
  const Token& t = Peek();
  imm.loc = t.loc;
  if (allow_constant && t.kind == TokenKind::kConstIdent) {
    imm.kind = Immediate::Kind::kConstant;
    imm.text = std::string(Take().text);
    return imm;
  }
  if (t.kind != TokenKind::kInt) {
    return Unexpected(t, allow_constant ? "an integer or constant" : "an integer");
  }
  if (t.value < min || t.value > max) {
    return ValueError(t.loc,
                      absl::StrCat("value ", t.text, " is out of range (", min, "..", max, ")"));
  }
  imm.value = Take().value;
  return imm;
}

absl::StatusOr<Immediate> Parser::ParsePushValue() {
  Immediate imm;
  const Token& t = Peek();
  imm.loc = t.loc;
  if (t.kind == TokenKind::kConstIdent) {
    imm.kind = Immediate::Kind::kConstant;
    imm.text = std::string(Take().text);
    if (rules_.word_slices && At(TokenKind::kLBracket)) {
      FLAMEFLEET_RETURN_IF_ERROR(ParseSlice(&imm));
    }
    return imm;
  }
  if (t.kind == TokenKind::kHexWord || t.kind == TokenKind::kLBracket) {
    imm.kind = Immediate::Kind::kWord;
    FLAMEFLEET_ASSIGN_OR_RETURN(imm.word, ParseWordLiteral());
    if (rules_.word_slices && At(TokenKind::kLBracket)) {
      FLAMEFLEET_RETURN_IF_ERROR(ParseSlice(&imm));
    }
    return imm;
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(imm.value, ParseFeltLiteral());
  return imm;
}

// Parses `[i]` or `[i..j]` after a word immediate: the elements i..j-1 (0 <= i < j <= 4).
absl::Status Parser::ParseSlice(Immediate* imm) {
  const SourceLocation loc = Take().loc;  // [
  FLAMEFLEET_ASSIGN_OR_RETURN(Token begin, Expect(TokenKind::kInt, "a word index"));
  uint64_t end = begin.value + 1;
  if (At(TokenKind::kDot)) {
    Take();
    FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kDot, "'..'").status());
    FLAMEFLEET_ASSIGN_OR_RETURN(Token e, Expect(TokenKind::kInt, "the end of the range"));
    end = e.value;
  }
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kRBracket, "']'").status());
  if (begin.value >= end) return ValueError(loc, "empty word slice");
  if (end > 4) return ValueError(loc, "word slice out of range (a word has 4 elements)");
  if (imm->kind == Immediate::Kind::kConstant) {
    if (const ConstValue* known = KnownConstant(imm->text);
        known != nullptr && known->kind != ConstValue::Kind::kWord) {
      return ValueError(loc, absl::StrCat("constant '", imm->text, "' is not a word"));
    }
  }
  imm->slice = std::make_pair(static_cast<uint8_t>(begin.value), static_cast<uint8_t>(end));
  return absl::OkStatus();
}

// Parses `("name")` after `event` or `word`; returns the name.
absl::StatusOr<std::string> Parser::ParseEventName() {
  Take();  // event / word
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'('").status());
  FLAMEFLEET_ASSIGN_OR_RETURN(Token name, Expect(TokenKind::kString, "a quoted string"));
  FLAMEFLEET_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'").status());
  return std::string(name.text);
}

// The immediate of `emit`: an `event("name")` or a constant defined by `event(...)`.
absl::StatusOr<Immediate> Parser::ParseEventImmediate() {
  Immediate imm;
  const Token& t = Peek();
  imm.loc = t.loc;
  if (t.kind == TokenKind::kConstIdent) {
    imm.kind = Immediate::Kind::kConstant;
    imm.text = std::string(Take().text);
    if (const ConstValue* known = KnownConstant(imm.text);
        known != nullptr && known->kind != ConstValue::Kind::kEvent) {
      return ValueError(imm.loc, "emit.CONST should require const defined via event");
    }
    return imm;
  }
  if (rules_.event_immediates && t.kind == TokenKind::kIdent && t.text == "event") {
    imm.kind = Immediate::Kind::kEvent;
    FLAMEFLEET_ASSIGN_OR_RETURN(imm.text, ParseEventName());
    imm.value = Blake3Word(imm.text)[0];
    return imm;
  }
  if (t.kind == TokenKind::kInt || t.kind == TokenKind::kHex) {
    return ValueError(t.loc,
                      "emit takes an event, not a number: write `emit.event(\"name\")` or use a "
                      "constant defined with `event(\"name\")`");
  }
  return Unexpected(t, "an event (`event(\"name\")` or an event constant)");
}

absl::StatusOr<Immediate> Parser::ParseErrorImmediate() {
  Immediate imm;
  const Token& t = Peek();
  imm.loc = t.loc;
  switch (t.kind) {
    case TokenKind::kString:
      imm.kind = Immediate::Kind::kString;
      imm.text = std::string(Take().text);
      return imm;
    case TokenKind::kConstIdent:
      imm.kind = Immediate::Kind::kConstant;
      imm.text = std::string(Take().text);
      return imm;
    case TokenKind::kInt:
    case TokenKind::kHex: {
      FLAMEFLEET_ASSIGN_OR_RETURN(imm.value, ParseFeltLiteral());
      return imm;
    }
    default:
      return Unexpected(t, "an error message string, constant or number");
  }
}

}  // namespace

absl::StatusOr<ast::Module> ParseModule(const SourceManager& sources, uint32_t file_id,
                                        ast::ModuleKind kind, const InstructionTable& instructions,
                                        const SyntaxRules& rules) {
  Parser parser(sources, file_id, kind, instructions, rules);
  absl::StatusOr<ast::Module> module = parser.Run();
  if (module.ok() || !rules.hint_dialect.has_value() || !parser.error().hintable) return module;
  const DialectSpec& other = GetDialectSpec(*rules.hint_dialect);
  if (other.syntax == &rules || other.syntax->hint_dialect.has_value()) return module;
  Parser retry(sources, file_id, kind, *other.instructions, *other.syntax);
  if (!retry.Run().ok()) return module;
  const ParseError& error = parser.error();
  return absl::InvalidArgumentError(
      sources.Format(error.loc, absl::StrCat(error.reason, " (", rules.hint, ")")));
}

absl::StatusOr<ast::Module> ParseModule(const SourceManager& sources, uint32_t file_id,
                                        ast::ModuleKind kind, const DialectSpec& dialect) {
  return ParseModule(sources, file_id, kind, *dialect.instructions, *dialect.syntax);
}

absl::StatusOr<ast::Module> ParseModule(const SourceManager& sources, uint32_t file_id,
                                        ast::ModuleKind kind,
                                        const InstructionTable& instructions) {
  return ParseModule(sources, file_id, kind, instructions, *GetDialectSpec(Dialect::kV0_16).syntax);
}

}  // namespace flamefleet::vm
