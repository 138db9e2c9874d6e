// Tests of the v0.25 MAST rules and operations end to end: MastBuilder (v0.25 MastRules: loops as
// SPLIT(LOOP, [NOOP]), do-while, locals through the frame pointer in memory, the entry prologue)
// -> Linearize (LOOPDO layout, the rules' CALL / SYSCALL / DYNCALL rows) -> Executor (the v0.25
// operations). Every run is done twice, with Run() and one Step() at a time, and both must agree.
//
// The v0.25 parser and instruction table are written in parallel, so the programs here are either
// hand-built MAST over v0.25 native operations, or classic-syntax sources whose instructions lower
// to the same operations in both dialects (push, drop, add, nop, mem_load, swapw, dropw, ...),
// linked and lowered as v0.16 and built with the v0.25 rules. Expected values come from the v0.25
// reference (masm-lowering-v0.25.md §2.2, §4, §6, §7.1) and the independent Python model.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tests/testing/classic.h"
#include "vm/assembler/assembler.h"
#include "vm/assembler/linearize.h"
#include "vm/assembler/linker.h"
#include "vm/assembler/mast.h"
#include "vm/assembler/mast_builder.h"
#include "vm/assembler/mast_rules.h"
#include "vm/assembler/opcodes.h"
#include "vm/assembler/program.h"
#include "vm/dialect.h"
#include "vm/dialects/v0_16/v0_16.h"
#include "vm/executor/executor.h"
#include "vm/parser/ast.h"
#include "vm/parser/source_manager.h"
#include "vm/vm.h"

namespace flamefleet::vm {
namespace {

constexpr uint64_t kFmpAddr = (uint64_t{1} << 32) - 2;
constexpr uint64_t kFmpInit = uint64_t{1} << 31;

const DialectSpec& V025() { return GetDialectSpec(Dialect::kV0_25); }

struct Outcome {
  Executor::State state = Executor::State::kPaused;
  TrapKind trap = TrapKind::kNone;
  std::string message;
  uint64_t cycles = 0;
  std::vector<uint64_t> stack;  // top 16, top first
};

Outcome Observe(const Executor& e) {
  Outcome o;
  o.state = e.state();
  o.trap = e.trap().kind;
  o.message = e.trap().message;
  o.cycles = e.clk();
  for (const Felt& f : e.StackTop(16)) o.stack.push_back(f.value());
  return o;
}

AdviceProvider Advice(const Program& program, const std::vector<Felt>& advice_top_first) {
  AdviceProvider advice(*program.dialect->hasher);
  advice.PushFront(advice_top_first);
  return advice;
}

// Runs `program` with Run() and with Step() and expects both to agree; returns the outcome.
// `store` (may be null) fills the advice provider's Merkle store.
Outcome RunBoth(const Program& program, const std::vector<Felt>& stack = {},
                const std::vector<Felt>& advice = {}, ExecutionOptions options = {},
                void (*store)(MerkleStore&) = nullptr) {
  AdviceProvider a1 = Advice(program, advice), a2 = Advice(program, advice);
  if (store != nullptr) {
    store(a1.merkle_store);
    store(a2.merkle_store);
  }
  Executor fast(program, stack, std::move(a1), options);
  fast.Run();
  Executor stepped(program, stack, std::move(a2), options);
  while (stepped.state() == Executor::State::kPaused) {
    const uint64_t before = stepped.clk();
    stepped.Step();
    if (stepped.clk() != before && stepped.clk() != before + 1) {
      ADD_FAILURE() << "Step() advanced more than one cycle at " << before;
      break;
    }
  }
  Outcome a = Observe(fast), b = Observe(stepped);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.trap, b.trap);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.stack, b.stack);
  return a;
}

std::vector<Felt> Felts(std::initializer_list<uint64_t> values) {
  std::vector<Felt> out;
  for (uint64_t v : values) out.push_back(Felt(v));
  return out;
}

// Hand-built MAST under the v0.25 rules, wire opcodes and hasher; procedure 0 is the entry.
class Mast25 {
 public:
  Mast25() : forest_(*V025().hasher, *V025().mast, *V025().wire) {
    program_.dialect = &V025();
    program_.source_ops.push_back(SourceOp{});
    AddProcedure("$exec::$main");
  }

  uint32_t AddProcedure(std::string name) {
    ProcedureInfo p;
    p.name = std::move(name);
    program_.procedures.push_back(std::move(p));
    roots_.emplace_back();
    return static_cast<uint32_t>(program_.procedures.size() - 1);
  }

  MastItem Block(std::vector<LoweredOp> ops) {
    MastNode n;
    n.kind = MastKind::kBlock;
    n.origins.assign(ops.size(), OpOrigin{});
    n.num_batches = PackBlock(ops, forest_.rules(), nullptr);
    n.ops = std::move(ops);
    return MastItem{forest_.AddNode(std::move(n)), 0};
  }
  MastItem Node(MastKind kind, MastItem first, MastItem second = {}) {
    MastNode n;
    n.kind = kind;
    n.first = first;
    n.second = second;
    return MastItem{forest_.AddNode(std::move(n)), 0};
  }
  // Makes `root` the body of procedure `p`; returns the item that enters it (exec / callee).
  MastItem SetRoot(uint32_t p, MastItem root) {
    forest_.nodes[root.node].is_procedure_root = true;
    program_.procedures[p].mast_root = forest_.nodes[root.node].digest;
    roots_[p] = root;
    return MastItem{root.node, forest_.ExtendChain(0, p)};
  }
  MastItem Call(MastKind kind, uint32_t p) {
    MastNode n;
    n.kind = kind;
    n.first = MastItem{roots_[p].node, forest_.ExtendChain(0, p)};
    n.procedure = p;
    return MastItem{forest_.AddNode(std::move(n)), 0};
  }

  // Returns the MAST root of procedure `p` (after SetRoot).
  const Word& RootOf(uint32_t p) const { return program_.procedures[p].mast_root; }
  // Lets DYN / DYNCALL enter procedure `p` (after SetRoot) by its MAST root.
  void AddDynTarget(uint32_t p) {
    DynTarget t;
    for (int i = 0; i < 4; ++i) t.digest[i] = RootOf(p)[i].value();
    t.procedure = p;
    program_.dyn_targets.push_back(t);
    std::sort(program_.dyn_targets.begin(), program_.dyn_targets.end());
  }

  // Linearises with `entry` as procedure 0's body.
  const Program& Finish(MastItem entry) {
    SetRoot(0, entry);
    absl::Status s =
        Linearize(forest_, roots_, MastItem{entry.node, forest_.ExtendChain(0, 0)}, &program_);
    EXPECT_TRUE(s.ok()) << s;
    return program_;
  }

 private:
  MastForest forest_;
  Program program_;
  std::vector<MastItem> roots_;
};

LoweredOp Op(Opcode op, uint64_t imm = 0) { return LoweredOp{op, imm}; }

// Runs a single block of `ops` from the initial stack `stack` (top first).
Outcome RunOps(std::vector<LoweredOp> ops, std::initializer_list<uint64_t> stack,
               std::initializer_list<uint64_t> advice = {}) {
  Mast25 m;
  const Program& p = m.Finish(m.Block(std::move(ops)));
  return RunBoth(p, Felts(stack), Felts(advice));
}

std::vector<uint64_t> Top(const Outcome& o, size_t n) {
  return std::vector<uint64_t>(o.stack.begin(), o.stack.begin() + n);
}

// ---- the little-endian u32 operations (all_ops snapshots of v0.25.7, inputs [1, 2, 3])

TEST(V025OpsTest, U32AddLeGivesSumThenCarry) {
  Outcome o = RunOps({Op(Opcode::kU32AddLe)}, {1, 2, 3});
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 3), (std::vector<uint64_t>{3, 0, 3}));
  EXPECT_EQ(o.cycles, 3u);  // SPAN, U32ADD, END
  o = RunOps({Op(Opcode::kU32AddLe)}, {0xFFFFFFFF, 3});
  EXPECT_EQ(Top(o, 2), (std::vector<uint64_t>{2, 1}));
}

TEST(V025OpsTest, U32MulLeGivesLowThenHigh) {
  Outcome o = RunOps({Op(Opcode::kU32MulLe)}, {1, 2, 3});
  EXPECT_EQ(Top(o, 3), (std::vector<uint64_t>{2, 0, 3}));
  o = RunOps({Op(Opcode::kU32MulLe)}, {0xFFFFFFFF, 0xFFFFFFFF});
  EXPECT_EQ(Top(o, 2), (std::vector<uint64_t>{1, 0xFFFFFFFE}));
}

TEST(V025OpsTest, U32SplitLeGivesLowThenHigh) {
  Outcome o = RunOps({Op(Opcode::kU32SplitLe)}, {1, 2, 3});
  EXPECT_EQ(Top(o, 4), (std::vector<uint64_t>{1, 0, 2, 3}));
  o = RunOps({Op(Opcode::kU32SplitLe)}, {(uint64_t{7} << 32) | 9});
  EXPECT_EQ(Top(o, 2), (std::vector<uint64_t>{9, 7}));
}

TEST(V025OpsTest, U32MAddLeGivesLowThenHigh) {
  Outcome o = RunOps({Op(Opcode::kU32MAddLe)}, {1, 2, 3});
  EXPECT_EQ(Top(o, 2), (std::vector<uint64_t>{5, 0}));
  // 0xFFFFFFFF * 0xFFFFFFFF + 0xFFFFFFFF = 0xFFFFFFFF_00000000
  o = RunOps({Op(Opcode::kU32MAddLe)}, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 4});
  EXPECT_EQ(Top(o, 3), (std::vector<uint64_t>{0, 0xFFFFFFFF, 4}));
}

TEST(V025OpsTest, U32Add3LeGivesSumThenCarry) {
  Outcome o = RunOps({Op(Opcode::kU32Add3Le)}, {1, 2, 3, 4});
  EXPECT_EQ(Top(o, 3), (std::vector<uint64_t>{6, 0, 4}));
  o = RunOps({Op(Opcode::kU32Add3Le)}, {0xFFFFFFFF, 0xFFFFFFFF, 2});
  EXPECT_EQ(Top(o, 2), (std::vector<uint64_t>{0, 2}));
}

TEST(V025OpsTest, U32LeOpsTrapOnNonU32Operands) {
  for (Opcode op : {Opcode::kU32AddLe, Opcode::kU32MulLe, Opcode::kU32Add3Le, Opcode::kU32MAddLe}) {
    Outcome o = RunOps({Op(op)}, {1, uint64_t{1} << 32, 3});
    EXPECT_EQ(o.state, Executor::State::kTrapped) << OpcodeName(op);
    EXPECT_EQ(o.trap, TrapKind::kNotU32) << OpcodeName(op);
  }
}

// ---- ext2 over x^2 - 7

TEST(V025OpsTest, Ext2MulX7MultipliesModuloXSquaredMinusSeven) {
  // b = 1 + 2x, a = 3 + 4x: a * b = 3 + 10x + 8x^2 = (3 + 56) + 10x.
  Outcome o = RunOps({Op(Opcode::kExt2MulX7)}, {1, 2, 3, 4, 5});
  EXPECT_EQ(Top(o, 5), (std::vector<uint64_t>{1, 2, 59, 10, 5}));
  // x * x = 7.
  o = RunOps({Op(Opcode::kExt2MulX7)}, {0, 1, 0, 1});
  EXPECT_EQ(Top(o, 4), (std::vector<uint64_t>{0, 1, 7, 0}));
}

// ---- word memory, streaming, advice words: element 0 on top

TEST(V025OpsTest, MStoreWLeWritesTopToTheLowestAddress) {
  // [8, 1, 2, 3, 4] -> MSTOREW -> [1, 2, 3, 4]; mem[8] = 1 .. mem[11] = 4.
  Outcome o = RunOps({Op(Opcode::kMStoreWLe), Op(Opcode::kPush, 8), Op(Opcode::kMLoad),
                      Op(Opcode::kPush, 11), Op(Opcode::kMLoad)},
                     {8, 1, 2, 3, 4});
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 6), (std::vector<uint64_t>{4, 1, 1, 2, 3, 4}));
}

TEST(V025OpsTest, MLoadWLePutsTheLowestAddressOnTop) {
  Outcome o =
      RunOps({Op(Opcode::kPush, 5), Op(Opcode::kPush, 12), Op(Opcode::kMStore), Op(Opcode::kDrop),
              Op(Opcode::kPush, 6), Op(Opcode::kPush, 15), Op(Opcode::kMStore), Op(Opcode::kDrop),
              Op(Opcode::kPush, 12), Op(Opcode::kMLoadWLe)},
             {9, 9, 9, 9});
  EXPECT_EQ(Top(o, 4), (std::vector<uint64_t>{5, 0, 0, 6}));
  o = RunOps({Op(Opcode::kMLoadWLe)}, {2});
  EXPECT_EQ(o.trap, TrapKind::kUnalignedWord);
}

TEST(V025OpsTest, MStreamLeLoadsTwoWordsElementZeroOnTop) {
  std::vector<LoweredOp> ops;
  for (uint64_t i = 0; i < 8; ++i) {  // mem[16 + i] = 100 + i
    ops.insert(ops.end(), {Op(Opcode::kPush, 100 + i), Op(Opcode::kPush, 16 + i),
                           Op(Opcode::kMStore), Op(Opcode::kDrop)});
  }
  ops.push_back(Op(Opcode::kMStreamLe));
  Outcome o = RunOps(ops, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16});
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 13),
            (std::vector<uint64_t>{100, 101, 102, 103, 104, 105, 106, 107, 0, 0, 0, 0, 24}));
}

TEST(V025OpsTest, PipeLePutsTheFirstPoppedOnTopAndAtTheAddress) {
  // Advice (first popped first) 1..8 -> s0..s7 = 1..8, mem[a + i] = i + 1.
  Outcome o = RunOps({Op(Opcode::kPipeLe), Op(Opcode::kPush, 32), Op(Opcode::kMLoad),
                      Op(Opcode::kPush, 39), Op(Opcode::kMLoad)},
                     {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32}, {1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 15), (std::vector<uint64_t>{8, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 40}));
}

TEST(V025OpsTest, AdvPopWLePutsTheFirstPoppedOnTop) {
  Outcome o = RunOps({Op(Opcode::kAdvPopWLe)}, {0, 0, 0, 0, 9}, {1, 2, 3, 4});
  EXPECT_EQ(Top(o, 5), (std::vector<uint64_t>{1, 2, 3, 4, 9}));
  o = RunOps({Op(Opcode::kAdvPopWLe)}, {}, {1, 2, 3});
  EXPECT_EQ(o.trap, TrapKind::kAdviceStackEmpty);
}

TEST(V025OpsTest, CryptoStreamAddsTheRateToTheSourceAndWritesTheDestination) {
  std::vector<LoweredOp> ops;
  for (uint64_t i = 0; i < 8; ++i) {  // plaintext mem[64 + i] = 10 * i
    ops.insert(ops.end(), {Op(Opcode::kPush, 10 * i), Op(Opcode::kPush, 64 + i),
                           Op(Opcode::kMStore), Op(Opcode::kDrop)});
  }
  ops.push_back(Op(Opcode::kCryptoStream));
  ops.insert(ops.end(), {Op(Opcode::kPush, 135), Op(Opcode::kMLoad)});  // ct[7] at 128 + 7
  Outcome o = RunOps(ops, {1, 2, 3, 4, 5, 6, 7, 8, 90, 91, 92, 93, 64, 128});
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 15),
            (std::vector<uint64_t>{78, 1, 12, 23, 34, 45, 56, 67, 78, 90, 91, 92, 93, 72, 136}));
  // Overlapping source and destination ranges are an error.
  o = RunOps({Op(Opcode::kCryptoStream)}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 68});
  EXPECT_EQ(o.trap, TrapKind::kMemoryAddress);
  o = RunOps({Op(Opcode::kCryptoStream)}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0xFFFFFFFC});
  EXPECT_EQ(o.trap, TrapKind::kMemoryAddress);
}

// ---- Merkle operations with little-endian words

// A depth-1 tree over the leaves [1, 2, 3, 4] and [5, 6, 7, 8].
const Word kLeft{Felt(1), Felt(2), Felt(3), Felt(4)};
const Word kRight{Felt(5), Felt(6), Felt(7), Felt(8)};
void TwoLeafTree(MerkleStore& store) {
  store.AddInner(store.hasher().Merge(kLeft, kRight), kLeft, kRight);
}

// Runs `ops` with the stack `words` (each word element 0 on top; scalars as one-element words).
Outcome RunMerkle(Opcode op, const std::vector<std::vector<Felt>>& words) {
  Mast25 m;
  const Program& p = m.Finish(m.Block({LoweredOp{op, 0}}));
  std::vector<Felt> stack;
  for (const auto& w : words) stack.insert(stack.end(), w.begin(), w.end());
  return RunBoth(p, stack, {}, {}, TwoLeafTree);
}

std::vector<Felt> W(const Word& w) { return std::vector<Felt>(w.begin(), w.end()); }

TEST(V025OpsTest, MpVerifyLeReadsNodeAndRootElementZeroOnTop) {
  const Word root = V025().hasher->Merge(kLeft, kRight);
  Outcome o = RunMerkle(Opcode::kMpVerifyLe, {W(kRight), {Felt(1)}, {Felt(1)}, W(root)});
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 4), (std::vector<uint64_t>{5, 6, 7, 8}));
  o = RunMerkle(Opcode::kMpVerifyLe, {W(kRight), {Felt(1)}, {Felt(0)}, W(root)});
  EXPECT_EQ(o.trap, TrapKind::kMerklePathVerificationFailed);
}

TEST(V025OpsTest, MrUpdateLeLeavesTheNewRootElementZeroOnTop) {
  const Hasher& h = *V025().hasher;
  const Word root = h.Merge(kLeft, kRight);
  const Word leaf{Felt(9), Felt(10), Felt(11), Felt(12)};
  Outcome o = RunMerkle(Opcode::kMrUpdateLe, {W(kLeft), {Felt(1)}, {Felt(0)}, W(root), W(leaf)});
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  const Word expected = h.Merge(leaf, kRight);
  EXPECT_EQ(Top(o, 14),
            (std::vector<uint64_t>{expected[0].value(), expected[1].value(), expected[2].value(),
                                   expected[3].value(), 1, 0, root[0].value(), root[1].value(),
                                   root[2].value(), root[3].value(), 9, 10, 11, 12}));
}

// ---- system operations

TEST(V025OpsTest, CallerAnyGivesZerosOutsideACall) {
  Outcome o = RunOps({Op(Opcode::kCallerAny)}, {1, 2, 3, 4, 5});
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 5), (std::vector<uint64_t>{0, 0, 0, 0, 5}));
}

TEST(V025OpsTest, CallerAnyGivesTheCalleesRootElementZeroOnTop) {
  Mast25 m;
  const uint32_t callee = m.AddProcedure("callee");
  // callee: CALLER overwrites s0..3 with the caller-hash register (depth stays 16).
  m.SetRoot(callee, m.Block({Op(Opcode::kCallerAny)}));
  MastItem call = m.Call(MastKind::kCall, callee);
  const Program& p = m.Finish(call);
  Outcome o = RunBoth(p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  const Word& root = p.procedures[callee].mast_root;
  EXPECT_EQ(Top(o, 4), (std::vector<uint64_t>{root[0].value(), root[1].value(), root[2].value(),
                                              root[3].value()}));
}

TEST(V025OpsTest, EmitTopReadsTheEventIdFromTheStackAndKeepsIt) {
  // has_mapkey (a system event) reads its key from s1..s4 and keeps the stack as it is; the
  // DROP then removes the id again.
  constexpr uint64_t kHasMapKey = 5642583036089175977ULL;
  Outcome o = RunOps({Op(Opcode::kPush, kHasMapKey), Op(Opcode::kEmitTop), Op(Opcode::kDrop)}, {7});
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 1), (std::vector<uint64_t>{7}));
  EXPECT_EQ(o.cycles, 1 + 3 + 1u);  // SPAN, PUSH EMIT DROP (2 groups, no padding), END
}

TEST(V025OpsTest, EmitTopOfAnIdNobodyHandlesIsAnErrorNamingIt) {
  Outcome o = RunOps({Op(Opcode::kPush, 12345), Op(Opcode::kEmitTop), Op(Opcode::kDrop)}, {7});
  ASSERT_EQ(o.state, Executor::State::kTrapped);
  EXPECT_NE(o.message.find("no event handler registered for event id 12345"), std::string::npos)
      << o.message;
}

TEST(V025OpsTest, LogPrecompileChainsTheTranscriptThroughThePermutation) {
  // Two LOGPRECOMPILEs over the same statement: the second starts from the first's STATE_NEW.
  std::vector<uint64_t> in = {0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0};
  Outcome once = RunOps({Op(Opcode::kLogPrecompile)}, {0, 0, 0, 0, 1, 2, 3, 4});
  ASSERT_EQ(once.state, Executor::State::kFinished) << once.message;
  HasherState state{};
  for (int i = 0; i < 12; ++i) state[i] = Felt(in[i]);
  V025().hasher->Permute(state);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(once.stack[i], state[i].value()) << i;
  // Put the statement back at s4..7 and log it again: the rate word 0 is now STATE_NEW.
  Outcome twice = RunOps({Op(Opcode::kLogPrecompile), Op(Opcode::kDrop),    Op(Opcode::kDrop),
                          Op(Opcode::kDrop),          Op(Opcode::kDrop),    Op(Opcode::kDrop),
                          Op(Opcode::kDrop),          Op(Opcode::kDrop),    Op(Opcode::kDrop),
                          Op(Opcode::kDrop),          Op(Opcode::kDrop),    Op(Opcode::kDrop),
                          Op(Opcode::kDrop),          Op(Opcode::kPush, 4), Op(Opcode::kPush, 3),
                          Op(Opcode::kPush, 2),       Op(Opcode::kPush, 1), Op(Opcode::kPad),
                          Op(Opcode::kPad),           Op(Opcode::kPad),     Op(Opcode::kPad),
                          Op(Opcode::kLogPrecompile)},
                         {0, 0, 0, 0, 1, 2, 3, 4});
  ASSERT_EQ(twice.state, Executor::State::kFinished) << twice.message;
  HasherState second{};
  for (int i = 0; i < 4; ++i) second[i] = state[i];
  for (int i = 0; i < 4; ++i) second[4 + i] = Felt(in[4 + i]);
  V025().hasher->Permute(second);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(twice.stack[i], second[i].value()) << i;
}

// ---- the cycle limit (processor/src/fast/tests/mod.rs at v0.25.7)

TEST(V025OpsTest, ABlockOf2018NoopsTakes2048CyclesAndFitsAMaxOf2048) {
  ExecutionOptions options;
  options.max_cycles = 2048;
  Mast25 m;
  const Program& p = m.Finish(m.Block(std::vector<LoweredOp>(2018, Op(Opcode::kNoop))));
  Outcome o = RunBoth(p, {}, {}, options);
  EXPECT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(o.cycles, 2048u);
}

TEST(V025OpsTest, ABlockOf2048SwapsExceedsAMaxOf2048) {
  ExecutionOptions options;
  options.max_cycles = 2048;
  Mast25 m;
  const Program& p = m.Finish(m.Block(std::vector<LoweredOp>(2048, Op(Opcode::kSwap))));
  Outcome o = RunBoth(p, {}, {}, options);
  EXPECT_EQ(o.state, Executor::State::kTrapped);
  EXPECT_EQ(o.trap, TrapKind::kCycleLimit);
}

// ---- control rows: LOOPDO, CALL / SYSCALL / DYNCALL with the frame pointer in memory

TEST(V025ControlTest, LoopDoRunsTheBodyOnceWithoutPoppingAndRepeatsWhileTheFlagIsOne) {
  // Stack [1, 1, 0]: pass 1 leaves 1 (REPEAT), pass 2 leaves 1 (REPEAT), pass 3 leaves 0 (END).
  Mast25 m;
  MastItem loop = m.Node(MastKind::kLoop, m.Block({Op(Opcode::kNoop)}));
  const Program& p = m.Finish(loop);
  Outcome o = RunBoth(p, Felts({1, 1, 0, 5}));
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 1), (std::vector<uint64_t>{5}));
  EXPECT_EQ(o.cycles, 1 + 3 * 3 + 2 + 1u);  // LOOP, 3 passes of [NOOP], 2 REPEATs, END
  // A first pass that leaves 0: LOOP + body + END, nothing popped on entry.
  o = RunBoth(p, Felts({0, 5}));
  EXPECT_EQ(Top(o, 1), (std::vector<uint64_t>{5}));
  EXPECT_EQ(o.cycles, 5u);
  o = RunBoth(p, Felts({2}));
  EXPECT_EQ(o.trap, TrapKind::kNotBinary);
}

TEST(V025ControlTest, CallInitialisesTheFramePointerOfTheNewContext) {
  Mast25 m;
  const uint32_t callee = m.AddProcedure("callee");
  // callee: mem[2^32 - 2] of its own context, depth kept at 16.
  m.SetRoot(callee, m.Block({Op(Opcode::kPush, kFmpAddr), Op(Opcode::kMLoad), Op(Opcode::kSwap),
                             Op(Opcode::kDrop)}));
  MastItem body = m.Node(MastKind::kJoin, m.Call(MastKind::kCall, callee),
                         m.Block({Op(Opcode::kPush, kFmpAddr), Op(Opcode::kMLoad)}));
  const Program& p = m.Finish(body);
  Outcome o = RunBoth(p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  // The caller's context (no entry prologue in hand-built MAST) still reads 0.
  EXPECT_EQ(Top(o, 2), (std::vector<uint64_t>{0, kFmpInit}));
  // JOIN(CALL([PUSH MLOAD SWAP DROP]), [PUSH MLOAD]) = 2 + (2 + 6) + 4.
  EXPECT_EQ(o.cycles, 14u);
}

TEST(V025ControlTest, SyscallSharesTheRootContextsMemory) {
  Mast25 m;
  const uint32_t kernel = m.AddProcedure("kernel::k");
  const uint32_t user = m.AddProcedure("user");
  const std::vector<LoweredOp> read100 = {Op(Opcode::kPush, 100), Op(Opcode::kMLoad),
                                          Op(Opcode::kSwap), Op(Opcode::kDrop)};
  m.SetRoot(kernel, m.Block(read100));
  m.SetRoot(user, m.Block(read100));
  MastItem store = m.Block(
      {Op(Opcode::kPush, 5), Op(Opcode::kPush, 100), Op(Opcode::kMStore), Op(Opcode::kDrop)});
  // Each callee replaces s0 with what it read; the PAD between them keeps the syscall's.
  MastItem body = m.Node(
      MastKind::kJoin, store,
      m.Node(MastKind::kJoin, m.Call(MastKind::kSyscall, kernel),
             m.Node(MastKind::kJoin, m.Block({Op(Opcode::kPad)}), m.Call(MastKind::kCall, user))));
  const Program& p = m.Finish(body);
  Outcome o = RunBoth(p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  // The user procedure's new context reads 0; the syscall read the root's 5.
  EXPECT_EQ(Top(o, 2), (std::vector<uint64_t>{0, 5}));
}

TEST(V025ControlTest, CallAndSyscallAreAllowedInsideASyscall) {
  Mast25 m;
  const uint32_t leaf = m.AddProcedure("leaf");
  const uint32_t inner = m.AddProcedure("kernel::inner");
  const uint32_t outer = m.AddProcedure("kernel::outer");
  m.SetRoot(leaf, m.Block({Op(Opcode::kPush, kFmpAddr), Op(Opcode::kMLoad), Op(Opcode::kSwap),
                           Op(Opcode::kDrop)}));
  m.SetRoot(inner, m.Block({Op(Opcode::kPush, 100), Op(Opcode::kMLoad), Op(Opcode::kSwap),
                            Op(Opcode::kDrop)}));
  // outer: [fmp of leaf's context], PAD, [root mem[100]], then back to depth 16.
  m.SetRoot(outer, m.Node(MastKind::kJoin, m.Call(MastKind::kCall, leaf),
                          m.Node(MastKind::kJoin, m.Block({Op(Opcode::kPad)}),
                                 m.Node(MastKind::kJoin, m.Call(MastKind::kSyscall, inner),
                                        m.Block({Op(Opcode::kMovUp2), Op(Opcode::kDrop)})))));
  MastItem store = m.Block(
      {Op(Opcode::kPush, 9), Op(Opcode::kPush, 100), Op(Opcode::kMStore), Op(Opcode::kDrop)});
  const Program& p = m.Finish(m.Node(MastKind::kJoin, store, m.Call(MastKind::kSyscall, outer)));
  Outcome o = RunBoth(p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 2), (std::vector<uint64_t>{9, kFmpInit}));
}

TEST(V025ControlTest, DynCallInitialisesTheFramePointerOfTheNewContext) {
  Mast25 m;
  const uint32_t callee = m.AddProcedure("callee");
  m.SetRoot(callee, m.Block({Op(Opcode::kPush, kFmpAddr), Op(Opcode::kMLoad), Op(Opcode::kSwap),
                             Op(Opcode::kDrop)}));
  m.AddDynTarget(callee);
  // Store the callee's root at 40 (element 0 at the lowest address), push 40, DYNCALL.
  const Word root = m.RootOf(callee);
  std::vector<LoweredOp> store;
  for (int i = 0; i < 4; ++i) {
    store.insert(store.end(), {Op(Opcode::kPush, root[i].value()),
                               Op(Opcode::kPush, 40 + static_cast<uint64_t>(i)),
                               Op(Opcode::kMStore), Op(Opcode::kDrop)});
  }
  store.push_back(Op(Opcode::kPush, 40));
  MastItem body = m.Node(MastKind::kJoin, m.Block(store), m.Node(MastKind::kDynCall, {}));
  const Program& p = m.Finish(body);
  Outcome o = RunBoth(p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 1), (std::vector<uint64_t>{kFmpInit}));
}

// ---- the v0.25 MAST rules through the MastBuilder (classic-syntax sources, see the top)

class MastRulesV025Test : public ::testing::Test {
 protected:
  // Links `text` (classic syntax) and builds it with the v0.25 rules; `edit` may rewrite the
  // entry body's AST first (the v0.25 parser that produces ast::DoWhile is not in this tree).
  absl::StatusOr<Program> Build(const std::string& text, const MastRules& rules,
                                const WireOpcodeTable& wire, void (*edit)(ast::Block&) = nullptr) {
    sources_ = std::make_shared<SourceManager>();
    Program program;
    program.dialect = &V025();
    program.source_ops.push_back(SourceOp{});
    const uint32_t file = sources_->Add("main.masm", text);
    Linker linker(options_, sources_, &program.procedures);
    absl::StatusOr<uint32_t> main_id = linker.LinkProgram(file);
    if (!main_id.ok()) return main_id.status();
    if (edit != nullptr) edit(const_cast<ast::Block&>(linker.Body(*main_id)));
    MastBuilder builder(linker, options_, limits_, *sources_, rules, wire, *V025().hasher,
                        &program);
    absl::StatusOr<MastItem> root = builder.CompileProcedure(*main_id, {});
    if (!root.ok()) return root.status();
    program.entry_procedure = *main_id;
    std::vector<MastItem> roots(program.procedures.size());
    for (uint32_t i = 0; i < roots.size(); ++i) roots[i] = builder.root(i);
    MastItem entry{root->node, builder.forest().ExtendChain(0, *main_id)};
    absl::Status s = Linearize(builder.forest(), roots, entry, &program);
    if (!s.ok()) return s;
    program.sources = sources_;
    return program;
  }
  absl::StatusOr<Program> Build25(const std::string& text, void (*edit)(ast::Block&) = nullptr) {
    return Build(text, *V025().mast, *V025().wire, edit);
  }

  AssemblerOptions options_ = testutil::ClassicOptions();  // classic syntax and lowering
  AssembleLimits limits_;
  std::shared_ptr<SourceManager> sources_;
};

// Rewrites the entry body's first `while.true` whose body has two nodes into
// `do <first> while <second> end`.
void WhileToDoWhile(ast::Block& body) {
  for (ast::Node& n : body) {
    auto* loop = std::get_if<ast::While>(&n.op);
    if (loop == nullptr || loop->body.size() != 2) continue;
    ast::DoWhile d;
    d.body.push_back(loop->body[0]);
    d.condition.push_back(loop->body[1]);
    d.loc = loop->loc;
    n.op = std::move(d);
    return;
  }
}

TEST_F(MastRulesV025Test, SkippedWhileCostsFiveRows) {
  // J(B0 = prologue + PAD: 8 rows, SPLIT(LOOP, [NOOP]) = 5 rows) (model: 15 cycles).
  absl::StatusOr<Program> p = Build25("begin push.0 while.true nop push.0 end end");
  ASSERT_TRUE(p.ok()) << p.status();
  Outcome o = RunBoth(*p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(o.cycles, 15u);
}

TEST_F(MastRulesV025Test, WhileWithKPassesCostsThreePlusKTimesBodyPlusOne) {
  // J(B0 = 13 rows, 3 + 3 * (3 + 1)) (model: 30 cycles).
  absl::StatusOr<Program> p = Build25("begin push.0 push.1 push.1 push.1 while.true nop end end");
  ASSERT_TRUE(p.ok()) << p.status();
  Outcome o = RunBoth(*p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(o.cycles, 30u);
}

TEST_F(MastRulesV025Test, DoWhileIsOneLoopOverBodyAndConditionMerged) {
  // `do nop while nop end` from [1, 1, 0]: LOOP([NOOP NOOP]) = 1 + 3 * 4 + 2 + 1 = 16 rows,
  // after B0 = 12 rows, in a JOIN (model: 30 cycles).
  absl::StatusOr<Program> p =
      Build25("begin push.0 push.1 push.1 while.true nop nop end end", WhileToDoWhile);
  ASSERT_TRUE(p.ok()) << p.status();
  Outcome o = RunBoth(*p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(o.cycles, 30u);
}

TEST_F(MastRulesV025Test, DoWhileIsAnErrorUnderTheClassicLoopShape) {
  absl::StatusOr<Program> p = Build("begin push.0 while.true nop nop end end", v0_16::MastRules(),
                                    v0_16::WireOpcodes(), WhileToDoWhile);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("main.masm:1:"), std::string::npos) << p.status();
}

TEST_F(MastRulesV025Test, LocalsMoveTheFramePointerInMemory) {
  // foo (4 locals) reads mem[2^32 - 2] = 2^31 + 4 inside, main reads 2^31 after the epilogue
  // (model: [2^31, 2^31 + 4], 37 cycles).
  absl::StatusOr<Program> p = Build25(R"(proc.foo.4
  push.4294967294 mem_load swapw dropw
end
begin
  exec.foo
  push.4294967294 mem_load swapw dropw
end
)");
  ASSERT_TRUE(p.ok()) << p.status();
  Outcome o = RunBoth(*p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 2), (std::vector<uint64_t>{kFmpInit, kFmpInit + 4}));
  EXPECT_EQ(o.cycles, 37u);
}

TEST_F(MastRulesV025Test, LocalsPrologueAndEpilogueAreBlocksAroundANodeProducingBody) {
  // foo = J(J([prologue], SPLIT([PUSH 2], [PUSH 3])), [epilogue]) (model: [2], 48 cycles).
  absl::StatusOr<Program> p = Build25(R"(proc.foo.4
  if.true push.2 else push.3 end
end
begin
  push.1
  exec.foo swapw dropw
end
)");
  ASSERT_TRUE(p.ok()) << p.status();
  Outcome o = RunBoth(*p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 1), (std::vector<uint64_t>{2}));
  EXPECT_EQ(o.cycles, 48u);
}

TEST_F(MastRulesV025Test, CallRunsTheCalleeWithAFreshFramePointer) {
  // (model: [2^31, 2^31], 28 cycles)
  absl::StatusOr<Program> p = Build25(R"(proc.bar
  push.4294967294 mem_load swap drop
end
begin
  call.bar
  push.4294967294 mem_load swapw dropw
end
)");
  ASSERT_TRUE(p.ok()) << p.status();
  Outcome o = RunBoth(*p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 2), (std::vector<uint64_t>{kFmpInit, kFmpInit}));
  EXPECT_EQ(o.cycles, 28u);
}

TEST_F(MastRulesV025Test, ClkSeesTheEntryPrologueMergedWithAnExecutedBlock) {
  // Upstream oracle (miden-vm/tests/integration/operations/io_ops/env_ops.rs, test `clk`): one
  // block SPAN 0, prologue 1-4, PUSH 5, PUSH 6, CLK 7 -> [7, 4, 5]; 16 cycles (model).
  absl::StatusOr<Program> p = Build25(R"(proc.foo
  push.5 push.4 clk
end
begin
  exec.foo swapw dropw
end
)");
  ASSERT_TRUE(p.ok()) << p.status();
  Outcome o = RunBoth(*p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(Top(o, 3), (std::vector<uint64_t>{7, 4, 5}));
  EXPECT_EQ(o.cycles, 16u);
}

TEST_F(MastRulesV025Test, EntryPrologueIsItsOwnBlockBeforeALeadingNode) {
  // J([PUSH PUSH MSTORE DROP] = 7 rows, SPLIT(...)): `begin if.true nop end end` from [0]:
  // 2 + 7 + 2 + 3 = 14 cycles.
  absl::StatusOr<Program> p = Build25("begin if.true nop else nop end end");
  ASSERT_TRUE(p.ok()) << p.status();
  Outcome o = RunBoth(*p);
  ASSERT_EQ(o.state, Executor::State::kFinished) << o.message;
  EXPECT_EQ(o.cycles, 14u);
}

}  // namespace
}  // namespace flamefleet::vm
