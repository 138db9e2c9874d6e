// The `flamefleet` command line.
#include "CLI/CLI.hpp"
#include "cli/all_commands.h"

int main(int argc, char** argv) {
  CLI::App app{"flamefleet: cycle-exact profiles and flamegraphs of Miden Assembly programs"};
  app.require_subcommand(1);
  int exit_code = 0;
  flamefleet::cli::AddAllCommands(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
