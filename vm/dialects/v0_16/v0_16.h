// The Miden VM v0.16 dialect: its wire opcode table and its MAST rules (more of the dialect,
// e.g. the instruction table and the system events, lives beside them in this folder).
//
//   const WireOpcodeTable& wire = v0_16::WireOpcodes();
//   int8_t u32add = wire[OpcodeIndex(Opcode::kU32Add)];  // 64
//   const MastRules& rules = v0_16::MastRules();         // 9 ops per group, 8 groups per batch
#ifndef FLAMEFLEET_VM_DIALECTS_V0_16_V0_16_H_
#define FLAMEFLEET_VM_DIALECTS_V0_16_V0_16_H_

#include "vm/assembler/mast_rules.h"
#include "vm/assembler/opcodes.h"

namespace flamefleet::vm::v0_16 {

// Returns the v0.16 wire opcode table: every native operation's 7-bit MAST opcode, kNotNative
// for the executor-only pseudo operations. Never fails; thread-safe; lives for the process.
const WireOpcodeTable& WireOpcodes();

// Returns the v0.16 MAST rules. Never fails; thread-safe; lives for the process.
const ::flamefleet::vm::MastRules& MastRules();

}  // namespace flamefleet::vm::v0_16

#endif  // FLAMEFLEET_VM_DIALECTS_V0_16_V0_16_H_
