#include "cli/program_flags.h"

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"

namespace flamefleet::cli {
namespace {

using ::flamefleet::testutil::StatusIs;
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
  EXPECT_EQ(submit.Help("--kernel"), "<none>");
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
  EXPECT_EQ(dialect, vm::kDefaultDialect);
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
    EXPECT_THAT(Parsed(command).Help("--dialect"), HasSubstr("(default v0.16"));
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

}  // namespace
}  // namespace flamefleet::cli
