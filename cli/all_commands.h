// Every subcommand of the `flamefleet` command line, registered in one place, so `main` and the
// tests that walk the command tree (help-text style) see the same set.
//
//   CLI::App app{"flamefleet: ..."};
//   int exit_code = 0;
//   flamefleet::cli::AddAllCommands(app, &exit_code);
//   app.parse(argc, argv);  // runs the chosen subcommand, which sets exit_code
#ifndef FLAMEFLEET_CLI_ALL_COMMANDS_H_
#define FLAMEFLEET_CLI_ALL_COMMANDS_H_

#include "CLI/CLI.hpp"

namespace flamefleet::cli {

// Registers every subcommand on `app`; the one that runs writes its exit code to `*exit_code`
// (kept; must outlive the parse). Not thread-safe (CLI11 apps are not).
void AddAllCommands(CLI::App& app, int* exit_code);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_ALL_COMMANDS_H_
