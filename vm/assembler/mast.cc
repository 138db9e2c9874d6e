#include "vm/assembler/mast.h"

#include <cassert>
#include <utility>

#include "vm/crypto/hasher.h"

namespace flamefleet::vm {
namespace {

constexpr uint32_t kGroupSize = 9;  // ops per op group
constexpr uint32_t kBatchSize = 8;  // groups per batch

// Returns whether the current batch can take one more op: without an immediate it needs room in
// the current group or a free group slot; with one it also needs a slot for the immediate, and
// a new group if it would be the 9th op (an immediate op may not end a full group).
bool FitsInBatch(bool has_immediate, uint32_t op_idx, uint32_t next) {
  if (!has_immediate) return op_idx < kGroupSize || next < kBatchSize;
  if (op_idx < kGroupSize - 1) return next < kBatchSize;
  return next + 1 < kBatchSize;
}

uint32_t NextPowerOfTwo(uint32_t n) {
  uint32_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

uint32_t PackBlock(const std::vector<LoweredOp>& ops, std::vector<int32_t>* rows) {
  assert(!ops.empty());
  uint32_t batches = 1;
  uint32_t op_idx = 0;  // ops in the current op group
  uint32_t next = 1;    // next free group slot of the current batch
  bool last_has_imm = false;

  auto emit = [rows](int32_t row) {
    if (rows != nullptr) rows->push_back(row);
  };
  // Finishes the current op group: a group whose last op carries an immediate gets a NOOP.
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

  for (size_t i = 0; i < ops.size(); ++i) {
    const bool imm = HasImmediate(ops[i].opcode);
    const bool fits = FitsInBatch(imm, op_idx, next);
    if (!fits) {
      close_batch();
      emit(kRowRespan);
      ++batches;
      op_idx = 0;
      next = 1;
    }
    if (op_idx == kGroupSize) finish_group();
    if (imm) {
      if (op_idx == kGroupSize - 1) finish_group();
      ++next;  // the immediate's slot
    }
    emit(static_cast<int32_t>(i));
    ++op_idx;
    last_has_imm = imm;
  }
  close_batch();
  return batches;
}

uint64_t BlockRows(const std::vector<LoweredOp>& ops) {
  std::vector<int32_t> rows;
  PackBlock(ops, &rows);
  return rows.size() + 2;
}

Word BlockDigest(const std::vector<LoweredOp>& ops, const Hasher& hasher) {
  assert(!ops.empty());
  // Mirrors PackBlock's slot accounting; every batch contributes exactly kBatchSize felts.
  std::vector<Felt> groups(kBatchSize, Felt(0));
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
    const bool imm = HasImmediate(op.opcode);
    const bool fits = FitsInBatch(imm, op_idx, next);
    if (!fits) {
      groups[batch_base + group_idx] = Felt(group);
      batch_base = groups.size();
      groups.resize(groups.size() + kBatchSize, Felt(0));
      op_idx = 0;
      group_idx = 0;
      next = 1;
      group = 0;
    }
    if (op_idx == kGroupSize) finish_group();
    if (imm) {
      if (op_idx == kGroupSize - 1) finish_group();
      groups[batch_base + next] = Felt(op.imm);
      ++next;
    }
    group |= static_cast<uint64_t>(op.opcode) << (7 * op_idx);
    ++op_idx;
  }
  groups[batch_base + group_idx] = Felt(group);
  return hasher.HashElements(groups);
}

uint32_t MastForest::AddNode(MastNode node) {
  auto child = [this](const MastItem& item) -> const Word& { return nodes[item.node].digest; };
  constexpr Word kZero{};
  switch (node.kind) {
    case MastKind::kBlock:
      node.digest = BlockDigest(node.ops, *hasher_);
      break;
    case MastKind::kJoin:
      node.digest = hasher_->MergeInDomain(child(node.first), child(node.second),
                                           Felt(static_cast<uint64_t>(Opcode::kJoin)));
      break;
    case MastKind::kSplit:
      node.digest = hasher_->MergeInDomain(child(node.first), child(node.second),
                                           Felt(static_cast<uint64_t>(Opcode::kSplit)));
      break;
    case MastKind::kLoop:
      node.digest = hasher_->MergeInDomain(child(node.first), kZero,
                                           Felt(static_cast<uint64_t>(Opcode::kLoop)));
      break;
    case MastKind::kCall:
      node.digest = hasher_->MergeInDomain(child(node.first), kZero,
                                           Felt(static_cast<uint64_t>(Opcode::kCall)));
      break;
    case MastKind::kSyscall:
      node.digest = hasher_->MergeInDomain(child(node.first), kZero,
                                           Felt(static_cast<uint64_t>(Opcode::kSyscall)));
      break;
    case MastKind::kDyn:
      node.digest = kDynDigest;
      break;
    case MastKind::kDynCall:
      node.digest = kDynCallDigest;
      break;
    case MastKind::kExternal:
      break;  // set by the caller
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
