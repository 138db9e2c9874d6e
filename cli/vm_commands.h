// The VM subcommands of the `flamefleet` CLI: `exec` (run a program, print the final stack and
// the cycle count).
//
//   CLI::App app{"flamefleet"};
//   int exit_code = 0;
//   AddVmCommands(app, &exit_code);
//   CLI11_PARSE(app, argc, argv);
//   return exit_code;
#ifndef FLAMEFLEET_CLI_VM_COMMANDS_H_
#define FLAMEFLEET_CLI_VM_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "vm/assembler/assembler.h"
#include "vm/inputs.h"

namespace flamefleet::cli {

// Registers `exec` on `app`. When a registered command runs, its process exit code is stored
// in `*exit_code` (kept; must outlive app.parse()).
void AddVmCommands(CLI::App& app, int* exit_code);

// Parses `--lib NS=DIR` values into (namespace, directory) pairs. InvalidArgument names the
// bad value.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ParseLibraryFlags(
    const std::vector<std::string>& values);

// Checks the program arguments of a command that also accepts `--replay SNAPSHOT`: exactly
// one of `program` and `replay` is set, and a replay takes no inputs or libraries.
// InvalidArgument with a usage message otherwise.
absl::Status CheckReplayFlags(const std::string& program, const std::string& replay,
                              const std::string& inputs, const std::vector<std::string>& libs);

// The resource limits of a local run or of a batch's jobs, as flags (unset: the default).
struct ResourceLimitFlags {
  std::optional<uint64_t> max_memory;       // --max-memory BYTES
  std::optional<uint64_t> max_program_ops;  // --max-program-ops N
};

// Registers --max-memory and --max-program-ops on `cmd`, filling `*flags` (kept; must outlive
// the parse).
void AddResourceLimitFlags(CLI::App* cmd, ResourceLimitFlags* flags);

// Returns the assembler limits the flags ask for (defaults where unset).
vm::AssembleLimits AssembleLimitsFromFlags(const ResourceLimitFlags& flags);

// Returns NAME.inputs or NAME.toml beside `program` if one exists (the Miden examples
// layout), else "".
std::string DefaultInputsPath(const std::string& program);

// Loads the inputs of `program`: from `inputs_flag` when set, else from the default file beside
// the program, else empty inputs. Errors are those of vm::LoadInputs.
absl::StatusOr<vm::ProgramInputs> LoadProgramInputs(const std::string& program,
                                                   const std::string& inputs_flag);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_VM_COMMANDS_H_
