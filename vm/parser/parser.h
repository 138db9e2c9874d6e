// The MASM parser: turns one source file into an `ast::Module`, following the dialect's
// SyntaxRules (vm/parser/syntax_rules.h): v0.16 is classic syntax plus the v0.20 surface forms
// `use a::b`, `const X = 1`, `pub proc foo`, `@locals(N)`, `pub use m::p`; v0.25 is the v0.25.7
// grammar (`use {x} from a::b`, `mod`, `do ... while`, word slices, `event("...")`, ...). It
// validates everything the upstream parser validates (immediate ranges, literal division by zero,
// push arity, block sizes, ...) and evaluates constant expressions, but it does not fold or lower
// instructions: that is the assembler's job. Which mnemonics exist and which immediates they take
// comes from the dialect's instruction table.
//
//   SourceManager sources;
//   uint32_t id = sources.Add("main.masm", "begin push.1 push.2 add end");
//   absl::StatusOr<ast::Module> module =
//       ParseModule(sources, id, ast::ModuleKind::kExecutable, GetDialectSpec(dialect));
//   if (!module.ok()) std::cerr << module.status().message();
//   // On error: "main.masm:1:7: <reason>\n<source line>\n      ^"
#ifndef FLAMEFLEET_VM_PARSER_PARSER_H_
#define FLAMEFLEET_VM_PARSER_PARSER_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "vm/assembler/instruction_table.h"
#include "vm/parser/ast.h"
#include "vm/parser/source_manager.h"
#include "vm/parser/syntax_rules.h"

namespace flamefleet::vm {

struct DialectSpec;  // vm/dialect.h

// Source files larger than this are rejected before lexing (bounds parser
// memory).
inline constexpr size_t kMaxSourceBytes = size_t{8} << 20;
// Maximum nesting of blocks (`if`/`while`/`repeat` inside procedure bodies) and
// of parentheses in constant expressions.
inline constexpr int kMaxNestingDepth = 256;
// Maximum number of instructions/control-flow nodes directly inside one block (the upstream
// assembler's limit).
inline constexpr size_t kMaxBlockInstructions = 65535;

// Parses file `file_id` of `sources` as a module of the given kind under the v0.16 syntax
// rules (see the DialectSpec overload below for the others), accepting the mnemonics
// of `instructions` (a dialect's instruction table: each row's Form says which immediates the
// mnemonic takes, and its events() which `adv.<event>` names exist). `instructions` is not
// kept after the call.
//
// Returns the module, or InvalidArgument whose message is `sources.Format(loc,
// reason)` for the first error found (a lexical or syntax error, an
// out-of-range immediate, an undefined or duplicate constant, a duplicate
// procedure, `begin ... end` missing from an executable or present in a
// library/kernel, an export in an executable, a file over kMaxSourceBytes,
// nesting deeper than kMaxNestingDepth, ...). Never crashes on any input,
// including binary data. Syntax and lexical errors point at the offending
// token; invalid values inside an instruction or `repeat` (out of range, >= p,
// division by zero, too many push values) point at the start of the
// instruction, as the upstream assembler does. Constant names used as immediates
// are not resolved here (the assembler does that, using Module::constants).
//
// AST conventions beyond ast.h: optional stack indices that are omitted (`dup`,
// `swap`) leave `args` empty; `exp.uN` has name "exp.u" and args[0] = N;
// `adv.<event>` and `debug.<kind>` keep the event/kind in `name`; invocation
// targets keep quoted segments with their quotes
// (`exec."a::b"` has target "\"a::b\""), while Procedure::name and
// ReExport::name are unquoted.
//
// Thread-safe: may be called concurrently on the same SourceManager (it only
// reads it).
absl::StatusOr<ast::Module> ParseModule(const SourceManager& sources, uint32_t file_id,
                                        ast::ModuleKind kind, const InstructionTable& instructions);

// Parses as above under `dialect`: its instruction table and its SyntaxRules. When the parse
// fails, the rules name a hint dialect (v0.25 names v0.16) and the source parses under that
// dialect, the error (same location) ends with the rules' hint ("this is classic v0.16 MASM:
// pass --dialect v0.16"). `dialect` is not kept. Thread-safe as above.
absl::StatusOr<ast::Module> ParseModule(const SourceManager& sources, uint32_t file_id,
                                        ast::ModuleKind kind, const DialectSpec& dialect);

// Parses as above with an explicit instruction table and rules (tests and tools that pair a
// table with other rules). Neither is kept after the call.
absl::StatusOr<ast::Module> ParseModule(const SourceManager& sources, uint32_t file_id,
                                        ast::ModuleKind kind, const InstructionTable& instructions,
                                        const SyntaxRules& rules);

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_PARSER_PARSER_H_
