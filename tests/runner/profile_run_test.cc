#include "runner/profile_run.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "profile/folded.h"
#include "tests/testing/classic.h"

namespace flamefleet::runner {
namespace {

std::string Folded(const profile::Profile& p) {
  std::ostringstream out;
  EXPECT_TRUE(profile::WriteFolded(p, out).ok());
  return out.str();
}

absl::StatusOr<ProfiledRun> Profile(const std::string& source, StackMode mode) {
  absl::StatusOr<vm::Program> program =
      vm::Assembler(testutil::ClassicOptions()).AssembleSource("t.masm", source);
  if (!program.ok()) return program.status();
  return ProfileProgram(*program, vm::ProgramInputs{}, vm::ExecutionOptions{}, mode);
}

// leaf's ops are inlined into $main's block: SPAN PUSH(5) | PAD INCR ADD DROP | END.
constexpr char kInlined[] = "proc.leaf push.1 add drop end begin push.5 exec.leaf end";

TEST(ProfileRunTest, NestedChargesInlinedOpsToCalleeAndControlRowsToOwner) {
  auto run = Profile(kInlined, StackMode::kNested);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->result.cycles, 7u);
  EXPECT_EQ(Folded(run->profile), "$exec::$main 3\n$exec::$main;$exec::leaf 4\n");
}

TEST(ProfileRunTest, FlatKeepsTheLastOpsProcedureOnControlRows) {
  auto run = Profile(kInlined, StackMode::kFlat);
  ASSERT_TRUE(run.ok()) << run.status();
  // The END row follows leaf's last op, so the debugger charges it to leaf.
  EXPECT_EQ(Folded(run->profile), "$exec::$main 2\n$exec::leaf 5\n");
}

TEST(ProfileRunTest, NonInlinedProcedureOwnsItsControlRows) {
  // `branch` has an `if`, so it is its own MAST node: JOIN(block, SPLIT) inside $main's JOIN.
  auto run = Profile(R"(
      proc.branch if.true push.1 else push.2 end drop end
      begin push.1 exec.branch push.0 drop end)",
                     StackMode::kNested);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->profile.total(), run->result.cycles);
  std::string folded = Folded(run->profile);
  EXPECT_NE(folded.find("$exec::$main;$exec::branch "), std::string::npos) << folded;
}

TEST(ProfileRunTest, DynamicallyCalledProcedureAppearsByName) {
  // dynexec / dyncall enter `target` by its MAST root; the profile names it (issue #6, 3).
  constexpr char kDyn[] = R"(
      proc.target mul.7 end
      begin
        push.6 procref.target mem_storew.100 dropw
        push.100 dynexec
        push.100 dyncall
        swap drop
      end)";
  for (StackMode mode : {StackMode::kNested, StackMode::kFlat}) {
    auto run = Profile(kDyn, mode);
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(run->profile.total(), run->result.cycles);
    EXPECT_EQ(run->result.stack[0].value(), 294u);
    std::string folded = Folded(run->profile);
    const char* frame =
        mode == StackMode::kNested ? "$exec::$main;$exec::target " : "\n$exec::target ";
    EXPECT_NE(("\n" + folded).find(frame), std::string::npos) << folded;
  }
}

TEST(ProfileRunTest, ProcedureInvokedByMastRootAppearsByName) {
  // exec / call of a MAST-root literal (target's root, as procref pushes it): EXTERNAL nodes
  // resolved to `target` (compiled because procref names it), which the profile names.
  const std::string program = R"(
      proc.target mul.7 end
      begin
        procref.target dropw
        push.42
        exec.0xd49bf6116c22f4c10d601dd09c00960c1820b3976c7faa5275be5e044b03464d
        call.0xd49bf6116c22f4c10d601dd09c00960c1820b3976c7faa5275be5e044b03464d
        swap drop
      end)";
  for (StackMode mode : {StackMode::kNested, StackMode::kFlat}) {
    auto run = Profile(program, mode);
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(run->profile.total(), run->result.cycles);
    EXPECT_EQ(run->result.stack[0].value(), 42u * 7 * 7);
    std::string folded = Folded(run->profile);
    const char* frame =
        mode == StackMode::kNested ? "$exec::$main;$exec::target " : "\n$exec::target ";
    EXPECT_NE(("\n" + folded).find(frame), std::string::npos) << folded;
  }
}

// v0.25 frame names are the procedures' paths without the leading `::` of v0.25.7's absolute
// paths, as miden-debug prints them (`CallFrame::procedure("")` strips an empty first
// component): `$exec::$main`, `$exec::local`, `mylib::util::triple`.
TEST(ProfileRunTest, CurrentMidenFramesAreNamedByTheirPaths) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "frames_v025";
  fs::remove_all(dir);
  fs::create_directories(dir / "lib");
  std::ofstream(dir / "lib" / "mod.masm") << "pub mod util\n";
  std::ofstream(dir / "lib" / "util.masm") << "pub proc triple\n  dup dup add add\nend\n";
  std::ofstream(dir / "main.masm") << "use mylib::util\n"
                                      "proc local\n  exec.util::triple\nend\n"
                                      "begin\n  push.5 exec.local\n  swap drop\nend\n";
  vm::AssemblerOptions options;  // the default dialect, v0.25
  options.libraries = {{"mylib", (dir / "lib").string()}};
  absl::StatusOr<vm::Program> program =
      vm::Assembler(options).AssembleFile((dir / "main.masm").string());
  ASSERT_TRUE(program.ok()) << program.status();
  auto nested =
      ProfileProgram(*program, vm::ProgramInputs{}, vm::ExecutionOptions{}, StackMode::kNested);
  ASSERT_TRUE(nested.ok()) << nested.status();
  EXPECT_EQ(nested->result.stack[0].value(), 15u);
  const std::string folded = Folded(nested->profile);
  EXPECT_NE(folded.find("$exec::$main;$exec::local;mylib::util::triple "), std::string::npos)
      << folded;
  auto flat =
      ProfileProgram(*program, vm::ProgramInputs{}, vm::ExecutionOptions{}, StackMode::kFlat);
  ASSERT_TRUE(flat.ok()) << flat.status();
  const std::string flat_folded = Folded(flat->profile);
  EXPECT_TRUE(flat_folded.rfind("mylib::util::triple ", 0) == 0 ||
              flat_folded.find("\nmylib::util::triple ") != std::string::npos)
      << flat_folded;
}

TEST(ProfileRunTest, TrapIsReturnedAsError) {
  auto run = Profile("begin push.0 assert end", StackMode::kNested);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
}

// Every successful conformance program of both dialects (v0.25: tests/testdata/vm/v0_25/,
// v0.16: the rest): the profile accounts for every cycle, in both modes.
TEST(ProfileRunTest, ProfileTotalsEqualCyclesOnTheCorpus) {
  namespace fs = std::filesystem;
  fs::path root = fs::path(FLAMEFLEET_TESTDATA_DIR) / "vm";
  const fs::path v025_root = root / "v0_25";
  int checked = 0, checked_v025 = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.path().extension() != ".masm") continue;
    const std::string rel = entry.path().lexically_relative(v025_root).generic_string();
    const bool v025 = rel.rfind("..", 0) != 0;
    const vm::Dialect dialect = v025 ? vm::Dialect::kV0_25 : vm::Dialect::kV0_16;
    fs::path expect = entry.path();
    expect.replace_extension(".expect.json");
    if (!fs::exists(expect)) continue;
    std::ifstream in(expect);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("\"error\"") != std::string::npos || text.find("\"libs\"") != std::string::npos ||
        text.find("\"core_lib\"") != std::string::npos) {
      continue;
    }
    vm::AssemblerOptions assembler_options;
    assembler_options.dialect = dialect;
    // "kernel": "relative/K.masm" (tests/testdata/vm/kernel/).
    const std::string kernel_key = "\"kernel\": \"";
    if (size_t k = text.find(kernel_key); k != std::string::npos) {
      size_t begin = k + kernel_key.size();
      assembler_options.kernel_path =
          (entry.path().parent_path() / text.substr(begin, text.find('"', begin) - begin)).string();
    }
    absl::StatusOr<vm::Program> program =
        vm::Assembler(assembler_options).AssembleFile(entry.path().string());
    ASSERT_TRUE(program.ok()) << program.status();
    vm::ProgramInputs inputs;
    for (const char* ext : {".inputs", ".toml"}) {
      fs::path p = entry.path();
      p.replace_extension(ext);
      if (fs::exists(p)) {
        inputs = *vm::LoadInputs(p.string(), vm::GetDialectSpec(dialect).json_stack_order);
      }
    }
    for (StackMode mode : {StackMode::kNested, StackMode::kFlat}) {
      auto run = ProfileProgram(*program, inputs, vm::ExecutionOptions{}, mode);
      ASSERT_TRUE(run.ok()) << entry.path() << ": " << run.status();
      EXPECT_EQ(run->profile.total(), run->result.cycles) << entry.path();
    }
    ++checked;
    if (v025) ++checked_v025;
  }
  EXPECT_GT(checked - checked_v025, 100);
  EXPECT_GT(checked_v025, 100);
}

}  // namespace
}  // namespace flamefleet::runner
