// The fleet subcommands of the `flamefleet` CLI: `submit`, `status`, `list`, `watch`,
// `cancel`, `fetch` (all with --coordinator ADDR and the client security flags --tls-ca,
// --tls-cert, --tls-key, --auth-token-file, each also read from FLAMEFLEET_COORDINATOR,
// FLAMEFLEET_TLS_CA, ...; see common/security.h) and `run` (starts an embedded local fleet —
// coordinator, renderer and one worker per core as child processes on loopback, plaintext and
// without a token — runs the batch, fetches the results and stops everything).
//
//   AddClientCommands(app, &exit_code);
#ifndef FLAMEFLEET_CLI_CLIENT_COMMANDS_H_
#define FLAMEFLEET_CLI_CLIENT_COMMANDS_H_

#include "CLI/CLI.hpp"

namespace flamefleet::cli {

// Registers the fleet subcommands on `app`; a command's exit code goes to `*exit_code` (kept).
void AddClientCommands(CLI::App& app, int* exit_code);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_CLIENT_COMMANDS_H_
