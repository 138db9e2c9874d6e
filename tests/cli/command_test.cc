#include "cli/command.h"

#include <sstream>
#include <string>

#include "CLI/CLI.hpp"
#include "gtest/gtest.h"

namespace flamefleet::cli {
namespace {

TEST(CommandTest, OkExitsZeroSilently) {
  std::ostringstream err;
  EXPECT_EQ(FinishCommand(absl::OkStatus(), err), kExitOk);
  EXPECT_EQ(err.str(), "");
}

TEST(CommandTest, AnErrorExitsOneWithItsMessage) {
  std::ostringstream err;
  EXPECT_EQ(FinishCommand(absl::NotFoundError("prog.masm: no such file"), err), kExitFailed);
  EXPECT_EQ(err.str(), "error: prog.masm: no such file\n");
  // InvalidArgument is a failure too (a bad program) unless marked as a usage error.
  std::ostringstream err2;
  EXPECT_EQ(FinishCommand(absl::InvalidArgumentError("t.masm:1:7: unknown op"), err2), kExitFailed);
  EXPECT_EQ(err2.str(), "error: t.masm:1:7: unknown op\n");
}

TEST(CommandTest, AUsageErrorExitsTwoAndKeepsCodeAndMessage) {
  absl::Status usage = UsageError(absl::NotFoundError("give a PROGRAM"));
  EXPECT_TRUE(IsUsageError(usage));
  EXPECT_EQ(usage.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(usage.message(), "give a PROGRAM");
  std::ostringstream err;
  EXPECT_EQ(FinishCommand(usage, err), kExitUsage);
  EXPECT_EQ(err.str(), "error: give a PROGRAM\n");

  absl::Status from_text = UsageError("--state: unknown state");
  EXPECT_EQ(from_text.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CommandResult(from_text).exit_code(), kExitUsage);
  EXPECT_FALSE(IsUsageError(absl::InvalidArgumentError("--state: unknown state")));
  EXPECT_TRUE(UsageError(absl::OkStatus()).ok());
}

TEST(CommandTest, AnExitCodeIsPassedOnWithoutAMessage) {
  std::ostringstream err;
  EXPECT_EQ(FinishCommand(ExitCode{3}, err), 3);
  EXPECT_EQ(FinishCommand(ExitCode{kExitInterrupted}, err), 130);
  EXPECT_EQ(FinishCommand(ExitCode{}, err), kExitOk);
  EXPECT_EQ(err.str(), "");
}

TEST(CommandTest, SetCommandStoresTheExitCodeOfTheCommandThatRan) {
  CLI::App app;
  int exit_code = -1;
  SetCommand(app.add_subcommand("fine"), &exit_code, [] { return absl::OkStatus(); });
  SetCommand(app.add_subcommand("usage"), &exit_code, [] { return UsageError("bad flag"); });
  SetCommand(app.add_subcommand("gate"), &exit_code, [] { return ExitCode{3}; });
  const char* usage[] = {"flamefleet", "usage"};
  app.parse(2, usage);
  EXPECT_EQ(exit_code, kExitUsage);
  const char* gate[] = {"flamefleet", "gate"};
  app.parse(2, gate);
  EXPECT_EQ(exit_code, 3);
  const char* fine[] = {"flamefleet", "fine"};
  app.parse(2, fine);
  EXPECT_EQ(exit_code, kExitOk);
}

}  // namespace
}  // namespace flamefleet::cli
