#include "cli/program_flags.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace flamefleet::cli {
namespace {

using ::flamefleet::testutil::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// A command `cmd` with the program flags of `command`.
class Parsed {
 public:
  explicit Parsed(ProgramCommand command) : flags(command) {
    cmd = app.add_subcommand("cmd");
    flags.Add(cmd);
  }
  // Parses "flamefleet cmd ARGS..."; CLI11 reports parse errors by throwing.
  void Parse(std::vector<std::string> args) {
    args.insert(args.begin(), {"flamefleet", "cmd"});
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    app.parse(static_cast<int>(argv.size()), argv.data());
  }
  std::string Help(const std::string& name) {
    const CLI::Option* option = cmd->get_option_no_throw(name);
    return option == nullptr ? "<none>" : option->get_description();
  }

  CLI::App app;
  CLI::App* cmd = nullptr;
  ProgramFlags flags;
};

TEST(ProgramFlagsTest, UnsetFlagsGiveTheDefaultOptions) {
  Parsed p(ProgramCommand::kExec);
  p.Parse({"prog.masm"});
  EXPECT_EQ(p.flags.program, "prog.masm");
  ASSERT_OK_AND_ASSIGN(vm::AssemblerOptions assembler, p.flags.AssemblerOptions());
  EXPECT_TRUE(assembler.libraries.empty());
  EXPECT_EQ(assembler.kernel_path, "");
  EXPECT_EQ(p.flags.AssembleLimits().max_program_ops, vm::AssembleLimits{}.max_program_ops);
  const vm::ExecutionOptions defaults;
  EXPECT_EQ(p.flags.ExecutionOptions().max_cycles, defaults.max_cycles);
  EXPECT_EQ(p.flags.ExecutionOptions().max_memory_bytes, defaults.max_memory_bytes);
  v1::BatchOptions batch;
  batch.set_max_cycles(9);
  ASSERT_OK(p.flags.SetBatchOptions(&batch));
  EXPECT_EQ(batch.max_cycles(), 0u);
  EXPECT_EQ(batch.max_memory_bytes(), 0u);
  EXPECT_EQ(batch.max_program_ops(), 0u);
}

TEST(ProgramFlagsTest, ParsesEveryFlagOfALocalCommand) {
  Parsed p(ProgramCommand::kProfile);
  p.Parse({"--inputs", "in.toml", "--lib", "std=lib/std", "--lib", "ex=lib/ex", "--kernel",
           "k.masm", "--max-cycles", "100", "--max-memory", "4096", "--max-program-ops", "7",
           "--replay", "run.snap"});
  EXPECT_EQ(p.flags.program, "");
  EXPECT_EQ(p.flags.replay, "run.snap");
  EXPECT_EQ(p.flags.inputs, "in.toml");
  EXPECT_EQ(p.flags.kernel, "k.masm");
  ASSERT_OK_AND_ASSIGN(vm::AssemblerOptions assembler, p.flags.AssemblerOptions());
  EXPECT_THAT(assembler.libraries, ElementsAre(Pair("std", "lib/std"), Pair("ex", "lib/ex")));
  EXPECT_EQ(assembler.kernel_path, "k.masm");
  EXPECT_EQ(p.flags.AssembleLimits().max_program_ops, 7u);
  EXPECT_EQ(p.flags.ExecutionOptions().max_cycles, 100u);
  EXPECT_EQ(p.flags.ExecutionOptions().max_memory_bytes, 4096u);
}

TEST(ProgramFlagsTest, FleetCommandsTakeManyProgramsAndSnapshots) {
  Parsed p(ProgramCommand::kSubmit);
  p.Parse({"a.masm", "suite/", "--replay", "x.snap", "--replay", "y.snap", "--lib", "std=d",
           "--max-cycles", "5", "--max-memory", "0", "--max-program-ops", "11"});
  EXPECT_THAT(p.flags.programs, ElementsAre("a.masm", "suite/"));
  EXPECT_THAT(p.flags.replays, ElementsAre("x.snap", "y.snap"));
  EXPECT_THAT(p.flags.libs, ElementsAre("std=d"));
  v1::BatchOptions batch;
  ASSERT_OK(p.flags.SetBatchOptions(&batch));
  EXPECT_EQ(batch.max_cycles(), 5u);
  EXPECT_EQ(batch.max_memory_bytes(), 0u);
  EXPECT_EQ(batch.max_program_ops(), 11u);
}

TEST(ProgramFlagsTest, EachCommandGetsItsOwnFlags) {
  Parsed submit(ProgramCommand::kRun);
  EXPECT_FALSE(submit.flags.local());
  EXPECT_EQ(submit.Help("--inputs"), "<none>");
  EXPECT_EQ(submit.Help("--kernel"),
            "kernel module (.masm) of every program job, sent with its `mod` submodules");
  Parsed record(ProgramCommand::kRecord);
  EXPECT_TRUE(record.flags.local());
  EXPECT_EQ(record.Help("--replay"), "<none>");
  EXPECT_THROW(record.Parse({}), CLI::RequiredError);  // record needs a PROGRAM
  Parsed exec(ProgramCommand::kExec);
  exec.Parse({});  // exec may take --replay instead
  EXPECT_EQ(exec.flags.program, "");
}

TEST(ProgramFlagsTest, HelpKeepsEachCommandsWording) {
  EXPECT_EQ(Parsed(ProgramCommand::kExec).Help("--lib"),
            "library NAMESPACE=DIR (repeatable), e.g. std=DIR");
  EXPECT_EQ(Parsed(ProgramCommand::kProfile).Help("--lib"), "library NAMESPACE=DIR (repeatable)");
  EXPECT_EQ(Parsed(ProgramCommand::kSubmit).Help("--lib"),
            "library NAMESPACE=DIR sent with the batch (repeatable)");
  EXPECT_THAT(Parsed(ProgramCommand::kRecord).Help("--kernel"),
              HasSubstr("(recorded in the snapshot)"));
  EXPECT_EQ(Parsed(ProgramCommand::kRun).Help("--max-cycles"), "cycle cap per job");
  EXPECT_EQ(Parsed(ProgramCommand::kExec).Help("--max-program-ops"),
            "refuse a program whose repeats expand past N operations (default 4194304)");
  EXPECT_EQ(Parsed(ProgramCommand::kSubmit).Help("--max-program-ops"),
            "refuse a program whose repeats expand past N operations (0: the default, 4194304)");
}

TEST(ProgramFlagsTest, ABadNumberNamesTheFlag) {
  for (const char* flag : {"--max-cycles", "--max-memory", "--max-program-ops"}) {
    Parsed p(ProgramCommand::kExec);
    try {
      p.Parse({"prog.masm", flag, "lots"});
      ADD_FAILURE() << flag << " lots was accepted";
    } catch (const CLI::ParseError& e) {
      EXPECT_THAT(e.what(), HasSubstr(flag));
    }
  }
}

TEST(ProgramFlagsTest, ABadLibNamesTheValue) {
  Parsed p(ProgramCommand::kRecord);
  p.Parse({"prog.masm", "--lib", "std"});
  EXPECT_THAT(p.flags.AssemblerOptions(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--lib 'std': expected NAMESPACE=DIR")));
}

TEST(ProgramFlagsTest, CheckReplayWantsProgramOrSnapshot) {
  Parsed both(ProgramCommand::kExec);
  both.Parse({"prog.masm", "--replay", "run.snap"});
  EXPECT_THAT(both.flags.CheckReplay(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not both")));
  Parsed replay_with_lib(ProgramCommand::kExec);
  replay_with_lib.Parse({"--replay", "run.snap", "--lib", "std=d"});
  EXPECT_THAT(replay_with_lib.flags.CheckReplay(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("the snapshot has its own")));
  Parsed program(ProgramCommand::kExec);
  program.Parse({"prog.masm"});
  EXPECT_OK(program.flags.CheckReplay());
}

TEST(ProgramFlagsTest, DialectDefaultsAndIsNamedByTheFlag) {
  Parsed unset(ProgramCommand::kExec);
  unset.Parse({"prog.masm"});
  ASSERT_OK_AND_ASSIGN(vm::Dialect dialect, unset.flags.Dialect());
  EXPECT_EQ(dialect, vm::Dialect::kV0_25);
  Parsed named(ProgramCommand::kProfile);
  named.Parse({"prog.masm", "--dialect", "0.16"});
  ASSERT_OK_AND_ASSIGN(dialect, named.flags.Dialect());
  EXPECT_EQ(dialect, vm::Dialect::kV0_16);
  Parsed bad(ProgramCommand::kRecord);
  bad.Parse({"prog.masm", "--dialect", "v1"});
  EXPECT_THAT(bad.flags.Dialect(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--dialect: unknown dialect 'v1': expected one of v0.16")));
  for (ProgramCommand command :
       {ProgramCommand::kExec, ProgramCommand::kProfile, ProgramCommand::kRecord,
        ProgramCommand::kSubmit, ProgramCommand::kRun}) {
    EXPECT_THAT(Parsed(command).Help("--dialect"), HasSubstr("(default v0.25"));
  }
}

TEST(ProgramFlagsTest, BatchOptionsNameTheDialectOnlyWhenTheFlagDoes) {
  Parsed unset(ProgramCommand::kSubmit);
  unset.Parse({"suite/"});
  v1::BatchOptions batch;
  ASSERT_OK(unset.flags.SetBatchOptions(&batch));
  EXPECT_EQ(batch.dialect(), "");  // the coordinator's default
  Parsed named(ProgramCommand::kRun);
  named.Parse({"suite/", "--dialect", "0.16"});
  ASSERT_OK(named.flags.SetBatchOptions(&batch));
  EXPECT_EQ(batch.dialect(), "v0.16");
  Parsed bad(ProgramCommand::kSubmit);
  bad.Parse({"suite/", "--dialect", "nope"});
  EXPECT_THAT(bad.flags.SetBatchOptions(&batch),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--dialect")));
}

TEST(ProgramFlagsTest, ReplayTakesNoDialect) {
  Parsed p(ProgramCommand::kExec);
  p.Parse({"--replay", "run.snap", "--dialect", "v0.16"});
  EXPECT_THAT(p.flags.CheckReplay(), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("--dialect cannot be used with --replay")));
}

// A fresh directory under the test's temp dir, removed at the end of the test.
class CoreLibraryTest : public ::testing::Test {
 protected:
  CoreLibraryTest()
      : root_(std::filesystem::path(::testing::TempDir()) /
              ::testing::UnitTest::GetInstance()->current_test_info()->name()) {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
  }
  ~CoreLibraryTest() override { std::filesystem::remove_all(root_); }

  // Creates DIR/asm under the cargo registry of `cargo_home` for crate `crate`.
  std::string MakeCrate(const std::string& cargo_home, const std::string& crate) {
    const std::filesystem::path asm_dir = root_ / cargo_home / "registry" / "src" /
                                          "index.crates.io-6f17d22bba15001f" / crate / "asm";
    std::filesystem::create_directories(asm_dir);
    return asm_dir.string();
  }

  std::filesystem::path root_;
};

TEST_F(CoreLibraryTest, TheEnvironmentVariableWins) {
  const std::string env = (root_ / "core").string();
  std::filesystem::create_directories(env);
  MakeCrate("cargo", "miden-core-lib-0.25.7");
  absl::StatusOr<std::string> dir =
      FindCoreLibrary("miden::core", "miden-core-lib-0.25.", env, (root_ / "cargo").string());
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_EQ(*dir, env);
  EXPECT_THAT(FindCoreLibrary("miden::core", "miden-core-lib-0.25.", (root_ / "nope").string(),
                              (root_ / "cargo").string()),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("is not a directory")));
}

TEST_F(CoreLibraryTest, FindsTheNewestCrateInTheCargoRegistry) {
  MakeCrate("cargo", "miden-core-lib-0.25.2");
  const std::string newest = MakeCrate("cargo", "miden-core-lib-0.25.10");
  MakeCrate("cargo", "miden-core-lib-0.24.9");
  MakeCrate("cargo", "other-0.25.1");
  absl::StatusOr<std::string> dir =
      FindCoreLibrary("miden::core", "miden-core-lib-0.25.", "", (root_ / "cargo").string());
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_EQ(*dir, newest);
}

TEST_F(CoreLibraryTest, NoLibrarySaysHowToPointAtIt) {
  MakeCrate("cargo", "miden-core-lib-0.24.9");
  EXPECT_THAT(
      FindCoreLibrary("miden::core", "miden-core-lib-0.25.", "", (root_ / "cargo").string()),
      StatusIs(absl::StatusCode::kNotFound,
               AllOf(HasSubstr("--lib miden::core=DIR"), HasSubstr("MIDEN_CORE_LIB"),
                     HasSubstr("crates/lib/core/asm"))));
  EXPECT_THAT(FindCoreLibrary("miden::core", "miden-core-lib-0.25.", "", ""),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(CoreLibraryTest, AssemblerOptionsMapTheCoreLibraryWhereverItIsFound) {
  const std::string env = (root_ / "core").string();
  std::filesystem::create_directories(env);
  setenv("MIDEN_CORE_LIB", env.c_str(), 1);
  const std::string uses = (root_ / "uses.masm").string();
  const std::string plain = (root_ / "plain.masm").string();
  std::ofstream(uses) << "use miden::core::math::u64\nbegin\n  exec.u64::wrapping_add\nend\n";
  std::ofstream(plain) << "begin\n  push.1\nend\n";
  Parsed a(ProgramCommand::kExec);
  a.Parse({uses, "--dialect", "v0.25"});
  absl::StatusOr<vm::AssemblerOptions> with = a.flags.AssemblerOptions();
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_THAT(with->libraries, ElementsAre(Pair("miden::core", env)));
  // A program that does not name it still gets it: its --lib libraries may import it.
  Parsed b(ProgramCommand::kExec);
  b.Parse({plain, "--dialect", "v0.25"});
  absl::StatusOr<vm::AssemblerOptions> found = b.flags.AssemblerOptions();
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_THAT(found->libraries, ElementsAre(Pair("miden::core", env)));
  // Not found: an error only for a program that names it.
  setenv("MIDEN_CORE_LIB", (root_ / "missing").string().c_str(), 1);
  Parsed e(ProgramCommand::kExec);
  e.Parse({plain, "--dialect", "v0.25"});
  absl::StatusOr<vm::AssemblerOptions> without = e.flags.AssemblerOptions();
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_TRUE(without->libraries.empty());
  Parsed f(ProgramCommand::kExec);
  f.Parse({uses, "--dialect", "v0.25"});
  EXPECT_THAT(f.flags.AssemblerOptions(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("MIDEN_CORE_LIB")));
  setenv("MIDEN_CORE_LIB", env.c_str(), 1);
  // v0.16 has no core library to look for; an explicit --lib is kept as given.
  Parsed c(ProgramCommand::kExec);
  c.Parse({uses, "--dialect", "v0.16"});
  absl::StatusOr<vm::AssemblerOptions> classic = c.flags.AssemblerOptions();
  ASSERT_TRUE(classic.ok()) << classic.status();
  EXPECT_TRUE(classic->libraries.empty());
  Parsed d(ProgramCommand::kExec);
  d.Parse({uses, "--dialect", "v0.25", "--lib", "miden::core=/x"});
  absl::StatusOr<vm::AssemblerOptions> given = d.flags.AssemblerOptions();
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_THAT(given->libraries, ElementsAre(Pair("miden::core", "/x")));
  unsetenv("MIDEN_CORE_LIB");
}

}  // namespace
}  // namespace flamefleet::cli
