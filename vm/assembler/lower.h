// Lowering of one MASM instruction to native VM operations: the generic driver over a
// dialect's instruction table (vm/assembler/instruction_table.h).
//
// This is the per-instruction half of the assembler: it finds the instruction's row and runs
// its lowering function, which appends the exact operation sequence the dialect's assembler
// appends to the current basic block, including every literal-vs-constant special case.
// Instructions that become MAST nodes (`exec`, `call`, `syscall`, `procref`, `dynexec`,
// `dyncall`) and control flow are the assembler's job and are rejected here.
//
//   LowerContext ctx;
//   ctx.num_locals = proc.num_locals;
//   ctx.resolve_constant = [&](const std::string& name) { return constants.Find(name); };
//   std::vector<LoweredOp> ops;
//   FLAMEFLEET_RETURN_IF_ERROR(LowerInstruction(table, inst, ctx, &ops));
#ifndef FLAMEFLEET_VM_ASSEMBLER_LOWER_H_
#define FLAMEFLEET_VM_ASSEMBLER_LOWER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vm/assembler/instruction_table.h"
#include "vm/assembler/opcodes.h"
#include "vm/parser/ast.h"

namespace flamefleet::vm {

// What LowerInstruction needs to know about the place an instruction appears in.
struct LowerContext {
  uint32_t num_locals = 0;  // declared locals of the enclosing procedure (0 in begin..end)
  bool in_kernel = false;   // true while compiling a kernel module
  bool debug_mode = true;   // like `miden run`: breakpoint -> NOOP; false: nothing
  // Resolves a named constant of the current module; returns NotFound if undefined. May be
  // empty, in which case every constant reference is an "undefined constant" error.
  std::function<absl::StatusOr<ast::ConstantValue>(const std::string& name)> resolve_constant;
};

// Appends the native operations of `inst`, lowered by the rules of `table` (the dialect's
// instruction table), to `out` (which must not be null and is not kept). Instructions that
// lower to nothing (decorators, literal `add.0`, ...) append nothing. Returns InvalidArgument
// with a plain message (no location; the caller adds file:line:col) for assembly errors: bad
// or out-of-range immediates, undefined or mistyped constants, division by zero, invalid local
// references, `caller` outside a kernel, unknown mnemonics. Returns Internal for the rows
// without a lowering function (`exec`, `call`, `syscall`, `procref`, `dynexec` and `dyncall`),
// which the assembler must turn into MAST nodes itself. On error `out` may hold a partial
// sequence. Thread-safe if `ctx.resolve_constant` is.
absl::Status LowerInstruction(const InstructionTable& table, const ast::Instruction& inst,
                              const LowerContext& ctx, std::vector<LoweredOp>* out);

// Returns the error code of an `.err=` message: the first 8 bytes of BLAKE3(message) read as
// a little-endian u64, reduced modulo p = 2^64 - 2^32 + 1.
uint64_t ErrorCodeFromMessage(absl::string_view message);

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_ASSEMBLER_LOWER_H_
