// MastRules: the rules a dialect's assembler follows to build MAST, as data. The MAST builder
// (vm/assembler/mast_builder.h), the op-group packing and the node digests (vm/assembler/mast.h)
// read every dialect-specific constant from here instead of hard-coding it; a dialect defines
// one immutable MastRules (vm/dialects/<dialect>/mast_rules.cc), and where a rule is a choice
// between shapes it is a small enum that the builder switches on.
//
//   const MastRules& rules = ...;            // the dialect's rules
//   uint32_t slots = rules.ops_per_group;    // 9 operations per op group
//   switch (rules.loop_shape) { case LoopShape::kWhile: ...; case LoopShape::kSplitLoop: ... }
//
// Internal to the assembler.
#ifndef FLAMEFLEET_VM_ASSEMBLER_MAST_RULES_H_
#define FLAMEFLEET_VM_ASSEMBLER_MAST_RULES_H_

#include <cstdint>
#include <span>

#include "vm/assembler/opcodes.h"
#include "vm/felt.h"

namespace flamefleet::vm {

// How `while.true` becomes MAST.
enum class LoopShape : uint8_t {
  // One LOOP node over the body: the condition is popped before the first iteration and after
  // every one (REPEAT row while it is 1, the loop's END row when it is 0).
  kWhile,
  // v0.24+: SPLIT(LOOP(body), [NOOP]). The SPLIT pops the first condition; the LOOP row pops
  // nothing and always runs the body once; after each pass the condition is popped (REPEAT row
  // while it is 1, the loop's END row when it is 0). `do BODY while COND end` is LOOP(BODY ++
  // COND), BODY and COND compiled as one body.
  kSplitLoop,
};

// How runs of contiguous basic blocks are combined before the JOIN tree is built.
enum class BlockMerge : uint8_t {
  // Every basic block is its own node.
  kNone,
  // A run of contiguous blocks becomes one block, except that a procedure's root block of
  // `MastRules::keep_apart_batches` batches or more stays a node of its own.
  kContiguous,
};

// How procedure locals are addressed and what a procedure with locals adds to its body.
enum class LocalsModel : uint8_t {
  // Locals live below a frame pointer (fmp): a procedure with N locals starts with
  // PUSH(round4(N)) FMPUPDATE and ends with PUSH(p - round4(N)) FMPUPDATE, where round4 rounds
  // up to a multiple of `MastRules::locals_alignment`.
  kFmpRelative,
  // The frame pointer is the memory element `MastRules::fmp_address` (no register, no fmp
  // operations): a procedure with N locals starts with PUSH(R) PUSH(a) MLOAD ADD PUSH(a) MSTORE
  // DROP and ends with the same sequence over PUSH(p - R), where a = fmp_address and R =
  // round4(N) as above.
  kFmpInMemory,
};

// The MAST rules of one dialect. Immutable; a dialect's instance lives for the whole process.
struct MastRules {
  // Bits of one operation in an op group (the first operation in the least significant bits).
  uint32_t opcode_bits = 7;
  // Operations per op group.
  uint32_t ops_per_group = 9;
  // Op groups per batch (a batch is absorbed as this many felts into a block's digest).
  uint32_t groups_per_batch = 8;
  // Operations with any of these flags carry a value that takes an op-group slot of its own;
  // such an operation may not be the last of a full group.
  uint8_t group_slot_flags = kFlagImmediate;

  BlockMerge block_merge = BlockMerge::kContiguous;
  // See BlockMerge::kContiguous.
  uint32_t keep_apart_batches = 32;

  LoopShape loop_shape = LoopShape::kWhile;

  LocalsModel locals_model = LocalsModel::kFmpRelative;
  // Locals are reserved in multiples of this many felts.
  uint32_t locals_alignment = 4;
  // LocalsModel::kFmpInMemory: the memory address of the frame pointer.
  uint64_t fmp_address = 0;

  // The native operations the builder emits for control nodes: the LOOP row (Opcode::kLoop pops
  // the condition and may skip the body, Opcode::kLoopDo enters without popping), the CALL,
  // SYSCALL and DYNCALL rows (the context and frame-pointer semantics of the dialect). Their
  // wire opcodes are also the hash domains of LOOP, CALL and SYSCALL node digests.
  Opcode loop_op = Opcode::kLoop;
  Opcode call_op = Opcode::kCall;
  Opcode syscall_op = Opcode::kSyscall;
  Opcode dyncall_op = Opcode::kDynCall;

  // `procref.P` pushes P's MAST root one PUSH per element: false: element 0 first (element 3
  // ends on top, v0.16); true: element 3 first, so element 0 ends on top (v0.21+).
  bool procref_element0_on_top = false;

  // The clock a DYN / DYNCALL whose target is no procedure's MAST root traps at: true: the row
  // after the DYN row (v0.16 records the row before it looks the root up); false: the DYN row
  // itself (v0.24+ stops before the row is finished, to ask the host for a forest).
  bool dyn_miss_after_row = true;

  // Operations at the start of the program's entry block (`begin ... end`); may be empty.
  std::span<const LoweredOp> entry_prologue;

  // The constant digests of DYN and DYNCALL nodes (they do not depend on the callee).
  Word dyn_digest{};
  Word dyncall_digest{};
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_ASSEMBLER_MAST_RULES_H_
