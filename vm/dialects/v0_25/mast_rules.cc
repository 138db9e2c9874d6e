// The v0.25 MAST rules: op groups of 9 seven-bit operations, batches of 8 groups, only PUSH
// values in their own group slots, contiguous blocks merged except procedure roots of 32 or more
// batches, the program entry prologue that stores the initial frame pointer, and the constant
// digests of DYN and DYNCALL nodes under Poseidon2; `while.true` as SPLIT(LOOP, [NOOP]) with
// do-while LOOPs that enter without popping, locals through the frame pointer in memory at
// 2^32 - 2 (crates/assembly/src/fmp.rs at v0.25.7), and CALL / SYSCALL / DYNCALL rows that keep
// that frame pointer per context.
#include "vm/assembler/mast_rules.h"

#include "vm/assembler/opcodes.h"
#include "vm/dialects/v0_25/v0_25.h"
#include "vm/felt.h"

namespace flamefleet::vm::v0_25 {
namespace {

// FMP_ADDR = 2^32 - 2 and FMP_INIT_VALUE = 2^31 (core/src/lib.rs at v0.25.7).
inline constexpr uint64_t kFmpAddr = (uint64_t{1} << 32) - 2;
inline constexpr uint64_t kFmpInit = uint64_t{1} << 31;

// mem[FMP_ADDR] <- 2^31: PUSH(2^31) PUSH(FMP_ADDR) MSTORE DROP.
constexpr LoweredOp kEntryPrologue[] = {
    {Opcode::kPush, kFmpInit},
    {Opcode::kPush, kFmpAddr},
    {Opcode::kMStore, 0},
    {Opcode::kDrop, 0},
};

constexpr ::flamefleet::vm::MastRules kRules = {
    .opcode_bits = 7,
    .ops_per_group = 9,
    .groups_per_batch = 8,
    .group_slot_flags = kFlagImmediate,
    .block_merge = BlockMerge::kContiguous,
    .keep_apart_batches = 32,
    .loop_shape = LoopShape::kSplitLoop,
    .locals_model = LocalsModel::kFmpInMemory,
    .locals_alignment = 4,
    .fmp_address = kFmpAddr,
    .loop_op = Opcode::kLoopDo,
    .call_op = Opcode::kCallMemFmp,
    .syscall_op = Opcode::kSyscallMemFmp,
    .dyncall_op = Opcode::kDynCallMemFmp,
    .procref_element0_on_top = true,
    .dyn_miss_after_row = false,
    .entry_prologue = kEntryPrologue,
    // merge_in_domain([0-word, 0-word], 0x58) and (…, 0x5C) under Poseidon2.
    .dyn_digest = {Felt(16952228088962355159ULL), Felt(5793482471479538911ULL),
                   Felt(14446299416172848527ULL), Felt(13522295374716441620ULL)},
    .dyncall_digest = {Felt(16830415514927835337ULL), Felt(12164645914672292987ULL),
                       Felt(13192574193032437705ULL), Felt(4604554596675732269ULL)},
};

}  // namespace

const ::flamefleet::vm::MastRules& MastRules() { return kRules; }

}  // namespace flamefleet::vm::v0_25
