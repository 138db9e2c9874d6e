// The MASM lexer: turns source text into a stream of tokens with 1-based line/column locations. It
// is internal to the parser (use vm/parser/parser.h), but exposed for tests.
//
//   Lexer lexer(text, file_id);
//   for (Token t = lexer.Next(); t.kind != TokenKind::kEof; t = lexer.Next()) {
//     if (t.kind == TokenKind::kError) { /* t.text: message, t.loc: where */ }
//   }
//
// Token rules (the classic MASM lexer, plus a few v0.20 punctuation marks):
//  * `#` starts a comment to end of line; `#!` starts a doc comment. Consecutive `#!` lines form
//    one doc comment. A doc comment starting on line 1 is the module documentation
//    (`module_docs()`); any other one is attached to the next token (`Token::docs`).
//  * identifiers `[a-z_$][A-Za-z0-9_]*` (keywords and mnemonics are identifiers too); constant
//    names `[A-Z][A-Z0-9_]*`.
//  * decimal integers (u64); `0x` hex with an even number of digits: up to 16 digits is a number
//    (the parser checks it is < p), exactly 64 digits is a word whose four 16-digit chunks are each
//    read as little-endian bytes (each must be < p); `0b` binary (up to 32 digits).
//  * quoted strings `"..."` on one line (a backslash escapes the next character; the token keeps
//    the raw text between the quotes).
//  * punctuation `. , = ( ) [ ] < > ; : :: -> - + / // * @ !`, and `{ }` when
//    LexerOptions::braces is set (v0.25).
//  * with LexerOptions::odd_hex_digits (v0.25), a `0x` number with an odd number of digits is
//    zero-padded on the left instead of being an error.
// The input must be valid UTF-8 without NUL bytes; non-ASCII characters are allowed only in
// comments and strings.
#ifndef FLAMEFLEET_VM_PARSER_LEXER_H_
#define FLAMEFLEET_VM_PARSER_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "vm/parser/ast.h"

namespace flamefleet::vm {

enum class TokenKind : uint8_t {
  kEof,
  kError,       // a lexical error: `text` holds the message
  kIdent,       // lowercase-initial identifier or keyword
  kConstIdent,  // upper-case constant name
  kInt,         // decimal integer; `value`
  kHex,         // 0x hex with <= 16 digits; `value` (not yet checked < p)
  kHexWord,     // 0x hex with 64 digits; `word`
  kBin,         // 0b binary; `value` (u32)
  kString,      // "..."; `text` is the content without quotes
  kDot,
  kComma,
  kEqual,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLess,
  kGreater,
  kSemicolon,
  kColon,
  kColonColon,
  kArrow,  // ->
  kMinus,
  kPlus,
  kSlash,
  kSlashSlash,
  kStar,
  kAt,
  kBang,
  kLBrace,  // only with LexerOptions::braces
  kRBrace,
};

// Dialect-dependent lexical rules (from the dialect's SyntaxRules).
struct LexerOptions {
  bool braces = false;          // `{` and `}` are tokens
  bool odd_hex_digits = false;  // `0x123` is 0x0123
  // Quoted strings (SyntaxRules): a backslash escapes any character (else only `"` and a
  // newline), and a carriage return ends the string.
  bool escape_any_character = false;
  bool string_ends_at_carriage_return = false;
};

// Returns a short human-readable description of a token kind ("identifier", "'.'").
const char* TokenKindName(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::kEof;
  // The lexeme as written (for kString: without the quotes; for kError: the message).
  absl::string_view text;
  uint64_t value = 0;
  ast::WordValue word{};
  ast::SourceLocation loc;
  // The `#!` doc comment immediately preceding this token (lines joined with '\n'), if any.
  std::string docs;
  // For kString: true if the content is a valid quoted identifier (only printable ASCII and no
  // spaces or backslashes).
  bool quoted_ident = false;
};

// Produces tokens on demand; never allocates more than the current token. Not thread-safe; the text
// must outlive the lexer.
class Lexer {
 public:
  // `text` is the whole file; `file_id` goes into every token location.
  Lexer(absl::string_view text, uint32_t file_id, LexerOptions options = {});

  // Returns the next token. After the end of input, returns kEof forever. After a kError token, the
  // lexer is positioned at the end of input (so kEof follows).
  Token Next();

  // Returns the module documentation (a doc comment starting on line 1) seen so far.
  const std::string& module_docs() const { return module_docs_; }

 private:
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void Advance(size_t n = 1);
  ast::SourceLocation Here() const { return {file_id_, line_, column_}; }
  Token Error(ast::SourceLocation loc, const char* message);
  // Skips whitespace and comments; collects doc comments into `pending_docs_`. Returns false (and
  // sets `error`) on a lexical error.
  bool SkipTrivia(Token* error);
  // Validates the whole input as UTF-8 without NULs; on failure returns an error token.
  bool ValidateEncoding(Token* error);
  Token LexNumber(Token t);
  Token LexString(Token t);
  Token LexWord(Token t);

  absl::string_view text_;
  uint32_t file_id_;
  LexerOptions options_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t column_ = 1;
  bool validated_ = false;
  std::string pending_docs_;
  std::string module_docs_;
  std::string error_message_;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_PARSER_LEXER_H_
