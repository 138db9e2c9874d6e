// The current Miden VM dialect (miden-vm v0.25.7), as data: its instruction table (every mnemonic's
// syntax and lowering, instructions.cc), its system events (events.cc), its wire opcode table
// (wire.cc), its MAST rules (mast_rules.cc) and the DialectSpec that bundles them (spec.cc).
// Everything here is immutable, built once on first use, and safe to read from any thread.
// Code outside this folder reaches it through vm/dialect.h: GetDialectSpec(Dialect::kV0_25).
//
//   const InstructionTable& instructions = v0_25::Instructions();
//   const WireOpcodeTable& wire = v0_25::WireOpcodes();
//   int8_t emit = wire[OpcodeIndex(Opcode::kEmitTop)];  // 31
//   const MastRules& rules = v0_25::MastRules();         // 9 ops per group, 8 groups per batch
#ifndef FLAMEFLEET_VM_DIALECTS_V0_25_V0_25_H_
#define FLAMEFLEET_VM_DIALECTS_V0_25_V0_25_H_

#include "vm/assembler/instruction_table.h"
#include "vm/assembler/mast_rules.h"
#include "vm/assembler/opcodes.h"
#include "vm/executor/system_events.h"

namespace flamefleet::vm::v0_25 {

// Returns the v0.25 instruction table; its events() are SystemEvents(). The reference lives
// for the whole process.
const InstructionTable& Instructions();

// Returns the v0.25 system events (the ids of the v0.25 assembler's system events). The
// reference lives for the whole process.
const SystemEventTable& SystemEvents();

// Returns the v0.25 wire opcode table: every native operation's 7-bit MAST opcode, kNotNative
// for the executor-only pseudo operations. Never fails; thread-safe; lives for the process.
const WireOpcodeTable& WireOpcodes();

// Returns the v0.25 MAST rules. Never fails; thread-safe; lives for the process.
const ::flamefleet::vm::MastRules& MastRules();

}  // namespace flamefleet::vm::v0_25

#endif  // FLAMEFLEET_VM_DIALECTS_V0_25_V0_25_H_
