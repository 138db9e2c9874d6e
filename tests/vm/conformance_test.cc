// Runs every program in tests/testdata/vm/ and checks its final stack and exact cycle count (or
// its error) against NAME.expect.json. Also runs each successful program a second time one
// Step() at a time and checks that stack, cycles and per-cycle call stacks agree with the fast
// run.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "vm/vm.h"

namespace flamefleet::vm {
namespace {

namespace fs = std::filesystem;

const fs::path& DataDir() {
  static const fs::path* dir = new fs::path(fs::path(FLAMEFLEET_TESTDATA_DIR) / "vm");
  return *dir;
}

bool ExpectsError(const fs::path& program) {
  fs::path expect = program;
  expect.replace_extension(".expect.json");
  std::ifstream in(expect);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str().find("\"error\"") != std::string::npos;
}

std::vector<std::string> FindPrograms(bool successful_only = false) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(DataDir(), ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::path& p = it->path();
    if (p.extension() != ".masm") continue;
    fs::path expect = p;
    expect.replace_extension(".expect.json");
    if (!fs::exists(expect)) continue;  // library modules have no expectation
    if (successful_only && ExpectsError(p)) continue;
    out.push_back(fs::relative(p, DataDir()).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Case {
  fs::path program;
  nlohmann::json expect;
  AssemblerOptions assembler;
  ProgramInputs inputs;
  ExecutionOptions options;
};

// Loads the program's expectations, libraries and inputs.
Case LoadCase(const std::string& rel) {
  Case c;
  c.program = DataDir() / rel;
  fs::path expect = c.program;
  expect.replace_extension(".expect.json");
  c.expect = nlohmann::json::parse(ReadFile(expect));
  if (c.expect.contains("libs")) {
    for (auto& [ns, dir] : c.expect["libs"].items()) {
      c.assembler.libraries.emplace_back(
          ns, (c.program.parent_path() / dir.get<std::string>()).lexically_normal().string());
    }
  }
  if (c.expect.contains("kernel")) {
    c.assembler.kernel_path = (c.program.parent_path() / c.expect["kernel"].get<std::string>())
                                  .lexically_normal()
                                  .string();
  }
  for (const char* ext : {".inputs", ".toml"}) {
    fs::path in = c.program;
    in.replace_extension(ext);
    if (fs::exists(in)) {
      absl::StatusOr<ProgramInputs> loaded = LoadInputs(in.string());
      EXPECT_TRUE(loaded.ok()) << loaded.status();
      if (loaded.ok()) c.inputs = *loaded;
    }
  }
  if (c.expect.contains("max_cycles")) c.options.max_cycles = c.expect["max_cycles"];
  return c;
}

std::string TestName(const testing::TestParamInfo<std::string>& info) {
  std::string name;
  bool upper = true;
  for (char ch : info.param.substr(0, info.param.size() - 5)) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
      upper = false;
    } else {
      upper = true;
    }
  }
  return name;
}

class ConformanceTest : public testing::TestWithParam<std::string> {};

TEST_P(ConformanceTest, MatchesExpectedStackAndCycles) {
  Case c = LoadCase(GetParam());
  Assembler assembler(c.assembler);
  absl::StatusOr<Program> program = assembler.AssembleFile(c.program.string());
  const bool expect_error = c.expect.contains("error");
  if (!program.ok()) {
    ASSERT_TRUE(expect_error) << program.status();
    std::string message(program.status().message());
    EXPECT_TRUE(absl::StrContains(message, c.expect["error"].get<std::string>())) << message;
    if (c.expect.contains("line")) {
      std::string where =
          absl::StrCat(":", c.expect["line"].get<int>(), ":", c.expect["col"].get<int>(), ":");
      EXPECT_TRUE(absl::StrContains(message, where)) << message << "\nwanted " << where;
    }
    return;
  }
  absl::StatusOr<RunResult> result = RunProgram(*program, c.inputs, c.options);
  if (expect_error) {
    ASSERT_FALSE(result.ok()) << "expected error " << c.expect["error"];
    std::string message(result.status().message());
    EXPECT_TRUE(absl::StrContains(message, c.expect["error"].get<std::string>())) << message;
    if (c.expect.contains("cycles")) {
      EXPECT_TRUE(
          absl::StrContains(message, absl::StrCat("at cycle ", c.expect["cycles"].get<uint64_t>())))
          << message;
    }
    return;
  }
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<uint64_t> stack;
  for (Felt f : result->stack) stack.push_back(f.value());
  EXPECT_EQ(stack, c.expect["stack"].get<std::vector<uint64_t>>());
  EXPECT_EQ(result->cycles, c.expect["cycles"].get<uint64_t>());
}

// Records the frame stack at every transition (fast run).
class TransitionRecorder : public CallStackObserver {
 public:
  void OnEnter(uint32_t procedure, uint64_t clk) override {
    frames_.push_back(procedure);
    log_.emplace_back(clk, frames_);
  }
  void OnLeave(uint64_t clk) override {
    frames_.pop_back();
    log_.emplace_back(clk, frames_);
  }
  // Returns the frames live in cycle `clk`.
  const std::vector<uint32_t>& FramesAt(uint64_t clk) {
    while (cursor_ + 1 < log_.size() && log_[cursor_ + 1].first <= clk) ++cursor_;
    return log_[cursor_].second;
  }

 private:
  std::vector<uint32_t> frames_;
  std::vector<std::pair<uint64_t, std::vector<uint32_t>>> log_;
  size_t cursor_ = 0;
};

class StepConformanceTest : public testing::TestWithParam<std::string> {};

TEST_P(StepConformanceTest, StepByStepAgreesWithFastRun) {
  Case c = LoadCase(GetParam());
  Assembler assembler(c.assembler);
  absl::StatusOr<Program> program = assembler.AssembleFile(c.program.string());
  ASSERT_TRUE(program.ok()) << program.status();

  TransitionRecorder recorder;
  absl::StatusOr<AdviceProvider> advice = MakeAdvice(c.inputs, *program->dialect->hasher);
  ASSERT_TRUE(advice.ok()) << advice.status();
  Executor fast(*program, c.inputs.stack, *advice, c.options, nullptr, &recorder);
  fast.Run();
  absl::StatusOr<RunResult> fast_result = FinishRun(fast);
  ASSERT_TRUE(fast_result.ok()) << fast_result.status();

  Executor stepped(*program, c.inputs.stack, *std::move(advice), c.options);
  uint64_t mismatches = 0;
  while (stepped.state() == Executor::State::kPaused) {
    uint64_t before = stepped.clk();
    stepped.Step();
    if (stepped.clk() == before + 1) {
      if (stepped.frames() != recorder.FramesAt(before) && ++mismatches < 5) {
        ADD_FAILURE() << "call stacks differ at cycle " << before;
      }
    } else {
      ASSERT_EQ(stepped.clk(), before) << "Step() advanced more than one cycle";
    }
  }
  absl::StatusOr<RunResult> step_result = FinishRun(stepped);
  ASSERT_TRUE(step_result.ok()) << step_result.status();
  EXPECT_EQ(step_result->cycles, fast_result->cycles);
  EXPECT_EQ(step_result->stack, fast_result->stack);
  EXPECT_EQ(mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(Programs, ConformanceTest, testing::ValuesIn(FindPrograms()), TestName);
INSTANTIATE_TEST_SUITE_P(Programs, StepConformanceTest,
                         testing::ValuesIn(FindPrograms(/*successful_only=*/true)), TestName);

TEST(ConformanceCorpusTest, HasAtLeast150Programs) { EXPECT_GE(FindPrograms().size(), 150u); }

}  // namespace
}  // namespace flamefleet::vm
