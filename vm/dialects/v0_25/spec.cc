// The v0.25 dialect: current Miden Assembly and Miden VM v0.25.7 (tag v0.25.7 of
// 0xMiden/miden-vm): the lossless-parser syntax, Poseidon2 hashing, little-endian stack
// conventions, the frame pointer in memory and do-while loops.
#include "vm/crypto/poseidon2.h"
#include "vm/dialect.h"
#include "vm/dialects/v0_25/v0_25.h"

namespace flamefleet::vm::v0_25 {
namespace {

// DEPRECATED_ALIAS_SPECS of crates/assembly-syntax/src/parser/cst/instructions.rs at v0.25.7.
constexpr RemovedInstruction kRemoved[] = {
    {"loc_loadw", "loc_loadw_be"},
    {"loc_storew", "loc_storew_be"},
    {"mem_loadw", "mem_loadw_be"},
    {"mem_storew", "mem_storew_be"},
};

// The v0.25.7 grammar (crates/assembly-syntax-cst, crates/assembly-syntax/src/parser/cst and
// sema/passes at v0.25.7): limits from MAX_REPEAT_COUNT (assembly-syntax/src/lib.rs) and
// `(u16::MAX / 4) * 4` locals.
constexpr SyntaxRules kSyntax{
    .braces = true,
    .odd_hex_digits = true,
    .escape_any_character = true,
    .string_ends_at_carriage_return = true,
    .classic_declarations = false,
    .arrow_import_alias = false,
    .path_reexports = false,
    .modern_items = true,
    .hash_constants = true,
    .deferred_constants = true,
    .const_arithmetic = ConstArithmetic::kCheckedInteger,
    .independent_imports = true,
    .max_locals = 65532,
    .max_locals_error = "number of locals exceeds the maximum of 65532",
    .do_while = true,
    .max_repeat_count = 1000000,
    .repeat_constant = true,
    .word_slices = true,
    .mixed_word_push = false,
    .removed_instructions = kRemoved,
    .event_immediates = true,
    .literal_immediates_fold = false,
    .mod_file_layout = true,
    .declared_submodules = true,
    .kernel_syscalls = true,
    .kernel_submodules = true,
    .core_library_namespace = "miden::core",
    .core_library_crate_prefix = "miden-core-lib-0.25.",
    .hint_dialect = Dialect::kV0_16,
    .hint = "this is classic v0.16 MASM: pass --dialect v0.16",
};

// The trace shape of v0.25.7 (processor/src/trace/{chiplets,range,parallel/mod.rs}): 2
// controller rows per permutation request padded to 16, a 16-row cycle per distinct input state,
// 8 bitwise rows per op, a HALT row, the chiplets' padding row, MIN_TRACE_LEN = 64.
constexpr TraceShapeRules kTraceShape{};

}  // namespace

const DialectSpec& Spec() {
  static const DialectSpec spec{
      .dialect = Dialect::kV0_25,
      .name = "v0.25",
      .engine_version = "flamefleet-vm v0.25 r1",
      .instructions = &Instructions(),
      .events = &SystemEvents(),
      .wire = &WireOpcodes(),
      .mast = &MastRules(),
      .hasher = &Poseidon2Hasher::Get(),
      .json_stack_order = JsonStackOrder::kFirstOnTop,
      .syntax = &kSyntax,
      .trace_shape = &kTraceShape,
  };
  return spec;
}

}  // namespace flamefleet::vm::v0_25
