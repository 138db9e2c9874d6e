// Replay snapshots on the command line: `flamefleet record` (run a program and write a
// snapshot of the execution) and `flamefleet snapshot inspect` (show what a snapshot holds).
// Replaying is `exec --replay`, `profile --replay`, `submit --replay` and `run --replay`.
//
//   flamefleet record prog.masm --lib std=DIR -o run.snap
//   flamefleet snapshot inspect run.snap --json
//   AddSnapshotCommands(app, &exit_code);
#ifndef FLAMEFLEET_CLI_SNAPSHOT_COMMANDS_H_
#define FLAMEFLEET_CLI_SNAPSHOT_COMMANDS_H_

#include <string>

#include "CLI/CLI.hpp"
#include "flamefleet/v1/snapshot.pb.h"

namespace flamefleet::cli {

// Registers `record` and `snapshot inspect` on `app`; a command's exit code goes to
// `*exit_code` (kept; must outlive app.parse()).
void AddSnapshotCommands(CLI::App& app, int* exit_code);

// Returns the human-readable (`json` false) or JSON summary of `snapshot`, whose file had
// `file_bytes` bytes: program digest, modules, input sizes, events, cycles when known.
std::string DescribeSnapshot(const v1::ReplaySnapshot& snapshot, uint64_t file_bytes, bool json);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_SNAPSHOT_COMMANDS_H_
