#include "vm/parser/lexer.h"

#include <cstdint>
#include <string>

#include "vm/felt.h"

namespace flamefleet::vm {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsIdentChar(char c) { return IsLower(c) || IsUpper(c) || IsDigit(c) || c == '_'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Returns the length of the valid UTF-8 sequence starting at s[i], or 0 if it is invalid.
size_t Utf8SequenceLength(absl::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return 1;
  size_t len;
  uint32_t min;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  uint32_t cp = b0 & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

absl::string_view Trim(absl::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

const char* TokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::kEof:
      return "end of file";
    case TokenKind::kError:
      return "invalid token";
    case TokenKind::kIdent:
      return "identifier";
    case TokenKind::kConstIdent:
      return "constant name";
    case TokenKind::kInt:
      return "integer";
    case TokenKind::kHex:
      return "hex literal";
    case TokenKind::kHexWord:
      return "hex word";
    case TokenKind::kBin:
      return "binary literal";
    case TokenKind::kString:
      return "string";
    case TokenKind::kDot:
      return "'.'";
    case TokenKind::kComma:
      return "','";
    case TokenKind::kEqual:
      return "'='";
    case TokenKind::kLParen:
      return "'('";
    case TokenKind::kRParen:
      return "')'";
    case TokenKind::kLBracket:
      return "'['";
    case TokenKind::kRBracket:
      return "']'";
    case TokenKind::kLess:
      return "'<'";
    case TokenKind::kGreater:
      return "'>'";
    case TokenKind::kSemicolon:
      return "';'";
    case TokenKind::kColon:
      return "':'";
    case TokenKind::kColonColon:
      return "'::'";
    case TokenKind::kArrow:
      return "'->'";
    case TokenKind::kMinus:
      return "'-'";
    case TokenKind::kPlus:
      return "'+'";
    case TokenKind::kSlash:
      return "'/'";
    case TokenKind::kSlashSlash:
      return "'//'";
    case TokenKind::kStar:
      return "'*'";
    case TokenKind::kAt:
      return "'@'";
    case TokenKind::kBang:
      return "'!'";
    case TokenKind::kLBrace:
      return "'{'";
    case TokenKind::kRBrace:
      return "'}'";
  }
  return "token";
}

Lexer::Lexer(absl::string_view text, uint32_t file_id, LexerOptions options)
    : text_(text), file_id_(file_id), options_(options) {}

void Lexer::Advance(size_t n) {
  for (size_t i = 0; i < n && pos_ < text_.size(); ++i) {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
}

Token Lexer::Error(ast::SourceLocation loc, const char* message) {
  error_message_ = message;
  Token t;
  t.kind = TokenKind::kError;
  t.text = error_message_;
  t.loc = loc;
  pos_ = text_.size();  // everything after an error is end of input
  return t;
}

bool Lexer::ValidateEncoding(Token* error) {
  validated_ = true;
  // Walk the text once, tracking line/column so the error points at the bad byte.
  uint32_t line = 1, column = 1;
  for (size_t i = 0; i < text_.size();) {
    const char c = text_[i];
    if (c == '\0') {
      *error = Error({file_id_, line, column}, "invalid NUL byte in source");
      return false;
    }
    const size_t len = Utf8SequenceLength(text_, i);
    if (len == 0) {
      *error = Error({file_id_, line, column}, "invalid UTF-8 in source");
      return false;
    }
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      column += static_cast<uint32_t>(len);
    }
    i += len;
  }
  return true;
}

bool Lexer::SkipTrivia(Token* error) {
  while (pos_ < text_.size()) {
    const char c = Peek();
    if (IsSpace(c)) {
      Advance();
      continue;
    }
    if (c != '#') return true;
    if (Peek(1) != '!') {
      while (pos_ < text_.size() && Peek() != '\n') Advance();
      continue;
    }
    // A doc comment: this line and every directly following line that starts with `#!`.
    const bool is_module_doc = line_ == 1;
    std::string docs;
    for (;;) {
      Advance(2);
      const size_t begin = pos_;
      while (pos_ < text_.size() && Peek() != '\n') Advance();
      if (!docs.empty()) docs.push_back('\n');
      const absl::string_view line = Trim(text_.substr(begin, pos_ - begin));
      docs.append(line.data(), line.size());
      // Look for a continuation line.
      size_t look = pos_;
      if (look < text_.size()) ++look;  // the '\n'
      while (look < text_.size() && (text_[look] == ' ' || text_[look] == '\t')) ++look;
      if (pos_ < text_.size() && look + 1 < text_.size() && text_[look] == '#' &&
          text_[look + 1] == '!') {
        Advance(look - pos_);
        continue;
      }
      break;
    }
    if (is_module_doc && module_docs_.empty()) {
      module_docs_ = std::move(docs);
    } else {
      pending_docs_ = std::move(docs);  // the nearest doc comment wins
    }
  }
  (void)error;
  return true;
}

Token Lexer::Next() {
  Token t;
  if (!validated_ && !ValidateEncoding(&t)) return t;
  if (!SkipTrivia(&t)) return t;
  t.loc = Here();
  if (pos_ >= text_.size()) {
    t.kind = TokenKind::kEof;
    return t;
  }
  t.docs = std::move(pending_docs_);
  pending_docs_.clear();
  const char c = Peek();
  const size_t start = pos_;
  auto punct = [&](TokenKind kind, size_t len) {
    Advance(len);
    t.kind = kind;
    t.text = text_.substr(start, len);
    return t;
  };
  switch (c) {
    case '.':
      return punct(TokenKind::kDot, 1);
    case ',':
      return punct(TokenKind::kComma, 1);
    case '=':
      return punct(TokenKind::kEqual, 1);
    case '(':
      return punct(TokenKind::kLParen, 1);
    case ')':
      return punct(TokenKind::kRParen, 1);
    case '[':
      return punct(TokenKind::kLBracket, 1);
    case ']':
      return punct(TokenKind::kRBracket, 1);
    case '<':
      return punct(TokenKind::kLess, 1);
    case '>':
      return punct(TokenKind::kGreater, 1);
    case ';':
      return punct(TokenKind::kSemicolon, 1);
    case '+':
      return punct(TokenKind::kPlus, 1);
    case '*':
      return punct(TokenKind::kStar, 1);
    case '@':
      return punct(TokenKind::kAt, 1);
    case '!':
      return punct(TokenKind::kBang, 1);
    case ':':
      return Peek(1) == ':' ? punct(TokenKind::kColonColon, 2) : punct(TokenKind::kColon, 1);
    case '-':
      return Peek(1) == '>' ? punct(TokenKind::kArrow, 2) : punct(TokenKind::kMinus, 1);
    case '/':
      return Peek(1) == '/' ? punct(TokenKind::kSlashSlash, 2) : punct(TokenKind::kSlash, 1);
    case '"':
      return LexString(std::move(t));
    case '{':
      if (options_.braces) return punct(TokenKind::kLBrace, 1);
      break;
    case '}':
      if (options_.braces) return punct(TokenKind::kRBrace, 1);
      break;
    default:
      break;
  }
  if (IsDigit(c)) return LexNumber(std::move(t));
  if (IsLower(c) || IsUpper(c) || c == '_' || c == '$') return LexWord(std::move(t));
  return Error(t.loc, "unexpected character");
}

Token Lexer::LexWord(Token t) {
  const size_t start = pos_;
  const char first = Peek();
  Advance();
  bool has_lower = IsLower(first);
  while (pos_ < text_.size() && IsIdentChar(Peek())) {
    has_lower |= IsLower(Peek());
    Advance();
  }
  t.text = text_.substr(start, pos_ - start);
  if (first == '$') {
    if (t.text != "$kernel" && t.text != "$exec" && t.text != "$anon") {
      return Error(t.loc, "invalid special identifier (expected $kernel, $exec or $anon)");
    }
    t.kind = TokenKind::kIdent;
  } else if (first == '_' && t.text.size() == 1) {
    return Error(t.loc, "unexpected character");
  } else if (IsUpper(first) && !has_lower) {
    t.kind = TokenKind::kConstIdent;
  } else {
    t.kind = TokenKind::kIdent;
  }
  return t;
}

Token Lexer::LexString(Token t) {
  Advance();  // opening quote
  const size_t begin = pos_;
  bool ident = true;
  for (;;) {
    if (pos_ >= text_.size() || Peek() == '\n' ||
        (Peek() == '\r' && options_.string_ends_at_carriage_return)) {
      return Error(t.loc, "unclosed quoted string");
    }
    const char c = Peek();
    if (c == '"') break;
    if (c == '\\') {
      ident = false;
      Advance();
      // v0.25.7 skips any escaped character, a newline too (the string continues on the next
      // line); v0.16.4 skips only `"` and a newline and reads any other character as usual.
      if (pos_ < text_.size() &&
          (options_.escape_any_character || Peek() == '"' || Peek() == '\n')) {
        Advance();
      }
      continue;
    }
    const auto uc = static_cast<unsigned char>(c);
    if (uc <= 0x20 || uc >= 0x7F) ident = false;
    Advance();
  }
  t.kind = TokenKind::kString;
  t.text = text_.substr(begin, pos_ - begin);
  t.quoted_ident = ident && !t.text.empty();
  Advance();  // closing quote
  return t;
}

Token Lexer::LexNumber(Token t) {
  const size_t start = pos_;
  if (Peek() == '0' && (Peek(1) == 'x' || Peek(1) == 'X')) {
    Advance(2);
    const size_t digits_begin = pos_;
    while (pos_ < text_.size() && IsHexDigit(Peek())) Advance();
    const absl::string_view digits = text_.substr(digits_begin, pos_ - digits_begin);
    t.text = text_.substr(start, pos_ - start);
    if (digits.empty()) return Error(t.loc, "invalid hex literal: no digits after 0x");
    if (digits.size() % 2 != 0 && !options_.odd_hex_digits) {
      return Error(t.loc, "invalid hex literal: odd number of digits");
    }
    if (digits.size() <= 16) {
      uint64_t v = 0;
      for (char d : digits) v = (v << 4) | static_cast<uint64_t>(HexValue(d));
      // Values >= p are reported by the parser, which knows whether a u32 or a felt is expected and
      // where the instruction starts.
      t.kind = TokenKind::kHex;
      t.value = v;
      return t;
    }
    if (digits.size() == 64) {
      for (size_t i = 0; i < 4; ++i) {
        uint64_t v = 0;
        // 8 bytes, little-endian: byte k (digits 2k, 2k+1) has weight 2^(8k).
        for (size_t k = 0; k < 8; ++k) {
          const size_t o = i * 16 + k * 2;
          const uint64_t byte =
              static_cast<uint64_t>(HexValue(digits[o]) * 16 + HexValue(digits[o + 1]));
          v |= byte << (8 * k);
        }
        if (!Felt::IsCanonical(v)) {
          return Error(t.loc, "word element is not a field element (>= p)");
        }
        t.word[i] = v;
      }
      t.kind = TokenKind::kHexWord;
      return t;
    }
    return Error(t.loc, "invalid hex literal: expected up to 16 digits or exactly 64 digits");
  }
  if (Peek() == '0' && Peek(1) == 'b') {
    Advance(2);
    const size_t digits_begin = pos_;
    while (pos_ < text_.size() && (Peek() == '0' || Peek() == '1')) Advance();
    const size_t n = pos_ - digits_begin;
    t.text = text_.substr(start, pos_ - start);
    if (n == 0) return Error(t.loc, "invalid binary literal: no digits after 0b");
    if (n > 32) return Error(t.loc, "invalid binary literal: more than 32 digits");
    uint64_t v = 0;
    for (size_t i = digits_begin; i < pos_; ++i) v = (v << 1) | (text_[i] == '1' ? 1 : 0);
    t.kind = TokenKind::kBin;
    t.value = v;
    return t;
  }
  uint64_t v = 0;
  bool overflow = false;
  while (pos_ < text_.size() && IsDigit(Peek())) {
    const uint64_t d = static_cast<uint64_t>(Peek() - '0');
    if (v > (UINT64_MAX - d) / 10) overflow = true;
    v = v * 10 + d;
    Advance();
  }
  t.text = text_.substr(start, pos_ - start);
  if (overflow) return Error(t.loc, "integer literal does not fit in 64 bits");
  t.kind = TokenKind::kInt;
  t.value = v;
  return t;
}

}  // namespace flamefleet::vm
