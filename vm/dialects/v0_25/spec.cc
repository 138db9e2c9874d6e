// The v0.25 dialect: current Miden Assembly and Miden VM v0.25.7 (tag v0.25.7 of
// 0xMiden/miden-vm): the lossless-parser syntax, Poseidon2 hashing, little-endian stack
// conventions, the frame pointer in memory and do-while loops.
#include "vm/crypto/poseidon2.h"
#include "vm/dialect.h"
#include "vm/dialects/v0_25/v0_25.h"

namespace flamefleet::vm::v0_25 {

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
  };
  return spec;
}

}  // namespace flamefleet::vm::v0_25
