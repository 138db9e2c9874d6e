#include "cli/command.h"

#include <iostream>
#include <utility>

#include "absl/strings/cord.h"

namespace flamefleet::cli {
namespace {

// The payload that marks a usage error (its value is unused).
constexpr char kUsagePayload[] = "type.flamefleet.dev/cli.UsageError";

}  // namespace

int CommandResult::exit_code() const {
  if (status_.ok()) return code_;
  return IsUsageError(status_) ? kExitUsage : kExitFailed;
}

absl::Status UsageError(absl::Status status) {
  if (!status.ok()) status.SetPayload(kUsagePayload, absl::Cord());
  return status;
}

absl::Status UsageError(absl::string_view message) {
  return UsageError(absl::InvalidArgumentError(message));
}

bool IsUsageError(const absl::Status& status) {
  return status.GetPayload(kUsagePayload).has_value();
}

int FinishCommand(const CommandResult& result, std::ostream& err) {
  if (!result.status().ok()) err << "error: " << result.status().message() << "\n";
  return result.exit_code();
}

void SetCommand(CLI::App* cmd, int* exit_code, std::function<CommandResult()> command) {
  cmd->callback([exit_code, command = std::move(command)] {
    *exit_code = FinishCommand(command(), std::cerr);
  });
}

}  // namespace flamefleet::cli
