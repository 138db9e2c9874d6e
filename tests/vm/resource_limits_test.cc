// Issue #12: the VM's resource limits (memory budget, bounded error messages, echoed source
// windows, repeat expansion, strict input keys).
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/classic.h"
#include "tests/testing/test_programs.h"
#include "vm/vm.h"

namespace flamefleet::vm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<RunResult> RunMasm(const std::string& source, const ExecutionOptions& options,
                                  std::vector<Felt> advice = {}) {
  absl::StatusOr<Program> program =
      Assembler(testutil::ClassicOptions()).AssembleSource("test.masm", source);
  if (!program.ok()) return program.status();
  ProgramInputs inputs;
  inputs.advice_stack = std::move(advice);
  return RunProgram(*program, inputs, options);
}

TEST(ResourceLimitsTest, MemoryHogTrapsAtTheBudgetNamingIt) {
  ExecutionOptions options;
  options.max_memory_bytes = uint64_t{64} << 20;
  absl::StatusOr<RunResult> r = RunMasm(testutil::kPageHogProgram, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("memory budget of 67108864 bytes exceeded"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("--max-memory"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("mem_store"));
  // Far below the cycle cap: the budget stopped it (about 2048 pages, 8 cycles each).
  EXPECT_THAT(std::string(r.status().message()), Not(HasSubstr("cycle limit")));
}

TEST(ResourceLimitsTest, DefaultBudgetIsOneGibibyte) {
  EXPECT_EQ(ExecutionOptions{}.max_memory_bytes, uint64_t{1} << 30);
  EXPECT_EQ(kDefaultMaxMemoryBytes, uint64_t{1} << 30);
}

TEST(ResourceLimitsTest, ProgramWithinTheBudgetRunsAndPagesAreCharged) {
  // 16 pages written by mem_storew.
  const std::string source = R"(begin
    push.0
    repeat.16
      push.1.2.3.4 dup.4 mem_storew dropw
      push.4096 add
    end
    drop
  end)";
  absl::StatusOr<Program> program =
      Assembler(testutil::ClassicOptions()).AssembleSource("t", source);
  ASSERT_TRUE(program.ok()) << program.status();
  ExecutionOptions options;
  Executor exec(*program, {}, AdviceProvider(*program->dialect->hasher), options);
  const uint64_t before = exec.memory_used();
  exec.Run();
  ASSERT_EQ(exec.state(), Executor::State::kFinished) << exec.trap().message;
  EXPECT_GE(exec.memory_used() - before, 16u * 4096 * 8);
  // The same program with too small a budget for its 16 pages.
  options.max_memory_bytes = before + 8 * 4096 * 8;
  absl::StatusOr<RunResult> r = RunProgram(*program, ProgramInputs{}, options);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
}

TEST(ResourceLimitsTest, PipeAcrossPagesIsCharged) {
  // adv_pipe writes two words; the second crosses into a new page at 4096.
  const std::string source = R"(begin
    push.4092 padw padw padw adv_pipe dropw dropw dropw drop
  end)";
  std::vector<Felt> advice(8, Felt(5));
  absl::StatusOr<Program> program =
      Assembler(testutil::ClassicOptions()).AssembleSource("t", source);
  ASSERT_TRUE(program.ok()) << program.status();
  ProgramInputs inputs;
  inputs.advice_stack = advice;
  ASSERT_TRUE(RunProgram(*program, inputs, ExecutionOptions{}).ok());
  AdviceProvider provider(*program->dialect->hasher);
  provider.stack = advice;
  Executor exec(*program, {}, std::move(provider), ExecutionOptions{});
  const uint64_t before = exec.memory_used();
  exec.Run();
  ASSERT_EQ(exec.state(), Executor::State::kFinished) << exec.trap().message;
  // Two pages: elements, written-words bitmap, map slot (and the 8 advice elements popped are
  // not re-charged until an event).
  EXPECT_EQ(exec.memory_used() - before, 2 * (4096 * 8 + 4096 / 32 + 32));
}

TEST(ResourceLimitsTest, AdviceGrowthIsCharged) {
  // adv.insert_mem of a 2^28-element range would need 2 GiB before any check.
  ExecutionOptions options;
  options.max_memory_bytes = uint64_t{256} << 20;
  absl::StatusOr<RunResult> r =
      RunMasm("begin push.268435456 push.0 padw adv.insert_mem dropw drop drop end", options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("adv.insert_mem"));
}

TEST(ResourceLimitsTest, DeepRecursionIsChargedToTheBudget) {
  // dynexec recursion: the frame and return stacks grow by one entry per level.
  const std::string source = R"(
proc.rec
  push.4000 dynexec
end
begin
  procref.rec push.4000 mem_storew dropw
  push.4000 dynexec
end)";
  ExecutionOptions options;
  options.max_memory_bytes = uint64_t{16} << 20;
  options.max_cycles = uint64_t{1} << 40;
  absl::StatusOr<RunResult> r = RunMasm(source, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("memory budget"));
  // Item 9: the call stack in the message is cut to 16 + 16 frames.
  EXPECT_THAT(std::string(r.status().message()), HasSubstr(" frames omitted ..."));
  EXPECT_LE(r.status().message().size(), kMaxExecutionErrorBytes);
}

TEST(ResourceLimitsTest, LongCallStackIsTruncatedWithOmittedCount) {
  // A recursion stopped by the cycle cap: 1000s of frames deep.
  const std::string source = R"(
proc.rec
  push.4000 dynexec
end
begin
  procref.rec push.4000 mem_storew dropw
  push.4000 dynexec
end)";
  ExecutionOptions options;
  options.max_cycles = 200000;
  absl::StatusOr<RunResult> r = RunMasm(source, options);
  ASSERT_FALSE(r.ok());
  const std::string message(r.status().message());
  EXPECT_THAT(message, HasSubstr("cycle limit"));
  EXPECT_THAT(message, HasSubstr(" frames omitted ...\n"));
  // 16 outermost + 16 innermost frame lines, plus the omitted line.
  size_t frames = 0;
  const size_t stack = message.find("call stack (innermost last):");
  ASSERT_NE(stack, std::string::npos);
  for (size_t at = message.find("\n  ", stack); at != std::string::npos;
       at = message.find("\n  ", at + 1)) {
    ++frames;
  }
  EXPECT_EQ(frames, 2 * kErrorFramesKept + 1) << message.substr(0, 2000);
  EXPECT_LT(message.size(), 4096u);
}

TEST(ResourceLimitsTest, ThousandsSeparatorInOmittedCount) {
  const std::string source = R"(
proc.rec
  push.4000 dynexec
end
begin
  procref.rec push.4000 mem_storew dropw
  push.4000 dynexec
end)";
  ExecutionOptions options;
  options.max_cycles = 3000000;
  absl::StatusOr<RunResult> r = RunMasm(source, options);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()),
              testing::ContainsRegex(R"(\.\.\. [0-9]{1,3}(,[0-9]{3})+ frames omitted \.\.\.)"));
}

// ---- item 10: source windows

TEST(ResourceLimitsTest, LongSourceLineIsCutAroundTheCaret) {
  std::string line = "begin " + std::string(100000, ' ') + "push.1 bogus_instruction " +
                     std::string(100000, ' ') + "end";
  absl::StatusOr<Program> p =
      Assembler(testutil::ClassicOptions()).AssembleSource("long.masm", line);
  ASSERT_FALSE(p.ok());
  const std::string message(p.status().message());
  EXPECT_LT(message.size(), 600u) << message.size();
  EXPECT_THAT(message, HasSubstr("long.masm:1:"));
  // Two lines after the header: the window (with … marks) and the caret under `bogus`.
  const size_t nl = message.find('\n');
  ASSERT_NE(nl, std::string::npos);
  const size_t nl2 = message.find('\n', nl + 1);
  ASSERT_NE(nl2, std::string::npos);
  const std::string window = message.substr(nl + 1, nl2 - nl - 1);
  const std::string caret = message.substr(nl2 + 1);
  EXPECT_TRUE(absl::StartsWith(window, "\u2026")) << window;
  EXPECT_TRUE(absl::EndsWith(window, "\u2026")) << window;
  EXPECT_LE(window.size(), kMaxEchoedColumns + 6);
  ASSERT_TRUE(absl::EndsWith(caret, "^"));
  // The caret column in display columns: … is one column (3 bytes).
  const size_t caret_col = caret.size() - 1;
  const std::string shown = window.substr(3);  // after the leading …
  ASSERT_GE(caret_col, 1u);
  EXPECT_EQ(shown.substr(caret_col - 1, 5), "bogus") << window << "\n" << caret;
}

TEST(ResourceLimitsTest, ShortSourceLineIsEchoedWhole) {
  absl::StatusOr<Program> p =
      Assembler(testutil::ClassicOptions()).AssembleSource("s.masm", "begin push.1 bogus end");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("\nbegin push.1 bogus end\n             ^"));
}

// ---- item 13: repeat amplification

TEST(ResourceLimitsTest, RepeatAmplificationIsRefusedBeforeUnrolling) {
  const std::string source = "begin repeat.4000000 push.0 if.true nop else nop end end end";
  const absl::Time start = absl::Now();
  absl::StatusOr<Program> p =
      Assembler(testutil::ClassicOptions()).AssembleSource("amp.masm", source);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kResourceExhausted) << p.status();
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("amp.masm:1:7: repeat.4000000 expands to 16,000,000 operations"));
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("limit of 4,194,304 operations (--max-program-ops)"));
}

TEST(ResourceLimitsTest, NestedRepeatsMultiply) {
  const std::string source =
      "begin\n  repeat.3000\n    repeat.3000\n      nop\n    end\n  end\nend\n";
  absl::StatusOr<Program> p =
      Assembler(testutil::ClassicOptions()).AssembleSource("n.masm", source);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr("n.masm:2:3: repeat.3000 expands to 9,000,000 operations"));
  // Smaller nests assemble within a limit raised or lowered by the caller.
  const std::string small = "begin repeat.300 repeat.300 nop end end end";
  AssembleLimits limits;
  limits.max_program_ops = 50000;
  EXPECT_EQ(
      Assembler(testutil::ClassicOptions()).AssembleSource("n.masm", small, limits).status().code(),
      absl::StatusCode::kResourceExhausted);
  limits.max_program_ops = 100000;
  EXPECT_TRUE(Assembler(testutil::ClassicOptions()).AssembleSource("n.masm", small, limits).ok());
}

TEST(ResourceLimitsTest, RepeatsAddUpAgainstTheLimit) {
  AssembleLimits limits;
  limits.max_program_ops = 1000;
  const std::string source = "begin repeat.600 nop end repeat.600 nop end end";
  absl::StatusOr<Program> p =
      Assembler(testutil::ClassicOptions()).AssembleSource("sum.masm", source, limits);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(
      std::string(p.status().message()),
      HasSubstr(
          "sum.masm:1:26: repeat.600 expands to 600 operations (1,200 for all repeats so far)"));
}

TEST(ResourceLimitsTest, AssemblyHonoursTheDeadline) {
  AssembleLimits limits;
  limits.deadline = absl::Now() - absl::Seconds(1);
  absl::StatusOr<Program> p = Assembler(testutil::ClassicOptions())
                                  .AssembleSource("d.masm", "begin push.1 drop end", limits);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kDeadlineExceeded) << p.status();
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("deadline"));
}

// ---- item 16: input keys

TEST(ResourceLimitsTest, JsonInputsRejectUnknownTopLevelKey) {
  absl::StatusOr<ProgramInputs> r = ParseJsonInputs(R"({"operand_stackk": ["1"]})", "typo.inputs");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("typo.inputs: unknown key \"operand_stackk\""));
}

TEST(ResourceLimitsTest, JsonInputsRejectDuplicateKeysAtEveryLevel) {
  absl::StatusOr<ProgramInputs> top =
      ParseJsonInputs(R"({"operand_stack": ["1"], "operand_stack": ["2"]})", "d.inputs");
  ASSERT_FALSE(top.ok());
  EXPECT_THAT(std::string(top.status().message()),
              HasSubstr("d.inputs: duplicate key \"operand_stack\""));
  const std::string key = "0x" + std::string(64, '0');
  absl::StatusOr<ProgramInputs> map = ParseJsonInputs(
      absl::StrCat(R"({"advice_map": {")", key, R"(": [1], ")", key, R"(": [2]}})"), "m.inputs");
  ASSERT_FALSE(map.ok());
  EXPECT_THAT(std::string(map.status().message()),
              HasSubstr(absl::StrCat("m.inputs: advice_map: duplicate key \"", key, "\"")));
  absl::StatusOr<ProgramInputs> store = ParseJsonInputs(
      R"({"merkle_store": [{"merkle_tree": []}, {"merkle_tree": [], "merkle_tree": []}]})",
      "s.inputs");
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(std::string(store.status().message()),
              HasSubstr("s.inputs: merkle_store[1]: duplicate key \"merkle_tree\""));
}

TEST(ResourceLimitsTest, TomlInputsRejectUnknownKeysAtEveryLevel) {
  struct Case {
    const char* text;
    const char* expected;
  };
  const Case cases[] = {
      {"[inputs]\nstackk = [1]\n", "t.toml:2:1: inputs: unknown key 'stackk'"},
      {"[input]\nstack = [1]\n", "t.toml:1:2: unknown key 'input'"},
      {"[inputs.advice]\nstak = [1]\n", "t.toml:2:1: inputs.advice: unknown key 'stak'"},
      {"[[inputs.advice.map]]\ndigest = \"0x00\"\nvalue = [1]\n",
       "t.toml:3:1: inputs.advice.map[0]: unknown key 'value'"},
      {"[options]\nmax_cycle = 5\n", "t.toml:2:1: options: unknown key 'max_cycle'"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ProgramInputs> r = ParseTomlInputs(c.text, "t.toml");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.expected)) << c.text;
  }
  // TOML itself refuses a duplicate key.
  EXPECT_FALSE(ParseTomlInputs("[inputs]\nstack = [1]\nstack = [2]\n", "t.toml").ok());
}

}  // namespace
}  // namespace flamefleet::vm
