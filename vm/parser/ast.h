// The MASM abstract syntax tree produced by the parser and consumed by the assembler.
//
// One `Module` per source file. Every node keeps the `SourceLocation` of its first token so that
// assembly errors and run-time traps can point at file:line:col. The parser does no lowering and
// no parse-time folding: immediates keep whether they were written as a literal or as a named
// constant, because the upstream assembler lowers the two differently. Upstream, the parser folds
// some immediates away only when they are written as a number literal; a named constant keeps the
// instruction, is resolved later, and the assembler's own special cases then apply to its value.
//
//   absl::StatusOr<ast::Module> m = ParseModule(sources, file_id, ast::ModuleKind::kExecutable);
//   if (!m.ok()) return m.status();
//   for (const ast::Procedure& p : m->procedures) { ... p.body ... }
//   const ast::Block& entry = *m->entry;   // `begin ... end`
#ifndef FLAMEFLEET_VM_PARSER_AST_H_
#define FLAMEFLEET_VM_PARSER_AST_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace flamefleet::vm::ast {

// A position in a source file registered with a SourceManager. Lines and columns are 1-based;
// columns count bytes.
struct SourceLocation {
  uint32_t file_id = 0;
  uint32_t line = 0;
  uint32_t column = 0;
};

// Four field elements, element 0 first (as written in `[a, b, c, d]` or in a 64-digit hex word).
using WordValue = std::array<uint64_t, 4>;

// An immediate argument of an instruction: the dot-separated parts after the mnemonic, or the
// value of `.err=`.
struct Immediate {
  enum class Kind : uint8_t {
    kLiteral,   // a number literal; `value` holds it (decimal or 0x hex, already checked < p)
    kWord,      // a word literal (64 hex digits or [a,b,c,d]); `word` holds it
    kConstant,  // a named constant (`text` = the name), resolved by the assembler
    kString,    // a quoted string (`text`), e.g. assert.err="message"
    kEvent,     // an inline `event("name")` (v0.25): `text` = the name, `value` = its event id
  };
  Kind kind = Kind::kLiteral;
  uint64_t value = 0;
  WordValue word{};
  std::string text;
  SourceLocation loc;
  // A word slice `W[begin..end)` of a kWord or kConstant (word) immediate, as in v0.25
  // `push.W[1..3]` or `push.[1,2,3,4][0]` (end = begin + 1); absent: the whole value.
  std::optional<std::pair<uint8_t, uint8_t>> slice;
};

// A plain instruction, including the invocation instructions.
//
// `name` is the mnemonic with its fixed parts and without immediates: "push", "add",
// "u32wrapping_add", "adv.push_mapval", "debug.stack", "exp.u" (for exp.uN, N in args[0]),
// "exec", "call", "syscall", "procref", "dynexec", "dyncall". `args` are the dot-separated
// immediates in source order (`push.1.2.3` -> 3 args). `target` is set for
// exec/call/syscall/procref: the invoked path exactly as written without the mnemonic, e.g. "foo",
// "u64::wrapping_add", "::std::math::u64::add", or "0x<64 hex>" (a MAST root, also given as the
// kWord args[0]). `error` is the `.err=` value of assertions (kLiteral, kString or kConstant).
struct Instruction {
  std::string name;
  std::vector<Immediate> args;
  std::string target;
  std::optional<Immediate> error;
  SourceLocation loc;
};

struct Node;
using Block = std::vector<Node>;

// `if.true A else B end` is {A, B}; the parser swaps the branches of `if.false`. A missing branch
// is an empty Block (the assembler turns it into a [NOOP] block).
struct IfElse {
  Block on_true;
  Block on_false;
  SourceLocation loc;
};

struct While {
  Block body;
  SourceLocation loc;
};

struct Repeat {
  uint32_t count = 0;  // 1 <= count < 2^32 (the dialect may bound it further)
  // v0.25 `repeat.CONST`: the constant's name when the count is not a literal and the parser
  // could not resolve it (an imported constant); the assembler resolves it into `count`.
  std::string count_constant;
  Block body;
  SourceLocation loc;
};

// v0.25 `do BODY while COND end`: BODY then COND run at least once; COND leaves the flag that
// says whether to run both again.
struct DoWhile {
  Block body;
  Block condition;
  SourceLocation loc;
};

struct Node {
  std::variant<Instruction, IfElse, While, Repeat, DoWhile> op;
};

// The value of a `const.NAME=...` declaration, evaluated by the parser.
struct ConstantValue {
  // kEvent: an `event("name")` constant (v0.25); `felt` is its event id, `text` the name.
  enum class Kind : uint8_t { kFelt, kWord, kString, kEvent };
  Kind kind = Kind::kFelt;
  uint64_t felt = 0;  // canonical (< p)
  WordValue word{};
  std::string text;
};

// A constant expression the parser could not evaluate yet (v0.25: it names a constant defined
// later in the module, an imported constant or a path `alias::NAME` / `::a::b::NAME`).
// Sub-expressions whose operands are all known are already folded into kValue nodes.
struct ConstExpr {
  enum class Op : uint8_t { kValue, kRef, kAdd, kSub, kMul, kDiv, kIntDiv };
  Op op = Op::kValue;
  ConstantValue value;              // kValue
  std::string name;                 // kRef, as written ("N", "m::N", "::a::b::N")
  std::vector<ConstExpr> operands;  // binary operators: {lhs, rhs}
  SourceLocation loc;               // the term, or the operator
};

struct Constant {
  std::string name;
  ConstantValue value;  // meaningless while `pending` is set
  SourceLocation loc;
  bool is_public = false;  // `pub const` (v0.25: only public constants are visible elsewhere)
  // Set while the value is not known: the linker evaluates it in the module's scope.
  std::optional<ConstExpr> pending;
};

// `use.a::b::c` (alias "c") or `use.a::b::c->d` (alias "d"); `use miden::core::x` too.
// v0.25 item imports `use {x, y as z} from a::b` give one Import per item with `item` set.
struct Import {
  std::string path;         // "std::math::u64" (no leading ::): the module
  std::string alias;        // the name the module (or the item) is known by inside this file
  std::string item;         // the imported item's name in module `path`; empty: a module import
  SourceLocation loc;       // the alias (for an item import: the alias, or the item's name)
  bool absolute = false;    // written with a leading `::`
  SourceLocation item_loc;  // an item import: the item's name in `{name as alias}`
};

// v0.25 `mod name` / `pub mod name`: the module declares its child module `name`.
struct Submodule {
  std::string name;
  bool is_public = false;
  SourceLocation loc;
};

// `export.u64::add`, `export.u64::mul->mul64`, `export.0x<root>->name` (and `pub use ...`).
struct ReExport {
  std::string target;  // as written: "u64::add", "::std::math::u64::add" or "0x<64 hex>"
  std::string name;    // exported name: the alias or the last path segment of target
  SourceLocation loc;
};

// `adv_map.NAME=[...]` or `adv_map.NAME(0x<key>)=[...]`: an advice-map entry added to the program
// at start (no cycles). Without an explicit key the assembler uses the RPO hash of the values.
struct AdvMapEntry {
  std::string name;
  std::optional<WordValue> key;
  std::vector<uint64_t> values;  // canonical felts
  SourceLocation loc;
};

struct Procedure {
  std::string name;
  bool exported = false;
  uint32_t num_locals = 0;  // as declared (not rounded)
  std::string docs;         // the `#!` doc comment before it, if any
  Block body;
  SourceLocation loc;
};

enum class ModuleKind : uint8_t {
  kExecutable,  // must contain `begin ... end`; may not export
  kLibrary,     // no `begin ... end`
  kKernel,      // a library whose exported procedures are syscall targets
};

struct Module {
  ModuleKind kind = ModuleKind::kExecutable;
  uint32_t file_id = 0;
  std::string docs;  // module doc comment (`#!` at the top)
  // v0.25 `namespace a::b` (the path without a leading `::`; empty: none) and where its path
  // starts. The linker checks it against the path the module is loaded as.
  std::string declared_namespace;
  SourceLocation namespace_loc;
  std::vector<Import> imports;
  std::vector<Submodule> submodules;
  std::vector<Constant> constants;
  std::vector<Procedure> procedures;
  std::vector<ReExport> reexports;
  std::vector<AdvMapEntry> adv_map;
  std::optional<Block> entry;  // `begin ... end`
  SourceLocation entry_loc;
};

}  // namespace flamefleet::vm::ast

#endif  // FLAMEFLEET_VM_PARSER_AST_H_
