// Tests of the assembler's MastBuilder (vm/assembler/mast_builder.h): the MAST it builds follows
// the MastRules it is given.
#include "vm/assembler/mast_builder.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tests/testing/classic.h"
#include "vm/assembler/assembler.h"
#include "vm/assembler/linker.h"
#include "vm/assembler/mast.h"
#include "vm/assembler/mast_rules.h"
#include "vm/assembler/program.h"
#include "vm/crypto/hasher.h"
#include "vm/crypto/rpo.h"
#include "vm/dialects/v0_16/v0_16.h"
#include "vm/parser/source_manager.h"

namespace flamefleet::vm {
namespace {

constexpr char kTwoBlocksAndAnExec[] = R"(proc.foo
  add
end
begin
  push.10 push.20
  exec.foo
  push.30
end
)";

class MastBuilderTest : public ::testing::Test {
 protected:
  // Links and builds `text` with `rules`; returns the entry procedure's root node.
  const MastNode& Build(const std::string& text, const MastRules& rules) {
    sources_ = std::make_shared<SourceManager>();
    program_ = Program{};
    program_.source_ops.push_back(SourceOp{});
    const uint32_t file = sources_->Add("main.masm", text);
    linker_ = std::make_unique<Linker>(options_, sources_, &program_.procedures);
    absl::StatusOr<uint32_t> main_id = linker_->LinkProgram(file);
    EXPECT_TRUE(main_id.ok()) << main_id.status();
    builder_ = std::make_unique<MastBuilder>(*linker_, options_, limits_, *sources_, rules,
                                             v0_16::WireOpcodes(), RpoHasher::Get(), &program_);
    absl::StatusOr<MastItem> root = builder_->CompileProcedure(*main_id, {});
    EXPECT_TRUE(root.ok()) << root.status();
    EXPECT_TRUE(builder_->compiled(*main_id));
    return builder_->forest().nodes[root->node];
  }

  const MastNode& Node(const MastItem& item) const { return builder_->forest().nodes[item.node]; }

  AssemblerOptions options_ = testutil::ClassicOptions();
  AssembleLimits limits_;
  std::shared_ptr<SourceManager> sources_;
  Program program_;
  std::unique_ptr<Linker> linker_;
  std::unique_ptr<MastBuilder> builder_;
};

TEST_F(MastBuilderTest, V016RulesGiveTheAssemblersMastRoot) {
  const MastNode& root = Build(kTwoBlocksAndAnExec, v0_16::MastRules());
  Assembler assembler(testutil::ClassicOptions());
  absl::StatusOr<Program> assembled = assembler.AssembleSource("main.masm", kTwoBlocksAndAnExec);
  ASSERT_TRUE(assembled.ok()) << assembled.status();
  EXPECT_EQ(root.digest, assembled->procedures[assembled->entry_procedure].mast_root);
  EXPECT_EQ(root.digest, program_.procedures[0].mast_root);
}

TEST_F(MastBuilderTest, ContiguousBlocksMergeUnderV016Rules) {
  const MastNode& root = Build(kTwoBlocksAndAnExec, v0_16::MastRules());
  ASSERT_EQ(root.kind, MastKind::kBlock);
  // PUSH(10) PUSH(20), the inlined ADD, PUSH(30).
  ASSERT_EQ(root.ops.size(), 4u);
  EXPECT_EQ(root.ops[2].opcode, Opcode::kAdd);
  EXPECT_NE(root.origins[2].chain, 0u);  // attributed to foo
}

TEST_F(MastBuilderTest, NoMergeRuleKeepsEveryBlockApart) {
  MastRules rules = v0_16::MastRules();
  rules.block_merge = BlockMerge::kNone;
  const MastNode& root = Build(kTwoBlocksAndAnExec, rules);
  // JOIN(JOIN(block, foo), block): three blocks in a balanced JOIN tree.
  ASSERT_EQ(root.kind, MastKind::kJoin);
  const MastNode& left = Node(root.first);
  ASSERT_EQ(left.kind, MastKind::kJoin);
  EXPECT_EQ(Node(left.first).kind, MastKind::kBlock);
  EXPECT_EQ(Node(left.second).kind, MastKind::kBlock);
  EXPECT_NE(left.second.chain, 0u);  // foo's root, entered through its chain
  EXPECT_EQ(Node(root.second).kind, MastKind::kBlock);
  EXPECT_EQ(Node(root.second).ops.size(), 1u);
}

TEST_F(MastBuilderTest, KeepApartThresholdSeparatesLargeProcedureRoots) {
  MastRules rules = v0_16::MastRules();
  rules.keep_apart_batches = 1;  // every procedure root block is "large"
  const MastNode& root = Build(kTwoBlocksAndAnExec, rules);
  ASSERT_EQ(root.kind, MastKind::kJoin);
  EXPECT_TRUE(Node(root.first).kind == MastKind::kJoin ||
              Node(root.second).kind == MastKind::kJoin);
}

TEST_F(MastBuilderTest, LocalsFollowTheAlignmentOfTheRules) {
  constexpr char kLocals[] = "proc.foo.1\n  loc_load.0\nend\nbegin\n  exec.foo\nend\n";
  MastRules rules = v0_16::MastRules();
  const MastNode& v016 = Build(kLocals, rules);
  ASSERT_EQ(v016.kind, MastKind::kBlock);
  ASSERT_GE(v016.ops.size(), 4u);
  EXPECT_EQ(v016.ops.front(), (LoweredOp{Opcode::kPush, 4}));
  EXPECT_EQ(v016.ops[1], (LoweredOp{Opcode::kFmpUpdate, 0}));
  EXPECT_EQ(v016.ops[v016.ops.size() - 2], (LoweredOp{Opcode::kPush, Felt::kModulus - 4}));
  EXPECT_EQ(v016.ops.back(), (LoweredOp{Opcode::kFmpUpdate, 0}));

  rules.locals_alignment = 8;
  const MastNode& wide = Build(kLocals, rules);
  ASSERT_EQ(wide.kind, MastKind::kBlock);
  EXPECT_EQ(wide.ops.front(), (LoweredOp{Opcode::kPush, 8}));
  EXPECT_EQ(wide.ops[wide.ops.size() - 2], (LoweredOp{Opcode::kPush, Felt::kModulus - 8}));
}

TEST_F(MastBuilderTest, EntryPrologueStartsTheProgram) {
  static constexpr LoweredOp kPrologue[] = {{Opcode::kPad, 0}, {Opcode::kDrop, 0}};
  MastRules rules = v0_16::MastRules();
  rules.entry_prologue = kPrologue;
  const MastNode& root = Build("proc.foo\n  push.5\nend\nbegin\n  push.10\nend\n", rules);
  ASSERT_EQ(root.kind, MastKind::kBlock);
  ASSERT_EQ(root.ops.size(), 3u);
  EXPECT_EQ(root.ops[0].opcode, Opcode::kPad);
  EXPECT_EQ(root.ops[1].opcode, Opcode::kDrop);
  EXPECT_EQ(root.ops[2], (LoweredOp{Opcode::kPush, 10}));
}

TEST_F(MastBuilderTest, WhileBecomesALoopNodeAndDynUsesTheRulesDigest) {
  MastRules rules = v0_16::MastRules();
  rules.dyn_digest = Word{Felt(9), Felt(9), Felt(9), Felt(9)};
  const MastNode& root =
      Build("begin\n  push.0\n  while.true\n    push.0\n  end\n  dynexec\nend\n", rules);
  ASSERT_EQ(root.kind, MastKind::kJoin);
  const MastNode& left = Node(root.first);
  ASSERT_EQ(left.kind, MastKind::kJoin);
  EXPECT_EQ(Node(left.second).kind, MastKind::kLoop);
  EXPECT_EQ(Node(root.second).kind, MastKind::kDyn);
  EXPECT_EQ(Node(root.second).digest, rules.dyn_digest);
  EXPECT_TRUE(builder_->has_dyn());
}

}  // namespace
}  // namespace flamefleet::vm
