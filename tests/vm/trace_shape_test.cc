// Tests of the trace-shape recorder (vm/executor/trace_shape.h) against the v0.25.7 oracles of
// the reference (shared/reference/trace-shape-v0.25.md §5): the 27 trace-length summaries of the
// parallel-trace snapshot tests, rebuilt here as our own hand-built MAST with the same structure
// (no entry prologue, as upstream builds them), the chiplet stacking cases, the hasher's
// de-duplication cases and the memory / range-checker / kernel ROM unit cases; then assembled
// programs and the attribution's exact sums.
#include "vm/executor/trace_shape.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "vm/assembler/linearize.h"
#include "vm/assembler/mast.h"
#include "vm/assembler/opcodes.h"
#include "vm/assembler/program.h"
#include "vm/dialect.h"
#include "vm/executor/executor.h"
#include "vm/vm.h"

namespace flamefleet::vm {
namespace {

const DialectSpec& V025() { return GetDialectSpec(Dialect::kV0_25); }
const TraceShapeRules& Rules() { return *V025().trace_shape; }

LoweredOp Op(Opcode op, uint64_t imm = 0) { return LoweredOp{op, imm}; }

std::vector<Felt> Felts(std::vector<uint64_t> values) {
  std::vector<Felt> out;
  for (uint64_t v : values) out.push_back(Felt(v));
  return out;
}

// Hand-built MAST under the v0.25 rules, wire opcodes and hasher; procedure 0 is the entry.
class Mast {
 public:
  Mast() : forest_(*V025().hasher, *V025().mast, *V025().wire) {
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
  MastItem Node(MastKind kind, MastItem first = {}, MastItem second = {}) {
    MastNode n;
    n.kind = kind;
    n.first = first;
    n.second = second;
    return MastItem{forest_.AddNode(std::move(n)), 0};
  }
  MastItem Join(MastItem a, MastItem b) { return Node(MastKind::kJoin, a, b); }
  // Makes `root` the body of procedure `p`.
  void SetRoot(uint32_t p, MastItem root) {
    forest_.nodes[root.node].is_procedure_root = true;
    program_.procedures[p].mast_root = forest_.nodes[root.node].digest;
    roots_[p] = root;
  }
  MastItem Call(MastKind kind, uint32_t p) {
    MastNode n;
    n.kind = kind;
    n.first = MastItem{roots_[p].node, forest_.ExtendChain(0, p)};
    n.procedure = p;
    return MastItem{forest_.AddNode(std::move(n)), 0};
  }
  // An EXTERNAL node that runs procedure `p` (after SetRoot): no row, its digest is p's root.
  MastItem External(uint32_t p) {
    MastNode n;
    n.kind = MastKind::kExternal;
    n.procedure = p;
    n.digest = program_.procedures[p].mast_root;
    return MastItem{forest_.AddNode(std::move(n)), 0};
  }
  const Word& RootOf(uint32_t p) const { return program_.procedures[p].mast_root; }
  void AddDynTarget(uint32_t p) {
    DynTarget t;
    for (int i = 0; i < 4; ++i) t.digest[i] = RootOf(p)[i].value();
    t.procedure = p;
    program_.dyn_targets.push_back(t);
    std::sort(program_.dyn_targets.begin(), program_.dyn_targets.end());
  }
  void set_kernel_procedures(uint32_t n) { program_.kernel_procedures = n; }

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

// Runs `program` with a recorder twice (Run() and one Step() at a time), expects both to finish
// with the same shape, and returns it.
TraceShape Shape(const Program& program, const std::vector<Felt>& stack = {},
                 void (*store)(MerkleStore&) = nullptr) {
  TraceShape shapes[2];
  for (int stepped = 0; stepped < 2; ++stepped) {
    AdviceProvider advice(*program.dialect->hasher);
    if (store != nullptr) store(advice.merkle_store);
    TraceShapeRecorder recorder(program);
    Executor exec(program, stack, std::move(advice), ExecutionOptions{});
    exec.RecordTraceShape(&recorder);
    if (stepped == 1) {
      while (exec.state() == Executor::State::kPaused) exec.Step();
    } else {
      exec.Run();
    }
    EXPECT_EQ(exec.state(), Executor::State::kFinished) << exec.trap().message;
    shapes[stepped] = recorder.Finish(exec.clk());
  }
  EXPECT_EQ(shapes[0].padded_len, shapes[1].padded_len);
  EXPECT_EQ(shapes[0].range_rows, shapes[1].range_rows);
  EXPECT_EQ(shapes[0].chiplets_rows, shapes[1].chiplets_rows);
  return shapes[0];
}

// The TraceLenSummary fields of a snapshot (bitwise and ACE are 0 in all 27).
struct Summary {
  uint64_t core, range, hash, memory, kernel_rom, padded;
};

void ExpectSummary(const TraceShape& t, const Summary& s) {
  EXPECT_EQ(t.core_rows, s.core);
  EXPECT_EQ(t.range_rows, s.range);
  EXPECT_EQ(t.hasher_rows, s.hash);
  EXPECT_EQ(t.memory_rows, s.memory);
  EXPECT_EQ(t.kernel_rom_rows, s.kernel_rom);
  EXPECT_EQ(t.bitwise_rows, 0u);
  EXPECT_EQ(t.ace_rows, 0u);
  EXPECT_EQ(t.padded_len, s.padded);
  EXPECT_EQ(t.chiplets_rows, s.hash + s.memory + s.kernel_rom + 1);
  EXPECT_EQ(t.core_rows, t.cycles + 1);
}

// ---- §5.1: the 27 trace-length summaries (each case's program, and the stack it needs)

TEST(TraceShapeSnapshotTest, Cases01To02JoinOfJoins) {
  Mast m;
  const Program& p =
      m.Finish(m.Join(m.Block({Op(Opcode::kMul)}),
                      m.Join(m.Block({Op(Opcode::kAdd)}), m.Block({Op(Opcode::kSwap)}))));
  ExpectSummary(Shape(p, Felts({2, 3, 4})), {14, 39, 96, 0, 0, 128});
}

TEST(TraceShapeSnapshotTest, Cases03To06SplitEitherBranch) {
  for (uint64_t cond : {1, 0}) {
    Mast m;
    const Program& p = m.Finish(m.Join(
        m.Block({Op(Opcode::kSwap), Op(Opcode::kSwap)}),
        m.Node(MastKind::kSplit, m.Block({Op(Opcode::kAdd)}), m.Block({Op(Opcode::kSwap)}))));
    SCOPED_TRACE(cond);
    // Both branches are hashed into the SPLIT's state; only the taken one is requested.
    ExpectSummary(Shape(p, Felts({cond, 5, 6})), {12, 39, 80, 0, 0, 128});
  }
}

// J(B[SWAP SWAP], LOOP(B[PAD DROP])) with the body run `times` times (the v0.25 do-while LOOP
// enters without popping; each REPEAT / END row pops a flag).
const Program& LoopProgram(Mast& m) {
  return m.Finish(m.Join(m.Block({Op(Opcode::kSwap), Op(Opcode::kSwap)}),
                         m.Node(MastKind::kLoop, m.Block({Op(Opcode::kPad), Op(Opcode::kDrop)}))));
}

TEST(TraceShapeSnapshotTest, Cases07To10LoopBodyOnceTwiceThrice) {
  const std::vector<std::pair<std::vector<uint64_t>, Summary>> cases = {
      {{0}, {13, 39, 80, 0, 0, 128}},
      {{1, 0}, {18, 39, 80, 0, 0, 128}},
      {{1, 1, 0}, {23, 39, 80, 0, 0, 128}},  // 6 requests, still 4 distinct states
  };
  for (const auto& [flags, summary] : cases) {
    Mast m;
    const TraceShape t = Shape(LoopProgram(m), Felts(flags));
    ExpectSummary(t, summary);
    EXPECT_EQ(t.hasher_requests, 3 + flags.size());
    EXPECT_EQ(t.hasher_states, 4u);
  }
}

TEST(TraceShapeSnapshotTest, Cases11To12CallDedupsCalleeBlock) {
  Mast m;
  const uint32_t callee = m.AddProcedure("$exec::callee");
  m.SetRoot(callee, m.Block({Op(Opcode::kSwap), Op(Opcode::kSwap)}));
  const Program& p = m.Finish(
      m.Join(m.Block({Op(Opcode::kSwap), Op(Opcode::kSwap)}), m.Call(MastKind::kCall, callee)));
  // The FMP write of the new context (ctx 6 = the CALL row's clk + 1): range {0, 1, 16383,
  // 65532, 65535}.
  const TraceShape t = Shape(p);
  ExpectSummary(t, {13, 45, 64, 1, 0, 128});
  EXPECT_EQ(t.hasher_requests, 4u);
  EXPECT_EQ(t.hasher_states, 3u);
}

TEST(TraceShapeSnapshotTest, Cases13To14SyscallHasKernelRomRowAndNoMemory) {
  Mast m;
  const uint32_t callee = m.AddProcedure("$kernel::callee");
  m.SetRoot(callee, m.Block({Op(Opcode::kSwap), Op(Opcode::kSwap)}));
  m.set_kernel_procedures(1);
  const Program& p = m.Finish(
      m.Join(m.Block({Op(Opcode::kSwap), Op(Opcode::kSwap)}), m.Call(MastKind::kSyscall, callee)));
  ExpectSummary(Shape(p), {13, 39, 64, 0, 1, 128});
}

TEST(TraceShapeSnapshotTest, Cases15To19HashOf64PadsChipletsTo128) {
  Mast m;
  const Program& p =
      m.Finish(m.Join(m.Block({Op(Opcode::kSwap), Op(Opcode::kPush, 7), Op(Opcode::kNoop)}),
                      m.Block({Op(Opcode::kDrop)})));
  const TraceShape t = Shape(p, Felts({1, 2}));
  ExpectSummary(t, {11, 39, 64, 0, 0, 128});
  EXPECT_EQ(t.chiplets_rows, 65u);
  EXPECT_EQ(t.core_height, 64u);
  EXPECT_EQ(t.chiplets_height, 128u);
  EXPECT_EQ(t.bound, TraceBound::kChiplets);
}

TEST(TraceShapeSnapshotTest, Cases20To21TwoBatchBlock) {
  Mast m;
  const Program& p = m.Finish(
      m.Join(m.Block(std::vector<LoweredOp>(80, Op(Opcode::kSwap))), m.Block({Op(Opcode::kDrop)})));
  const TraceShape t = Shape(p, Felts({1, 2}));
  ExpectSummary(t, {89, 39, 80, 0, 0, 128});
  EXPECT_EQ(t.hasher_requests, 4u);  // JOIN, two batches, the second block
}

// J(B[PUSH 40, MSTOREW, 4 x DROP, PUSH 40], `dyn`) where the DYN / DYNCALL enters `target`,
// whose MAST root the initial stack holds (stored at address 40 by the MSTOREW at clk 3, read
// back by the DYN row at clk 12).
std::vector<Felt> DynStack(const Mast& m, uint32_t target) {
  std::vector<Felt> stack(m.RootOf(target).begin(), m.RootOf(target).end());
  return stack;
}

MastItem DynPrologue(Mast& m) {
  return m.Block({Op(Opcode::kPush, 40), Op(Opcode::kMStoreWLe), Op(Opcode::kDrop),
                  Op(Opcode::kDrop), Op(Opcode::kDrop), Op(Opcode::kDrop), Op(Opcode::kPush, 40)});
}

TEST(TraceShapeSnapshotTest, Cases22To23Dyn) {
  Mast m;
  const uint32_t target = m.AddProcedure("$exec::target");
  m.SetRoot(target, m.Block({Op(Opcode::kSwap)}));
  m.AddDynTarget(target);
  const Program& p = m.Finish(m.Join(DynPrologue(m), m.Node(MastKind::kDyn)));
  // Range {0, 1, 9, 10, 65535}: deltas 1 and 9 (clk 3 -> 12), word index 10.
  ExpectSummary(Shape(p, DynStack(m, target)), {19, 49, 80, 2, 0, 128});
}

TEST(TraceShapeSnapshotTest, Cases24To25DynCallWritesFmpInNewContext) {
  Mast m;
  const uint32_t target = m.AddProcedure("$exec::target");
  m.SetRoot(target, m.Block({Op(Opcode::kSwap)}));
  m.AddDynTarget(target);
  const Program& p = m.Finish(m.Join(DynPrologue(m), m.Node(MastKind::kDynCall)));
  // Cases 22's set and {13 (the context gap), 16383, 65532}.
  ExpectSummary(Shape(p, DynStack(m, target)), {19, 51, 80, 3, 0, 128});
}

TEST(TraceShapeSnapshotTest, Case26ExternalNodeCostsNothing) {
  Mast m;
  const uint32_t lib = m.AddProcedure("lib::swaps");
  m.SetRoot(lib, m.Block({Op(Opcode::kSwap), Op(Opcode::kSwap)}));
  const Program& p =
      m.Finish(m.Join(m.Block({Op(Opcode::kPad), Op(Opcode::kDrop)}), m.External(lib)));
  ExpectSummary(Shape(p, Felts({1, 2})), {11, 39, 64, 0, 0, 128});
}

TEST(TraceShapeSnapshotTest, Case27DynIntoExternalLibraryBlock) {
  Mast m;
  const uint32_t lib = m.AddProcedure("lib::swaps");
  m.SetRoot(lib, m.Block({Op(Opcode::kSwap), Op(Opcode::kSwap)}));
  m.AddDynTarget(lib);
  const Program& p = m.Finish(m.Join(DynPrologue(m), m.Node(MastKind::kDyn)));
  ExpectSummary(Shape(p, DynStack(m, lib)), {20, 49, 80, 2, 0, 128});
}

// ---- §5.2: chiplet stacking (single basic blocks)

TEST(TraceShapeChipletTest, HpermIsASecondDistinctState) {
  Mast m;
  const TraceShape t = Shape(m.Finish(m.Block({Op(Opcode::kHPermP2)})));
  EXPECT_EQ(t.hasher_rows, 48u);  // 4 controller rows padded to 16, 2 states x 16
  EXPECT_EQ(t.hasher_controller_rows, 4u);
  EXPECT_EQ(t.hasher_controller_padding, 12u);
  EXPECT_EQ(t.hasher_permutation_rows, 32u);
}

TEST(TraceShapeChipletTest, BitwiseFollowsHasher) {
  Mast m;
  const TraceShape t = Shape(m.Finish(m.Block({Op(Opcode::kU32Xor)})), Felts({5, 3}));
  EXPECT_EQ(t.hasher_rows, 32u);
  EXPECT_EQ(t.bitwise_rows, 8u);
  EXPECT_EQ(t.chiplets_rows, 32u + 8 + 1);
}

TEST(TraceShapeChipletTest, OneWordWriteIsOneMemoryRow) {
  Mast m;
  const TraceShape t = Shape(m.Finish(m.Block({Op(Opcode::kPush, 4), Op(Opcode::kMStoreWLe)})));
  EXPECT_EQ(t.hasher_rows, 32u);
  EXPECT_EQ(t.memory_rows, 1u);
}

TEST(TraceShapeChipletTest, StackedChipletsWithUncalledTwoProcedureKernel) {
  Mast m;
  m.set_kernel_procedures(2);
  const TraceShape t = Shape(m.Finish(m.Block({Op(Opcode::kU32Xor), Op(Opcode::kPush, 0),
                                               Op(Opcode::kMStoreWLe), Op(Opcode::kHPermP2)})),
                             Felts({5, 3}));
  EXPECT_EQ(t.hasher_rows, 48u);
  EXPECT_EQ(t.bitwise_rows, 8u);
  EXPECT_EQ(t.memory_rows, 1u);
  EXPECT_EQ(t.kernel_rom_rows, 2u);  // no SYSCALL: still a row per declared procedure
  EXPECT_EQ(t.chiplets_rows, 48u + 8 + 1 + 2 + 1);
  EXPECT_EQ(t.chiplets_height, 64u);
}

TEST(TraceShapeChipletTest, EmptyBitwiseHasNoRows) {
  Mast m;
  EXPECT_EQ(Shape(m.Finish(m.Block({Op(Opcode::kNoop)}))).bitwise_rows, 0u);
}

// ---- §5.3: the hasher's de-duplication, by state and not by node

// A recorder over an empty v0.25 program, fed requests directly.
class HasherUnitTest : public ::testing::Test {
 protected:
  HasherUnitTest() { program_.dialect = &V025(); }
  HasherState State(uint64_t seed) {
    HasherState s{};
    for (int i = 0; i < kHasherStateWidth; ++i) s[i] = Felt(seed * 100 + i);
    return s;
  }
  Program program_;
};

TEST_F(HasherUnitTest, OnePermutation) {
  TraceShapeRecorder r(program_);
  r.DynamicRequest(State(1));
  EXPECT_EQ(r.Finish(0).hasher_rows, 32u);
}

TEST_F(HasherUnitTest, TwoDifferentStates) {
  TraceShapeRecorder r(program_);
  r.DynamicRequest(State(1));
  r.DynamicRequest(State(2));
  EXPECT_EQ(r.Finish(0).hasher_rows, 48u);
}

TEST_F(HasherUnitTest, SameStateTwiceIsOneCycleWithMultiplicityTwo) {
  TraceShapeRecorder r(program_);
  r.DynamicRequest(State(1));
  r.DynamicRequest(State(1));
  const TraceShape t = r.Finish(0);
  EXPECT_EQ(t.hasher_rows, 32u);
  EXPECT_EQ(t.hasher_requests, 2u);
  EXPECT_EQ(t.buckets[0].hasher_dedup_hits, 1u);
}

TEST(TraceShapeHasherTest, SameControlBlockTwiceIsOneState) {
  // LOOP(J(B[PAD DROP], B[PAD DROP])) run twice: the JOIN's state and the (identical) blocks'
  // state each count once, however often and from whichever node they are requested.
  Mast m;
  const MastItem body = m.Join(m.Block({Op(Opcode::kPad), Op(Opcode::kDrop)}),
                               m.Block({Op(Opcode::kPad), Op(Opcode::kDrop)}));
  const TraceShape t = Shape(m.Finish(m.Node(MastKind::kLoop, body)), Felts({1, 0}));
  EXPECT_EQ(t.hasher_requests, 1u + 2 * 3);
  EXPECT_EQ(t.hasher_states, 3u);  // LOOP, JOIN, the block
  EXPECT_EQ(t.hasher_rows, 16u + 3 * 16);
}

TEST(TraceShapeHasherTest, ManyDynamicStatesDedupExactlyRunAfterRun) {
  // 5,000 distinct HPERM-like states, each requested twice: past several chunks of the state
  // store and several growths of its table. A second recorder on the same thread reuses the
  // first one's memory (stale states in it) and must count the same.
  Mast m;
  const Program program = m.Finish(m.Block({Op(Opcode::kNoop)}));
  for (int run = 0; run < 2; ++run) {
    TraceShapeRecorder r(program);
    for (int pass = 0; pass < 2; ++pass) {
      for (uint64_t i = 0; i < 5000; ++i) {
        HasherState state{};
        state[0] = Felt(i + 1);
        state[11] = Felt(i * 7919 + uint64_t(run));  // other states in each run
        r.DynamicRequest(state);
      }
    }
    const TraceShape t = r.Finish(1);
    EXPECT_EQ(t.hasher_requests, 10000u) << run;
    EXPECT_EQ(t.hasher_states, 5000u) << run;
    EXPECT_EQ(t.buckets[0].hasher_dedup_hits, 5000u) << run;
  }
}

TEST(TraceShapeHasherTest, DynamicRequestOfAStaticStateIsThatState) {
  // A permutation request whose input is the state of one of the program's control rows counts
  // as that state, before or after the row requests it.
  Mast m;
  const Program program = m.Finish(
      m.Join(m.Block({Op(Opcode::kPad), Op(Opcode::kDrop)}), m.Block({Op(Opcode::kNoop)})));
  ASSERT_FALSE(program.hash_states.states.empty());
  uint32_t pc = 0;  // a row that requests state 0
  while (pc + 1 < program.hash_states.first.size() &&
         !(program.hash_states.first[pc] < program.hash_states.first[pc + 1] &&
           program.hash_states.ids[program.hash_states.first[pc]] == 0)) {
    ++pc;
  }
  ASSERT_LT(pc + 1, program.hash_states.first.size());
  HasherState state;
  for (int i = 0; i < kHasherStateWidth; ++i) state[i] = Felt(program.hash_states.states[0][i]);
  TraceShapeRecorder r(program);
  r.DynamicRequest(state);
  r.StaticRequests(pc);
  r.DynamicRequest(state);
  const TraceShape t = r.Finish(1);
  EXPECT_EQ(t.hasher_states, 1u);
  EXPECT_EQ(t.buckets[0].hasher_dedup_hits, 2u);
}

TEST(TraceShapeHasherTest, MultiBatchBlockTwice) {
  // A 3-batch block (150 SWAPs: 72 ops fill a batch of 8 groups of 9) in a loop run twice: 6
  // requests of the block (12 controller rows, with the LOOP's padded to 16) and 3 states, plus
  // the LOOP's.
  Mast m;
  const std::vector<LoweredOp> ops(150, Op(Opcode::kSwap));
  const MastItem block = m.Block(ops);
  const Program& p = m.Finish(m.Node(MastKind::kLoop, block));
  const TraceShape t = Shape(p, Felts({1, 0}));
  const uint64_t batches = (t.hasher_requests - 1) / 2;
  EXPECT_EQ(batches, 3u);
  EXPECT_EQ(t.hasher_states, 1 + batches);
  EXPECT_EQ(t.hasher_rows, 16u + 16 * 4);
}

// A full Merkle tree of depth `depth` over leaves [i, 0, 0, 0] in the store; returns its root.
Word AddTree(MerkleStore& store, int depth) {
  const Hasher& h = store.hasher();
  std::vector<Word> level;
  for (uint64_t i = 0; i < (uint64_t{1} << depth); ++i) level.push_back(Word{Felt(i + 1)});
  while (level.size() > 1) {
    std::vector<Word> up;
    for (size_t i = 0; i < level.size(); i += 2) {
      const Word parent = h.Merge(level[i], level[i + 1]);
      store.AddInner(parent, level[i], level[i + 1]);
      up.push_back(parent);
    }
    level = std::move(up);
  }
  return level[0];
}

// [V (element 0 on top), depth, index, R] for leaf `index` of AddTree(depth).
std::vector<Felt> MerkleStack(int depth, uint64_t index) {
  MerkleStore store(*V025().hasher);
  const Word root = AddTree(store, depth);
  std::vector<Felt> stack = {Felt(index + 1), Felt(0), Felt(0), Felt(0), Felt(depth), Felt(index)};
  stack.insert(stack.end(), root.begin(), root.end());
  return stack;
}

TEST(TraceShapeHasherTest, MerkleVerifyRequestsOnePermutationPerLevel) {
  for (int depth : {1, 3}) {
    SCOPED_TRACE(depth);
    Mast m;
    const Program& p = m.Finish(m.Block({Op(Opcode::kMpVerifyLe)}));
    static int tree_depth;
    tree_depth = depth;
    const TraceShape t =
        Shape(p, MerkleStack(depth, 1), [](MerkleStore& s) { AddTree(s, tree_depth); });
    EXPECT_EQ(t.hasher_requests, 1u + depth);
    EXPECT_EQ(t.hasher_controller_rows, 2u * (1 + depth));
    EXPECT_EQ(t.hasher_states, 1u + depth);
  }
}

TEST(TraceShapeHasherTest, MerkleUpdateRequestsOldAndNewPaths) {
  Mast m;
  const Program& p = m.Finish(m.Block({Op(Opcode::kMrUpdateLe)}));
  std::vector<Felt> stack = MerkleStack(2, 2);
  for (uint64_t v : {77, 0, 0, 0}) stack.push_back(Felt(v));  // the new value
  const TraceShape t = Shape(p, stack, [](MerkleStore& s) { AddTree(s, 2); });
  EXPECT_EQ(t.hasher_controller_rows - 2, 8u);  // 2 levels x (old + new), 2 rows each
  EXPECT_EQ(t.hasher_states, 1u + 4);
}

// ---- §5.4: memory, range checker

TEST(TraceShapeMemoryTest, EveryAccessIsARowRepeatsIncluded) {
  Mast m;
  const TraceShape t =
      Shape(m.Finish(m.Block({Op(Opcode::kPush, 8), Op(Opcode::kMLoad), Op(Opcode::kPush, 8),
                              Op(Opcode::kMLoad), Op(Opcode::kPush, 9), Op(Opcode::kMLoad)})));
  EXPECT_EQ(t.memory_rows, 3u);
}

TEST(TraceShapeRangeTest, UpstreamRangeChecksTableLength) {
  EXPECT_EQ(TraceShapeRecorder::RangeTableRowsForTest({}), 39u);
  EXPECT_EQ(
      TraceShapeRecorder::RangeTableRowsForTest({0, 1, 2, 2, 2, 2, 3, 3, 3, 4, 4, 100, 355, 620}),
      53u);
}

TEST(TraceShapeRangeTest, U32AddChecksSumAndCarryLimbs) {
  Mast m;
  const TraceShape t =
      Shape(m.Finish(m.Block({Op(Opcode::kPush, 1), Op(Opcode::kPush, 255), Op(Opcode::kU32AddLe),
                              Op(Opcode::kDrop), Op(Opcode::kDrop)})));
  EXPECT_EQ(t.range_rows, TraceShapeRecorder::RangeTableRowsForTest({256}));
  EXPECT_EQ(t.buckets[0].range_lookups, 4u);
}

TEST(TraceShapeRangeTest, MemoryRowsSendFiveValues) {
  // MSTOREW then MLOADW at 262148 (word index 65537: w0 = 1, w1 = 1, 4 * w1 = 4); deltas 1 and
  // the clock gap of 2.
  Mast m;
  const TraceShape t = Shape(m.Finish(m.Block({Op(Opcode::kPush, 262148), Op(Opcode::kMStoreWLe),
                                               Op(Opcode::kPush, 262148), Op(Opcode::kMLoadWLe)})));
  EXPECT_EQ(t.memory_rows, 2u);
  EXPECT_EQ(t.buckets[0].range_lookups, 10u);
  EXPECT_EQ(t.range_rows, TraceShapeRecorder::RangeTableRowsForTest({1, 2, 4}));
}

TEST(TraceShapeRangeTest, MarginalInsertionsSumToTheTable) {
  // Random value sets through u32 ops: the table the recorder builds one value at a time has the
  // length of the closed form.
  std::mt19937_64 rng(18);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<LoweredOp> ops;
    std::vector<uint16_t> values;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const uint64_t v = rng() % (trial % 2 == 0 ? 70000 : 300);  // scattered or dense
      ops.push_back(Op(Opcode::kPush, v));
      ops.push_back(Op(Opcode::kPush, 0));
      ops.push_back(Op(Opcode::kU32AddLe));  // limbs of v and of the carry 0
      ops.push_back(Op(Opcode::kDrop));
      ops.push_back(Op(Opcode::kDrop));
      values.push_back(static_cast<uint16_t>(v));
      values.push_back(static_cast<uint16_t>(v >> 16));
    }
    Mast m;
    const TraceShape t = Shape(m.Finish(m.Block(ops)));
    EXPECT_EQ(t.range_rows, TraceShapeRecorder::RangeTableRowsForTest(values)) << trial;
  }
}

// ---- §5.7: assembled programs (the entry prologue's FMP write is their one memory row)

TraceShape AssembledShape(const std::string& source) {
  AssemblerOptions options;
  options.dialect = Dialect::kV0_25;
  Assembler assembler(options);
  absl::StatusOr<Program> program = assembler.AssembleSource("t.masm", source);
  EXPECT_TRUE(program.ok()) << program.status();
  return Shape(*program);
}

TEST(TraceShapeAssembledTest, SmallestProgram) {
  const TraceShape t = AssembledShape("begin push.1 drop end");
  EXPECT_EQ(t.hasher_rows, 32u);
  EXPECT_EQ(t.memory_rows, 1u);
  EXPECT_EQ(t.range_rows, 45u);
  EXPECT_EQ(t.chiplets_rows, 34u);
  EXPECT_EQ(t.padded_len, 64u);
}

TEST(TraceShapeAssembledTest, OneHperm) {
  const TraceShape t = AssembledShape("begin padw padw padw hperm dropw dropw dropw end");
  EXPECT_EQ(t.hasher_rows, 48u);
  EXPECT_EQ(t.chiplets_rows, 50u);
}

TEST(TraceShapeAssembledTest, KernelRomRowsPerDeclaredProcedureNotPerSyscall) {
  for (int syscalls : {0, 5, 2}) {
    std::string body;
    for (int i = 0; i < syscalls; ++i) body += " syscall.foo";
    AssemblerOptions options;
    options.dialect = Dialect::kV0_25;
    Assembler assembler(options);
    const SourceText kernel[] = {
        {"kernel.masm", "pub proc foo\n  push.1 drop\nend\npub proc bar\n  push.2 drop\nend\n"}};
    absl::StatusOr<Program> program =
        assembler.AssembleSourceWithKernel("t.masm", "begin push.1 drop" + body + " end", kernel);
    ASSERT_TRUE(program.ok()) << program.status();
    EXPECT_EQ(Shape(*program).kernel_rom_rows, 2u) << syscalls;
  }
}

TEST(TraceShapeAssembledTest, DistinctWordsAreBoundedByTheMemoryBudget) {
  // Reads of 100,000 distinct never-written words allocate no page, but the recorder keeps one
  // entry per word: at most max_memory_bytes / 32 of them.
  AssemblerOptions options;
  options.dialect = Dialect::kV0_25;
  absl::StatusOr<Program> program = Assembler(options).AssembleSource(
      "t.masm",
      "begin\n  push.0 push.1\n  while.true\n    dup mem_load drop add.4 dup push.400000 lt\n"
      "  end\n  drop\nend\n");
  ASSERT_TRUE(program.ok()) << program.status();
  ExecutionOptions limits;
  limits.max_memory_bytes = uint64_t{2} << 20;
  TraceShapeRecorder recorder(*program);
  Executor exec(*program, {}, AdviceProvider(*program->dialect->hasher), limits);
  exec.RecordTraceShape(&recorder);
  EXPECT_EQ(exec.Run(), Executor::State::kTrapped);
  EXPECT_EQ(exec.trap().kind, TrapKind::kMemoryLimit);
  EXPECT_NE(exec.trap().message.find("distinct memory words"), std::string::npos);
  // Without the recorder the same run finishes.
  Executor plain(*program, {}, AdviceProvider(*program->dialect->hasher), limits);
  EXPECT_EQ(plain.Run(), Executor::State::kFinished) << plain.trap().message;
}

// ---- attribution: buckets and overhead add up to the totals

TEST(TraceShapeAttributionTest, BucketsSumToTotals) {
  Mast m;
  TraceShapeRecorder r(m.Finish(m.Block({Op(Opcode::kNoop)})));
  r.set_bucket(3);
  r.U32Checks(5, 70000);
  r.MemoryAccess(100, 1);
  r.set_bucket(1);
  r.MemoryAccess(200, 2);
  r.Bitwise();
  r.DynamicRequest(HasherState{});
  r.set_bucket(3);
  r.DynamicRequest(HasherState{});
  const TraceShape t = r.Finish(10);
  TraceShapeCounts sum;
  for (const TraceShapeCounts& b : t.buckets) sum.Add(b);
  EXPECT_EQ(sum.range_rows + t.overhead.range_rows, t.range_rows);
  EXPECT_EQ(sum.memory_rows, t.memory_rows);
  EXPECT_EQ(sum.bitwise_rows, t.bitwise_rows);
  EXPECT_EQ(sum.HasherRows(Rules()) + t.hasher_controller_padding, t.hasher_rows);
  EXPECT_EQ(sum.ChipletRows(Rules()) + t.OverheadChipletRows(Rules()), t.chiplets_rows);
  EXPECT_EQ(t.buckets[1].hasher_new_states, 1u);  // first touch
  EXPECT_EQ(t.buckets[3].hasher_dedup_hits, 1u);
  EXPECT_EQ(t.buckets[2].memory_rows, 0u);
}

}  // namespace
}  // namespace flamefleet::vm
