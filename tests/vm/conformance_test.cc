// Runs every program of the conformance corpus of each dialect and checks its final stack and
// exact cycle count (or its error) against NAME.expect.json. Also runs each successful program a
// second time one Step() at a time and checks that stack, cycles and per-cycle call stacks agree
// with the fast run.
//
// Corpora (tests/testdata/vm/README.md):
//   v0.16  tests/testdata/vm/ without its v0_16/ and v0_25/ folders (test names Programs/...)
//   v0.25  tests/testdata/vm/v0_25/ without oracles/ (tests/vm/oracle_v025_test.cc runs those)
//          and without corelib/ unless FLAMEFLEET_CORE_LIB names a v0.25.7 core library
//          (crates/lib/core/asm); test names V025Programs/...
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
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

// A corpus program: its dialect and its path relative to that dialect's corpus root.
struct CorpusCase {
  Dialect dialect = Dialect::kV0_16;
  std::string rel;
};

void PrintTo(const CorpusCase& c, std::ostream* os) {
  *os << DialectName(c.dialect) << ":" << c.rel;
}

// The v0.25.7 core library directory from FLAMEFLEET_CORE_LIB, or "" when unset.
std::string CoreLibDir() {
  const char* dir = std::getenv("FLAMEFLEET_CORE_LIB");
  return dir == nullptr ? "" : dir;
}

// The folder of `dialect`'s corpus and the top-level subfolders of it that hold no corpus
// programs of that dialect.
fs::path CorpusRoot(Dialect dialect) {
  return dialect == Dialect::kV0_25 ? DataDir() / "v0_25" : DataDir();
}
std::vector<std::string> ExcludedFolders(Dialect dialect) {
  if (dialect == Dialect::kV0_16) return {"v0_16", "v0_25"};
  std::vector<std::string> out = {"oracles"};
  if (CoreLibDir().empty()) out.push_back("corelib");
  return out;
}

bool ExpectsError(const fs::path& program) {
  fs::path expect = program;
  expect.replace_extension(".expect.json");
  std::ifstream in(expect);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str().find("\"error\"") != std::string::npos;
}

std::vector<CorpusCase> FindPrograms(Dialect dialect, bool successful_only = false) {
  std::vector<CorpusCase> out;
  const fs::path root = CorpusRoot(dialect);
  const std::vector<std::string> excluded = ExcludedFolders(dialect);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::path& p = it->path();
    if (it.depth() == 0 && it->is_directory() &&
        std::find(excluded.begin(), excluded.end(), p.filename().string()) != excluded.end()) {
      it.disable_recursion_pending();
      continue;
    }
    if (p.extension() != ".masm") continue;
    fs::path expect = p;
    expect.replace_extension(".expect.json");
    if (!fs::exists(expect)) continue;  // library modules have no expectation
    if (successful_only && ExpectsError(p)) continue;
    // Lexical: p is under root (fs::relative would resolve every component of every path, in
    // every test process: 16,000 readlink calls per process).
    out.push_back(CorpusCase{dialect, p.lexically_relative(root).string()});
  }
  std::sort(out.begin(), out.end(),
            [](const CorpusCase& a, const CorpusCase& b) { return a.rel < b.rel; });
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
Case LoadCase(const CorpusCase& corpus_case) {
  Case c;
  c.program = CorpusRoot(corpus_case.dialect) / corpus_case.rel;
  c.assembler.dialect = corpus_case.dialect;
  fs::path expect = c.program;
  expect.replace_extension(".expect.json");
  c.expect = nlohmann::json::parse(ReadFile(expect));
  if (c.expect.contains("libs")) {
    for (auto& [ns, dir] : c.expect["libs"].items()) {
      c.assembler.libraries.emplace_back(
          ns, (c.program.parent_path() / dir.get<std::string>()).lexically_normal().string());
    }
  }
  if (c.expect.value("core_lib", false)) {
    c.assembler.libraries.emplace_back("miden::core", CoreLibDir());
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
      absl::StatusOr<ProgramInputs> loaded =
          LoadInputs(in.string(), GetDialectSpec(corpus_case.dialect).json_stack_order);
      EXPECT_TRUE(loaded.ok()) << loaded.status();
      if (loaded.ok()) c.inputs = *loaded;
    }
  }
  if (c.expect.contains("max_cycles")) c.options.max_cycles = c.expect["max_cycles"];
  return c;
}

std::string TestName(const testing::TestParamInfo<CorpusCase>& info) {
  std::string name;
  bool upper = true;
  const std::string& rel = info.param.rel;
  for (char ch : rel.substr(0, rel.size() - 5)) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
      upper = false;
    } else {
      upper = true;
    }
  }
  return name;
}

class ConformanceTest : public testing::TestWithParam<CorpusCase> {};

TEST_P(ConformanceTest, MatchesExpectedStackAndCycles) {
  Case c = LoadCase(GetParam());
  // The expected error text must be found in the message itself, not in the file's name that
  // locations in it show ("mem_loadw_unaligned.masm:3:5" would match "unaligned").
  auto matches_error = [&c](absl::string_view message) {
    const std::string text =
        absl::StrReplaceAll(message, {{c.program.string(), "<file>"},
                                      {c.program.filename().string(), "<file>"},
                                      {c.program.stem().string(), "<file>"}});
    return absl::StrContains(text, c.expect["error"].get<std::string>());
  };
  Assembler assembler(c.assembler);
  absl::StatusOr<Program> program = assembler.AssembleFile(c.program.string());
  const bool expect_error = c.expect.contains("error");
  if (!program.ok()) {
    ASSERT_TRUE(expect_error) << program.status();
    std::string message(program.status().message());
    EXPECT_TRUE(matches_error(message)) << message;
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
    EXPECT_TRUE(matches_error(message)) << message;
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

class StepConformanceTest : public testing::TestWithParam<CorpusCase> {};

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

INSTANTIATE_TEST_SUITE_P(Programs, ConformanceTest,
                         testing::ValuesIn(FindPrograms(Dialect::kV0_16)), TestName);
INSTANTIATE_TEST_SUITE_P(Programs, StepConformanceTest,
                         testing::ValuesIn(FindPrograms(Dialect::kV0_16, /*successful_only=*/true)),
                         TestName);
INSTANTIATE_TEST_SUITE_P(V025Programs, ConformanceTest,
                         testing::ValuesIn(FindPrograms(Dialect::kV0_25)), TestName);
INSTANTIATE_TEST_SUITE_P(V025Programs, StepConformanceTest,
                         testing::ValuesIn(FindPrograms(Dialect::kV0_25, /*successful_only=*/true)),
                         TestName);

TEST(ConformanceCorpusTest, HasAtLeast150Programs) {
  EXPECT_GE(FindPrograms(Dialect::kV0_16).size(), 150u);
}

TEST(ConformanceCorpusTest, V025HasAtLeast250ProgramsWithoutTheCoreLibrary) {
  size_t without_core_lib = 0;
  for (const CorpusCase& c : FindPrograms(Dialect::kV0_25)) {
    if (c.rel.rfind("corelib/", 0) != 0) ++without_core_lib;
  }
  EXPECT_GE(without_core_lib, 250u);
}

// Checks the shape of every v0.25 expectation (runs without the v0.25 implementation): a
// successful program has 16 stack values and a cycle count, a failing one an error substring;
// kernels exist and .inputs files parse.
TEST(ConformanceCorpusTest, V025ExpectationsAreWellFormed) {
  for (const CorpusCase& corpus_case : FindPrograms(Dialect::kV0_25)) {
    SCOPED_TRACE(corpus_case.rel);
    fs::path expect = CorpusRoot(Dialect::kV0_25) / corpus_case.rel;
    expect.replace_extension(".expect.json");
    nlohmann::json j = nlohmann::json::parse(ReadFile(expect), nullptr, /*allow_exceptions=*/false);
    ASSERT_FALSE(j.is_discarded());
    if (j.contains("error")) {
      EXPECT_TRUE(j["error"].is_string());
      EXPECT_FALSE(j.contains("stack"));
      continue;
    }
    ASSERT_TRUE(j.contains("stack") && j["stack"].is_array());
    EXPECT_EQ(j["stack"].size(), 16u);
    EXPECT_TRUE(j.contains("cycles") && j["cycles"].is_number_unsigned());
    if (j.contains("kernel")) {
      EXPECT_TRUE(fs::exists(expect.parent_path() / j["kernel"].get<std::string>()));
    }
    fs::path inputs = expect;
    inputs.replace_extension("").replace_extension(".inputs");
    if (fs::exists(inputs)) {
      absl::StatusOr<ProgramInputs> loaded =
          LoadInputs(inputs.string(), GetDialectSpec(Dialect::kV0_25).json_stack_order);
      EXPECT_TRUE(loaded.ok()) << loaded.status();
    }
  }
}

}  // namespace
}  // namespace flamefleet::vm
