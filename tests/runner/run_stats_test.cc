// Per-job accounting (runner/run_stats.h): hand-derived calls, counts and phases on small
// programs of both dialects (cycles cross-checked with the Python model), and the property
// that every table adds up to the job's cycles on both conformance corpora.
#include "runner/run_stats.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runner/profile_run.h"
#include "tests/testing/status_matchers.h"
#include "vm/vm.h"

namespace flamefleet::runner {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<vm::Program> Assemble(vm::Dialect dialect, const std::string& source) {
  vm::AssemblerOptions options;
  options.dialect = dialect;
  return vm::Assembler(options).AssembleSource("t.masm", source);
}

const ProcedureStats* Proc(const RunStats& s, const std::string& name) {
  for (const ProcedureStats& p : s.procedures) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const InstructionStats* Row(const std::vector<InstructionStats>& rows, const std::string& name) {
  for (const InstructionStats& r : rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

const PhaseStats* Phase(const RunStats& s, const std::string& name) {
  for (const PhaseStats& p : s.phases) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

template <typename T>
uint64_t Sum(const std::vector<T>& rows, uint64_t T::*field) {
  uint64_t total = 0;
  for (const T& r : rows) total += r.*field;
  return total;
}

// countdown re-enters itself through dynexec (mem[100] holds its root): frames 4 deep.
constexpr char kDynRecursion16[] = R"(
proc.countdown
    dup.0 neq.0
    if.true
        sub.1
        push.100 dynexec
    end
end
proc.leaf
    add.1
end
begin
    push.3
    procref.countdown mem_storew.100 dropw
    push.100 dynexec
    drop
    push.0
    repeat.2
        exec.leaf
    end
    emit.7
    drop
end
)";

TEST(RunStatsTest, DynamicRecursionCountsEveryEntryButInclusiveCyclesOnce) {
  ASSERT_OK_AND_ASSIGN(vm::Program program, Assemble(vm::Dialect::kV0_16, kDynRecursion16));
  StatsOptions options;
  options.phases = {{"7", "8"}};
  ASSERT_OK_AND_ASSIGN(StatsRun run, ProfileProgramWithStats(program, {}, {}, options));
  ASSERT_OK(run.status);
  EXPECT_EQ(run.result.cycles, 102u);  // masm_model: 102
  const ProcedureStats* countdown = Proc(run.stats, "$exec::countdown");
  ASSERT_NE(countdown, nullptr);
  EXPECT_EQ(countdown->calls, 4u);  // n = 3, 2, 1, 0
  // Frames: 20 + 20 + 20 + 12 cycles at depths 1..4, all of them countdown's own.
  EXPECT_EQ(countdown->self, 72u);
  EXPECT_EQ(countdown->inclusive, 72u);
  const ProcedureStats* main = Proc(run.stats, "$exec::$main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->calls, 1u);
  EXPECT_EQ(main->inclusive, 102u);
  EXPECT_EQ(main->self, 102u - 72u - 2u);
  // Both inlined copies of leaf sit next to each other in one block: two calls all the same.
  EXPECT_EQ(Proc(run.stats, "$exec::leaf")->calls, 2u);
  EXPECT_EQ(Proc(run.stats, "$exec::leaf")->self, 2u);
  // dynexec: a DYN row and its END per call; if.true: SPLIT and END per test; neq.0: EQZ NOT.
  EXPECT_EQ(Row(run.stats.instructions, "dynexec")->count, 4u);
  EXPECT_EQ(Row(run.stats.instructions, "dynexec")->cycles, 8u);
  EXPECT_EQ(Row(run.stats.instructions, "if.true")->count, 4u);
  EXPECT_EQ(Row(run.stats.instructions, "neq")->count, 4u);
  EXPECT_EQ(Row(run.stats.instructions, "neq")->cycles, 8u);
  EXPECT_EQ(Row(run.stats.operations, "DYN")->count, 4u);
  // v0.16 emit.7 is a marker; the program ends inside 7..8: EMIT, DROP and two ENDs.
  const PhaseStats* phase = Phase(run.stats, "7..8");
  ASSERT_NE(phase, nullptr);
  EXPECT_EQ(phase->count, 1u);
  EXPECT_EQ(phase->total, 4u);
  EXPECT_TRUE(phase->open);
  EXPECT_EQ(run.stats.mast.nodes, program.num_mast_nodes);
  EXPECT_GT(run.stats.mast.basic_block_ops, 0u);
}

// v0.16 `trace.N` decorators are markers like `emit.N`, and cost nothing: rows 2-5 (PAD INCR
// PUSH ADD after JOIN and SPAN) lie between trace.10 and trace.11; the loop body's PAD between
// trace.12 and trace.13, which runs after the body's last op.
TEST(RunStatsTest, V016TraceDecoratorsAreMarkers) {
  ASSERT_OK_AND_ASSIGN(vm::Program program, Assemble(vm::Dialect::kV0_16, R"(
begin
    trace.10 push.1 push.2 add trace.11 drop
    push.1
    while.true trace.12 push.0 trace.13 end
end
)"));
  StatsOptions options;
  options.phases = {{"10", "11"}, {"12", "13"}};
  ASSERT_OK_AND_ASSIGN(StatsRun run, ProfileProgramWithStats(program, {}, {}, options));
  ASSERT_OK(run.status);
  const PhaseStats* first = Phase(run.stats, "10..11");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->count, 1u);
  EXPECT_EQ(first->total, 4u);
  EXPECT_FALSE(first->open);
  const PhaseStats* body = Phase(run.stats, "12..13");
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(body->count, 1u);
  EXPECT_EQ(body->total, 1u);
  // A `trace` runs as an instruction of no cycle.
  EXPECT_EQ(Row(run.stats.instructions, "trace")->count, 4u);
  EXPECT_EQ(Row(run.stats.instructions, "trace")->cycles, 0u);
}

// `long` (100 ops: it spans op batches, so its inlined copies meet RESPAN rows) and `inner`
// (exec'd by long) are inlined into main's block, back to back.
constexpr char kInlinedCopies[] = R"(
proc.inner
    add.1 add.1
end
proc.long
    repeat.49 add.1 end
    exec.inner
    repeat.49 add.1 end
end
begin
    push.0
    repeat.3
        exec.long
    end
    exec.inner exec.inner
    drop
end
)";

TEST(RunStatsTest, InlinedCopiesBackToBackAndAcrossRespanCountOneCallEach) {
  for (vm::Dialect dialect : {vm::Dialect::kV0_16, vm::Dialect::kV0_25}) {
    SCOPED_TRACE(vm::GetDialectSpec(dialect).name);
    std::string source = kInlinedCopies;  // v0.16 syntax; v0.25 writes `proc NAME`
    if (dialect == vm::Dialect::kV0_25) source = absl::StrReplaceAll(source, {{"proc.", "proc "}});
    ASSERT_OK_AND_ASSIGN(vm::Program program, Assemble(dialect, source));
    bool respan = false;
    for (const vm::Instruction& in : program.code) respan |= in.opcode == vm::Opcode::kRespan;
    ASSERT_TRUE(respan);  // the copies do cross batch boundaries
    ASSERT_OK_AND_ASSIGN(StatsRun run, ProfileProgramWithStats(program, {}, {}, {}));
    ASSERT_OK(run.status);
    EXPECT_EQ(Proc(run.stats, "$exec::long")->calls, 3u);
    EXPECT_EQ(Proc(run.stats, "$exec::inner")->calls, 5u);  // 3 from long, 2 from main
    EXPECT_EQ(Proc(run.stats, "$exec::long")->inclusive, 3u * 100u);
    EXPECT_EQ(Proc(run.stats, "$exec::inner")->self, 5u * 2u);
    EXPECT_EQ(Row(run.stats.instructions, "add")->count, 3u * 100u + 2u * 2u);
  }
}

// Markers in a loop, v0.25: t::a once, t::b once per iteration; the run ends inside t::b.
constexpr char kMarkersInLoop25[] = R"(
begin
    push.0
    emit.event("t::a")
    repeat.3
        add.1
        emit.event("t::b")
    end
    drop
end
)";

TEST(RunStatsTest, MarkersInALoopGiveOneSpanPerIterationAndTheLastStaysOpen) {
  ASSERT_OK_AND_ASSIGN(vm::Program program, Assemble(vm::Dialect::kV0_25, kMarkersInLoop25));
  StatsOptions options;
  options.phases = {{"t::a", "t::b"}};
  options.marker_prefixes = {"t::"};
  ASSERT_OK_AND_ASSIGN(StatsRun run, ProfileProgramWithStats(program, {}, {}, options));
  ASSERT_OK(run.status);
  // masm_model with each emit replaced by `push.1234567 nop drop` (the same three rows): 25.
  EXPECT_EQ(run.result.cycles, 25u);
  // EMIT of t::a at clk 7; t::b at 11 (DROP INCR PUSH EMIT later), then 4 + a RESPAN and its
  // NOOP padding, then 4 to the end of the program.
  const PhaseStats* pair = Phase(run.stats, "t::a..t::b");
  ASSERT_NE(pair, nullptr);
  EXPECT_EQ(pair->count, 1u);
  EXPECT_EQ(pair->total, 4u);
  EXPECT_FALSE(pair->open);
  const PhaseStats* b = Phase(run.stats, "t::b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->count, 3u);
  EXPECT_EQ(b->total, 14u);
  EXPECT_EQ(b->min, 4u);
  EXPECT_EQ(b->max, 6u);
  EXPECT_TRUE(b->open);
  EXPECT_EQ(Phase(run.stats, "t::a")->total, 4u);
  EXPECT_EQ(Row(run.stats.instructions, "emit")->count, 4u);
  EXPECT_EQ(Row(run.stats.instructions, "emit")->cycles, 12u);  // PUSH EMIT DROP each
}

TEST(RunStatsTest, AnUnknownEventIsStillAnErrorWhenNoMarkerNamesIt) {
  ASSERT_OK_AND_ASSIGN(vm::Program program, Assemble(vm::Dialect::kV0_25, kMarkersInLoop25));
  StatsOptions options;
  options.marker_prefixes = {"t::b"};  // t::a is no marker
  ASSERT_OK_AND_ASSIGN(StatsRun run, ProfileProgramWithStats(program, {}, {}, options));
  EXPECT_FALSE(run.status.ok());
  EXPECT_NE(run.status.message().find("no event handler registered"), std::string::npos)
      << run.status;
  // The numbers up to the trap still add up.
  EXPECT_EQ(Sum(run.stats.procedures, &ProcedureStats::self), run.result.cycles);
  EXPECT_EQ(Sum(run.stats.instructions, &InstructionStats::cycles), run.result.cycles);
}

// while.true over an exec'd procedure pair (v0.25): 4 iterations.
constexpr char kLoop25[] = R"(
proc leaf
    push.3 add
end
proc mid
    exec.leaf exec.leaf
end
begin
    push.0 push.1
    while.true
        exec.mid
        dup.0 push.20 lt
    end
    drop
end
)";

TEST(RunStatsTest, LoopCountsItsInstructionOncePerEntryAndItsBodyPerIteration) {
  ASSERT_OK_AND_ASSIGN(vm::Program program, Assemble(vm::Dialect::kV0_25, kLoop25));
  ASSERT_OK_AND_ASSIGN(StatsRun run, ProfileProgramWithStats(program, {}, {}, {}));
  ASSERT_OK(run.status);
  EXPECT_EQ(Proc(run.stats, "$exec::mid")->calls, 4u);
  EXPECT_EQ(Proc(run.stats, "$exec::mid")->self, 0u);
  EXPECT_EQ(Proc(run.stats, "$exec::mid")->inclusive, 16u);  // 4 x (PUSH ADD) x 2
  EXPECT_EQ(Row(run.stats.instructions, "while.true")->count, 1u);
  EXPECT_EQ(Row(run.stats.instructions, "lt")->count, 4u);
  EXPECT_EQ(Row(run.stats.instructions, "add")->count, 8u);
  EXPECT_EQ(Row(run.stats.operations, "REPEAT")->count, 3u);  // the fourth test exits: END
}

TEST(RunStatsTest, CountingOffLeavesTheTablesEmptyAndTheProfileAlone) {
  ASSERT_OK_AND_ASSIGN(vm::Program program, Assemble(vm::Dialect::kV0_25, kLoop25));
  StatsOptions off;
  off.count_instructions = false;
  ASSERT_OK_AND_ASSIGN(StatsRun run, ProfileProgramWithStats(program, {}, {}, off));
  ASSERT_OK(run.status);
  EXPECT_TRUE(run.stats.instructions.empty());
  EXPECT_TRUE(run.stats.operations.empty());
  ASSERT_OK_AND_ASSIGN(ProfiledRun plain, ProfileProgram(program, {}, {}, StackMode::kNested));
  EXPECT_EQ(run.result.cycles, plain.result.cycles);
  EXPECT_EQ(run.profile.total(), plain.profile.total());
}

TEST(RunStatsTest, RowCountsSurvivePausesBetweenSlices) {
  ASSERT_OK_AND_ASSIGN(vm::Program program, Assemble(vm::Dialect::kV0_16, kDynRecursion16));
  vm::RowCounts whole, stepped;
  vm::Executor a(program, {}, vm::AdviceProvider(*program.dialect->hasher), {});
  a.CountRows(&whole);
  a.Run();
  vm::Executor b(program, {}, vm::AdviceProvider(*program.dialect->hasher), {});
  b.CountRows(&stepped);
  while (b.state() == vm::Executor::State::kPaused) b.Step();
  EXPECT_EQ(whole.Executions(program), stepped.Executions(program));
  EXPECT_EQ(a.clk(), b.clk());
}

TEST(RunStatsTest, EventIdsOfNamesAreTheParsersIds) {
  EXPECT_EQ(EventIdOfName("42"), 42u);
  // emit.event("t::a") pushes the id: the executor sees it as EMIT's operand.
  ASSERT_OK_AND_ASSIGN(vm::Program program,
                       Assemble(vm::Dialect::kV0_25, R"(begin emit.event("t::a") end)"));
  bool found = false;
  for (const vm::Instruction& in : program.code) {
    found = found || (in.opcode == vm::Opcode::kPush && in.imm == EventIdOfName("t::a"));
  }
  EXPECT_TRUE(found);
  EXPECT_FALSE(ParsePhasePair("a").ok());
  EXPECT_FALSE(ParsePhasePair("=b").ok());
  EXPECT_EQ(ParsePhasePair("a=b")->end, "b");
}

// ---- every conformance program: the tables add up and calls = frame entries.

class EnterCounter : public vm::CallStackObserver {
 public:
  explicit EnterCounter(size_t procedures) : entries(procedures, 0) {}
  void OnEnter(uint32_t procedure, uint64_t) override { ++entries[procedure]; }
  void OnResume(uint32_t, uint64_t) override {}  // the same call going on
  void OnLeave(uint64_t) override {}
  std::vector<uint64_t> entries;
};

struct CorpusCase {
  vm::Dialect dialect;
  fs::path program;
};

// The corpora as tests/vm/conformance_test.cc lists them (programs with an .expect.json).
std::vector<CorpusCase> Corpus() {
  const fs::path data = fs::path(FLAMEFLEET_TESTDATA_DIR) / "vm";
  std::vector<CorpusCase> out;
  for (vm::Dialect d : {vm::Dialect::kV0_16, vm::Dialect::kV0_25}) {
    const fs::path root = d == vm::Dialect::kV0_25 ? data / "v0_25" : data;
    const std::vector<std::string> excluded = d == vm::Dialect::kV0_16
                                                  ? std::vector<std::string>{"v0_16", "v0_25"}
                                                  : std::vector<std::string>{"oracles", "corelib"};
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (it.depth() == 0 && it->is_directory() &&
          std::count(excluded.begin(), excluded.end(), it->path().filename().string()) > 0) {
        it.disable_recursion_pending();
        continue;
      }
      fs::path expect = it->path();
      expect.replace_extension(".expect.json");
      if (it->path().extension() == ".masm" && fs::exists(expect)) {
        out.push_back(CorpusCase{d, it->path()});
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const CorpusCase& a, const CorpusCase& b) { return a.program < b.program; });
  return out;
}

// The tables from the per-pc executions (RowCounts::Executions), row by row: what the
// per-segment RowCounts::Tally must equal.
vm::InstructionTally RowByRowTally(const vm::Program& program, const vm::RowCounts& counts) {
  vm::InstructionTally t;
  const vm::RowTally& rt = program.row_tally;
  t.count.assign(rt.mnemonics.size(), 0);
  t.cycles.assign(rt.mnemonics.size(), 0);
  const std::vector<uint64_t> runs = counts.Executions(program);
  for (uint32_t pc = 0; pc < runs.size(); ++pc) {
    vm::ForEachRowKey(program, rt, pc, [&](uint32_t key, uint32_t count, uint32_t cycles) {
      if (key >= vm::RowTally::kOpBase) {
        t.op_rows[key - vm::RowTally::kOpBase] += cycles * runs[pc];
      } else if (key >= vm::RowTally::kBlockBase) {
        t.block_rows[key - vm::RowTally::kBlockBase] += cycles * runs[pc];
      } else {
        t.count[key] += count * runs[pc];
        t.cycles[key] += cycles * runs[pc];
      }
    });
  }
  for (uint32_t pc : rt.repeats) {
    t.op_rows[vm::OpcodeIndex(vm::Opcode::kRepeat)] -= counts.loop_ends[pc];
    t.op_rows[vm::OpcodeIndex(vm::Opcode::kEnd)] += counts.loop_ends[pc];
  }
  return t;
}

void ExpectSameTally(const vm::InstructionTally& a, const vm::InstructionTally& b) {
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_EQ(a.block_rows, b.block_rows);
  EXPECT_EQ(a.op_rows, b.op_rows);
}

TEST(RunStatsTest, ATrapInTheMiddleOfAStraightLineCountsOnlyTheRowsThatRan) {
  ASSERT_OK_AND_ASSIGN(vm::Program program,
                       Assemble(vm::Dialect::kV0_16, "begin repeat.1000 swap dup.1 add end end"));
  vm::ExecutionOptions options;
  options.max_cycles = 1234;  // stops inside the one long basic block
  ASSERT_OK_AND_ASSIGN(StatsRun run, ProfileProgramWithStats(program, {}, options, {}));
  EXPECT_FALSE(run.status.ok());
  EXPECT_EQ(run.result.cycles, 1235u);
  EXPECT_EQ(Sum(run.stats.instructions, &InstructionStats::cycles), run.result.cycles);
  EXPECT_EQ(Sum(run.stats.operations, &InstructionStats::count), run.result.cycles);
  const InstructionStats* add = Row(run.stats.instructions, "add");
  ASSERT_NE(add, nullptr);
  EXPECT_GT(add->count, 400u);
  EXPECT_LT(add->count, 420u);
}

TEST(RunStatsCorpusTest, EveryTableAddsUpToTheJobsCyclesAndCallsAreFrameEntries) {
  const std::vector<CorpusCase> corpus = Corpus();
  ASSERT_GT(corpus.size(), 100u);
  size_t ran = 0;
  for (const CorpusCase& c : corpus) {
    SCOPED_TRACE(c.program.string());
    std::ifstream in(fs::path(c.program).replace_extension(".expect.json"));
    const nlohmann::json expect = nlohmann::json::parse(in);
    vm::AssemblerOptions options;
    options.dialect = c.dialect;
    if (expect.contains("libs")) {
      for (auto& [ns, dir] : expect["libs"].items()) {
        options.libraries.emplace_back(
            ns, (c.program.parent_path() / dir.get<std::string>()).lexically_normal().string());
      }
    }
    if (expect.contains("kernel")) {
      options.kernel_path =
          (c.program.parent_path() / expect["kernel"].get<std::string>()).lexically_normal();
    }
    absl::StatusOr<vm::Program> program = vm::Assembler(options).AssembleFile(c.program);
    if (!program.ok()) continue;  // an assembly-error case
    vm::ProgramInputs inputs;
    for (const char* ext : {".inputs", ".toml"}) {
      fs::path path = c.program;
      path.replace_extension(ext);
      if (fs::exists(path)) {
        absl::StatusOr<vm::ProgramInputs> loaded =
            vm::LoadInputs(path.string(), vm::GetDialectSpec(c.dialect).json_stack_order);
        ASSERT_OK(loaded.status());
        inputs = *loaded;
      }
    }
    vm::ExecutionOptions exec_options;
    if (expect.contains("max_cycles")) exec_options.max_cycles = expect["max_cycles"];
    absl::StatusOr<StatsRun> run = ProfileProgramWithStats(*program, inputs, exec_options, {});
    if (!run.ok()) continue;  // bad inputs are the conformance test's business
    ++ran;
    const uint64_t cycles = run->result.cycles;
    if (run->status.ok() && expect.contains("cycles")) {
      EXPECT_EQ(cycles, expect["cycles"].get<uint64_t>());
    }
    EXPECT_EQ(Sum(run->stats.procedures, &ProcedureStats::self), cycles);
    EXPECT_EQ(Sum(run->stats.instructions, &InstructionStats::cycles), cycles);
    EXPECT_EQ(Sum(run->stats.operations, &InstructionStats::cycles), cycles);
    EXPECT_EQ(Sum(run->stats.operations, &InstructionStats::count), cycles);
    // The per-segment tally equals the row-by-row one, run whole and in slices of 13 cycles
    // (pauses inside segments).
    for (uint64_t slice : {~uint64_t{0}, uint64_t{13}}) {
      vm::RowCounts counts;
      absl::StatusOr<vm::AdviceProvider> advice = vm::MakeAdvice(inputs, *program->dialect->hasher);
      ASSERT_OK(advice.status());
      vm::Executor exec(*program, inputs.stack, *std::move(advice), exec_options);
      exec.CountRows(&counts);
      while (exec.state() == vm::Executor::State::kPaused) exec.Run(slice);
      SCOPED_TRACE(slice);
      ExpectSameTally(counts.Tally(*program), RowByRowTally(*program, counts));
    }
    // Frame entries seen by a second, independent observer.
    EnterCounter counter(program->procedures.size());
    (void)vm::RunProgram(*program, inputs, exec_options, nullptr, &counter);
    for (uint32_t p = 0; p < program->procedures.size(); ++p) {
      const ProcedureStats* row = Proc(run->stats, program->procedures[p].name);
      EXPECT_EQ(row == nullptr ? 0 : row->calls, counter.entries[p]) << program->procedures[p].name;
    }
  }
  EXPECT_GT(ran, 100u);
}

}  // namespace
}  // namespace flamefleet::runner
