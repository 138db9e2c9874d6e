// The operations of flamefleet's VM: the native Miden operations and the few executor-only
// pseudo operations, generated from one table (vm/assembler/opcodes.def, one row per operation).
//
// `Opcode` is the dispatch value only: its values are the executor's switch values (sparse,
// chosen for the hot loop's code generation; see opcodes.def) and are not an encoding. Tables
// indexed by operation use OpcodeIndex, the row's dense position (0 .. kNumOpcodes - 1). What a
// dialect writes into op groups and hashes into MAST digests is its wire opcode table
// (WireOpcodeTable below), which maps each operation to its 7-bit MAST opcode, or to kNotNative for
// the executor-only pseudo operations (they cost no cycle and only move the program counter or the
// procedure frame stack; see vm/assembler/program.h).
//
//   LoweredOp op{Opcode::kPush, 42};
//   if (HasImmediate(op.opcode)) { ... }  // PUSH and EMIT carry a value in their op group
//   absl::string_view name = OpcodeName(Opcode::kU32Add);  // "U32ADD"
//   int8_t wire = table[OpcodeIndex(Opcode::kU32Add)];     // a dialect's MAST opcode, or -1
#ifndef FLAMEFLEET_VM_ASSEMBLER_OPCODES_H_
#define FLAMEFLEET_VM_ASSEMBLER_OPCODES_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace flamefleet::vm {

// Flags of an operation (the last column of opcodes.def).
inline constexpr uint8_t kFlagNone = 0;
// The operation carries a value in its op group (PUSH's felt, EMIT's event id).
inline constexpr uint8_t kFlagImmediate = 1 << 0;
// A native control-flow row (JOIN, SPAN, END, ...), never inside a basic block's op list.
inline constexpr uint8_t kFlagControl = 1 << 1;
// An executor-only pseudo operation: no cycle, no MAST encoding.
inline constexpr uint8_t kFlagPseudo = 1 << 2;

enum class Opcode : uint8_t {
#define FLAMEFLEET_OPCODE(name, value, mnemonic, flags) k##name = value,
#include "vm/assembler/opcodes.def"
#undef FLAMEFLEET_OPCODE
};

// The number of operations; their dense indices (OpcodeIndex) are 0 .. kNumOpcodes - 1.
inline constexpr size_t kNumOpcodes = 0
#define FLAMEFLEET_OPCODE(name, value, mnemonic, flags) +1
#include "vm/assembler/opcodes.def"
#undef FLAMEFLEET_OPCODE
    ;

namespace internal {

// Dense index of each enum value; kNumOpcodes for values that are no operation.
inline constexpr std::array<uint8_t, 256> kOpcodeIndex = [] {
  std::array<uint8_t, 256> index{};
  for (uint8_t& i : index) i = static_cast<uint8_t>(kNumOpcodes);
  uint8_t next = 0;
#define FLAMEFLEET_OPCODE(name, value, mnemonic, flags) index[value] = next++;
#include "vm/assembler/opcodes.def"
#undef FLAMEFLEET_OPCODE
  return index;
}();

inline constexpr std::array<uint8_t, kNumOpcodes> kOpcodeFlags = {
#define FLAMEFLEET_OPCODE(name, value, mnemonic, flags) uint8_t{flags},
#include "vm/assembler/opcodes.def"
#undef FLAMEFLEET_OPCODE
};

inline constexpr std::array<std::string_view, kNumOpcodes> kOpcodeNames = {
#define FLAMEFLEET_OPCODE(name, value, mnemonic, flags) std::string_view(mnemonic),
#include "vm/assembler/opcodes.def"
#undef FLAMEFLEET_OPCODE
};

}  // namespace internal

// Every operation, in row order: kAllOpcodes[OpcodeIndex(op)] == op.
inline constexpr std::array<Opcode, kNumOpcodes> kAllOpcodes = {
#define FLAMEFLEET_OPCODE(name, value, mnemonic, flags) Opcode::k##name,
#include "vm/assembler/opcodes.def"
#undef FLAMEFLEET_OPCODE
};

// Returns the dense index of `op` in tables indexed by operation (0 .. kNumOpcodes - 1), or
// kNumOpcodes for a value that is not an operation.
constexpr size_t OpcodeIndex(Opcode op) { return internal::kOpcodeIndex[static_cast<uint8_t>(op)]; }

// Returns the flags of `op` (an OR of kFlagImmediate, kFlagControl, kFlagPseudo), or kFlagNone
// for a value that is not an operation.
constexpr uint8_t OpcodeFlags(Opcode op) {
  return OpcodeIndex(op) < kNumOpcodes ? internal::kOpcodeFlags[OpcodeIndex(op)] : kFlagNone;
}

// Returns true for operations that carry a value in their op group (PUSH, EMIT).
constexpr bool HasImmediate(Opcode op) { return (OpcodeFlags(op) & kFlagImmediate) != 0; }

// Returns true for native control-flow operations (never inside a basic block's op list).
constexpr bool IsControl(Opcode op) { return (OpcodeFlags(op) & kFlagControl) != 0; }

// Returns true for the executor-only pseudo operations (no cycle, no MAST encoding).
constexpr bool IsPseudo(Opcode op) { return (OpcodeFlags(op) & kFlagPseudo) != 0; }

// Returns the upper-case name of an operation as the Miden VM prints it ("U32ADD", "DUP9",
// "PUSH"), or "?" for a value that is not an operation.
constexpr std::string_view OpcodeName(Opcode op) {
  return OpcodeIndex(op) < kNumOpcodes ? internal::kOpcodeNames[OpcodeIndex(op)] : "?";
}

// A dialect's wire opcode table: for each operation (indexed by OpcodeIndex) the 7-bit opcode
// its MAST op groups and node digests use, or kNotNative for an operation the dialect does not
// encode (the executor-only pseudo operations, and operations of other dialects).
using WireOpcodeTable = std::array<int8_t, kNumOpcodes>;
inline constexpr int8_t kNotNative = -1;

// One native operation produced by instruction lowering. `imm` is the PUSH value (canonical
// felt), the EMIT event id, or the error code of ASSERT / U32ASSERT2 / MPVERIFY; 0 otherwise.
struct LoweredOp {
  Opcode opcode = Opcode::kNoop;
  uint64_t imm = 0;
  friend bool operator==(const LoweredOp&, const LoweredOp&) = default;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_ASSEMBLER_OPCODES_H_
