// The `flamefleet` command line.
#include "CLI/CLI.hpp"
#include "cli/client_commands.h"
#include "cli/profile_commands.h"
#include "cli/render_commands.h"
#include "cli/snapshot_commands.h"
#include "cli/top.h"
#include "cli/vm_commands.h"

int main(int argc, char** argv) {
  CLI::App app{"flamefleet: cycle-exact profiles and flamegraphs of Miden Assembly programs"};
  app.require_subcommand(1);
  int exit_code = 0;
  flamefleet::cli::AddVmCommands(app, &exit_code);
  flamefleet::cli::AddProfileCommands(app, &exit_code);
  flamefleet::cli::AddRenderCommands(app, &exit_code);
  flamefleet::cli::AddSnapshotCommands(app, &exit_code);
  flamefleet::cli::AddClientCommands(app, &exit_code);
  flamefleet::cli::AddTopCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
