#include "vm/assembler/mast.h"

#include <cassert>
#include <utility>

#include "vm/crypto/hasher.h"

namespace flamefleet::vm {
namespace {

// Returns whether `op` carries a value that takes an op-group slot under `rules`.
bool TakesSlot(const MastRules& rules, Opcode op) {
  return (OpcodeFlags(op) & rules.group_slot_flags) != 0;
}

// Returns whether the current batch can take one more op: without a slot value it needs room in
// the current group or a free group slot; with one it also needs a slot for the value, and a new
// group if it would be the group's last op (such an op may not end a full group).
bool FitsInBatch(const MastRules& rules, bool takes_slot, uint32_t op_idx, uint32_t next) {
  if (!takes_slot) return op_idx < rules.ops_per_group || next < rules.groups_per_batch;
  if (op_idx < rules.ops_per_group - 1) return next < rules.groups_per_batch;
  return next + 1 < rules.groups_per_batch;
}

uint32_t NextPowerOfTwo(uint32_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// Returns the domain felt of a control node: its wire opcode.
Felt Domain(const WireOpcodeTable& wire, Opcode op) {
  assert(wire[OpcodeIndex(op)] != kNotNative);
  return Felt(static_cast<uint64_t>(wire[OpcodeIndex(op)]));
}

}  // namespace

uint32_t PackBlock(const std::vector<LoweredOp>& ops, const MastRules& rules,
                   std::vector<int32_t>* rows) {
  assert(!ops.empty());
  const uint32_t group_size = rules.ops_per_group;
  uint32_t batches = 1;
  uint32_t op_idx = 0;  // ops in the current op group
  uint32_t next = 1;    // next free group slot of the current batch
  bool last_has_imm = false;

  auto emit = [rows](int32_t row) {
    if (rows != nullptr) rows->push_back(row);
  };
  // Finishes the current op group: a group whose last op carries a slot value gets a NOOP.
  auto finish_group = [&]() {
    if (last_has_imm) emit(kRowPadNoop);
    last_has_imm = false;
    ++next;
    op_idx = 0;
  };
  auto close_batch = [&]() {
    if (last_has_imm) emit(kRowPadNoop);
    last_has_imm = false;
    for (uint32_t g = next; g < NextPowerOfTwo(next); ++g) emit(kRowPadNoop);
  };

  // Pseudo ops (TRACE decorators) take no slot: each is emitted just before the next real op's
  // row (after any padding NOOP or RESPAN before it), or after the last padding before END.
  size_t first_pending = ops.size();
  auto emit_pending = [&](size_t upto) {
    for (size_t k = first_pending; k < upto; ++k) emit(static_cast<int32_t>(k));
    first_pending = ops.size();
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    if (IsPseudo(ops[i].opcode)) {
      if (first_pending == ops.size()) first_pending = i;
      continue;
    }
    const bool imm = TakesSlot(rules, ops[i].opcode);
    const bool fits = FitsInBatch(rules, imm, op_idx, next);
    if (!fits) {
      close_batch();
      emit(kRowRespan);
      ++batches;
      op_idx = 0;
      next = 1;
    }
    if (op_idx == group_size) finish_group();
    if (imm) {
      if (op_idx == group_size - 1) finish_group();
      ++next;  // the value's slot
    }
    emit_pending(i);
    emit(static_cast<int32_t>(i));
    ++op_idx;
    last_has_imm = imm;
  }
  close_batch();
  emit_pending(ops.size());
  return batches;
}

uint64_t BlockRows(const std::vector<LoweredOp>& ops, const MastRules& rules) {
  std::vector<int32_t> rows;
  PackBlock(ops, rules, &rows);
  uint64_t n = 2;  // SPAN and END
  for (int32_t r : rows) n += r < 0 || !IsPseudo(ops[r].opcode);
  return n;
}

Word BlockDigest(const std::vector<LoweredOp>& ops, const MastRules& rules,
                 const WireOpcodeTable& wire, const Hasher& hasher) {
  return hasher.HashElements(BlockBatchFelts(ops, rules, wire));
}

std::vector<Felt> BlockBatchFelts(const std::vector<LoweredOp>& ops, const MastRules& rules,
                                  const WireOpcodeTable& wire) {
  assert(!ops.empty());
  const uint32_t group_size = rules.ops_per_group;
  const uint32_t batch_size = rules.groups_per_batch;
  // Mirrors PackBlock's slot accounting; every batch contributes exactly batch_size felts.
  std::vector<Felt> groups(batch_size, Felt(0));
  size_t batch_base = 0;  // index of the current batch's slot 0 in `groups`
  uint32_t op_idx = 0;
  uint32_t group_idx = 0;
  uint32_t next = 1;
  uint64_t group = 0;
  auto finish_group = [&]() {
    groups[batch_base + group_idx] = Felt(group);
    group_idx = next++;
    op_idx = 0;
    group = 0;
  };
  for (const LoweredOp& op : ops) {
    if (IsPseudo(op.opcode)) continue;  // a TRACE decorator: not hashed
    const bool imm = TakesSlot(rules, op.opcode);
    const bool fits = FitsInBatch(rules, imm, op_idx, next);
    if (!fits) {
      groups[batch_base + group_idx] = Felt(group);
      batch_base = groups.size();
      groups.resize(groups.size() + batch_size, Felt(0));
      op_idx = 0;
      group_idx = 0;
      next = 1;
      group = 0;
    }
    if (op_idx == group_size) finish_group();
    if (imm) {
      if (op_idx == group_size - 1) finish_group();
      groups[batch_base + next] = Felt(op.imm);
      ++next;
    }
    const int8_t code = wire[OpcodeIndex(op.opcode)];
    assert(code != kNotNative);
    group |= static_cast<uint64_t>(static_cast<uint8_t>(code)) << (rules.opcode_bits * op_idx);
    ++op_idx;
  }
  groups[batch_base + group_idx] = Felt(group);
  return groups;
}

uint32_t MastForest::AddNode(MastNode node) {
  auto child = [this](const MastItem& item) -> const Word& { return nodes[item.node].digest; };
  constexpr Word kZero{};
  const WireOpcodeTable& wire = *wire_;
  switch (node.kind) {
    case MastKind::kBlock:
      node.digest = BlockDigest(node.ops, *rules_, wire, *hasher_);
      break;
    case MastKind::kJoin:
      node.digest = hasher_->MergeInDomain(child(node.first), child(node.second),
                                           Domain(wire, Opcode::kJoin));
      break;
    case MastKind::kSplit:
      node.digest = hasher_->MergeInDomain(child(node.first), child(node.second),
                                           Domain(wire, Opcode::kSplit));
      break;
    case MastKind::kLoop:
      node.digest = hasher_->MergeInDomain(child(node.first), kZero, Domain(wire, rules_->loop_op));
      break;
    case MastKind::kCall:
      node.digest = hasher_->MergeInDomain(child(node.first), kZero, Domain(wire, rules_->call_op));
      break;
    case MastKind::kSyscall:
      node.digest =
          hasher_->MergeInDomain(child(node.first), kZero, Domain(wire, rules_->syscall_op));
      break;
    case MastKind::kDyn:
      node.digest = rules_->dyn_digest;
      break;
    case MastKind::kDynCall:
      node.digest = rules_->dyncall_digest;
      break;
    case MastKind::kExternal:
    case MastKind::kTraces:
      break;  // kExternal: set by the caller; kTraces: no digest
  }
  nodes.push_back(std::move(node));
  return static_cast<uint32_t>(nodes.size() - 1);
}

uint32_t MastForest::ExtendChain(uint32_t parent, uint32_t procedure) {
  for (const auto& [proc, id] : children_[parent]) {
    if (proc == procedure) return id;
  }
  uint32_t id = static_cast<uint32_t>(chains.size());
  chains.push_back(InlineChain{parent, procedure, chains[parent].depth + 1});
  children_.emplace_back();
  children_[parent].emplace_back(procedure, id);
  return id;
}

uint32_t MastForest::ConcatChain(uint32_t prefix, uint32_t chain) {
  if (chain == 0) return prefix;
  uint32_t base = ConcatChain(prefix, chains[chain].parent);
  return ExtendChain(base, chains[chain].procedure);
}

}  // namespace flamefleet::vm
