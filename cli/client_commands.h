// The fleet subcommands of the `flamefleet` CLI: `submit`, `status`, `list`, `watch`,
// `cancel`, `fetch`, `aggregate` (all with --coordinator ADDR and the client security flags
// --tls-ca, --tls-cert, --tls-key, --auth-token-file, each also read from
// FLAMEFLEET_COORDINATOR, FLAMEFLEET_TLS_CA, ...; see common/security.h), `health ADDR` (a
// grpc.health.v1 check, e.g. for container health checks) and `run` (starts an embedded local fleet
// — coordinator, renderer and one worker per core as child processes on loopback, plaintext and
// without a token — runs the batch, fetches the results and stops everything).
//
//   AddClientCommands(app, &exit_code);
#ifndef FLAMEFLEET_CLI_CLIENT_COMMANDS_H_
#define FLAMEFLEET_CLI_CLIENT_COMMANDS_H_

#include <grpcpp/channel.h>

#include <memory>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "common/security.h"

namespace flamefleet::cli {

// Where and how to reach the coordinator: --coordinator and the client security flags.
struct CoordinatorFlags {
  std::string address = "127.0.0.1:7700";
  SecurityOptions security;
};

// Adds --coordinator (unless `with_address` is false), --tls-ca, --tls-cert, --tls-key and
// --auth-token-file (with their FLAMEFLEET_* environment variables) to `cmd`; `flags` is kept.
void AddCoordinatorFlags(CLI::App* cmd, CoordinatorFlags* flags, bool with_address = true);

// Loads the security files named by `flags` and returns a channel to the coordinator.
absl::StatusOr<std::shared_ptr<grpc::Channel>> ConnectToCoordinator(const CoordinatorFlags& flags);

// Registers the fleet subcommands on `app`; a command's exit code goes to `*exit_code` (kept).
void AddClientCommands(CLI::App& app, int* exit_code);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_CLIENT_COMMANDS_H_
