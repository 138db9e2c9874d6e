#include "vm/executor/executor.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/testing/classic.h"
#include "vm/vm.h"

namespace flamefleet::vm {
namespace {

absl::StatusOr<Program> Assemble(const std::string& source) {
  return Assembler(testutil::ClassicOptions()).AssembleSource("test.masm", source);
}

absl::StatusOr<RunResult> RunSource(const std::string& source, std::vector<Felt> stack = {},
                                    std::vector<Felt> advice = {}) {
  absl::StatusOr<Program> program = Assemble(source);
  if (!program.ok()) return program.status();
  ProgramInputs inputs;
  inputs.stack = std::move(stack);
  inputs.advice_stack = std::move(advice);
  return RunProgram(*program, inputs, ExecutionOptions{});
}

uint64_t Top(const absl::StatusOr<RunResult>& r, int i = 0) { return r->stack[i].value(); }

// Folds the observer's transitions into "a;b" -> cycles, like a profiler would.
class FoldingObserver : public CallStackObserver {
 public:
  explicit FoldingObserver(const Program& program) : program_(program) {}
  void OnEnter(uint32_t procedure, uint64_t clk) override {
    Flush(clk);
    frames_.push_back(program_.procedures[procedure].name);
  }
  void OnLeave(uint64_t clk) override {
    Flush(clk);
    frames_.pop_back();
  }
  void Flush(uint64_t clk) {
    if (clk > last_ && !frames_.empty()) folded[absl::StrJoin(frames_, ";")] += clk - last_;
    last_ = clk;
  }
  std::map<std::string, uint64_t> folded;

 private:
  const Program& program_;
  std::vector<std::string> frames_;
  uint64_t last_ = 0;
};

TEST(ExecutorTest, RespanBlockTakesTwentyThreeCycles) {
  auto r = RunSource("begin push.2.3.4.5.6.7.8.9 add push.10 swapdw dropw dropw end");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->cycles, 23u);
}

TEST(ExecutorTest, LoopOraclesMatchDecoderTests) {
  const char* loop = "begin while.true push.0 drop end end";
  auto skip = RunSource(loop, {Felt(0)});
  ASSERT_TRUE(skip.ok()) << skip.status();
  EXPECT_EQ(skip->cycles, 2u);
  // Entered once: LOOP, SPAN, PAD, DROP, END, END = 6 rows.
  auto once = RunSource(loop, {Felt(1), Felt(0)});
  ASSERT_TRUE(once.ok()) << once.status();
  EXPECT_EQ(once->cycles, 6u);
  auto twice = RunSource(loop, {Felt(1), Felt(1), Felt(0)});
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_EQ(twice->cycles, 11u);
}

TEST(ExecutorTest, ClkInInlinedProcedureSeesRowIndex) {
  auto r = RunSource("proc.foo push.5 push.4 clk end begin exec.foo swapw dropw end");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Top(r, 0), 3u);
  EXPECT_EQ(Top(r, 1), 4u);
  EXPECT_EQ(Top(r, 2), 5u);
}

TEST(ExecutorTest, MemStoreProgramEndsAtCycleTen) {
  auto r = RunSource("begin push.1 push.2 add push.1234567 mem_store end");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->cycles, 10u);
}

TEST(ExecutorTest, FibonacciRepeatGivesKnownValue) {
  auto r = RunSource("begin repeat.1000 swap dup.1 add end end", {Felt(1)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Top(r), 11112721240812633725ull);
  EXPECT_EQ(r->cycles, 3045u);
}

TEST(ExecutorTest, StackFloorShiftsInZeros) {
  auto r = RunSource("begin drop drop drop end", {Felt(1), Felt(2), Felt(3), Felt(4)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Top(r, 0), 4u);
  EXPECT_EQ(Top(r, 1), 0u);
  EXPECT_EQ(Top(r, 15), 0u);
}

TEST(ExecutorTest, ManyPopsAtTheFloorKeepTheStackZero) {
  // Pops at depth 16 in a long loop move the window down; zeros must keep coming.
  auto r = RunSource(R"(begin
      push.5000
      dup.0 neq.0
      while.true
        sub.1 swap drop swap drop push.0 swap dup.0 neq.0
      end
      drop sdepth swap drop
    end)");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Top(r, 0), 16u);
  EXPECT_EQ(Top(r, 1), 0u);
}

TEST(ExecutorTest, DeepStackRoundTrips) {
  std::string src = "begin ";
  for (int i = 1; i <= 3000; ++i) src += "push." + std::to_string(i) + " ";
  for (int i = 0; i < 2999; ++i) src += "add ";
  src += "swap drop end";
  auto r = RunSource(src);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Top(r), 3000u * 3001u / 2);
}

TEST(ExecutorTest, CallGetsFreshMemoryAndRestoresCaller) {
  auto r = RunSource(R"(
    proc.callee
      mem_load.100 push.9 mem_store.100 swap drop
    end
    begin
      push.42 mem_store.100
      call.callee
      mem_load.100 movup.2 drop
    end)");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Top(r, 0), 42u);  // caller memory untouched
  EXPECT_EQ(Top(r, 1), 0u);   // callee saw fresh memory
}

TEST(ExecutorTest, CallReturningWithWrongDepthTraps) {
  auto r = RunSource("proc.bad push.1 end begin call.bad end");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "stack depth must be 16")) << r.status();
}

TEST(ExecutorTest, CallHidesDeepElementsAndRestoresThem) {
  auto r = RunSource(R"(
    proc.f sdepth movdn.15 drop end
    begin push.1 push.2 call.f drop drop sdepth swap drop end)");
  ASSERT_TRUE(r.ok()) << r.status();
  // The callee saw depth 16; after the call the caller is back at depth 16 + 2 - 2.
  EXPECT_EQ(Top(r, 0), 16u);
}

TEST(ExecutorTest, AssertionTrapNamesCycleSourceAndCallStack) {
  auto r =
      RunSource("proc.check\n  push.0\n  assert.err=\"boom\"\nend\nbegin\n  exec.check\nend\n");
  ASSERT_FALSE(r.ok());
  std::string msg(r.status().message());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(msg, "at cycle 2")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "boom")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "test.masm:3:3")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "$exec::check")) << msg;
  EXPECT_TRUE(absl::StrContains(msg, "$exec::$main")) << msg;
}

TEST(ExecutorTest, NonU32OperandTraps) {
  auto r = RunSource("begin push.4294967296 push.1 u32wrapping_add end");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "not a u32 value")) << r.status();
}

TEST(ExecutorTest, CycleCapIsResourceExhausted) {
  absl::StatusOr<Program> p = Assemble("begin repeat.100 push.1 drop end end");
  ASSERT_TRUE(p.ok());
  ExecutionOptions opts;
  opts.max_cycles = 50;
  auto r = RunProgram(*p, ProgramInputs{}, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  // Exactly enough cycles passes.
  auto full = RunProgram(*p, ProgramInputs{}, ExecutionOptions{});
  ASSERT_TRUE(full.ok());
  opts.max_cycles = full->cycles;
  EXPECT_TRUE(RunProgram(*p, ProgramInputs{}, opts).ok());
}

TEST(ExecutorTest, OutputDeeperThanSixteenIsAnError) {
  auto r = RunSource("begin push.1 end");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "at most 16")) << r.status();
}

TEST(ExecutorTest, UnalignedWordAccessTraps) {
  auto r = RunSource("begin push.5 mem_loadw end");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "aligned")) << r.status();
}

TEST(ExecutorTest, ObserverChargesInlinedAndNestedProcedures) {
  absl::StatusOr<Program> p = Assemble(R"(
    proc.leaf push.1 add end
    proc.mid
      exec.leaf
      if.true push.1 else push.2 end
      exec.leaf
    end
    begin
      push.1 push.0
      exec.mid
      drop drop
    end)");
  ASSERT_TRUE(p.ok()) << p.status();
  FoldingObserver observer(*p);
  Executor exec(*p, {}, AdviceProvider(*p->dialect->hasher), ExecutionOptions{}, nullptr,
                &observer);
  exec.Run();
  ASSERT_EQ(exec.state(), Executor::State::kFinished) << exec.trap().message;
  observer.Flush(exec.clk());
  uint64_t total = 0;
  for (const auto& [path, cycles] : observer.folded) total += cycles;
  EXPECT_EQ(total, exec.clk());
  EXPECT_GT(observer.folded["$exec::$main;$exec::mid;$exec::leaf"], 0u);
  EXPECT_GT(observer.folded["$exec::$main;$exec::mid"], 0u);
  EXPECT_GT(observer.folded["$exec::$main"], 0u);
}

TEST(ExecutorTest, AdviceStackFeedsAdvPush) {
  auto r = RunSource("begin adv_push.2 swap drop swap drop end", {}, {Felt(10), Felt(20)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Top(r, 0), 20u);  // first popped ends deepest
}

TEST(ExecutorTest, StepAdvancesOneCycle) {
  absl::StatusOr<Program> p = Assemble("begin push.1 push.2 add swap drop end");
  ASSERT_TRUE(p.ok());
  Executor exec(*p, {}, AdviceProvider(*p->dialect->hasher), ExecutionOptions{});
  uint64_t steps = 0;
  while (exec.state() == Executor::State::kPaused) {
    uint64_t before = exec.clk();
    exec.Step();
    if (exec.clk() == before + 1) ++steps;
  }
  EXPECT_EQ(exec.state(), Executor::State::kFinished);
  EXPECT_EQ(steps, exec.clk());
  EXPECT_EQ(exec.StackTop(1)[0].value(), 3u);
}

// Records `trace.N` decorators as (N, clk).
class TraceHost : public Host {
 public:
  absl::Status OnEvent(uint64_t, uint64_t, const Executor&, AdviceProvider&) override {
    return absl::OkStatus();
  }
  void OnTrace(uint64_t trace_id, uint64_t clk) override { traces.emplace_back(trace_id, clk); }
  std::vector<std::pair<uint64_t, uint64_t>> traces;
};

struct TracedRun {
  RunResult result;
  std::vector<std::pair<uint64_t, uint64_t>> traces;
};

absl::StatusOr<TracedRun> RunTraced(const std::string& source, std::vector<Felt> stack = {}) {
  absl::StatusOr<Program> program = Assemble(source);
  if (!program.ok()) return program.status();
  ProgramInputs inputs;
  inputs.stack = std::move(stack);
  TraceHost host;
  absl::StatusOr<RunResult> r = RunProgram(*program, inputs, ExecutionOptions{}, &host);
  if (!r.ok()) return r.status();
  return TracedRun{*std::move(r), std::move(host.traces)};
}

// `trace.N clk`: the decorator runs at the clk CLK pushes, whatever padding NOOP or RESPAN row
// comes between them; repeated and inlined copies run once per copy.
TEST(ExecutorTest, TraceRunsAtTheRowThatFollowsIt) {
  auto r = RunTraced(R"(
    proc.foo trace.9 clk end
    begin
      trace.1 clk
      push.1 trace.2 clk
      repeat.70 push.0 drop end trace.3 clk
      repeat.3 trace.4 clk end
      exec.foo exec.foo
      repeat.9 movup.9 drop end
    end)");
  ASSERT_TRUE(r.ok()) << r.status();
  // Stack, top first: foo, foo, 4, 4, 4, 3, 2, 1 (the push), 1.
  const std::vector<int> order = {9, 9, 4, 4, 4, 3, 2, -1, 1};
  ASSERT_EQ(r->traces.size(), 8u);
  size_t t = r->traces.size();
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] < 0) continue;
    --t;
    EXPECT_EQ(r->traces[t].first, static_cast<uint64_t>(order[i])) << i;
    EXPECT_EQ(r->traces[t].second, r->result.stack[i].value()) << "trace." << order[i];
  }
  // The 70 push/drop pairs put trace.3 past a batch boundary: its clk is not the op count.
  EXPECT_GT(r->traces[2].second, r->traces[1].second + 141);
}

// Between control constructs a decorator runs at the next construct's first row; at the end of
// a body, after the body's last row.
TEST(ExecutorTest, TraceBetweenConstructsRunsBeforeTheNextAndAfterTheLast) {
  auto r = RunTraced(R"(
    begin
      if.true push.7 drop else push.8 drop end
      trace.5
      while.true clk swap drop push.0 end
      trace.6
    end)",
                     {Felt(1), Felt(1)});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->traces.size(), 2u);
  // LOOP, SPAN, then CLK: two rows after the trace.
  EXPECT_EQ(r->traces[0], std::make_pair(uint64_t{5}, r->result.stack[0].value() - 2));
  EXPECT_EQ(r->traces[1], std::make_pair(uint64_t{6}, r->result.cycles));
}

// Decorators cost nothing and are not part of the MAST: same cycles, same digests.
TEST(ExecutorTest, TraceChangesNoCycleAndNoDigest) {
  const std::string traced = R"(
    proc.foo trace.1 push.1 trace.2 add trace.3 end
    begin
      trace.4 push.2 exec.foo repeat.40 push.1 add end drop push.0 push.1
      if.true nop end trace.5 while.true push.0 end trace.6
    end)";
  std::string plain = traced;
  for (char c = '1'; c <= '6'; ++c) {
    const std::string tag = std::string("trace.") + c;
    plain.replace(plain.find(tag), tag.size(), std::string(tag.size(), ' '));
  }
  auto a = Assemble(traced);
  auto b = Assemble(plain);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  for (size_t p = 0; p < a->procedures.size(); ++p) {
    EXPECT_EQ(a->procedures[p].mast_root, b->procedures[p].mast_root) << a->procedures[p].name;
  }
  EXPECT_EQ(a->num_mast_nodes, b->num_mast_nodes);
  EXPECT_EQ(a->num_mast_ops, b->num_mast_ops);
  auto ra = RunTraced(traced);
  auto rb = RunTraced(plain);
  ASSERT_TRUE(ra.ok()) << ra.status();
  ASSERT_TRUE(rb.ok()) << rb.status();
  EXPECT_EQ(ra->result.cycles, rb->result.cycles);
  EXPECT_EQ(ra->result.stack, rb->result.stack);
  EXPECT_EQ(ra->traces.size(), 6u);
  EXPECT_TRUE(rb->traces.empty());
}

// As in v0.16, a body of decorators only is refused (they would not change its digest).
TEST(ExecutorTest, ABodyOfDecoratorsOnlyIsRefused) {
  auto p = Assemble("proc.foo\n  trace.1\nend\nbegin exec.foo end");
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::StrContains(p.status().message(), "test.masm:2:3")) << p.status();
  EXPECT_TRUE(absl::StrContains(p.status().message(),
                                "body must contain at least one instruction if it has decorators"))
      << p.status();
}

}  // namespace
}  // namespace flamefleet::vm
