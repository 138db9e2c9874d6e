#include "vm/assembler/mast.h"

#include <vector>

#include "gtest/gtest.h"
#include "vm/crypto/rpo.h"
#include "vm/dialects/v0_16/v0_16.h"

namespace flamefleet::vm {
namespace {

const MastRules& Rules() { return v0_16::MastRules(); }

std::vector<LoweredOp> Ops(std::initializer_list<Opcode> codes) {
  std::vector<LoweredOp> ops;
  for (Opcode c : codes) ops.push_back(LoweredOp{c, c == Opcode::kPush ? 7u : 0u});
  return ops;
}

TEST(PackBlockTest, OneGroupBlockPadsNothing) {
  EXPECT_EQ(BlockRows(Ops({Opcode::kAdd}), Rules()), 3u);
  EXPECT_EQ(BlockRows(Ops({Opcode::kPad, Opcode::kDrop}), Rules()), 4u);
}

TEST(PackBlockTest, ImmediateAtGroupEndAddsNoop) {
  // PUSH in one group with its immediate in slot 1: 2 groups, and the group ends with PUSH.
  std::vector<int32_t> rows;
  EXPECT_EQ(PackBlock(Ops({Opcode::kPush}), Rules(), &rows), 1u);
  EXPECT_EQ(rows, (std::vector<int32_t>{0, kRowPadNoop}));
}

TEST(PackBlockTest, WorkedExampleOneBatchBothNoops) {
  // A worked example: 14 ops (5 PUSH) in one batch, both group-end NOOPs: 18 rows.
  auto ops = Ops({Opcode::kPush, Opcode::kPush, Opcode::kPush, Opcode::kPad, Opcode::kMul,
                  Opcode::kAdd, Opcode::kDrop, Opcode::kPush, Opcode::kPush, Opcode::kMul,
                  Opcode::kAdd, Opcode::kInv, Opcode::kSwap, Opcode::kDrop});
  EXPECT_EQ(BlockRows(ops, Rules()), 18u);
}

TEST(PackBlockTest, RespanBlockHasTwentyThreeRows) {
  // 8 PUSH, ADD, PUSH, SWAPDW, 8 DROP (decoder test span_block_with_respan).
  std::vector<LoweredOp> ops;
  for (int i = 0; i < 8; ++i) ops.push_back({Opcode::kPush, uint64_t(i + 2)});
  ops.push_back({Opcode::kAdd, 0});
  ops.push_back({Opcode::kPush, 10});
  ops.push_back({Opcode::kSwapDW, 0});
  for (int i = 0; i < 8; ++i) ops.push_back({Opcode::kDrop, 0});
  std::vector<int32_t> rows;
  EXPECT_EQ(PackBlock(ops, Rules(), &rows), 2u);
  EXPECT_EQ(rows.size() + 2, 23u);
  // SPAN, 7 PUSH, NOOP, RESPAN, ...
  EXPECT_EQ(rows[7], kRowPadNoop);
  EXPECT_EQ(rows[8], kRowRespan);
}

TEST(PackBlockTest, ThreeThousandOpsGiveFib) {
  std::vector<LoweredOp> ops;
  for (int i = 0; i < 1000; ++i) {
    ops.push_back({Opcode::kSwap, 0});
    ops.push_back({Opcode::kDup1, 0});
    ops.push_back({Opcode::kAdd, 0});
  }
  EXPECT_EQ(BlockRows(ops, Rules()), 3045u);
  EXPECT_EQ(PackBlock(ops, Rules(), nullptr), 42u);
}

TEST(PackBlockTest, SingleBatchRowTable) {
  // Rows of an n-op block without immediates: n, SPAN and END, and the padding NOOPs that
  // fill the batch up to a power of two groups.
  const int extra[] = {2, 2, 3, 2, 5, 4, 3, 2};
  for (int n = 1; n <= 72; ++n) {
    std::vector<LoweredOp> ops(n, LoweredOp{Opcode::kNoop, 0});
    EXPECT_EQ(BlockRows(ops, Rules()), uint64_t(n + extra[(n - 1) / 9])) << n;
  }
}

TEST(MastForestTest, ChainsAreInterned) {
  MastForest f(RpoHasher::Get(), Rules(), v0_16::WireOpcodes());
  uint32_t a = f.ExtendChain(0, 5);
  uint32_t b = f.ExtendChain(a, 7);
  EXPECT_EQ(f.ExtendChain(0, 5), a);
  EXPECT_EQ(f.chains[b].depth, 2u);
  uint32_t c = f.ExtendChain(0, 9);
  uint32_t d = f.ConcatChain(c, b);
  EXPECT_EQ(f.chains[d].depth, 3u);
  EXPECT_EQ(f.chains[d].procedure, 7u);
  EXPECT_EQ(f.chains[f.chains[d].parent].procedure, 5u);
}

}  // namespace
}  // namespace flamefleet::vm
