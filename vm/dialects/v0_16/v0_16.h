// The classic Miden VM v0.16 dialect: its instruction table (every mnemonic's syntax and
// lowering, instructions.cc) and its system events (events.cc). Everything here is immutable
// data built once, on first use, and safe to read from any number of threads.
//
//   const InstructionTable& instructions = v0_16::Instructions();
//   absl::StatusOr<ast::Module> m = ParseModule(sources, id, kind, instructions);
//   FLAMEFLEET_RETURN_IF_ERROR(LowerInstruction(instructions, inst, ctx, &ops));
//   Executor exec(program, v0_16::SystemEvents(), stack, advice, options);
#ifndef FLAMEFLEET_VM_DIALECTS_V0_16_V0_16_H_
#define FLAMEFLEET_VM_DIALECTS_V0_16_V0_16_H_

#include "vm/assembler/instruction_table.h"
#include "vm/executor/system_events.h"

namespace flamefleet::vm::v0_16 {

// Returns the v0.16 instruction table; its events() are SystemEvents(). The reference lives
// for the whole process.
const InstructionTable& Instructions();

// Returns the v0.16 system events (the ids of the v0.16 assembler's system events). The
// reference lives for the whole process.
const SystemEventTable& SystemEvents();

}  // namespace flamefleet::vm::v0_16

#endif  // FLAMEFLEET_VM_DIALECTS_V0_16_V0_16_H_
