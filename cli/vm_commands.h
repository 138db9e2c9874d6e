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

#include "CLI/CLI.hpp"

namespace flamefleet::cli {

// Registers `exec` on `app`. When a registered command runs, its process exit code is stored
// in `*exit_code` (kept; must outlive app.parse()).
void AddVmCommands(CLI::App& app, int* exit_code);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_VM_COMMANDS_H_
