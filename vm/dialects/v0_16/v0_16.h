// The classic Miden VM v0.16 dialect, as data: its instruction table (every mnemonic's syntax
// and lowering, instructions.cc), its system events (events.cc), its wire opcode table
// (wire.cc), its MAST rules (mast_rules.cc) and the DialectSpec that bundles them (spec.cc).
// Everything here is immutable, built once on first use, and safe to read from any thread.
// Code outside this folder reaches it through vm/dialect.h: GetDialectSpec(Dialect::kV0_16).
//
//   const InstructionTable& instructions = v0_16::Instructions();
//   const WireOpcodeTable& wire = v0_16::WireOpcodes();
//   int8_t u32add = wire[OpcodeIndex(Opcode::kU32Add)];  // 64
//   const MastRules& rules = v0_16::MastRules();         // 9 ops per group, 8 groups per batch
#ifndef FLAMEFLEET_VM_DIALECTS_V0_16_V0_16_H_
#define FLAMEFLEET_VM_DIALECTS_V0_16_V0_16_H_

#include "vm/assembler/instruction_table.h"
#include "vm/assembler/mast_rules.h"
#include "vm/assembler/opcodes.h"
#include "vm/executor/system_events.h"

namespace flamefleet::vm::v0_16 {

// Returns the v0.16 instruction table; its events() are SystemEvents(). The reference lives
// for the whole process.
const InstructionTable& Instructions();

// Returns the v0.16 system events (the ids of the v0.16 assembler's system events). The
// reference lives for the whole process.
const SystemEventTable& SystemEvents();

// Returns the v0.16 wire opcode table: every native operation's 7-bit MAST opcode, kNotNative
// for the executor-only pseudo operations. Never fails; thread-safe; lives for the process.
const WireOpcodeTable& WireOpcodes();

// Returns the v0.16 MAST rules. Never fails; thread-safe; lives for the process.
const ::flamefleet::vm::MastRules& MastRules();

}  // namespace flamefleet::vm::v0_16

#endif  // FLAMEFLEET_VM_DIALECTS_V0_16_V0_16_H_
