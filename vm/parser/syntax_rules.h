// Syntax rules: what the surface grammar of a Miden Assembly dialect accepts, as data. The parser
// and the linker are generic drivers over these flags and limits; each dialect's DialectSpec
// (vm/dialect.h) points at its rules (vm/dialects/<name>/spec.cc), so no code asks which
// dialect it is parsing.
//
//   const SyntaxRules& rules = *GetDialectSpec(Dialect::kV0_25).syntax;
//   if (rules.do_while) { /* `do BODY while COND end` is a loop */ }
//   absl::StatusOr<ast::Module> m = ParseModule(sources, id, kind, GetDialectSpec(dialect));
//
// The two rule sets in use: v0.16 (classic dotted declarations `proc.foo.2`, `export.foo`,
// `use.a::b->c`, `const.X=1`, plus the v0.20 surface forms flamefleet has always accepted) and
// v0.25.7 (the lossless-parser grammar: `pub proc`, `@locals(N)`, `use a::b as c`,
// `use {x} from a::b`, `mod`, `do ... while`, word slices, `event("...")` constants; the
// classic forms are errors).
#ifndef FLAMEFLEET_VM_PARSER_SYNTAX_RULES_H_
#define FLAMEFLEET_VM_PARSER_SYNTAX_RULES_H_

#include <cstdint>
#include <optional>
#include <span>

#include "absl/strings/string_view.h"

namespace flamefleet::vm {

enum class Dialect : uint8_t;  // vm/dialect.h

// A mnemonic the dialect removed, and what to write instead.
struct RemovedInstruction {
  absl::string_view name;         // "mem_loadw"
  absl::string_view replacement;  // "mem_loadw_be"
};

// How constant expressions (`const X = A + B`) compute `+ - * / //`.
enum class ConstArithmetic : uint8_t {
  // Field arithmetic (v0.16.4 ConstantExpr::try_fold): `+ - *` wrap modulo p, `/` multiplies
  // by the inverse, `//` divides the canonical integers; only a zero divisor is an error.
  kField,
  // Checked integers (v0.25.7 IntValue::checked_*): `+ - * //` on the canonical integers, and
  // a result that is negative or >= p is an error ("value is larger than expected range");
  // `/` is still field division.
  kCheckedInteger,
};

struct SyntaxRules {
  // ---- lexical
  // `{` and `}` are tokens (grouped imports, enums); otherwise they are unexpected characters.
  bool braces = false;
  // A `0x` number with an odd number of digits is zero-padded on the left (v0.25); otherwise
  // it is a lexical error.
  bool odd_hex_digits = false;
  // Quoted strings: a backslash escapes whatever character follows, a newline included (v0.25);
  // otherwise it escapes only a following `"` or newline and the next character is read as
  // usual (v0.16.4, so `"\\"` does not end at its second quote).
  bool escape_any_character = false;
  // A carriage return ends a quoted string (an unclosed-string error), as a newline does.
  bool string_ends_at_carriage_return = false;

  // ---- declarations
  // The classic dotted forms: `proc.foo[.N]`, `export.foo`, `export.a::b[->c]`,
  // `use.a::b[->c]`, `const.X=...`, `adv_map.X=...`.
  bool classic_declarations = true;
  // `use a::b->c` (an arrow alias without the dot).
  bool arrow_import_alias = true;
  // `pub use a::b::p` (a procedure re-exported by its path).
  bool path_reexports = true;
  // The v0.25 module items: `use a::b as c`, `use {x, y as z} from a::b`,
  // `pub use {x as y} from a::b`, `use self::...`, `mod`/`pub mod`, `namespace`,
  // `extern package`, `type`, `enum`, `adv_map NAME = [...]`.
  bool modern_items = false;
  // `const W = word("text")` and `const E = event("name")` (BLAKE3-derived constants).
  bool hash_constants = false;
  // Constants are evaluated once the whole module is read (v0.25 semantic analysis): a
  // constant may name one defined later in the module, an imported constant, or a path
  // `alias::NAME` / `::a::b::NAME` that the linker resolves; cycles are errors. Otherwise a
  // constant may only name constants defined before it in the same module.
  bool deferred_constants = false;
  // The arithmetic of constant expressions.
  ConstArithmetic const_arithmetic = ConstArithmetic::kField;
  // An import's path may not start with another import's alias (v0.25.7 resolves imports
  // independently: "import target 'a::b' cannot be resolved through import 'a'"), may not
  // name the importing module itself, nor (for a module import) one of its own `mod` children.
  bool independent_imports = false;

  // ---- procedures
  // The largest number of locals a procedure may declare, and the error when it declares more.
  uint32_t max_locals = 0xFFFF;
  absl::string_view max_locals_error = "the number of locals must be at most 65535";

  // ---- bodies
  // `do BODY while COND end`.
  bool do_while = false;
  // `repeat.N`: the largest N, and whether N may be a constant name.
  uint64_t max_repeat_count = 0xFFFFFFFFull;
  bool repeat_constant = false;
  // Word slices of push immediates: `push.W[i..j]`, `push.[a,b,c,d][i]`, `push.0x...[i]`.
  bool word_slices = false;
  // Words may be mixed with other values in one dotted push (`push.[1,2,3,4].5`).
  bool mixed_word_push = true;
  // Mnemonics that are errors naming their replacement ("deprecated instruction: `mem_loadw`
  // has been removed (use `mem_loadw_be` instead)"), checked before the instruction table.
  std::span<const RemovedInstruction> removed_instructions;
  // Inline `event("name")` immediates (v0.25 `emit.event("x")`).
  bool event_immediates = false;
  // Whether the assembler folds literal immediates such as `add.0` at parse time (v0.16) or
  // lowers them as written (v0.25). Read by the instruction lowering, not by the parser.
  bool literal_immediates_fold = true;

  // ---- module layout (the linker)
  // A module path a::b of a library NS=DIR may be DIR/a/b/mod.masm when DIR/a/b.masm is
  // absent, and the namespace root is DIR/mod.masm.
  bool mod_file_layout = false;
  // A module may only be reached through `mod` declarations of its parents.
  bool declared_submodules = false;
  // Kernel procedures may themselves use `syscall` (v0.25 lifted the v0.16 restriction).
  bool kernel_syscalls = false;
  // The kernel module is the root of the `$kernel` namespace: `$kernel::a::b` is the module
  // KDIR/a/b.masm (or KDIR/a/b/mod.masm) beside the kernel file in KDIR, declared with `mod`
  // like a library's submodules; they are kernel modules, but only the root's exports are
  // kernel procedures (v0.25.7 `Package::to_kernel`), and only the root may `exec` or `call`
  // them (elsewhere: "can only be invoked via syscall").
  bool kernel_submodules = false;

  // ---- the core library
  // The namespace of the dialect's standard library ("miden::core"), and the name prefix of
  // the cargo crate that ships its sources under `asm/` ("miden-core-lib-0.25."); empty: the
  // CLI does not look for one.
  absl::string_view core_library_namespace;
  absl::string_view core_library_crate_prefix;

  // ---- diagnostics
  // When a parse under these rules fails and the source parses under `hint_dialect`, the
  // error (same location) ends with `hint`.
  std::optional<Dialect> hint_dialect;
  absl::string_view hint;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_PARSER_SYNTAX_RULES_H_
