// How a `flamefleet` command ends: every command returns an absl::Status (or, where it has
// more outcomes than success and failure, an ExitCode), and one wrapper turns that into the
// process exit code and the "error: MESSAGE" line on stderr.
//
//   SetCommand(exec_cmd, &exit_code, [flags]() -> CommandResult {
//     if (bad_flags) return UsageError("give either a PROGRAM or --replay SNAPSHOT");  // exit 2
//     FLAMEFLEET_ASSIGN_OR_RETURN(vm::RunResult result, Run(*flags));  // an error: exit 1
//     return absl::OkStatus();                                         // exit 0
//   });
//
// Exit codes: 0 success; 1 failure (a bad program, a trap, an RPC error, a failed job); 2 a
// usage error; 130 interrupted; `render` and `diff` have their own (cli/render_commands.h).
#ifndef FLAMEFLEET_CLI_COMMAND_H_
#define FLAMEFLEET_CLI_COMMAND_H_

#include <functional>
#include <ostream>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace flamefleet::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // the command failed: a program, a run, an RPC, a job
inline constexpr int kExitUsage = 2;   // bad flags or arguments
inline constexpr int kExitInterrupted = 130;

// An exit code the command chose itself, with nothing more to print (it said what happened),
// e.g. `watch` exits 1 when the batch it followed did not succeed.
struct ExitCode {
  int value = kExitOk;
};

// What a command returns: a status (OK: exit 0; else its message is printed and the exit code
// is kExitUsage for a UsageError, kExitFailed otherwise) or an ExitCode.
class CommandResult {
 public:
  // Implicit, so that commands `return status;` and use FLAMEFLEET_RETURN_IF_ERROR.
  CommandResult(absl::Status status) : status_(std::move(status)) {}  // NOLINT
  CommandResult(ExitCode code) : code_(code.value) {}                 // NOLINT

  const absl::Status& status() const { return status_; }
  // Returns the exit code (see the class comment).
  int exit_code() const;

 private:
  absl::Status status_;
  int code_ = kExitOk;
};

// Returns `status` marked as a usage error (exit kExitUsage); code and message are kept. An OK
// status is returned unchanged.
absl::Status UsageError(absl::Status status);
// Returns InvalidArgument(`message`) marked as a usage error.
absl::Status UsageError(absl::string_view message);
// Returns whether `status` was marked by UsageError.
bool IsUsageError(const absl::Status& status);

// Returns the process exit code of `result` and, when its status is not OK, writes
// "error: MESSAGE\n" to `err`.
int FinishCommand(const CommandResult& result, std::ostream& err);

// Makes `command` the callback of `cmd`: when CLI11 runs it, its result goes through
// FinishCommand (to std::cerr) into `*exit_code`. `exit_code` is kept and must outlive the
// parse; `command` is kept by `cmd`.
void SetCommand(CLI::App* cmd, int* exit_code, std::function<CommandResult()> command);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_COMMAND_H_
