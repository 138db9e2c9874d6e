// The MAST (Merkelized abstract syntax tree) the assembler builds before linearising it, and the
// op-group / batch packing that decides how many rows a basic block costs. Packing and digests
// follow a dialect's MastRules (vm/assembler/mast_rules.h) and wire opcode table.
//
// Internal to the assembler; other components see only vm/assembler/program.h.
//
//   std::vector<int32_t> rows;
//   uint32_t batches = PackBlock(ops, rules, &rows);   // rows: op indices, kRowPadNoop, kRowRespan
#ifndef FLAMEFLEET_VM_ASSEMBLER_MAST_H_
#define FLAMEFLEET_VM_ASSEMBLER_MAST_H_

#include <cstdint>
#include <vector>

#include "vm/assembler/mast_rules.h"
#include "vm/assembler/opcodes.h"
#include "vm/crypto/hasher.h"
#include "vm/felt.h"

namespace flamefleet::vm {

// Row markers produced by PackBlock in addition to op indices (>= 0).
inline constexpr int32_t kRowPadNoop = -1;  // a NOOP the decoder executes (group/batch padding)
inline constexpr int32_t kRowRespan = -2;   // the RESPAN row that starts the next batch

// Packs a basic block's operations into op groups (rules.ops_per_group ops) and batches
// (rules.groups_per_batch groups) and returns the number of batches. An operation with one of
// rules.group_slot_flags takes a second group slot for its value, is never the last op of a full
// group (a new group starts instead), and a group it ends gets a padding NOOP; a batch's groups
// are padded with NOOPs up to a power of two; a RESPAN row starts every batch after the first.
// If `rows` is not null it receives the executed row sequence between SPAN and END: op indices
// in order, with kRowPadNoop where the decoder executes a padding NOOP and kRowRespan between
// batches. A pseudo op in `ops` (a TRACE decorator) takes no slot and no row: its index comes
// just before the next real op's (after the padding or RESPAN before that op), or last. Requires
// at least one op that is not pseudo.
uint32_t PackBlock(const std::vector<LoweredOp>& ops, const MastRules& rules,
                   std::vector<int32_t>* rows);

// Returns the number of rows (cycles) the block costs, SPAN and END included.
uint64_t BlockRows(const std::vector<LoweredOp>& ops, const MastRules& rules);

// Returns the MAST digest of a basic block with these operations: `hasher`'s hash
// (HashElements) of its batches, each absorbed as rules.groups_per_batch felts (an op group holds
// its ops' wire opcodes, rules.opcode_bits each, first op in the least significant bits; values
// of ops with rules.group_slot_flags fill their own group slots; unused slots are 0). Error codes
// and pseudo ops (TRACE decorators) are not hashed. Requires an op that is not pseudo and a wire
// opcode for every other op. Thread-safe.
Word BlockDigest(const std::vector<LoweredOp>& ops, const MastRules& rules,
                 const WireOpcodeTable& wire, const Hasher& hasher);

// Returns the felts BlockDigest hashes: rules.groups_per_batch per batch, batch 0 first (the
// rate of each batch's permutation request). Requires what BlockDigest requires.
std::vector<Felt> BlockBatchFelts(const std::vector<LoweredOp>& ops, const MastRules& rules,
                                  const WireOpcodeTable& wire);

// A procedure id, or kNoProcedure.
inline constexpr uint32_t kNoProcedure = ~uint32_t{0};

// A reference from a body to a node. `chain` (an InlineChain id, 0 = none) lists the procedures
// entered on the way to the node when it is reached through `exec` / `call`: the callee, and,
// when the callee's body is itself a single `exec`, that procedure too, and so on. Each gets a
// frame on the call stack.
// MastItem::before / after when there are no decorators.
inline constexpr uint32_t kNoTraces = ~uint32_t{0};

// `before` / `after` (a kTraces node, or kNoTraces): TRACE decorators that run just before the
// item's first row / just after its last, at this reference only (decorators between control
// constructs, or at the end of a body after one).
struct MastItem {
  uint32_t node = 0;
  uint32_t chain = 0;
  uint32_t before = kNoTraces;
  uint32_t after = kNoTraces;
  // A statically linked library procedure's root as copied into the caller: it merges with its
  // neighbours even when it is a large procedure root elsewhere.
  bool static_copy = false;
};

enum class MastKind : uint8_t {
  kBlock,
  kJoin,
  kSplit,
  kLoop,
  kCall,
  kSyscall,
  kExternal,  // a procedure of a dynamically linked library; no rows of its own
  kDyn,       // dynexec: the callee's root is read from memory at run time
  kDynCall,   // dyncall: as kDyn, in a new context
  // Decorators with no operation to attach to (ops: only TRACE pseudo ops). Never a child or a
  // body: MastBuilder merges them into a neighbouring block or hangs them on a neighbouring item
  // (MastItem::before / after). No rows, no digest.
  kTraces,
};

// OpOrigin::reenter when the op continues the inlined executions of the op before it.
inline constexpr uint32_t kNoReenter = ~uint32_t{0};

// Per-operation attribution inside a block.
struct OpOrigin {
  uint32_t chain = 0;   // inline chain (see MastForest::chains); 0 = the block's owner itself
  uint32_t source = 0;  // index into Program::source_ops
  // The first op of one lowering of `source` (per-instruction counts: Program::row_roles).
  bool starts = false;
  // The first op of a new inlined execution: the frames of `chain` below this depth go on,
  // the deeper ones are new calls even when the op before had the same chain (`exec.p exec.p`
  // with p inlined). kNoReenter: no execution starts here.
  uint32_t reenter = kNoReenter;
};

struct MastNode {
  MastKind kind = MastKind::kBlock;
  bool is_procedure_root = false;
  uint32_t source = 0;  // source op of the construct (if/while/call), for errors
  MastItem first;       // JOIN first, SPLIT on_true, LOOP body, CALL callee
  MastItem second;      // JOIN second, SPLIT on_false
  // kBlock and kTraces only:
  std::vector<LoweredOp> ops;
  std::vector<OpOrigin> origins;  // parallel to ops
  uint32_t num_batches = 0;
  // kExternal only: the procedure that is run.
  uint32_t procedure = kNoProcedure;
  // The node's MAST root (digest). MastForest::AddNode computes it from the children, which
  // must already be in the forest; for kExternal the caller sets it (the procedure's root).
  Word digest{};
};

// An inline chain: the procedures, outermost first, whose bodies were merged (inlined) into a
// block at some op, relative to the block's owner. Chain 0 is empty.
struct InlineChain {
  uint32_t parent = 0;
  uint32_t procedure = kNoProcedure;
  uint32_t depth = 0;
};

// The nodes of one assembly. Node digests are computed with the forest's Hasher, MastRules and
// wire opcode table (control nodes hash their children in the domain of their wire opcode). Not
// thread-safe.
struct MastForest {
  // Creates an empty forest that digests with `hasher`, `rules` and `wire`, which must outlive
  // the forest.
  MastForest(const Hasher& hasher, const MastRules& rules, const WireOpcodeTable& wire)
      : hasher_(&hasher), rules_(&rules), wire_(&wire) {}

  std::vector<MastNode> nodes;
  std::vector<InlineChain> chains{InlineChain{}};

  // Returns the chain `parent` + `procedure`, creating it if needed.
  uint32_t ExtendChain(uint32_t parent, uint32_t procedure);
  // Returns `prefix` followed by the procedures of `chain`.
  uint32_t ConcatChain(uint32_t prefix, uint32_t chain);
  // Returns the outermost procedure of a non-empty chain.
  uint32_t Outermost(uint32_t chain) const {
    while (chains[chain].depth > 1) chain = chains[chain].parent;
    return chains[chain].procedure;
  }

  // Adds `node`, computing its digest (except for kExternal), and returns its id.
  uint32_t AddNode(MastNode node);

  // Returns the hasher that digests this forest's nodes.
  const Hasher& hasher() const { return *hasher_; }
  // Returns the rules that pack this forest's blocks.
  const MastRules& rules() const { return *rules_; }
  // Returns the wire opcode table this forest's digests use.
  const WireOpcodeTable& wire() const { return *wire_; }

 private:
  const Hasher* hasher_;         // never null
  const MastRules* rules_;       // never null
  const WireOpcodeTable* wire_;  // never null
  // (parent << 32 | procedure) -> chain id; small linear probing is unnecessary here.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> children_{1};
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_ASSEMBLER_MAST_H_
