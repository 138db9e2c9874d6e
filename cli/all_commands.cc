#include "cli/all_commands.h"

#include "cli/client_commands.h"
#include "cli/profile_commands.h"
#include "cli/render_commands.h"
#include "cli/snapshot_commands.h"
#include "cli/top.h"
#include "cli/vm_commands.h"

namespace flamefleet::cli {

void AddAllCommands(CLI::App& app, int* exit_code) {
  AddVmCommands(app, exit_code);
  AddProfileCommands(app, exit_code);
  AddRenderCommands(app, exit_code);
  AddSnapshotCommands(app, exit_code);
  AddClientCommands(app, exit_code);
  AddTopCommand(app, exit_code);
}

}  // namespace flamefleet::cli
