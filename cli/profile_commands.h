// `flamefleet profile`: run a MASM program and write its cycle profile as a nested (or
// --flat, miden-debug compatible) flamegraph SVG, folded stacks, pprof or speedscope JSON; the
// format follows the output name (renderer::WriteProfileFile, fallback folded).
//
//   AddProfileCommands(app, &exit_code);
#ifndef FLAMEFLEET_CLI_PROFILE_COMMANDS_H_
#define FLAMEFLEET_CLI_PROFILE_COMMANDS_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "profile/profile.h"

namespace flamefleet::cli {

// Registers `profile` on `app`; the command's exit code goes to `*exit_code` (kept).
void AddProfileCommands(CLI::App& app, int* exit_code);

// Assembles and runs `program_path` (inputs from `inputs_path`, or PROGRAM.inputs / .toml beside
// it when empty; libraries as `--lib NS=DIR` values) and returns its profile. `flat` selects the
// miden-debug compatible one-frame stacks. Errors carry the assembly or execution message.
absl::StatusOr<profile::Profile> ProfileMasmFile(const std::string& program_path,
                                                 const std::string& inputs_path,
                                                 const std::vector<std::string>& libs, bool flat);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_PROFILE_COMMANDS_H_
