// flamefleet's Miden VM: assemble MASM of any dialect it speaks (vm/dialect.h), execute it
// cycle-exactly, and observe the procedure call stack of every cycle.
//
// This is the one header other components include. It pulls in the pieces:
//   vm/dialect.h              the Miden dialects and their DialectSpec
//   vm/felt.h                 Goldilocks field element
//   vm/inputs.h               `.inputs` (JSON) and miden-debug TOML input files
//   vm/assembler/assembler.h  MASM -> Program (parser, lowering, MAST, linearisation)
//   vm/executor/executor.h    Program -> cycles, with Step(), Run() and a CallStackObserver
//
//   vm::Assembler assembler({.libraries = {{"std", stdlib_dir}}});
//   FLAMEFLEET_ASSIGN_OR_RETURN(vm::Program program, assembler.AssembleFile("fib.masm"));
//   FLAMEFLEET_ASSIGN_OR_RETURN(vm::ProgramInputs inputs, vm::LoadInputs("fib.inputs"));
//   FLAMEFLEET_ASSIGN_OR_RETURN(vm::RunResult result, vm::RunProgram(program, inputs, {}));
//   // result.stack (top 16, top first), result.cycles ("Stack rows" of `miden run`)
#ifndef FLAMEFLEET_VM_VM_H_
#define FLAMEFLEET_VM_VM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vm/assembler/assembler.h"
#include "vm/assembler/program.h"
#include "vm/dialect.h"
#include "vm/executor/executor.h"
#include "vm/felt.h"
#include "vm/inputs.h"

namespace flamefleet::vm {

// Execution errors (TrapStatus) list the call stack's outermost and innermost
// kErrorFramesKept frames each and say how many were omitted in between.
inline constexpr size_t kErrorFramesKept = 16;
// Upper bound of an execution error message in bytes (TrapStatus): longer ones are cut and end
// with "... (error message truncated)".
inline constexpr size_t kMaxExecutionErrorBytes = 16 * 1024;

struct RunResult {
  std::vector<Felt> stack;  // the final operand stack, top 16, top first
  uint64_t cycles = 0;      // number of rows executed (the main trace length)
};

// Builds the advice provider for `inputs`: its advice stack and map, and the Merkle store built
// from its merkle_store sources (the program's own adv_map entries are added by the executor).
// The trees are hashed with `hasher`, which must be the hasher of the program the advice is
// for (*program.dialect->hasher: RPO-256 for v0.16, Poseidon2 for v0.25).
// Returns InvalidArgument, prefixed with "merkle_store[i]: ", when a Merkle source cannot be
// built (for example a partial_merkle_tree node whose sibling is missing).
absl::StatusOr<AdviceProvider> MakeAdvice(const ProgramInputs& inputs, const Hasher& hasher);

// Runs `program` to completion. The cycle cap is options.max_cycles, or inputs.max_cycles
// when that is set and smaller. Returns the final stack and cycle count, or an error:
// InvalidArgument for traps of the program itself (assertion, non-u32 operand, ...),
// ResourceExhausted when the cycle cap, the stack limit or the memory budget
// (options.max_memory_bytes) is hit, FailedPrecondition when the program ends with more than
// 16 stack elements. The message names the cycle, the instruction, its
// source location (with the source line and a caret) and the call stack (at most
// 2 * kErrorFramesKept frames; the message is at most kMaxExecutionErrorBytes).
// `host` and `observer` may be null.
absl::StatusOr<RunResult> RunProgram(const Program& program, const ProgramInputs& inputs,
                                     const ExecutionOptions& options, Host* host = nullptr,
                                     CallStackObserver* observer = nullptr);

// Returns the final result of an executor that finished, or the error status of one that
// trapped (see RunProgram). Requires executor.state() != kPaused.
absl::StatusOr<RunResult> FinishRun(const Executor& executor);

// Formats a trap as an error status (see RunProgram).
absl::Status TrapStatus(const Program& program, const Trap& trap);

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_VM_H_
