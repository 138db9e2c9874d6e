// Tests of MastRules (vm/assembler/mast_rules.h): the v0.16 values, and packing and digests that
// follow the rules they are given.
#include "vm/assembler/mast_rules.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "vm/assembler/mast.h"
#include "vm/assembler/opcodes.h"
#include "vm/crypto/hasher.h"
#include "vm/crypto/rpo.h"
#include "vm/dialects/v0_16/v0_16.h"

namespace flamefleet::vm {
namespace {

// splitmix64 with a fixed seed, so failures reproduce.
class Stream {
 public:
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_ = 42;
};

// "P" PUSH, "E" EMIT, anything else ADD.
std::vector<LoweredOp> Ops(const char* pattern) {
  std::vector<LoweredOp> ops;
  for (const char* c = pattern; *c != '\0'; ++c) {
    ops.push_back(LoweredOp{*c == 'P'   ? Opcode::kPush
                            : *c == 'E' ? Opcode::kEmit
                                        : Opcode::kAdd,
                            0});
  }
  return ops;
}

std::vector<LoweredOp> Noops(int n) { return std::vector<LoweredOp>(n, LoweredOp{}); }

TEST(MastRulesTest, V016RulesHoldTheV016Constants) {
  const MastRules& rules = v0_16::MastRules();
  EXPECT_EQ(rules.opcode_bits, 7u);
  EXPECT_EQ(rules.ops_per_group, 9u);
  EXPECT_EQ(rules.groups_per_batch, 8u);
  EXPECT_EQ(rules.group_slot_flags, kFlagImmediate);
  EXPECT_EQ(rules.block_merge, BlockMerge::kContiguous);
  EXPECT_EQ(rules.keep_apart_batches, 32u);
  EXPECT_EQ(rules.loop_shape, LoopShape::kWhile);
  EXPECT_EQ(rules.locals_model, LocalsModel::kFmpRelative);
  EXPECT_EQ(rules.locals_alignment, 4u);
  EXPECT_TRUE(rules.entry_prologue.empty());
  EXPECT_EQ(rules.dyn_digest, (Word{Felt(8115106948140260551ULL), Felt(13491227816952616836ULL),
                                    Felt(15015806788322198710ULL), Felt(16575543461540527115ULL)}));
  EXPECT_EQ(rules.dyncall_digest,
            (Word{Felt(8751004906421739448ULL), Felt(13469709002495534233ULL),
                  Felt(12584249374630430826ULL), Felt(7624899870831503004ULL)}));
}

TEST(MastRulesTest, V016PackingGivesTheRowsOfTheHardCodedPacker) {
  // The expected rows were produced by the packer with the v0.16 constants hard-coded (before
  // the rules became data) and are written out here.
  std::vector<int32_t> rows;
  EXPECT_EQ(PackBlock(Ops("PAPPAAAAAAAPAPAAAAAAAAEPPPPPPPA"), v0_16::MastRules(), &rows), 3u);
  EXPECT_EQ(rows, (std::vector<int32_t>{0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,
                                        12, 13, 14, 15, 16, 17, 18, 19, 20, 21, -2, 22,
                                        23, 24, 25, 26, 27, 28, -1, -2, 29, 30}));
  // 500 pseudo-random blocks of 1..200 PUSH / EMIT / ADD: an FNV-1a hash of all their rows
  // (each block's rows followed by 0xffff), the number of rows and of batches.
  Stream stream;
  uint64_t hash = 1469598103934665603ULL;
  uint64_t total_rows = 0;
  uint64_t total_batches = 0;
  for (int b = 0; b < 500; ++b) {
    std::vector<LoweredOp> ops(1 + stream.Next() % 200);
    for (LoweredOp& op : ops) {
      const uint64_t r = stream.Next() % 4;
      op.opcode = r == 0 ? Opcode::kPush : r == 1 ? Opcode::kEmit : Opcode::kAdd;
    }
    rows.clear();
    total_batches += PackBlock(ops, v0_16::MastRules(), &rows);
    for (int32_t r : rows) {
      hash ^= static_cast<uint32_t>(r);
      hash *= 1099511628211ULL;
    }
    hash ^= 0xffff;
    hash *= 1099511628211ULL;
    total_rows += rows.size();
  }
  EXPECT_EQ(hash, 15764495469476664029ULL);
  EXPECT_EQ(total_rows, 57734u);
  EXPECT_EQ(total_batches, 4402u);
}

TEST(MastRulesTest, PackingFollowsGroupAndBatchSizes) {
  MastRules small = v0_16::MastRules();
  small.ops_per_group = 4;
  small.groups_per_batch = 4;
  std::vector<int32_t> rows;
  // 17 ops: four full groups of 4 fill the batch; the 17th starts a second batch.
  EXPECT_EQ(PackBlock(Noops(17), small, &rows), 2u);
  std::vector<int32_t> expected;
  for (int i = 0; i < 16; ++i) expected.push_back(i);
  expected.push_back(kRowRespan);
  expected.push_back(16);
  EXPECT_EQ(rows, expected);
  EXPECT_EQ(BlockRows(Noops(17), small), 20u);
  // The same block under v0.16 is one batch of two groups.
  EXPECT_EQ(PackBlock(Noops(17), v0_16::MastRules(), nullptr), 1u);
  EXPECT_EQ(BlockRows(Noops(17), v0_16::MastRules()), 19u);
  // 5 ops: two groups, no padding (2 is a power of two); 9 ops: three groups, one NOOP.
  EXPECT_EQ(BlockRows(Noops(5), small), 7u);
  EXPECT_EQ(BlockRows(Noops(9), small), 12u);
}

TEST(MastRulesTest, GroupSlotFlagsDecideWhichValuesTakeASlot) {
  std::vector<int32_t> rows;
  PackBlock(Ops("P"), v0_16::MastRules(), &rows);
  EXPECT_EQ(rows, (std::vector<int32_t>{0, kRowPadNoop}));  // PUSH ends its group: a NOOP
  MastRules no_slots = v0_16::MastRules();
  no_slots.group_slot_flags = kFlagNone;
  rows.clear();
  PackBlock(Ops("P"), no_slots, &rows);
  EXPECT_EQ(rows, (std::vector<int32_t>{0}));
  // Without slots, 72 PUSHes fill exactly one batch; with them they need several.
  std::vector<LoweredOp> pushes(72, LoweredOp{Opcode::kPush, 1});
  EXPECT_EQ(PackBlock(pushes, no_slots, nullptr), 1u);
  EXPECT_GT(PackBlock(pushes, v0_16::MastRules(), nullptr), 1u);
}

TEST(MastRulesTest, BlockDigestHashesWireOpcodes) {
  const std::vector<LoweredOp> ops = Ops("PAAE");
  const Word v016 = BlockDigest(ops, v0_16::MastRules(), v0_16::WireOpcodes(), RpoHasher::Get());
  WireOpcodeTable copy = v0_16::WireOpcodes();
  EXPECT_EQ(BlockDigest(ops, v0_16::MastRules(), copy, RpoHasher::Get()), v016);
  copy[OpcodeIndex(Opcode::kAdd)] = 35;  // another encoding of ADD
  EXPECT_NE(BlockDigest(ops, v0_16::MastRules(), copy, RpoHasher::Get()), v016);
  // One batch: PUSH(wire 91) ADD(34) ADD(34) EMIT(90) in group 0, the values in slots 1 and 2.
  std::vector<Felt> groups(8, Felt(0));
  groups[0] = Felt(91 | (34u << 7) | (34u << 14) | (uint64_t{90} << 21));
  EXPECT_EQ(v016, RpoHasher::Get().HashElements(groups));
}

TEST(MastRulesTest, ForestDigestsFollowTheRules) {
  MastRules rules = v0_16::MastRules();
  rules.dyn_digest = Word{Felt(1), Felt(2), Felt(3), Felt(4)};
  MastForest forest(RpoHasher::Get(), rules, v0_16::WireOpcodes());
  MastNode dyn;
  dyn.kind = MastKind::kDyn;
  const uint32_t id = forest.AddNode(dyn);
  EXPECT_EQ(forest.nodes[id].digest, rules.dyn_digest);
  // Control nodes hash in the domain of their wire opcode (JOIN = 87 in v0.16).
  MastNode block;
  block.kind = MastKind::kBlock;
  block.ops = Ops("A");
  block.origins.resize(1);
  const uint32_t a = forest.AddNode(block);
  MastNode join;
  join.kind = MastKind::kJoin;
  join.first = MastItem{a, 0};
  join.second = MastItem{a, 0};
  const uint32_t j = forest.AddNode(join);
  EXPECT_EQ(forest.nodes[j].digest, RpoHasher::Get().MergeInDomain(
                                        forest.nodes[a].digest, forest.nodes[a].digest, Felt(87)));
}

}  // namespace
}  // namespace flamefleet::vm
