#include "vm/assembler/mast.h"

#include <cassert>

namespace flamefleet::vm {
namespace {

constexpr uint32_t kGroupSize = 9;  // ops per op group
constexpr uint32_t kBatchSize = 8;  // groups per batch

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
    bool fits;
    if (!imm) {
      fits = op_idx < kGroupSize || next < kBatchSize;
    } else if (op_idx < kGroupSize - 1) {
      fits = next < kBatchSize;
    } else {
      fits = next + 1 < kBatchSize;
    }
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
