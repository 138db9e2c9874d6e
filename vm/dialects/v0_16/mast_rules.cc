// The v0.16 MAST rules: op groups of 9 seven-bit operations, batches of 8 groups, PUSH and EMIT
// values in their own group slots, contiguous blocks merged except procedure roots of 32 or more
// batches, `while.true` as one LOOP node, fmp-relative locals, no entry prologue, and the
// constant digests of DYN and DYNCALL nodes.
#include "vm/assembler/mast_rules.h"

#include "vm/assembler/opcodes.h"
#include "vm/dialects/v0_16/v0_16.h"
#include "vm/felt.h"

namespace flamefleet::vm::v0_16 {
namespace {

constexpr ::flamefleet::vm::MastRules kRules = {
    .opcode_bits = 7,
    .ops_per_group = 9,
    .groups_per_batch = 8,
    .group_slot_flags = kFlagImmediate,
    .block_merge = BlockMerge::kContiguous,
    .keep_apart_batches = 32,
    .loop_shape = LoopShape::kWhile,
    .locals_model = LocalsModel::kFmpRelative,
    .locals_alignment = 4,
    .fmp_address = 0,
    .loop_op = Opcode::kLoop,
    .call_op = Opcode::kCall,
    .syscall_op = Opcode::kSyscall,
    .dyncall_op = Opcode::kDynCall,
    .procref_element0_on_top = false,
    .dyn_miss_after_row = true,
    .entry_prologue = {},
    // The default digests of the VM's DynNode for DYN and DYNCALL.
    .dyn_digest = {Felt(8115106948140260551ULL), Felt(13491227816952616836ULL),
                   Felt(15015806788322198710ULL), Felt(16575543461540527115ULL)},
    .dyncall_digest = {Felt(8751004906421739448ULL), Felt(13469709002495534233ULL),
                       Felt(12584249374630430826ULL), Felt(7624899870831503004ULL)},
};

}  // namespace

const ::flamefleet::vm::MastRules& MastRules() { return kRules; }

}  // namespace flamefleet::vm::v0_16
